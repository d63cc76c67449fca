"""The ``numaspec`` command.

* ``numaspec merge``: one JSON merge request per line on stdin, one JSON response per line on
  stdout, in order, flushed per line; a bad line gets an error line and the stream goes on.
* ``numaspec node``: the node line protocol (create a node, admit, remove, state), one JSON
  request per line, one answer per line.
* ``numaspec conformance``: run the conformance suite against an implementation.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, BinaryIO, TextIO

from numaspec.errors import NumaspecError
from numaspec.wire import (
    DEFAULT_MAX_PERMUTATIONS,
    decode_json_line,
    decode_merge_request,
    encode_error,
    encode_outcome,
    evaluate_request,
)

__all__ = ["answer_merge_line", "main", "serve_merge", "serve_node"]


def answer_merge_line(line: bytes | str, *, max_permutations: int = DEFAULT_MAX_PERMUTATIONS
                      ) -> dict[str, Any]:
    """The JSON response to one request line; never raises for bad input."""
    try:
        request = decode_merge_request(decode_json_line(line))
        return encode_outcome(evaluate_request(request, max_permutations=max_permutations))
    except NumaspecError as exc:
        return encode_error(exc)
    except Exception as exc:  # a bug in the reference must not end the stream
        return {"error": {"kind": "internal-error",
                          "message": f"numaspec failed on this line: {type(exc).__name__}: {exc}"}}


def serve_merge(stdin: BinaryIO, stdout: TextIO, *,
                max_permutations: int = DEFAULT_MAX_PERMUTATIONS) -> int:
    for raw in stdin:
        line = raw.rstrip(b"\r\n")
        response = answer_merge_line(line, max_permutations=max_permutations)
        stdout.write(json.dumps(response, separators=(",", ":")) + "\n")
        stdout.flush()
    return 0


def serve_node(stdin: BinaryIO, stdout: TextIO) -> int:
    from numaspec.node_wire import NodeSession

    session = NodeSession()
    for raw in stdin:
        response = session.answer(raw.rstrip(b"\r\n"))
        stdout.write(json.dumps(response, separators=(",", ":")) + "\n")
        stdout.flush()
    return 0


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="numaspec", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    merge = sub.add_parser("merge", help="answer JSON merge requests, one per line")
    merge.add_argument("--max-permutations", type=int, default=DEFAULT_MAX_PERMUTATIONS,
                       help="refuse (error kind merge-too-large) above this many permutations")

    sub.add_parser("node", help="answer node-protocol requests (create/admit/remove/state)")

    conf = sub.add_parser("conformance", help="run the conformance suite against an impl")
    conf.add_argument("--impl", default="numaspec.conformance.adapter:reference",
                      help="module:object of the implementation (default: the reference)")
    conf.add_argument("--profile", default=None,
                      help="Hypothesis profile: dev, ci or nightly "
                           "(default: ci under CI, else dev)")
    conf.add_argument("-k", dest="keyword", default=None, help="only properties matching this")
    conf.add_argument("--junitxml", default=None, help="also write a JUnit XML report here")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    if args.command == "merge":
        try:
            return serve_merge(sys.stdin.buffer, sys.stdout,
                               max_permutations=args.max_permutations)
        except (BrokenPipeError, KeyboardInterrupt):
            return 0
    if args.command == "node":
        try:
            return serve_node(sys.stdin.buffer, sys.stdout)
        except (BrokenPipeError, KeyboardInterrupt):
            return 0
    from numaspec.conformance.runner import run_conformance

    return run_conformance(impl=args.impl, profile=args.profile, keyword=args.keyword,
                           junitxml=args.junitxml)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
