"""Deliberately unhardened ``numaspec`` commands (issue 14; WIRE-5, PROTO-1, ADMIT-10), run as
``python -m mutants.hardening_mutants MUTATION COMMAND...`` from tests/: the fuzz campaign of
tests/suite/test_fuzz.py finds each of them."""

from __future__ import annotations

import sys
from collections.abc import Callable

import numaspec.strict_json
from numaspec.conformance import cli
from numaspec.node.admission import Decision, Node
from numaspec.node.pods import Pod


def _unbounded_integers() -> None:
    """WIRE-5 broken: integer literals are converted whatever their length (Python refuses
    more than 4,300 digits: an internal error)."""
    def convert(text: str) -> int:
        return int(text)

    numaspec.strict_json.bounded_int = convert


def _serve_unguarded() -> None:
    """PROTO-1 broken: ``serve`` lets an unexpected exception end the stream (a traceback and
    a crash), and integers are unbounded as above."""
    import numaspec.protocols.adapter_protocol

    _unbounded_integers()

    def serve(adapter: object, stdin: object, stdout: object, **_: object) -> int:
        import json

        for raw in stdin:  # type: ignore[attr-defined]
            request = numaspec.strict_json.decode_json_line(raw.rstrip(b"\r\n"))
            if isinstance(request, dict) and request.get("cmd") == "stop":
                return 0
            answer = (numaspec.protocols.adapter_protocol._answer(adapter, request)  # type: ignore[arg-type]
                      if isinstance(request, dict) else {"seq": None, "errored": True})
            stdout.write(json.dumps(answer) + "\n")  # type: ignore[attr-defined]
            stdout.flush()  # type: ignore[attr-defined]
        return 0

    numaspec.protocols.adapter_protocol.serve_adapter = serve


def _refusals_keep_allocations() -> None:
    """ADMIT-6/ADMIT-10 broken: a refused pod keeps what the providers allocated for it."""
    original = Node.admit

    def keep(pod_uid: str) -> None:
        del pod_uid

    def admit(self: Node, pod: Pod) -> Decision:
        release = self._release
        self._release = keep  # type: ignore[method-assign]
        try:
            return original(self, pod)
        finally:
            self._release = release  # type: ignore[method-assign]

    Node.admit = admit  # type: ignore[method-assign,assignment]


HARDENING_MUTATIONS: dict[str, Callable[[], None]] = {
    "unbounded-integers": _unbounded_integers,
    "serve-unguarded": _serve_unguarded,
    "refusals-keep-allocations": _refusals_keep_allocations,
}

if __name__ == "__main__":
    HARDENING_MUTATIONS[sys.argv[1]]()
    sys.exit(cli.main(sys.argv[2:]))
