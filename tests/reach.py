"""The suite's reach: branch coverage of the reference by the suite's own cases, per profile and
per spec rule (issue 33).

    .venv/bin/python tests/reach.py                      # dev: the profile a newcomer runs
    .venv/bin/python tests/reach.py --profile ci
    .venv/bin/python tests/reach.py --compare dev ci     # branches ci reaches and dev does not
    .venv/bin/python tests/reach.py --json reach.json

``numaspec conformance`` runs against the reference in process, under coverage.py with branch
measurement, over the merge and the node model (:data:`MODELS`); the implementation and the
suite's oracle are the same code there, which is what "the reference, reached by the suite's
cases" means.  Code the protocol never runs is left out and named (:data:`NOT_SERVED`: the
definitional walk and the explain trace), as the mutation campaign leaves it out of its
protocol judge (``tests/mutation.py``).

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

REPO = Path(__file__).resolve().parent.parent
COMMAND = "python tests/reach.py"
#: The merge model and the node model: the code whose reach the targets speak of.
MODELS = ("reference/topology", "reference/node")
#: Functions the protocol never runs, by module: the definitional walk and its budget (served
#: only with ``numaspec serve --definitional``; the fast merge answers), the explain trace,
#: and the constructors of the tests' machines.  The mutation campaign judges the walk served
#: that way (``tests/mutation.py``).
NOT_SERVED: dict[str, tuple[str, ...]] = {
    "reference/topology/merge.py": ("*",),
    # WIRE-4's budget, checked before the walk only: served with --definitional too.
    "reference/topology/policies.py": ("_check_budget", "_count", "_traced"),
    "reference/topology/trace.py": ("*",),
    "reference/node/trace.py": ("*",),
    "reference/topology/fast_merge.py": ("_witness", "_preferred_witness"),
    # Builds the tests' and contracts' regular machines; a served machine comes from JSON.
    "reference/node/machine.py": ("Machine.symmetric",),
    "reference/node/cpu.py": ("CPUTopology.symmetric",),
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
    for name, entry in sorted(report["files"].items()):
        if not name.startswith(MODELS):
            continue
        cited = rules_of(REPO / name)
        taken = total = 0
        for function, facts in entry.get("functions", {}).items():
            if not function or not _served(name, function):
                continue
            summary = facts["summary"]
            branches, covered = summary["num_branches"], summary["covered_branches"]
            taken += covered
            total += branches
            for rule in cited.get(function, ()):
                per_rule[rule][0] += covered
                per_rule[rule][1] += branches
            if summary["missing_branches"]:
                missed[f"{name}:{function}"] = [f"{a}->{b}" for a, b in
                                                facts["missing_branches"]]
        modules[name] = {"taken": taken, "branches": total}
    taken = sum(m["taken"] for m in modules.values())
    total = sum(m["branches"] for m in modules.values())
    return {"modules": modules, "rules": {r: {"taken": t, "branches": b}
                                          for r, (t, b) in sorted(per_rule.items())},
            "missed": missed, "taken": taken, "branches": total}


def _percent(taken: int, total: int) -> str:
    return f"{100 * taken / total:.1f}%" if total else "-"


def show(profile: str, summary: dict[str, Any]) -> None:
    print(f"branch coverage of the merge and node model by the suite's cases, profile "
          f"{profile}: {summary['taken']} of {summary['branches']} branches "
          f"({_percent(summary['taken'], summary['branches'])})")
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
    parser.add_argument("--profile", default="dev", choices=("dev", "ci", "nightly", "triage"))
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
