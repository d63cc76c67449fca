"""Node vectors: recorded node-protocol sessions with the reference's answers.

``spec/vectors/node-*.jsonl`` (installed with ``numaspec.vectors``): the first line is a header
``{"id", "description", "rules", "kubelet"}``, every other line ``{"request", "answer"}``.
Replaying a session through an implementation must give the recorded answers.  ``kubelet``
says what the real kubelet does with the session (agrees, or how it differs).

``python -m numaspec.conformance.node_vectors record ID "description" RULE... < requests.jsonl``
runs the requests through the reference and prints a vector file.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from importlib import resources
from typing import Any

import attrs

from numaspec.node_wire import NodeSession

__all__ = ["NodeVector", "load_node_vectors", "record", "replay"]


@attrs.frozen
class NodeVector:
    id: str
    description: str
    rules: tuple[str, ...]
    kubelet: str
    steps: tuple[tuple[dict[str, Any], dict[str, Any]], ...]
    source: str


def load_node_vectors() -> Iterator[NodeVector]:
    for entry in sorted(resources.files("numaspec.vectors").iterdir(), key=lambda e: e.name):
        if not (entry.name.startswith("node-") and entry.name.endswith(".jsonl")):
            continue
        lines = [json.loads(line) for line in entry.read_text(encoding="utf-8").splitlines()
                 if line.strip()]
        header, body = lines[0], lines[1:]
        yield NodeVector(header["id"], header["description"], tuple(header["rules"]),
                         header.get("kubelet", ""),
                         tuple((step["request"], step["answer"]) for step in body), entry.name)


Handler = Callable[[dict[str, Any]], dict[str, Any]]


def replay(handle: Handler, vector: NodeVector,
           normalize: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None
           ) -> list[str]:
    """Every step whose answer differs from the recorded one, described."""
    problems = []
    for index, (request, recorded) in enumerate(vector.steps, 1):
        answer, expected = handle(request), recorded
        if normalize is not None:
            answer, expected = normalize(request, answer), normalize(request, recorded)
        if answer != expected:
            problems.append(f"{vector.id} step {index} ({request.get('op')}): got "
                            f"{json.dumps(answer, sort_keys=True)[:400]}, recorded "
                            f"{json.dumps(expected, sort_keys=True)[:400]}")
    return problems


def record(requests: list[dict[str, Any]], header: dict[str, Any]) -> list[str]:
    session = NodeSession()
    lines = [json.dumps(header, separators=(",", ":"))]
    for request in requests:
        answer = session.answer(json.dumps(request))
        lines.append(json.dumps({"request": request, "answer": answer}, separators=(",", ":")))
    return lines


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[0] != "record":
        print(__doc__, file=sys.stderr)
        return 2
    header = {"id": argv[1], "description": argv[2], "rules": argv[3:], "kubelet": ""}
    requests = [json.loads(line) for line in sys.stdin if line.strip()]
    print("\n".join(record(requests, header)))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
