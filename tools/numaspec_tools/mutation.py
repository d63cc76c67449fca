"""Mutation testing of the reference, each mutant judged the way a peer is (issue 33).

    .venv/bin/numaspec-dev mutation init              # enumerate the mutants (cosmic-ray)
    .venv/bin/numaspec-dev mutation run --jobs 2      # judge every pending one
    .venv/bin/numaspec-dev mutation run --sample 0.1  # a tenth, the same tenth every time
    .venv/bin/numaspec-dev mutation run --ray         # on a Ray cluster
    .venv/bin/numaspec-dev mutation report            # the score, and every survivor

**The tool.**  cosmic-ray (pinned in the ``dev`` extra) enumerates the mutants of the
reference's merge, policies, options, CPU, Memory and Device Managers, admission, affinity
and the DRA allocator (:data:`MODULES`), applies each, and keeps the campaign in its session
database, so that ``cr-report`` and ``cr-html`` read it too.  What cosmic-ray's own runner does
not do, this file does: judge a mutant as a peer is judged, and shard the campaign.

**The judge.**  A mutant is applied to a private copy of the package (a tree per worker: the
whole package copied), and that copy is served: the judge
is ``numaspec conformance --impl "exec:... -m numaspec serve"`` with ``PYTHONPATH`` pointing the
served process at the copy, and the runner at an unmutated snapshot of the checkout taken
when the piece starts (so that editing the checkout during a campaign changes no verdict: a
runner that crashed on a half-written file once "killed" every mutant it judged).  The
runner, its expected answers and its oracle stay the unmutated numaspec, as for any
implementation.  The profile is ``triage`` (``ci``'s
derandomized examples, no shrinking) and ``--fail-fast`` (RUN-18): a mutant is killed at the
first case that fails, and only a survivor costs the whole selection.  The selection is the
cases citing a rule of the mutated module's chapters (:data:`MODULES`), where a mutant can
show; a timeout, a crash or a run that exits non-zero kills it.

**Sharding.**  The pending mutants are cut into pieces run by
:mod:`numaspec.conformance.running.sharding`: ``--jobs N`` worker processes, or ``--ray``.  Each
piece builds its tree once; results go back to this process, which alone writes the session.

**Triage.**  Every survivor is equivalent (``tests/fixtures/mutation/equivalent.json``: the
mutant, by module, operator and the line it changes, and why it cannot change an answer) or a
gap in what the suite draws (fixed in the strategy or property that should reach it).  The
report leaves the equivalent ones out of the score and lists the rest.  ``results.json`` beside
it records the campaign's outcomes (by the same key), from which
``tests/suite/power/test_mutation.py``
draws the sampled campaign of the test command.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from numaspec_tools import FIXTURES, REPO

FIXTURES = FIXTURES / "mutation"
SESSION = REPO / "numaspec-mutation" / "session.sqlite"
COMMAND = "numaspec-dev mutation"

#: The modules the campaign mutates, each with the rule prefixes of the chapters its mutants
#: can show in (the judge's selection: the cases citing a rule of these).
MODULES: dict[str, tuple[str, ...]] = {
    "reference/topology/merge.py": ("MERGE", "HINT", "MASK", "FAST"),
    "reference/topology/fast_merge.py": ("MERGE", "HINT", "MASK", "FAST"),
    "reference/topology/policies.py": ("POLICY", "MERGE", "OPT", "VER", "WIRE"),
    "reference/topology/options.py": ("OPT", "POLICY", "VER"),
    "reference/node/cpu.py": ("CPU", "ADMIT", "INV", "NODE"),
    "reference/node/cpu_assignment.py": ("CPU", "ADMIT", "INV"),
    "reference/node/cpu_manager.py": ("CPU", "ADMIT", "INV", "NODE", "RESIZE"),
    "reference/node/memory.py": ("MEM", "ADMIT", "INV", "NODE", "RESIZE"),
    "reference/node/devices.py": ("DEV", "ADMIT", "INV", "NODE", "RESIZE"),
    "reference/node/admission.py": ("ADMIT", "INV", "NODE", "QOS", "CPU", "MEM", "DEV",
                                    "RESIZE", "AFF"),
    "reference/node/affinity.py": ("AFF", "SCHED", "AWIRE"),
    # The DRA wing: the allocator's search, its constraints (DRA-6, DRA-21) and consumable
    # capacity (DRA-20), the node's pools, the selectors and their quantity and version library
    # (DRA-22), and the mixed pod it places (DRA-11..13).  Left out, as the merge's and the
    # node's decoders are: its reasons (DRA-15; no operation serves them), the objects'
    # decoding (DRA-1, DRA-10: a
    # refusal of an allocate case is "not claimed", not failed, so its mutants cannot show
    # through the protocol; tests/dra/test_dra.py's bad-input table judges them) and the
    # variants' table (DRA-8: the judge takes an answer as any variant that can give it, and
    # tests/upstream/dra checks the table against each release's own SupportedFeatures).
    "reference/dra/allocator.py": ("DRA",),
    "reference/dra/constraints.py": ("DRA",),
    "reference/dra/capacity.py": ("DRA",),
    "reference/dra/pools.py": ("DRA",),
    "reference/dra/selectors.py": ("DRA",),
    "reference/dra/cel_library.py": ("DRA",),
    "reference/dra/mixed_pod.py": ("DRA",),
}

#: How each module's mutants are served: ``numaspec serve`` (the fast merge, FAST-7) and/or
#: ``numaspec serve --definitional`` (the walk over the cross product, the spec's meaning).
#: ``merge.py`` is the walk, which only the second runs; ``policies.py`` holds both paths
#: (and WIRE-4's budget, which only the walk checks), so its mutants face both servings and
#: are killed if either run fails.
SERVINGS: dict[str, tuple[bool, ...]] = {
    "reference/topology/merge.py": (True,),
    "reference/topology/policies.py": (False, True),
}

#: cosmic-ray's operators left out, and why: replacing a bitwise or arithmetic operator by an
#: exotic one (``|`` by ``**``, ``<<`` by ``%``) in this code almost always raises at once or
#: changes every answer, so such mutants measure nothing the others do not, and they are a
#: third of the campaign.  The plain swaps (``+``/``-``, ``&``/``|``, comparisons, booleans,
#: constants, loops) stay.
EXCLUDED_OPERATORS = (
    r"core/ReplaceBinaryOperator_\w+_(Pow|LShift|RShift|FloorDiv|Div|Mod|Mul)$",
    r"core/ReplaceBinaryOperator_(Pow|LShift|RShift|FloorDiv|Div|Mod)_\w+$",
)

#: What the judge runs (RUN-18's --fail-fast; triage: ci's examples, no shrinking).
PROFILE = "triage"
#: Seconds one mutant may take before it counts as killed (a hang is a kill, as cosmic-ray
#: counts it).
TIMEOUT = 600.0


# --- the package tree a mutant is served from --------------------------------------------


def package_tree(root: Path, source: Path | None = None) -> Path:
    """The installed ``numaspec`` laid out under ``root`` (returned: the entry for
    ``PYTHONPATH``).  Without ``source``: a snapshot of the checkout, every package copied
    (the judge's runner runs from it, so that an edit to the checkout while a campaign runs
    changes no verdict).  With ``source`` (such a snapshot): a copy of it, so that a mutation
    written to the copy changes only that tree."""
    import tomllib

    setup = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    mapped: dict[str, str] = setup["package-dir"]
    site = root / "site"
    origin = REPO / mapped["numaspec"] if source is None else source / "numaspec"
    shutil.copytree(origin, site / "numaspec", ignore=shutil.ignore_patterns("__pycache__"),
                    dirs_exist_ok=True)
    if source is None:
        for package, folder in mapped.items():
            if package != "numaspec":
                shutil.copytree(REPO / folder, site.joinpath(*package.split(".")),
                                dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    return site


def tree_path(module: str, site: Path) -> Path:
    """Where a module of the reference (``reference/topology/merge.py``) is in a tree."""
    return site / "numaspec" / Path(module).relative_to("reference")


def selection(module: str) -> str:
    """The ``-k`` of a module's judge: every rule of its chapters."""
    from numaspec.rules import rules_by_id

    prefixes = MODULES[module]
    return ",".join(sorted(r for r in rules_by_id() if r.split("-")[0] in prefixes))


def judge_command(module: str, site: Path, out: Path, profile: str = PROFILE,
                  runner: Path | None = None) -> str:
    """The judge of a mutant of ``module`` served from the tree at ``site``; ``runner``: the
    unmutated snapshot the judge itself runs from (default: the installed numaspec)."""
    python = shlex.quote(sys.executable)
    runs = []
    for definitional in SERVINGS.get(module, (False,)):
        serve = f"env PYTHONPATH={shlex.quote(str(site))} PYTHONDONTWRITEBYTECODE=1 " \
                f"{python} -m numaspec serve" + (" --definitional" if definitional else "")
        prefix = [] if runner is None else ["env", f"PYTHONPATH={runner}",
                                            "PYTHONDONTWRITEBYTECODE=1"]
        runs.append(shlex.join([
            *prefix, sys.executable, "-m", "numaspec", "conformance", "--impl", f"exec:{serve}",
            "--profile", profile, "--fail-fast", "--no-progress", "--out", str(out),
            "-k", selection(module)]))
    if len(runs) == 1:
        return runs[0]
    return shlex.join(["sh", "-c", " && ".join(runs)])


# --- the mutants ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    """One work item: a module, an operator, its occurrence; ``line``: the mutated line as
    ``module:operator:original -> mutated`` (the key that survives edits elsewhere)."""

    job_id: str
    module: str
    operator: str
    occurrence: int
    start: tuple[int, int]
    end: tuple[int, int]


def _excluded(operator: str) -> bool:
    return any(re.match(pattern, operator) for pattern in EXCLUDED_OPERATORS)


def init(session: Path = SESSION) -> int:
    """A new session: cosmic-ray enumerates the mutants of :data:`MODULES`; the excluded
    operators' mutants are marked skipped."""
    from cosmic_ray.work_db import WorkDB, use_db

    session.parent.mkdir(parents=True, exist_ok=True)
    session.unlink(missing_ok=True)
    config = session.with_suffix(".toml")
    config.write_text("[cosmic-ray]\nmodule-path = [" + ", ".join(
        json.dumps(m) for m in MODULES) + f"]\ntimeout = {TIMEOUT}\nexcluded-modules = []\n"
        "test-command = \"true\"\n[cosmic-ray.distributor]\nname = \"local\"\n", "utf-8")
    cosmic_ray = Path(sys.executable).parent / "cosmic-ray"
    subprocess.run([str(cosmic_ray), "init", str(config), str(session)], cwd=REPO, check=True)
    skipped = mark_unjudged(session)
    with use_db(str(session), WorkDB.Mode.open) as db:
        total = db.num_work_items
    print(f"{total} mutants of {len(MODULES)} modules; not judged: "
          + ", ".join(f"{n} {why}" for why, n in sorted(skipped.items()))
          + f"; {total - sum(skipped.values())} to judge ({session})")
    return 0


def mark_unjudged(session: Path) -> Counter[str]:
    """Mark skipped, with the reason, every mutant no judge should run: an excluded operator's,
    or one inside an unjudged span (:func:`_unjudged_spans`), whatever result it had (the
    spans may have grown since the session was made).  Returns the count per reason."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    spans = {module: _unjudged_spans(REPO / module) for module in MODULES}
    skipped = Counter[str]()
    with use_db(str(session), WorkDB.Mode.open) as db:
        results = {item.job_id: result for item, result in db.completed_work_items}
        for item in [*db.pending_work_items, *(i for i, _ in db.completed_work_items)]:
            (mutation,) = item.mutations
            why = ("operator" if _excluded(mutation.operator_name) else
                   _inside(spans[str(mutation.module_path)], tuple(mutation.start_pos)))
            if not why:
                continue
            skipped[why.split(" ")[0]] += 1
            done = results.get(item.job_id)
            if done is None or done.worker_outcome is not WorkerOutcome.SKIPPED:
                db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED,
                                                      output=f"not judged: {why}"))
    return skipped


#: Functions no answer of the protocol runs, and why: they build the explain trace
#: (EXPLAIN-2), which the suite does not judge, or they are the contracts CrossHair checks
#: (tests/test_contracts.py), never called by the code; a mutant there cannot change an answer.
UNJUDGED_FUNCTIONS: dict[str, dict[str, str]] = {
    "reference/topology/fast_merge.py": {"_witness": "trace-only function",
                                         "_preferred_witness": "trace-only function"},
    "reference/topology/merge.py": {"_inside_every": "contract-only function",
                                    "_affinity_counts": "contract-only function"},
    # Builds the regular machines of the tests and contracts; a served machine is read from
    # its JSON (NWIRE-1), never built here.
    "reference/node/cpu.py": {"symmetric": "test-only constructor"},
}


def _unjudged_spans(path: Path) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
    """Where a mutant cannot change an answer, and why: annotations (``from __future__
    import annotations``: never evaluated), docstrings, and the trace-only functions."""
    import ast

    tree = ast.parse(path.read_text("utf-8"))
    module = str(path.relative_to(REPO))
    spans = []

    def add(node: ast.AST | None, why: str) -> None:
        if node is not None and hasattr(node, "end_lineno"):
            spans.append(((node.lineno, node.col_offset),  # type: ignore[attr-defined]
                          (node.end_lineno, node.end_col_offset), why))  # type: ignore[attr-defined]

    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            add(node.annotation, "annotation")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            add(node.returns, "annotation")
            why = UNJUDGED_FUNCTIONS.get(module, {}).get(node.name)
            if why:
                add(node, why)
        elif isinstance(node, ast.AnnAssign):
            add(node.annotation, "annotation")
    return spans


def _inside(spans: Iterable[tuple[tuple[int, int], tuple[int, int], str]],
            start: tuple[int, int]) -> str:
    line, column = start
    for low, high, why in spans:
        if low <= (line, column) < high:
            return why
    return ""


def pending(session: Path, again: str | None = None) -> list[Mutant]:
    """The mutants without a result; ``again``: those whose result is this outcome instead
    (``survived``: judge the survivors again, after the suite has changed)."""
    from cosmic_ray.work_db import WorkDB, use_db

    with use_db(str(session), WorkDB.Mode.open) as db:
        items = list(db.pending_work_items) if again is None else [
            item for item, result in db.completed_work_items
            if result.test_outcome is not None and result.test_outcome.value == again]
        return [Mutant(item.job_id, str(m.module_path), m.operator_name, m.occurrence,
                       tuple(m.start_pos), tuple(m.end_pos))
                for item in items for m in item.mutations]


def sampled(mutants: Sequence[Mutant], fraction: float) -> list[Mutant]:
    """The same ``fraction`` of the mutants every time: those whose key hashes below it."""
    def share(mutant: Mutant) -> float:
        digest = hashlib.sha256(f"{mutant.module}:{mutant.operator}:{mutant.occurrence}"
                                .encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2 ** 64

    return [m for m in mutants if share(m) < fraction]


@dataclass(frozen=True)
class Judge:
    """The task of one piece of the campaign: its mutants, on a tree of its own."""

    timeout: float = TIMEOUT
    profile: str = PROFILE

    def __call__(self, mutants: Sequence[Mutant], tick: Any) -> list[tuple[str, dict[str, Any]]]:
        from cosmic_ray.mutating import mutate_and_test
        from cosmic_ray.work_item import MutationSpec

        results = []
        with tempfile.TemporaryDirectory(prefix="numaspec-mutant-") as work:
            # The judge runs from a snapshot taken now, the mutant from a copy of it: an edit
            # to the checkout while the campaign runs changes neither.
            runner = package_tree(Path(work) / "runner")
            site = package_tree(Path(work), source=runner)
            for mutant in mutants:
                spec = MutationSpec(tree_path(mutant.module, site), mutant.operator,
                                    mutant.occurrence, mutant.start, mutant.end)
                command = judge_command(mutant.module, site, Path(work) / "out",
                                        self.profile, runner)
                result = mutate_and_test([spec], command, self.timeout)
                results.append((mutant.job_id, {
                    "worker_outcome": result.worker_outcome.value,
                    "test_outcome": None if result.test_outcome is None
                    else result.test_outcome.value,
                    "output": _tail(result.output or ""),
                    "diff": (result.diff or "").replace(str(site / "numaspec"), "reference")}))
                tick(1, int(result.test_outcome is not None
                            and result.test_outcome.value == "survived"))
        return results


def _tail(output: str, lines: int = 12) -> str:
    return "\n".join(output.strip().splitlines()[-lines:])


def run(session: Path, *, fraction: float, only: str | None, engine: Any,
        progress: bool | None, again: str | None = None, profile: str = PROFILE) -> int:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    from numaspec.conformance.running.reports import Progress
    from numaspec.conformance.running.sharding import Runner

    mark_unjudged(session)
    chosen = sampled(pending(session, again), fraction)
    if only:
        chosen = [m for m in chosen if only in m.module]
    if not chosen:
        print("nothing to judge: every mutant of the selection has a result")
        return 0
    pieces = [chosen[i::max(1, engine.jobs) * 4] for i in range(max(1, engine.jobs) * 4)]
    pieces = [p for p in pieces if p]
    bar = Progress(len(chosen), enabled=progress)
    print(f"judging {len(chosen)} mutants on {engine.describe()}, profile {profile}", flush=True)
    try:
        with Runner(engine) as runner:
            results = runner.map(Judge(profile=profile), pieces, progress=bar.update,
                                 measure=lambda r: (len(r), 0))
    finally:
        bar.finish()
    with use_db(str(session), WorkDB.Mode.open) as db:
        for piece in results:
            for job_id, raw in piece:
                db.set_result(job_id, WorkResult(
                    worker_outcome=WorkerOutcome(raw["worker_outcome"]),
                    test_outcome=None if raw["test_outcome"] is None
                    else TestOutcome(raw["test_outcome"]),
                    output=raw["output"], diff=raw["diff"]))
    return report(session)


# --- the report -----------------------------------------------------------------------------


def changed_line(diff: str) -> str:
    """A mutant's key line: ``original -> mutated``, from its diff (the first line each way)."""
    removed = next((line[1:].strip() for line in diff.splitlines()
                    if line.startswith("-") and not line.startswith("---")), "")
    added = next((line[1:].strip() for line in diff.splitlines()
                  if line.startswith("+") and not line.startswith("+++")), "")
    return f"{removed} -> {added}"


def key(module: str, operator: str, diff: str, line: int | None = None) -> str:
    """``module:operator:original -> mutated``; where the mutated line's text stands more
    than once in the module (``line``: where the mutant starts), `` @n`` says which."""
    return f"{module}:{operator}:{changed_line(diff)}" + (
        "" if line is None else _ordinal(module, line))


@functools.cache
def _source(module: str) -> str:
    """A module's text, read once per process (the report keys every mutant by it)."""
    return (REPO / module).read_text("utf-8")


def _ordinal(module: str, line: int) -> str:
    lines = _source(module).splitlines()
    if not 0 < line <= len(lines):
        return ""
    same = [i for i, text in enumerate(lines, 1) if text.strip() == lines[line - 1].strip()]
    return "" if len(same) < 2 else f" @{same.index(line) + 1}"


def mutant_key(mutant: Mutant) -> str:
    """A mutant's key without judging it: its mutation applied to the module's text in
    memory, and the key read from the difference."""
    import difflib

    import cosmic_ray.plugins
    from cosmic_ray.mutating import mutate_code

    code = _source(mutant.module)
    operator = cosmic_ray.plugins.get_operator(mutant.operator)()
    mutated = mutate_code(code, operator, mutant.occurrence)
    diff = "" if mutated is None else "\n".join(difflib.unified_diff(
        code.splitlines(), mutated.splitlines(), lineterm=""))
    return key(mutant.module, mutant.operator, diff, mutant.start[0])


def recorded() -> dict[str, str]:
    """The last campaign's outcome of each mutant it judged (``results.json``): key ->
    ``killed``, ``survived``, ``equivalent`` or ``mixed`` (a line standing twice, its mutants
    judged differently)."""
    path = FIXTURES / "results.json"
    if not path.is_file():
        return {}
    return {m["key"]: m["outcome"] for m in json.loads(path.read_text("utf-8"))["mutants"]}


def equivalents() -> dict[str, str]:
    """The survivors argued equivalent: key -> why."""
    path = FIXTURES / "equivalent.json"
    if not path.is_file():
        return {}
    return {e["key"]: e["why"] for e in json.loads(path.read_text("utf-8"))["equivalent"]}


def outcomes(session: Path) -> Iterator[tuple[str, str, str, str, int]]:
    """(module, operator, outcome, diff, start line) of every mutant with a result."""
    from cosmic_ray.work_db import WorkDB, use_db

    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            (mutation,) = item.mutations
            worker = result.worker_outcome.value
            if worker in ("skipped", "no-test"):
                outcome = worker
            elif worker != "normal" or result.test_outcome is None:
                outcome = "incompetent"
            else:
                outcome = result.test_outcome.value
            yield (str(mutation.module_path), mutation.operator_name, outcome,
                   result.diff or "", mutation.start_pos[0])


def report(session: Path = SESSION, *, write: bool = False) -> int:
    """The score per module and in all (equivalent survivors left out), and every survivor
    not argued equivalent; ``write``: also record the outcomes in results.json."""
    argued = equivalents()
    counts: dict[str, Counter[str]] = {m: Counter() for m in MODULES}
    survivors: list[str] = []
    recorded: list[dict[str, str]] = []
    for module, operator, judged, diff, line in outcomes(session):
        mutant = key(module, operator, diff, line)
        outcome = "equivalent" if judged == "survived" and mutant in argued else judged
        counts[module][outcome] += 1
        if outcome == "survived":
            survivors.append(f"{mutant}\n{diff}")
        if outcome in ("killed", "survived", "equivalent"):
            recorded.append({"key": mutant, "outcome": outcome})
    total: Counter[str] = Counter()
    print(f"{'module':<36} {'killed':>7} {'survived':>8} {'equiv.':>6} {'incomp.':>7} "
          f"{'skipped':>7} {'score':>7}")
    for module, count in counts.items():
        total.update(count)
        print(f"{module.removeprefix('reference/'):<36} {count['killed']:>7} "
              f"{count['survived']:>8} {count['equivalent']:>6} {count['incompetent']:>7} "
              f"{count['skipped']:>7} {_score(count):>7}")
    print(f"{'all':<36} {total['killed']:>7} {total['survived']:>8} {total['equivalent']:>6} "
          f"{total['incompetent']:>7} {total['skipped']:>7} {_score(total):>7}")
    if survivors:
        print(f"\n{len(survivors)} survivors not argued equivalent:")
        for text in survivors:
            print("  " + text.replace("\n", "\n    "))
    if write:
        # A key names a line's text, which may stand twice in a module (the same test in two
        # places): such a key records one outcome when all its mutants share it, else "mixed".
        by_key: dict[str, set[str]] = {}
        for entry in recorded:
            by_key.setdefault(entry["key"], set()).add(entry["outcome"])
        (FIXTURES / "results.json").write_text(json.dumps(
            {"profile": PROFILE, "command": f"{COMMAND} run --sample 0.1 --jobs 2",
             "mutants": [{"key": k, "outcome": v.pop() if len(v) == 1 else "mixed"}
                         for k, v in sorted(by_key.items())]},
            indent=1) + "\n", "utf-8")
    return 0


def _score(count: Counter[str]) -> str:
    judged = count["killed"] + count["survived"]
    return f"{100 * count['killed'] / judged:.1f}%" if judged else "-"


def main(argv: Sequence[str] | None = None) -> int:
    from numaspec.conformance.running import sharding

    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("init", help="enumerate the mutants into a new session")
    go = sub.add_parser("run", help="judge the pending mutants")
    go.add_argument("--sample", type=float, default=1.0, metavar="FRACTION",
                    help="judge only this share of the mutants, the same share every time")
    go.add_argument("--only", default=None, metavar="MODULE",
                    help="only the mutants of modules whose path contains this")
    go.add_argument("--again", choices=["survived", "killed"], default=None,
                    help="judge again the mutants with this result (after the suite changed)")
    go.add_argument("--profile", default=PROFILE, choices=("dev", "ci", "triage"),
                    help=f"the judge's Hypothesis profile (default {PROFILE}: ci's examples, "
                    "no shrinking; dev: the newcomer's, to see what it misses)")
    go.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None)
    sharding.add_arguments(go)
    shown = sub.add_parser("report", help="the score, and every survivor")
    shown.add_argument("--write", action="store_true",
                       help="also record the outcomes in tests/fixtures/mutation/results.json")
    for each in sub.choices.values():
        each.add_argument("--session", type=Path, default=SESSION)
    args = parser.parse_args(argv)
    if args.command == "init":
        return init(args.session)
    if args.command == "run":
        return run(args.session, fraction=args.sample, only=args.only,
                   engine=sharding.engine_from_args(args), progress=args.progress,
                   again=args.again, profile=args.profile)
    return report(args.session, write=args.write)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
