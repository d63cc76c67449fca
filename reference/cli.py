"""The ``numaspec`` command.

* ``numaspec merge``: one JSON merge request per line on stdin, one JSON response per line on
  stdout, in order, flushed per line; a bad line gets an error line and the stream goes on.
* ``numaspec node``: the node line protocol (create a node, admit, remove, state), one JSON
  request per line, one answer per line.
* ``numaspec serve``: the reference behind the adapter protocol (``spec/adapter-protocol.md``).
* ``numaspec explain``: would this pod be admitted on my node, where, and if not, why, from the
  node's own files (:mod:`numaspec.explain_command`).
* ``numaspec conformance``: run the conformance suite against an implementation, and the
  tools around it: ``replay``, ``expectations``, ``report``, ``vectors``, ``bench``,
  ``matrix`` (:mod:`numaspec.conformance.commands`).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from typing import Any, BinaryIO, TextIO

from numaspec.errors import NumaspecError
from numaspec.protocol import REFERENCE_IMPL
from numaspec.wire import (
    DEFAULT_MAX_MERGE_STEPS,
    decode_json_line,
    decode_merge_request,
    encode_error,
    encode_outcome,
    evaluate_request,
    request_lines,
)

__all__ = ["answer_merge_line", "main", "serve_merge", "serve_node"]


def answer_merge_line(line: bytes | str, *, max_steps: int = DEFAULT_MAX_MERGE_STEPS,
                      explain: bool = False, definitional: bool = False) -> dict[str, Any]:
    """The JSON response to one request line; never raises for bad input.  ``explain``:
    the response carries the merge's trace as ``explain`` (EXPLAIN-1).  ``definitional``:
    the cross product is walked (within ``max_steps``, WIRE-4) instead of the fast merge."""
    try:
        request = decode_merge_request(decode_json_line(line))
        if explain:
            from numaspec.trace import MergeTrace

            trace = MergeTrace()
            outcome = evaluate_request(request, max_steps=max_steps, trace=trace,
                                       definitional=definitional)
            return {**encode_outcome(outcome), "explain": trace.as_json()}
        return encode_outcome(evaluate_request(request, max_steps=max_steps,
                                               definitional=definitional))
    except NumaspecError as exc:
        return encode_error(exc)
    except Exception as exc:  # a bug in the reference must not end the stream
        return {"error": {"kind": "internal-error",
                          "message": f"numaspec failed on this line: {type(exc).__name__}: {exc}"}}


def serve_merge(stdin: BinaryIO, stdout: TextIO, *, max_steps: int = DEFAULT_MAX_MERGE_STEPS,
                explain: bool = False, definitional: bool = False) -> int:
    for line in request_lines(stdin):
        response = (encode_error(line) if isinstance(line, NumaspecError)
                    else answer_merge_line(line, max_steps=max_steps, explain=explain,
                                           definitional=definitional))
        stdout.write(json.dumps(response, separators=(",", ":")) + "\n")
        stdout.flush()
    return 0


def serve_node(stdin: BinaryIO, stdout: TextIO, *, affinity: bool = False,
               explain: bool = False) -> int:
    from numaspec.node_wire import NodeSession

    session = NodeSession(affinity=affinity, explain=explain)
    for line in request_lines(stdin):
        response = encode_error(line) if isinstance(line, NumaspecError) else session.answer(line)
        stdout.write(json.dumps(response, separators=(",", ":")) + "\n")
        stdout.flush()
    return 0


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="numaspec", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    merge = sub.add_parser("merge", help="answer JSON merge requests, one per line")
    merge.add_argument("--max-merge-steps", dest="max_steps", type=int,
                       default=DEFAULT_MAX_MERGE_STEPS, metavar="N",
                       help="with --definitional: refuse (error kind merge-too-large) a "
                            "merge of more than N steps (permutations x hint lists; WIRE-4)")
    merge.add_argument("--definitional", action="store_true",
                       help="walk every permutation as kubelet does (the spec's meaning, "
                            "within --max-merge-steps) instead of the fast merge (FAST-1..7), "
                            "which returns the same answer without the cross product")
    merge.add_argument("--explain", action="store_true",
                       help="each response carries the merge's trace as 'explain': the lists "
                            "merged, the candidates kept and the rule for each (EXPLAIN-2)")

    node = sub.add_parser("node", help="answer node-protocol requests (create/admit/remove/state)")
    node.add_argument("--affinity", action="store_true",
                      help="the node runs NUMA-level inter-pod affinity, and the scheduler's "
                           "steps are open (spec/affinity.md, AWIRE-1..AWIRE-3)")
    node.add_argument("--explain", action="store_true",
                      help="each admit answer carries the admission's trace as 'explain': "
                           "every provider's hints, the merge, who refused and by which rule "
                           "(EXPLAIN-3)")
    sub.add_parser("serve", help="the reference behind the adapter protocol (start/run/stop)")

    conf = sub.add_parser("conformance", help="run the conformance suite against an impl")
    _impl_argument(conf)
    conf.add_argument("--expectations", default=None, metavar="MANIFEST",
                      help="the implementation's expectations manifest (known deviations)")
    conf.add_argument("--out", default="numaspec-report", metavar="DIR",
                      help="directory of the reports (default: numaspec-report)")
    conf.add_argument("--report", default=None, help="JSON Lines report path "
                                                     "(default: DIR/report.jsonl)")
    conf.add_argument("--markdown", default=None, help="Markdown summary path "
                                                       "(default: DIR/summary.md)")
    conf.add_argument("--junitxml", default=None, help="JUnit XML path (default: DIR/junit.xml)")
    run_options(conf)

    replay = sub.add_parser("replay", help="re-run one case and print both answers")
    replay.add_argument("file", help="a report (.jsonl), a vector file, or one case as JSON")
    replay.add_argument("--id", default=None, help="the case to re-run (vector or property ID)")
    _impl_argument(replay)
    replay.add_argument("--timeout", type=float, default=None, metavar="SECONDS")
    replay.add_argument("--explain", action="store_true",
                        help="also print the reference's reasoning for the case (EXPLAIN-4)")

    expect = sub.add_parser("expectations",
                            help="write an expectations manifest from a report's failures")
    expect.add_argument("report", help="a JSON Lines report of numaspec conformance")
    expect.add_argument("--previous", default=None, metavar="MANIFEST",
                        help="carry reasons and links over from this manifest")
    expect.add_argument("-o", "--output", default=None, help="write here instead of stdout")

    render = sub.add_parser("report", help="print the summary of a JSON Lines report")
    render.add_argument("report")
    render.add_argument("--format", choices=("terminal", "markdown", "junit"),
                        default="terminal")

    vectors = sub.add_parser("vectors", help="check the spec vectors, or rewrite their "
                                             "reference-derived answers")
    vectors.add_argument("args", nargs=argparse.REMAINDER, help="check | write [FILE...]")

    diff = sub.add_parser("differential",
                          help="random merge cases: the reference against an implementation")
    _impl_argument(diff)
    diff.add_argument("--cases", type=int, default=20_000)
    diff.add_argument("--seed", type=int, default=0)
    diff.add_argument("--out", default=None, metavar="FILE",
                      help="write the disagreements here, one JSON Lines record each "
                           "(replayable with numaspec replay FILE --id ID)")
    diff.add_argument("--shrink", type=int, default=20, metavar="N",
                      help="shrink the first N disagreements to minimal cases (default 20; "
                           "0: none)")
    _differential_options(diff)

    fuzz = sub.add_parser("fuzz", help="fuzz numaspec's own commands (merge, node, "
                                       "node --affinity, serve) and report what breaks")
    fuzz.add_argument("--requests", type=int, default=100_000,
                      help="request lines to send, spread over the commands")
    fuzz.add_argument("--seed", type=int, default=0)
    fuzz.add_argument("--command", dest="commands", action="append", default=[],
                      choices=("merge", "node", "affinity", "serve"),
                      help="fuzz only this command (repeatable; default: all four)")
    fuzz.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                      help="seconds an answer may take before it counts as a hang")
    fuzz.add_argument("--out", default=None, metavar="FILE",
                      help="write the findings here as JSON Lines, with the lines that "
                           "caused them")
    fuzz.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                      help="progress bar (default: on a terminal, after two seconds)")

    from numaspec.conformance.running import sharding
    from numaspec.conformance.running.matrix import add_parser as add_matrix_parser
    from numaspec.explain_command import add_parser as add_explain_parser

    add_explain_parser(sub)  # numaspec explain: the operator's question about a real node

    run_options(add_matrix_parser(sub))  # numaspec matrix: several implementations compared

    bench = sub.add_parser("bench", help="merge cases per second through the protocol")
    _impl_argument(bench, default=SERVE_IMPL)
    bench.add_argument("--cases", type=int, default=20_000)
    bench.add_argument("--seed", type=int, default=0)
    bench.add_argument("--window", type=int, default=32,
                       help="requests in flight (1: wait for each answer)")
    sharding.add_arguments(bench, ray=False)
    bench.add_argument("--sizes", nargs="?", const="", default=None, metavar="SHAPES",
                       help="instead: a table of one merge per shape NODESxPROVIDERSxHINTS "
                            "(comma-separated; default: 2x2x3 to 16x4x65535), timed for the "
                            "fast merge, the definitional walk and --against, with peak memory "
                            "(spec/fast-merge.md)")
    bench.add_argument("--against", default=None, metavar="IMPL",
                       help="the implementation in the --sizes table (default: kubelet 1.37's "
                            "adapter, when adapters/kubelet is built)")
    bench.add_argument("--max-permutations", type=int, default=20_000_000, metavar="N",
                       help="--sizes: shapes of more permutations are not sent to --against")
    return parser


def _differential_options(diff: argparse.ArgumentParser) -> None:
    """``numaspec differential``'s shapes of cases, and where they run."""
    from numaspec.conformance.cases import shapes as cases  # not the properties: see there
    from numaspec.conformance.running import sharding

    diff.add_argument("--shape", choices=cases.SHAPES, default="small",
                      help="small: 1 to 8 NUMA nodes and past them, every policy, option and "
                           "gate (default); large: kubelet's providers on a big machine: "
                           "--numa-nodes NUMA nodes with max-allowable-numa-nodes (kubelet "
                           "1.31+) and full hint lists")
    diff.add_argument("--max-permutations", type=int, default=cases.DEFAULT_MAX_PERMUTATIONS,
                      metavar="N", help="--shape large: the most permutations (product of "
                                        "the hint lists' lengths) of a case (default "
                                        f"{cases.DEFAULT_MAX_PERMUTATIONS:,})")
    low, high = cases.LARGE_NUMA_NODES
    diff.add_argument("--numa-nodes", default=f"{low}-{high}", metavar="LOW-HIGH",
                      help=f"--shape large: NUMA nodes of a machine (default {low}-{high})")
    diff.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                      help="seconds per case before the implementation is restarted "
                           "(default 30)")
    sharding.add_arguments(diff)
    diff.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                      help="progress bar (default: on a terminal, after two seconds)")


#: ``numaspec serve`` of this very installation, as an ``--impl``.
SERVE_IMPL = f"exec:{shlex.quote(sys.executable)} -m numaspec serve"


def run_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """The options of a conformance run, shared by ``conformance`` and ``matrix``."""
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="seconds per case before the implementation is killed "
                             "(default 10)")
    parser.add_argument("--max-line", type=int, default=None, metavar="BYTES",
                        help="longest answer line accepted (default 1 MiB)")
    parser.add_argument("--strict", action="store_true",
                        help="validate every protocol message both ways against its schema")
    parser.add_argument("--no-properties", action="store_true", help="run the vectors only")
    parser.add_argument("--no-vectors", action="store_true", help="run the properties only")
    parser.add_argument("--vectors", dest="vector_files", action="append", default=[],
                        metavar="FILE", help="run the vectors of FILE instead of the spec's "
                                             "(repeatable)")
    parser.add_argument("--profile", default=None,
                        choices=("dev", "ci", "nightly", "triage"),
                        help="Hypothesis profile: dev, ci, nightly, or triage (ci's examples "
                             "without shrinking) (default: ci under CI, else dev)")
    parser.add_argument("-k", dest="keyword", default=None,
                        help="only cases whose ID contains this, or that cite this rule")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bar (default: on a terminal, after two seconds)")


def _impl_argument(parser: argparse.ArgumentParser, default: str = REFERENCE_IMPL) -> None:
    parser.add_argument("--impl", default=default,
                        help="exec:COMMAND (a subprocess speaking the adapter protocol) or "
                             f"module:object (in-process Python); default: {default}")


def _serve(run: Any) -> int:
    try:
        return int(run())
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    if args.command == "merge":
        return _serve(lambda: serve_merge(sys.stdin.buffer, sys.stdout,
                                          max_steps=args.max_steps, explain=args.explain,
                                          definitional=args.definitional))
    if args.command == "node":
        return _serve(lambda: serve_node(sys.stdin.buffer, sys.stdout,
                                         affinity=args.affinity, explain=args.explain))
    if args.command == "explain":
        from numaspec.explain_command import run

        return run(args)
    if args.command == "serve":
        from numaspec.protocol import ReferenceAdapter, serve_adapter

        return _serve(lambda: serve_adapter(ReferenceAdapter(), sys.stdin.buffer, sys.stdout))
    from numaspec.conformance import commands

    return commands.dispatch(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
