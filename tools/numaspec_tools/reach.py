"""The suite's reach: branch coverage of the reference by the suite's own cases, per profile and
per spec rule (issue 33).

    .venv/bin/numaspec-dev reach                      # dev: the profile a newcomer runs
    .venv/bin/numaspec-dev reach --profile ci
    .venv/bin/numaspec-dev reach --compare dev ci     # branches ci reaches and dev does not
    .venv/bin/numaspec-dev reach --json reach.json

``numaspec conformance`` runs against the reference in process, under coverage.py with branch
measurement, over the merge and the node model and the DRA allocator (:data:`WINGS`, each
measured on its own); the implementation and the
suite's oracle are the same code there, which is what "the reference, reached by the suite's
cases" means.  Code the protocol never runs is left out and named (:data:`NOT_SERVED`: the
definitional walk and the explain trace), as the mutation campaign leaves it out of its
protocol judge (``tools/numaspec_tools/mutation.py``), with the conditions inside served code that
only switch
those on (:data:`SWITCHES`); so are the guards no request can reach (:data:`GUARDS`, each with
its reason, and checked: a guard the cases pass through both ways is reported).

A rule's code is every function or class whose docstring cites the rule (the house rule: a
rule's ID stands in the docstring next to its code), and a rule's reach is the share of those
functions' branches the cases took.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from numaspec.conformance.running.profiles import PROFILES
from numaspec_tools import REPO

COMMAND = "numaspec-dev reach"
#: The wings whose reach the targets speak of: the merge and node model, and the DRA
#: allocator (with the mixed pod it places, DRA-11..13).
WINGS: dict[str, tuple[str, ...]] = {
    "the merge and node model": ("reference/topology", "reference/node"),
    "the DRA allocator": ("reference/dra",),
}
MODELS = tuple(prefix for prefixes in WINGS.values() for prefix in prefixes)
#: Functions the protocol never runs, by module: the definitional walk and its budget (served
#: only with ``numaspec serve --definitional``; the fast merge answers), the explain trace,
#: and the constructors of the tests' machines.  The mutation campaign judges the walk served
#: that way (``tools/numaspec_tools/mutation.py``).
NOT_SERVED: dict[str, tuple[str, ...]] = {
    "reference/topology/merge.py": ("*",),
    # WIRE-4's budget, checked before the walk only: served with --definitional too.
    "reference/topology/policies.py": ("_check_budget", "_count", "_traced"),
    "reference/topology/trace.py": ("*",),
    "reference/node/trace.py": ("*",),
    "reference/topology/fast_merge.py": ("_witness", "_preferred_witness"),
    # Builds the tests' and contracts' regular machines; a served machine comes from JSON.
    "reference/node/machine.py": ("Machine.symmetric",),
    # MERGE-9's pairwise choice: only the definitional walk compares two masks this way.
    "reference/topology/numa.py": ("NumaInfo.closest",),
    # EXPLAIN-2: the merge with its trace (numaspec node --explain).
    "reference/node/admission.py": ("Node._traced_merge",),
    "reference/node/cpu.py": ("CPUTopology.symmetric",),
    # DRA-15: the reasons numaspec allocate and explain --dra print; no operation serves them.
    "reference/dra/reasons.py": ("*",),
}
#: Conditions that only switch the explain trace or the definitional walk on, inside served
#: functions: both their branches are set aside (and counted as such in the report), as the
#: code they switch on is (:data:`NOT_SERVED`).
SWITCHES = re.compile(r"^\s*(?:el)?if (?:trace is (?:not )?None|definitional|walk|witness):\s*$")
#: Guards no request reaches: the request decoder (reference/protocols) refuses the same
#: input first, the code before them has made them impossible, or no modelled release has
#: the data they handle.  They stay for callers of the Python API (the operators' importers
#: build machines and pods themselves).  Keyed by the condition's line; both its branches
#: are set aside, and a guard the cases do pass through both ways is reported, for then the
#: reason given here is wrong.
GUARDS: dict[str, dict[str, str]] = {
    "reference/node/machine.py": {
        "if node.memory < 0:": "the node protocol reads memory as whole, non-negative bytes",
        "if pages < 0:": "the node protocol reads a page count as a non-negative integer",
        "if core.socket < 0:": "the node protocol reads a socket id as a non-negative integer",
        'if "/" not in resource:': "the node protocol refuses a resource that is not an "
                                   "extended resource name",
        "if len(self.listed_at) == len(self.numa_nodes):": "the node protocol always says "
        "where each NUMA node stood; the fallback serves machines built in Python",
        "for position, node in enumerate(self.numa_nodes):": "asked only for ids of the "
        "machine (a distance row OPT-6 refuses)",
    },
    "reference/node/admission.py": {
        "if name not in container.limits or \\": "the API server's pod validation (ADMIT-7, "
        "fit.validate_container_resources) refuses an extended resource without a limit equal "
        "to its request first",
        "if container.limits[name].denominator != 1:": "the API server's pod validation refuses "
                                                       "a fractional extended resource first",
    },
    "reference/node/go_quantity.py": {
        "if _fits(shifted) and _fits(shifted * mantissa):": "ParseQuantity's precision bound "
        "keeps its integer path inside int64 (18 digits with no multiplier; a binary suffix "
        "leaves fewer digits the bigger it is)",
    },
    "reference/node/cpu.py": {
        "if len(set(ids)) != len(ids):": "the machine refuses a CPU listed twice first",
        "if numa is None:": "asked only for CPUs of the machine",
    },
    "reference/node/cpu_manager.py": {
        "if cpu is None:": "every container of a Guaranteed pod without pod-level resources "
                           "has a cpu request (QOS-2)",
        "if held is None:": "called only for the containers the assignments list",
    },
    "reference/node/pods.py": {
        "if raw is None:": "the node protocol reads requests and limits as objects of strings",
        "if not isinstance(raw, Mapping):": "the node protocol reads requests and limits as "
                                             "objects of strings",
    },
    "reference/node/nodeconfig.py": {
        "if quantity < 0:": "the node refuses a negative reservation at start-up first, as "
                            "kubelet's flag parsing does (NODE-3)",
        "if len(text) > MAX_LINE_BYTES:": "a cpuset inside a request line is shorter than the "
                                          "line (WIRE-5)",
    },
    "reference/topology/numa.py": {
        "for index, node in enumerate(value):": "the loop runs only when the one-pass check "
                                                "found a bad id, so it always raises",
        "for node, row in value:": "the loop runs only when the one-pass check found a bad "
                                   "distance, so it always raises",
        "if row is None or len(row) <= nodes[-1]:": "require_distances (OPT-6) refused such "
                                                     "a row at start-up",
    },
    "reference/topology/masks.py": {
        "if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= _WORD:":
            "masks are built from ids NumaMask.of checked, and by operations on masks",
    },
    "reference/topology/gates.py": {
        "if release is None:": "the data file covers every modelled release "
                               "(tests/topology/test_gates.py)",
        'elif spec.pre_release == "pre-alpha" and name not in (_ALL_ALPHA, _ALL_BETA):':
            "no modelled release has a pre-alpha gate (spec/data/feature-gates.json)",
        "if release.min_compatibility_version is not None:": "reached only for a pre-alpha "
                                                             "gate",
    },
}
_RULE = re.compile(r"\b([A-Z]+-\d+)\b")


def measure(profile: str, data: Path, keyword: str | None = None) -> dict[str, Any]:
    """Run the suite against the in-process reference under coverage; its JSON report."""
    rc = data.with_suffix(".rc")
    rc.write_text(f"[run]\nbranch = True\nsource = numaspec\ndata_file = {data}\n"
                  "omit = */conformance/*\n", "utf-8")
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "coverage", "run", f"--rcfile={rc}", "-m", "numaspec",
                   "conformance", "--profile", profile, "--no-progress", "--out", out]
        if keyword:
            command += ["-k", keyword]
        subprocess.run(command, cwd=REPO, check=False, capture_output=True)
        report = Path(out) / "coverage.json"
        subprocess.run([sys.executable, "-m", "coverage", "json", f"--rcfile={rc}", "-o",
                        str(report)], cwd=REPO, check=True, capture_output=True)
        result: dict[str, Any] = json.loads(report.read_text("utf-8"))
    return result


def _served(module: str, function: str) -> bool:
    skipped = NOT_SERVED.get(module, ())
    return "*" not in skipped and function not in skipped and \
        function.split(".", maxsplit=1)[0] not in skipped


def rules_of(path: Path) -> dict[str, set[str]]:
    """Each function or class of a module (``Class.method``), with the rules its docstring
    (or its class's) cites."""
    tree = ast.parse(path.read_text("utf-8"))
    found: dict[str, set[str]] = {}

    def walk(node: ast.AST, prefix: str, inherited: set[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                cited = set(_RULE.findall(ast.get_docstring(child) or "")) | inherited
                name = f"{prefix}{child.name}"
                found[name] = cited
                walk(child, f"{name}.", cited)

    walk(tree, "", set(_RULE.findall(ast.get_docstring(tree) or "")))
    return found


def summarize(report: dict[str, Any]) -> dict[str, Any]:
    """Per module and per rule: branches taken and in all; the branches missed, by function."""
    modules: dict[str, dict[str, int]] = {}
    per_rule: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    missed: dict[str, list[str]] = {}
    switches = 0
    seen: dict[tuple[str, str], int] = {}  # every guard found in the code, and its line
    missed_guard: set[tuple[str, str]] = set()  # guards with a branch the cases never took
    for name, entry in sorted(report["files"].items()):
        if not name.startswith(MODELS):
            continue
        cited = rules_of(REPO / name)
        lines = (REPO / name).read_text("utf-8").splitlines()

        guards = GUARDS.get(name, {})

        def set_aside(line: int, lines: list[str] = lines,
                      guards: dict[str, str] = guards) -> bool:
            return bool(SWITCHES.match(lines[line - 1])) or lines[line - 1].strip() in guards

        def counted(arcs: list[list[int]]) -> list[list[int]]:
            return [arc for arc in arcs if not set_aside(arc[0])]

        for line, text in enumerate(lines, start=1):
            if text.strip() in guards:
                seen[(name, text.strip())] = line

        taken = total = 0
        for function, facts in entry.get("functions", {}).items():
            if not function or not _served(name, function):
                continue
            for start, _ in facts["missing_branches"]:
                if lines[start - 1].strip() in guards:
                    missed_guard.add((name, lines[start - 1].strip()))
            executed = counted(facts["executed_branches"])
            missing = counted(facts["missing_branches"])
            switches += len(facts["executed_branches"]) + len(facts["missing_branches"]) - \
                len(executed) - len(missing)
            covered, branches = len(executed), len(executed) + len(missing)
            taken += covered
            total += branches
            for rule in cited.get(function, ()):
                per_rule[rule][0] += covered
                per_rule[rule][1] += branches
            if missing:
                missed[f"{name}:{function}"] = [f"{a}->{b}" for a, b in missing]
        modules[name] = {"taken": taken, "branches": total}
    taken = sum(m["taken"] for m in modules.values())
    total = sum(m["branches"] for m in modules.values())
    wings = {wing: {"taken": sum(m["taken"] for n, m in modules.items() if n.startswith(p)),
                    "branches": sum(m["branches"] for n, m in modules.items()
                                    if n.startswith(p))}
             for wing, p in WINGS.items()}
    return {"modules": modules, "wings": wings, "rules": {r: {"taken": t, "branches": b}
                                          for r, (t, b) in sorted(per_rule.items())},
            "missed": missed, "taken": taken, "branches": total, "switches": switches,
            "guards": len(seen),
            # A guard missing from the code, or one the cases passed through both ways.
            "wrong_guards": sorted(
                [f"{m}: {g!r} is not in the code" for m, gs in GUARDS.items() for g in gs
                 if (m, g) not in seen]
                + [f"{m}:{line}: {g!r} was taken both ways" for (m, g), line in seen.items()
                   if (m, g) not in missed_guard])}


def _percent(taken: int, total: int) -> str:
    return f"{100 * taken / total:.1f}%" if total else "-"


def show(profile: str, summary: dict[str, Any]) -> None:
    wings = "; ".join(f"{wing} {w['taken']} of {w['branches']} "
                      f"({_percent(w['taken'], w['branches'])})"
                      for wing, w in summary["wings"].items())
    print(f"branch coverage of the reference by the suite's cases, profile {profile}: "
          f"{wings}; set aside: the functions of NOT_SERVED, the explain trace's and the "
          f"definitional walk's switches and {summary['guards']} guards no request reaches "
          f"({summary['switches']} branches)")
    for problem in summary["wrong_guards"]:
        print(f"  GUARDS is wrong: {problem}")
    for name, module in summary["modules"].items():
        print(f"  {name.removeprefix('reference/'):<32} {module['taken']:>5} / "
              f"{module['branches']:<5} {_percent(module['taken'], module['branches']):>7}")
    low = [(r, v) for r, v in summary["rules"].items()
           if v["branches"] and v["taken"] < v["branches"]]
    if low:
        print("  rules whose code the cases did not wholly reach:")
        for rule, value in sorted(low, key=lambda rv: rv[1]["taken"] / rv[1]["branches"]):
            print(f"    {rule:<10} {value['taken']:>4} / {value['branches']:<4} "
                  f"{_percent(value['taken'], value['branches']):>7}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="dev", choices=PROFILES)
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"), default=None,
                        help="the branches profile B reaches and profile A does not")
    parser.add_argument("-k", dest="keyword", default=None, help="only these cases (as -k)")
    parser.add_argument("--json", default=None, metavar="FILE", help="write the summary here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        profiles = args.compare or [args.profile]
        summaries = {p: summarize(measure(p, Path(work) / f".coverage-{p}", args.keyword))
                     for p in profiles}
    for profile, summary in summaries.items():
        show(profile, summary)
    if args.compare:
        first, second = (summaries[p] for p in args.compare)
        only = {k: sorted(set(v) - set(second["missed"].get(k, [])))
                for k, v in first["missed"].items()}
        only = {k: v for k, v in only.items() if v}
        print(f"\nbranches {args.compare[1]} reaches and {args.compare[0]} does not: "
              f"{sum(map(len, only.values()))}")
        for function, arcs in sorted(only.items()):
            print(f"  {function}: {', '.join(arcs)}")
    if args.json:
        Path(args.json).write_text(json.dumps(summaries, indent=1) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
