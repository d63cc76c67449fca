"""The ``numaspec`` command: the one program over the reference and the suite.

It sits above both (``tests/meta/test_imports.py``): the reference's own commands are served by
:mod:`numaspec.protocols.serve` and :mod:`numaspec.operators.explain_command`, the suite's by
:mod:`numaspec.conformance.commands`; this module only reads the command line.

* ``numaspec merge``: one JSON merge request per line on stdin, one JSON response per line on
  stdout, in order, flushed per line; a bad line gets an error line and the stream goes on.
* ``numaspec node``: the node line protocol (create a node, admit, remove, state), one JSON
  request per line, one answer per line.
* ``numaspec serve``: the reference behind the adapter protocol
  (``spec/protocols/adapter-protocol.md``).
* ``numaspec explain``: would this pod be admitted on my node, where, and if not, why, from the
  node's own files (:mod:`numaspec.operators.explain_command`).
* ``numaspec allocate``: which devices the scheduler's DRA allocator gives claims on a node,
  and why (:mod:`numaspec.operators.allocate_command`).
* ``numaspec conformance``: run the conformance suite against an implementation, and the
  tools around it: ``replay``, ``expectations``, ``report``, ``vectors``, ``bench``,
  ``matrix`` (:mod:`numaspec.conformance.commands`).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from numaspec.conformance import commands
from numaspec.conformance.cases import shapes as cases
from numaspec.conformance.cases.vectors import add_subcommands
from numaspec.conformance.checking import bounds as b
from numaspec.conformance.running import profiles, sharding
from numaspec.conformance.running.matrix import add_parser as add_matrix_parser
from numaspec.limits import LINE_BOUND_VARIABLE, MAX_LINE_BYTES, line_bound_from
from numaspec.operators.allocate_command import add_parser as add_allocate_parser
from numaspec.operators.allocate_command import run as run_allocate
from numaspec.operators.explain_command import add_parser as add_explain_parser
from numaspec.operators.explain_command import run as run_explain
from numaspec.protocols import adapter_protocol, serve
from numaspec.protocols.adapter_protocol import REFERENCE_IMPL
from numaspec.protocols.merge_protocol import DEFAULT_MAX_MERGE_STEPS

__all__ = ["SERVE_IMPL", "main", "run_options"]


class _Version(argparse.Action):
    """``--version``: numaspec's version, derived from git in a checkout (numaspec.about), so
    asked for only when the option is given, not whenever the parser is built."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> NoReturn:
        del namespace, values, option_string
        from numaspec.about import version

        print(f"numaspec {version()}")
        parser.exit()


class _Parser(argparse.ArgumentParser):
    """argparse with a did-you-mean for a mistyped subcommand or choice."""

    def error(self, message: str) -> NoReturn:
        import difflib
        import re

        found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if found:
            choices = re.findall(r"'([^']*)'", found.group(2))
            close = difflib.get_close_matches(found.group(1), choices, n=2, cutoff=0.5)
            if close:
                message += f"; did you mean {' or '.join(repr(c) for c in close)}?"
        super().error(message)


_DESCRIPTION = ("numaspec: the executable reference specification of kubelet's NUMA alignment "
                "(the Topology Manager's merge, the CPU, Memory and Device Managers' hints and "
                "allocations, node admission), and the conformance suite that holds other "
                "implementations to it.")
_EPILOG = ("Each command has its own help: numaspec COMMAND --help.  The rules are in the spec "
           "(numaspec rule ID prints one).")


class _NotHere(argparse.Action):
    """An option a command does not take, answered with what to run instead."""

    def __init__(self, *args: Any, message: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.message = message

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        del namespace, values, option_string
        parser.error(self.message)


def _command(sub: Any, name: str, summary: str, details: str = "") -> Any:
    """A subcommand: ``summary`` in the command list, with ``details`` as its description."""
    text = summary[0].upper() + summary[1:] + "."
    return sub.add_parser(name, help=summary, description=f"{text}  {details}".strip())


def _line_bound_argument(parser: argparse.ArgumentParser) -> None:
    """WIRE-5: the request-line bound, a setting (flag, then environment variable)."""
    parser.add_argument(
        "--max-line-bytes", dest="max_line_bytes", type=_line_bound, default=None,
        metavar="N",
        help=f"refuse (error kind limit-exceeded) a request line longer than N bytes (default: "
             f"${LINE_BOUND_VARIABLE}, else {MAX_LINE_BYTES:,}; WIRE-5)")


def _line_bound(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of bytes")
    return value


def _max_line(args: argparse.Namespace) -> int | None:
    """``--max-line-bytes``, else ``$NUMASPEC_MAX_LINE_BYTES``, else the default (WIRE-5);
    ``None`` after saying on stderr that the variable's value is not a bound."""
    if args.max_line_bytes is not None:
        return int(args.max_line_bytes)
    try:
        return line_bound_from(os.environ)
    except ValueError as exc:
        print(f"numaspec {args.command}: {exc}", file=sys.stderr)
        return None


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="numaspec", description=_DESCRIPTION, epilog=_EPILOG)
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="print numaspec's version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    merge = _command(sub, "merge", "answer JSON merge requests, one per line",
                     "Reads one merge request per line on stdin "
                     "(spec/protocols/merge-protocol.md) and "
                     "writes one response per line on stdout; a bad line gets an error line "
                     "and the stream goes on.")
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
    _line_bound_argument(merge)

    node = _command(sub, "node", "answer node-protocol requests (create, admit, hints, "
                                 "remove, state)",
                    "Reads one node-protocol request per line on stdin "
                    "(spec/protocols/node-protocol.md) and writes one answer per line.")
    node.add_argument("--affinity", action="store_true",
                      help="the node runs NUMA-level inter-pod affinity, and the scheduler's "
                           "steps are open (spec/node/affinity.md, AWIRE-1..AWIRE-3)")
    node.add_argument("--explain", action="store_true",
                      help="each admit answer carries the admission's trace as 'explain': "
                           "every provider's hints, the merge, who refused and by which rule "
                           "(EXPLAIN-3)")
    _line_bound_argument(node)
    serve = _command(sub, "serve", "the reference behind the adapter protocol (start/run/stop)",
                     "Speaks spec/protocols/adapter-protocol.md on stdin and stdout, so that the "
                     "reference can be run as an --impl like any other implementation.")
    serve.add_argument("--definitional", action="store_true",
                       help="answer merges by walking every permutation (the spec's meaning, "
                            "within the default --max-merge-steps) instead of the fast merge: "
                            "the walk judged as an implementation")
    serve.add_argument("--no-batch", action="store_true",
                       help="do not declare batches in the start answer (PROTO-8): the runner "
                            "then sends one run a request")
    _line_bound_argument(serve)

    conf = _command(sub, "conformance", "run the conformance suite against an implementation",
                    "Runs every vector and property against --impl and writes a JSON Lines "
                    "report, a Markdown summary and JUnit XML (RUN-6).  Exit status: 0 "
                    "conforms, 1 a case failed, 4 bad usage.")
    _impl_argument(conf)
    conf.add_argument("--expectations", default=None, metavar="MANIFEST",
                      help="the implementation's expectations manifest (known deviations)")
    conf.add_argument("--out", default="numaspec-report", metavar="DIR",
                      help="directory of the reports (default: numaspec-report)")
    conf.add_argument("--report", default=None, metavar="FILE",
                      help="JSON Lines report path (default: DIR/report.jsonl)")
    conf.add_argument("--markdown", default=None, metavar="FILE",
                      help="Markdown summary path (default: DIR/summary.md)")
    conf.add_argument("--junitxml", default=None, metavar="FILE",
                      help="JUnit XML path (default: DIR/junit.xml)")
    run_options(conf)

    replay = _command(sub, "replay", "re-run one case and print both answers",
                      "Sends one case (from a report, a vector file, or a case given as JSON) "
                      "to --impl and prints its answer beside the reference's.")
    replay.add_argument("file", help="a report (.jsonl), a vector file, or one case as JSON")
    replay.add_argument("--id", default=None, help="the case to re-run (vector or property ID)")
    _impl_argument(replay)
    replay.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="seconds the implementation may take to answer (default 10)")
    replay.add_argument("--explain", action="store_true",
                        help="also print the reference's reasoning for the case (EXPLAIN-4)")

    expect = _command(sub, "expectations",
                      "write an expectations manifest from a report's failures",
                      "Each failed case becomes an entry to fill with its reason and link "
                      "(PROTO-5).")
    expect.add_argument("report", help="a JSON Lines report of numaspec conformance")
    expect.add_argument("--previous", default=None, metavar="MANIFEST",
                        help="carry reasons and links over from this manifest")
    expect.add_argument("-o", "--output", default=None, metavar="FILE",
                        help="write here instead of stdout")

    render = _command(sub, "report", "print the summary of a JSON Lines report")
    render.add_argument("report", help="a report.jsonl written by numaspec conformance")
    render.add_argument("--format", choices=("terminal", "markdown", "junit"),
                        default="terminal", help="terminal (default), markdown or junit")

    vectors = _command(sub, "vectors", "check, rewrite or list the spec vectors",
                       "The language-neutral vectors of spec/vectors (spec/vectors/README.md).")
    add_subcommands(vectors, export=True)

    findings = _command(
        sub, "findings", "the findings about upstream code, as their maintainers would take them",
        "Each finding numaspec made about kubelet, a peer, the DRA allocator or a driver that "
        "still holds at its pinned release: a failing Go test in the upstream package, a fix "
        "under which it passes, and a report ready to file (RUN-23).")
    findings_sub = findings.add_subparsers(dest="findings_command", required=True,
                                           metavar="ACTION")
    _command(findings_sub, "list", "list the exported findings, those reported in words, and "
             "how many triage places")
    show = _command(findings_sub, "show", "print a finding's report, ready to file (markdown), "
                    "or where a finding without one is placed and why")
    show.add_argument("ids", nargs="+", metavar="FINDING", help="a finding ID such as DRACPU-1")
    export = _command(findings_sub, "export", "write a finding's Go test or fix",
                      "Writes the Go test to drop into the upstream package (--go), or the "
                      "proposed fix as a patch (--fix), for each FINDING (an ID, or a family "
                      "such as scheduler-plugins).")
    which = export.add_mutually_exclusive_group(required=True)
    which.add_argument("--go", dest="export_what", action="store_const", const="go",
                       help="the Go test, in the upstream package's own style")
    which.add_argument("--fix", dest="export_what", action="store_const", const="fix",
                       help="numaspec's proposed fix, a unified diff against the module's root")
    export.add_argument("ids", nargs="+", metavar="FINDING",
                        help="a finding ID such as DRACPU-1, or a family")
    export.add_argument("--out", default=None, metavar="DIR",
                        help="write into DIR (default: the current directory)")

    rule = _command(sub, "rule", "print a rule of the spec: statement, releases, upstream, "
                                 "checks",
                    "Prints each named rule as the spec states it: the kubelet releases where "
                    "it holds, the upstream file and function it describes, the vectors, "
                    "properties and tests that check it, and its link.")
    rule.add_argument("ids", nargs="+", metavar="ID", help="a rule ID such as MERGE-8")
    rule.add_argument("--json", action="store_true", help="print the rules as JSON")

    _check_parser(sub)

    diff = _command(sub, "differential",
                    "random merge cases: the reference against an implementation",
                    "Draws --cases merge cases from --seed (case i of a seed replays alone), "
                    "sends them to --impl and reports each disagreement, shrunk.")
    _impl_argument(diff)
    diff.add_argument("--cases", type=int, default=20_000, metavar="N",
                      help="how many random cases (default 20,000)")
    diff.add_argument("--seed", type=int, default=0, help="the campaign's seed (default 0)")
    diff.add_argument("--out", default=None, metavar="FILE",
                      help="write the disagreements here, one JSON Lines record each "
                           "(replayable with numaspec replay FILE --id ID)")
    diff.add_argument("--expectations", default=None, metavar="MANIFEST",
                      help="the implementation's expectations manifest: a disagreement inside "
                           "one of its known divergences (its entries by input class, RUN-5) "
                           "is booked on that finding, not reported unexplained")
    diff.add_argument("--shrink", type=int, default=20, metavar="N",
                      help="shrink the first N disagreements to minimal cases (default 20; "
                           "0: none)")
    _differential_options(diff)

    change = _command(
        sub, "behaviour-diff", "a kubelet change against its release: every question they "
                               "answer differently",
        "Asks a patched kubelet build (adapters/kubelet/build.sh --patch) and the release it "
        "patches the same questions (the suite's vectors at the release, random merge cases "
        "small and large, and with --sizes the bench rows) and reports every one they answer "
        "differently, shrunk, with the rules involved (RUN-19). The base's answers are the "
        "expectation: the reference is not consulted.")
    change.add_argument("--base", required=True, metavar="IMPL",
                        help="the release as released: exec:COMMAND or module:object")
    change.add_argument("--patched", required=True, metavar="IMPL",
                        help="the same release with the change: exec:COMMAND or module:object")
    change.add_argument("--cases", type=int, default=20_000, metavar="N",
                        help="random small merge cases (default 20,000)")
    change.add_argument("--large-cases", type=int, default=200, metavar="N",
                        help="random large merge cases, kubelet's providers on 9-16 NUMA "
                             "nodes (default 200)")
    change.add_argument("--max-permutations", type=int, default=1_000_000, metavar="N",
                        help="the most permutations of a large case (default 1,000,000); "
                             "--sizes rows up to 20 times this are sent")
    change.add_argument("--seed", type=int, default=0, help="the cases' seed (default 0)")
    change.add_argument("--shrink", type=int, default=20, metavar="N",
                        help="shrink the first N differing merge cases (default 20)")
    change.add_argument("--sizes", nargs="?", const="", default=None, metavar="SHAPES",
                        help="also time one merge per shape NODESxPROVIDERSxHINTS through both "
                             "(default shapes: bench --sizes')")
    change.add_argument("--out", default=None, metavar="FILE",
                        help="write every difference here as JSON Lines (numaspec replay)")
    change.add_argument("--timeout", type=float, default=20.0, metavar="SECONDS",
                        help="seconds an answer may take (default 20); a question both time "
                             "out on is answered alike")
    change.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bar (default: on a terminal, after two seconds)")

    fuzz = _command(sub, "fuzz", "fuzz numaspec's own commands (merge, node, node --affinity, "
                                 "serve) and report what breaks",
                    "Sends malformed and hostile request lines; a traceback, a hang, a crash "
                    "or an answer that breaks the protocol is a finding.")
    fuzz.add_argument("--requests", type=int, default=100_000,
                      help="request lines to send, spread over the commands (default "
                           "100,000)")
    fuzz.add_argument("--seed", type=int, default=0, help="the campaign's seed (default 0)")
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
    fuzz.add_argument("--impl", action=_NotHere,
                      help="not taken: fuzz sends its lines to numaspec's own commands; "
                           "numaspec differential --impl IMPL sends random cases to an "
                           "implementation",
                      message="numaspec fuzz sends hostile lines to numaspec's own commands "
                              "and takes no --impl; to send random cases to an "
                              "implementation, run numaspec differential --impl IMPL (random "
                              "merge cases against the reference), or numaspec conformance "
                              "--impl IMPL (the suite, with a differential)")

    add_explain_parser(sub)  # numaspec explain: the operator's question about a real node
    add_allocate_parser(sub)  # numaspec allocate: the scheduler's DRA allocation on a node

    run_options(add_matrix_parser(sub))  # numaspec matrix: several implementations compared

    bench = _command(sub, "bench", "merge cases per second through the protocol",
                     "Times random merge cases sent to --impl, or with --sizes a table of "
                     "single merges by size.")
    _impl_argument(bench, default=SERVE_IMPL, shown="numaspec serve of this installation")
    bench.add_argument("--cases", type=int, default=20_000, metavar="N",
                       help="how many random cases (default 20,000)")
    bench.add_argument("--seed", type=int, default=0, help="the cases' seed (default 0)")
    bench.add_argument("--window", type=int, default=32,
                       help="requests in flight (1: wait for each answer)")
    sharding.add_arguments(bench, ray=False)
    bench.add_argument("--sizes", nargs="?", const="", default=None, metavar="SHAPES",
                       help="instead: a table of one merge per shape NODESxPROVIDERSxHINTS "
                            "(comma-separated; default: 2x2x3 to 16x4x65535), timed for the "
                            "fast merge, the definitional walk and --against, with peak memory "
                            "(spec/topology/fast-merge.md)")
    bench.add_argument("--against", default=None, metavar="IMPL",
                       help="the implementation in the --sizes table (default: kubelet 1.37's "
                            "adapter, when adapters/kubelet is built)")
    bench.add_argument("--max-permutations", type=int, default=20_000_000, metavar="N",
                       help="--sizes: shapes of more permutations are not sent to --against")
    bench.add_argument("--baseline", default=None, metavar="IMPL",
                       help="also send the same cases to IMPL (e.g. 'exec:OLD/bin/numaspec "
                            "serve' of an older numaspec), in turn with --impl, twice each, "
                            "and print the ratio of cases per second")
    return parser


def _check_parser(sub: Any) -> None:
    """``numaspec check``: the node's model checker (spec/conformance/checking.md)."""
    check = _command(
        sub, "check", "explore every node and step sequence within bounds (model checking)",
        "From every initial node within the bounds, runs every sequence of admits and "
        "removes of a pod alphabet up to --depth, breadth-first, each distinct state once, "
        "and checks INV-1..INV-9 and ADMIT-10 after every step, INV-10 when the "
        "implementation runs in process, and with --pods affinity the affinity invariants "
        "(CHECK-1..CHECK-7).  A violation is reported as the shortest session that shows "
        "it, which numaspec node replays.  Exit status: 0 no violation, 1 a violation, 4 bad "
        "usage.")
    _impl_argument(check)
    defaults = b.Bounds()

    def listed(name: str, values: tuple[str, ...], known: Any, text: str) -> None:
        check.add_argument(f"--{name}", default=",".join(values), metavar="A,B",
                           help=f"{text} (default {','.join(values)}; known: "
                                f"{', '.join(known)})")

    check.add_argument("--releases", default=",".join(defaults.releases), metavar="A,B",
                       help="kubelet releases of the initial nodes (default "
                            f"{','.join(defaults.releases)})")
    check.add_argument("--machines", default=",".join(defaults.machines), metavar="A,B",
                       help="machine shapes, sockets x NUMA nodes per socket x cores per NUMA "
                            "node x threads per core, at most "
                            f"{'x'.join(map(str, b.SHAPE_LIMITS))}, optionally @ the memory per "
                            f"NUMA node (default {','.join(defaults.machines)}; e.g. "
                            f"{', '.join(b.MACHINES)}, 2x2x4x1@2Gi)")
    listed("policies", defaults.policies, b.POLICIES, "Topology Manager policies")
    listed("scopes", defaults.scopes, b.SCOPES, "Topology Manager scopes")
    listed("cpu", defaults.cpu, b.CPU_CONFIGS, "CPU Manager configurations")
    listed("memory", defaults.memory, b.MEMORY_CONFIGS, "Memory Manager policies")
    check.add_argument("--pods", default=defaults.pods, choices=tuple(b.POD_SETS),
                       help=f"the pod alphabet (default {defaults.pods}; affinity: nodes "
                       "running NUMA-level inter-pod affinity, their pods labelled and "
                       "annotated)")
    check.add_argument("--copies", type=int, default=defaults.copies, metavar="N",
                       help="instances of each pod kind that may be on the node at once "
                            f"(default {defaults.copies})")
    check.add_argument("--depth", type=int, default=defaults.depth, metavar="N",
                       help=f"the longest step sequence (default {defaults.depth})")
    check.add_argument("--no-devices", action="store_true",
                       help="machines without devices and no pod that asks for one (for an "
                            "implementation that does not claim the Device Manager)")
    check.add_argument("--hints", action="store_true",
                       help="also ask each pod kind's hints in every state (judged only by "
                            "the comparison with the reference, so with --impl)")
    check.add_argument("--no-symmetry", action="store_true",
                       help="keep a state and its renamings apart (the instances of a pod "
                            "kind are otherwise one state, CHECK-11): the unreduced run, for "
                            "comparison")
    check.add_argument("--max-pods", type=int, default=None, metavar="N",
                       help="the nodes' maxPods (default: kubelet's, 110)")
    check.add_argument("--max-states", type=int, default=None, metavar="N",
                       help="stop after N distinct states (the bounds are then not "
                            "exhausted, and the report says so)")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.add_argument("--out", default=None, metavar="FILE",
                       help="write a counterexample's session here as JSON lines")
    check.add_argument("--jobs", type=int, default=None, metavar="N",
                       help="share the initial nodes among N worker processes, each with its "
                            "own connection to the implementation (default: one per CPU, at "
                            "most one per initial node; 1: this process alone); "
                            "the report and the counterexample are those of --jobs 1 "
                            "(CHECK-10)")
    check.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                       help="share the initial nodes among Ray tasks (pip install "
                            "'numaspec[ray]'): on the cluster at ADDRESS (host:6379), on a new "
                            "local instance ('local'; --jobs N gives it N CPUs), or without "
                            "ADDRESS where Ray looks by default; the report and the "
                            "counterexample are those of --jobs 1 (CHECK-10)")
    check.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="progress bar (default: on a terminal, after two seconds)")


def _differential_options(diff: argparse.ArgumentParser) -> None:
    """``numaspec differential``'s shapes of cases, and where they run."""
    diff.add_argument("--shape", choices=cases.SHAPES, default="small",
                      help="small: 1 to 8 NUMA nodes and past them, every policy, option and "
                           "gate (default); large: kubelet's providers on a big machine: "
                           "--numa-nodes NUMA nodes with max-allowable-numa-nodes (kubelet "
                           "1.31+) and full hint lists; allocate: the DRA allocator's "
                           "allocate cases instead of merges (spec/dra/dra.md); cpus: the CPU "
                           "Manager's allocator alone, on random machines (spec/node/cpu.md, "
                           "CPU-21)")
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
                        help="seconds the implementation gets per case before it is killed "
                             "and restarted (RUN-2; default 10)")
    parser.add_argument("--start-timeout", type=float, default=None, metavar="SECONDS",
                        help="seconds the implementation gets to answer start, at each "
                             "(re)start (RUN-2; default 60)")
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
                        choices=profiles.PROFILES,
                        help="Hypothesis profile: quick (50 examples a property), dev (100), "
                             "ci (300, derandomized), nightly (5,000), or triage (ci's "
                             "examples without shrinking) (default: ci under CI, else dev)")
    parser.add_argument("--seed", type=sharding.at_least(0), default=None, metavar="N",
                        help="the run's seed (RUN-21): every property's examples and the "
                             "differential's cases are drawn from it, so --seed N draws a "
                             "run's cases again (default: a fresh seed, printed; 0 under the "
                             "derandomized ci and triage profiles)")
    parser.add_argument("--differential", type=sharding.at_least(0), default=None, metavar="N",
                        help="random merge cases inside the claims judged against the "
                             "reference's answers in the run (RUN-22; default 5000; 0: none)")
    parser.add_argument("--differential-seconds", type=float, default=None, metavar="S",
                        help="the differential stops drawing after S seconds and says so "
                             "(default 120)")
    parser.add_argument("-x", "--fail-fast", action="store_true",
                        help="stop at the first case that fails the run (RUN-18): what a "
                             "mutation campaign needs; the reports hold the cases that ran")
    parser.add_argument("-k", dest="keyword", default=None,
                        help="only cases whose ID contains this, or that cite this rule")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bar (default: on a terminal, after two seconds)")


def _impl_argument(parser: argparse.ArgumentParser, default: str = REFERENCE_IMPL,
                   shown: str | None = None) -> None:
    parser.add_argument("--impl", default=default,
                        help="exec:COMMAND (a subprocess speaking the adapter protocol) or "
                             f"module:object (in-process Python); default: {shown or default}")


def _serve(run: Any) -> int:
    try:
        return int(run())
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    max_line = _max_line(args) if args.command in ("merge", "node", "serve") else 0
    if max_line is None:
        return commands.EXIT_USAGE
    if args.command == "merge":
        return _serve(lambda: serve.serve_merge(sys.stdin.buffer, sys.stdout,
                                                max_steps=args.max_steps, explain=args.explain,
                                                definitional=args.definitional,
                                                max_line=max_line))
    if args.command == "node":
        return _serve(lambda: serve.serve_node(sys.stdin.buffer, sys.stdout,
                                               affinity=args.affinity, explain=args.explain,
                                               max_line=max_line))
    if args.command == "explain":
        return run_explain(args)
    if args.command == "allocate":
        return run_allocate(args)
    if args.command == "serve":
        # through the module, as each loop above: a test's mutant replaces the loop there
        adapter = adapter_protocol.ReferenceAdapter(definitional=args.definitional,
                                                    batch=not args.no_batch)
        return _serve(lambda: adapter_protocol.serve_adapter(adapter, sys.stdin.buffer,
                                                             sys.stdout, max_line=max_line))
    return commands.dispatch(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
