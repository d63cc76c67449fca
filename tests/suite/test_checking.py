"""The node's model checker (spec/conformance/checking.md): the reference has no violation within
small bounds (CHECK-1, CHECK-2), every node mutant of the suite is caught (CHECK-3, CHECK-4) with a
shortest counterexample (CHECK-5), and ``numaspec check`` reports both readably (CHECK-6)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import attrs
import pytest

from numaspec.conformance.checking.bounds import MACHINES, Bounds, initial_nodes, pod_alphabet
from numaspec.conformance.checking.command import explore_partitioned
from numaspec.conformance.checking.explorer import (
    STATE,
    Counterexample,
    Fold,
    NodeExplorer,
    ReferenceRunner,
    ReplayRunner,
    Report,
    SessionReplayRunner,
    explore,
)
from numaspec.conformance.checking.symmetry import (
    Key,
    canonical_key,
    kind_of,
    renamed,
    split_state,
)
from numaspec.conformance.properties.affinity import affinity_violation
from numaspec.conformance.properties.node_sessions import _reference_answers, check_answers
from numaspec.conformance.running.sharding import Engine
from numaspec.protocols.adapter_protocol import REFERENCE_IMPL
from numaspec.protocols.node_protocol import NodeSession
from numaspec_tools.mutants.affinity_mutants import AFFINITY_MUTATIONS, AffinityMutant
from numaspec_tools.mutants.node_mutants import NODE_MUTATIONS, MutantNode
from numaspec_tools.mutants.symmetry_mutants import (
    device_doubled_on_node_1,
    kinds_confused_key,
    numa_mirror_key,
)
from numaspec_tools.mutants.whole_admission_mutants import WHOLE_ADMISSION_MUTATIONS, MutantSession

QUICK: dict[str, Any] = {"releases": ("1.37",), "machines": ("1x2x2x1",), "depth": 3}

#: Each node mutant, the bounds (over QUICK) that catch it within seconds, and the check its
#: shortest counterexample breaks: every invariant the checker checks is shown to bite.
MUTANTS: dict[str, tuple[dict[str, Any], str]] = {
    "free_not_decremented": ({}, "INV-1"),
    "hugepages_counted_twice": ({}, "INV-2"),
    "group_spills_to_next_node": ({}, "INV-3"),
    "group_rule_ignored": ({}, "INV-3"),
    "sidecar_cpus_reused": ({}, "INV-4"),
    "sidecar_devices_reused": ({}, "INV-4"),
    "refusal_keeps_cpus": ({}, "INV-4"),
    "reserved_cpus_handed_out": ({}, "INV-5"),
    "one_cpu_too_many": ({}, "INV-6"),
    "policy_admits_all": ({"policies": ("restricted",)}, "INV-7"),
    "affinity_ignored_by_cpus": ({"policies": ("single-numa-node",)}, "INV-8"),
    # with pods that are never refused, a release that keeps memory shows at the end
    "release_keeps_memory": ({"pods": "small"}, "INV-9"),
    "init_reuse_ignored": ({}, "ADMIT-10"),
    "error_frees_a_pod": ({}, "ADMIT-10"),
    # Only a comparison with the reference shows it (CHECK-4): a wider hint preferred.
    "preferred_by_free_cpus": ({"policies": ("restricted",), "cpu": ("static",),
                                "memory": ("None",), "depth": 4, "hints": True}, "expected"),
}


def _mutant(name: str) -> ReplayRunner:
    def answers(steps: list[dict[str, Any]]) -> list[Any]:
        node = MutantNode(name)
        return [node.handle(step) for step in steps]
    return ReplayRunner(answers)


def test_every_node_mutant_is_listed() -> None:
    assert set(MUTANTS) == set(NODE_MUTATIONS)


def test_the_reference_has_no_violation_within_small_bounds() -> None:
    report = explore(Bounds(releases=("1.30", "1.37"), machines=("1x2x2x1",), depth=2,
                            copies=1), ReferenceRunner())
    assert report.counterexample is None
    assert report.exhausted
    assert report.initial_nodes == 2 * 4 * 2 * 3 * 2
    assert report.distinct > report.initial_nodes
    assert report.depth == 2


def test_a_machine_shape_names_its_memory() -> None:
    """CHECK-1: any shape within the limits, with the memory per NUMA node after ``@``."""
    from numaspec.conformance.checking.bounds import initial_nodes

    bounds = Bounds(releases=("1.37",), machines=("2x1x3x2@1Gi",), policies=("none",),
                    scopes=("container",), cpu=("none",), memory=("None",))
    (create,) = initial_nodes(bounds)
    numa = create["node"]["machine"]["numaNodes"]
    assert [n["memory"] for n in numa] == ["1Gi", "1Gi"]
    assert [len(n["cores"]) for n in numa] == [3, 3]
    assert {c["socket"] for c in numa[1]["cores"]} == {1}
    assert all(len(c["threads"]) == 2 for n in numa for c in n["cores"])


def test_the_reference_agrees_with_itself_through_the_protocol_path() -> None:
    """CHECK-4's replaying runner and comparison, on the reference: the same states as the
    copying runner, and no difference."""
    bounds = Bounds(releases=("1.30",), machines=("1x2x2x1",), policies=("restricted",),
                    depth=2)
    copying = explore(bounds, ReferenceRunner())
    replaying = explore(bounds, ReplayRunner(ReferenceRunner().answers), compare=True)
    assert replaying.counterexample is None
    assert (replaying.distinct, replaying.transitions) == (copying.distinct,
                                                           copying.transitions)


@pytest.mark.parametrize("name", sorted(MUTANTS))
@pytest.mark.slow
def test_each_node_mutant_has_a_shortest_counterexample(name: str) -> None:
    overrides, broken = MUTANTS[name]
    bounds = Bounds(**{**QUICK, **overrides})
    compare = bool(overrides.get("hints"))
    report = explore(bounds, _mutant(name), compare=compare)
    found = report.counterexample
    assert found is not None, f"{name} escaped: {report.as_json()}"
    assert broken in found.message
    # CHECK-5: shortest: one step fewer finds nothing (on the same initial nodes)
    depth = (len(found.steps) - 2) // 2
    if depth:
        shorter = explore(Bounds(**{**QUICK, **overrides, "depth": depth - 1}),
                          _mutant(name), compare=compare)
        assert shorter.counterexample is None
    # CHECK-11: the unreduced run finds one no shorter
    unreduced = explore(attrs.evolve(bounds, symmetry=False), _mutant(name), compare=compare)
    assert unreduced.counterexample is not None
    assert _length(unreduced.counterexample) == _length(found)
    # the session is the mutant's fault: the reference's answers to it break nothing
    steps = list(found.steps)
    assert check_answers(steps, ReferenceRunner().answers(steps), compare=False) is None


def _length(found: Counterexample) -> int:
    """The steps of a counterexample (CHECK-5), as ``numaspec check`` counts them."""
    return sum(1 for step in found.steps if step["op"] == "state") - 1


#: The whole-admission mutants (ADMIT-8, ADMIT-9), run in process so that INV-10, which
#: needs the node's allocatable, is checked too (CHECK-3).
WHOLE_ADMISSION: dict[str, tuple[dict[str, Any], str]] = {
    "fit-skipped": ({}, "INV-10: memory"),
    "pods-not-counted": ({"max_pods": 1}, "INV-10: 2 pods on a node for 1"),
    # the pod refused after the providers allocated keeps its CPUs
    "fit-keeps-allocations": ({}, "INV-4"),
}


def test_every_whole_admission_mutant_is_listed() -> None:
    assert set(WHOLE_ADMISSION) == set(WHOLE_ADMISSION_MUTATIONS)


@pytest.mark.parametrize("name", sorted(WHOLE_ADMISSION))
@pytest.mark.slow
def test_each_whole_admission_mutant_has_a_shortest_counterexample(name: str) -> None:
    overrides, broken = WHOLE_ADMISSION[name]

    def explored(depth: int) -> Any:
        return explore(Bounds(**{**QUICK, **overrides, "depth": depth}),
                       SessionReplayRunner(lambda: MutantSession(name)))

    found = explored(QUICK["depth"]).counterexample
    assert found is not None
    assert broken in found.message
    depth = sum(step["op"] == "state" for step in found.steps) - 1
    assert explored(depth - 1).counterexample is None
    # CHECK-11: the unreduced run finds one no shorter
    unreduced = explore(Bounds(**{**QUICK, **overrides, "symmetry": False}),
                        SessionReplayRunner(lambda: MutantSession(name))).counterexample
    assert unreduced is not None
    assert _length(unreduced) == depth


def test_the_reference_keeps_inv_10_at_a_small_max_pods() -> None:
    report = explore(Bounds(**{**QUICK, "max_pods": 1, "depth": 2,
                               "policies": ("restricted",)}), ReferenceRunner())
    assert report.counterexample is None
    assert report.exhausted


AFFINE: dict[str, Any] = {"releases": ("1.37",), "machines": ("1x2x2x1",), "pods": "affinity",
                          "depth": 2}

#: CHECK-7: each affinity mutant of the suite, the bounds (over AFFINE) that catch it, and what
#: its shortest counterexample breaks: each affinity invariant is shown to bite.
AFFINITY_MUTANTS: dict[str, tuple[dict[str, Any], str]] = {
    "ignore_existing_anti": ({}, "P-AFF-ANTI"),
    "or_keys": ({}, "P-AFF-REQUIRED"),
    "ignore_exclusive": ({}, "P-AFF-EXCLUSIVE"),
    "scheduler_ignores_fit": ({}, "P-AFF-SCHEDULE"),
    # under none and best-effort the allocator ignores the region (AFF-9)
    "no_hard_check": ({"policies": ("none",)}, "P-AFF-REQUIRED"),
    # the scheduler refuses a valid pod: an error, not a verdict
    "empty_value_malformed": ({}, "P-AFF-SCHEDULE"),
    # Only a comparison with the reference shows it (CHECK-4): a region of two NUMA nodes
    # out of four, whose spanning hint the filter marks preferred.
    "filter_marks_preferred": ({"machines": ("2x2x2x1",), "policies": ("restricted",),
                                "scopes": ("container",), "cpu": ("static",),
                                "memory": ("None",), "hints": True}, "expected"),
}


def _affinity_mutant(name: str) -> ReplayRunner:
    mutant = AffinityMutant(name)

    def answers(steps: list[dict[str, Any]]) -> list[Any]:
        return list(mutant.affinity_session({"steps": steps})["answers"])
    return ReplayRunner(answers)


def test_every_affinity_mutant_is_listed() -> None:
    assert set(AFFINITY_MUTANTS) == set(AFFINITY_MUTATIONS)


def test_the_reference_has_no_affinity_violation_within_small_bounds() -> None:
    """CHECK-7: on both machine kinds (one socket and two), every policy and scope."""
    report = explore(Bounds(releases=("1.37",), machines=("1x2x2x1", "2x2x2x1"),
                            cpu=("static",), pods="affinity", depth=2), ReferenceRunner(
                                affinity=True))
    assert report.counterexample is None
    assert report.exhausted
    assert report.initial_nodes == 2 * 4 * 2 * 2


@pytest.mark.parametrize("name", sorted(AFFINITY_MUTANTS))
@pytest.mark.slow
def test_each_affinity_mutant_has_a_shortest_counterexample(name: str) -> None:
    overrides, broken = AFFINITY_MUTANTS[name]
    bounds = Bounds(**{**AFFINE, **overrides})
    compare = broken == "expected"
    report = explore(bounds, _affinity_mutant(name), compare=compare)
    found = report.counterexample
    assert found is not None, f"{name} escaped: {report.as_json()}"
    assert broken in found.message
    depth = sum(step["op"] == "state" for step in found.steps) - 1
    if depth:
        shorter = explore(Bounds(**{**AFFINE, **overrides, "depth": depth - 1}),
                          _affinity_mutant(name), compare=compare)
        assert shorter.counterexample is None
    # CHECK-11: the unreduced run finds one no shorter
    unreduced = explore(attrs.evolve(bounds, symmetry=False), _affinity_mutant(name),
                        compare=compare).counterexample
    assert unreduced is not None
    assert _length(unreduced) == depth
    # the session is the mutant's fault: the reference's answers to it break nothing
    steps = list(found.steps)
    reference = ReferenceRunner(affinity=True).answers(steps)
    assert check_answers(steps, reference, compare=False, op="affinity") is None
    assert affinity_violation(steps, reference) is None


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "numaspec", "check", *args],
                          capture_output=True, text=True, timeout=600)


def test_the_command_reports_exhaustion() -> None:
    done = _check("--releases", "1.37", "--machines", "1x2x2x1", "--pods", "small",
                  "--depth", "2")
    assert done.returncode == 0, done.stderr
    assert "exhausted: every sequence within the bounds was run; no violation" in done.stdout
    assert "initial nodes: 48" in done.stdout
    cut = _check("--releases", "1.37", "--machines", "1x2x2x1", "--pods", "small",
                 "--max-states", "10", "--json")
    assert cut.returncode == 0, cut.stderr
    report = json.loads(cut.stdout)
    assert report["exhausted"] is False
    assert report["distinct_states"] == 10
    assert sum(report["distinct_states_by_depth"]) == 10  # CHECK-6


def test_the_default_jobs_are_the_cpus_and_no_more_than_the_nodes() -> None:
    """CHECK-10: without --jobs, a worker per CPU, none idle for want of a node."""
    from numaspec.conformance.checking.command import default_jobs

    one = Bounds(releases=("1.37",), machines=("1x2x2x1",), policies=("none",),
                 scopes=("pod",), cpu=("none",), memory=("None",))
    assert default_jobs(one) == 1
    assert 1 <= default_jobs(Bounds()) <= 192
    assert "no symmetry reduction" in attrs.evolve(one, symmetry=False).describe()


def test_the_command_finds_a_mutant_through_the_protocol(tmp_path: Path) -> None:
    adapter = f"exec:{shlex.quote(sys.executable)} " \
              "-m numaspec_tools.mutants.exec_adapter " \
              "node one_cpu_too_many"
    out = tmp_path / "session.jsonl"
    done = _check("--impl", adapter, "--releases", "1.37", "--machines", "1x2x2x1",
                  "--policies", "none", "--scopes", "container", "--memory", "None",
                  "--depth", "2", "--out", str(out))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "VIOLATION after 1 step(s)" in done.stdout
    assert "numaspec node <<'EOF'" in done.stdout
    lines = out.read_text("utf-8").splitlines()
    assert json.loads(lines[0])["op"] == "create"
    replay = subprocess.run([sys.executable, "-m", "numaspec", "node"], input="\n".join(lines),
                            capture_output=True, text=True, timeout=60)
    answers = [json.loads(line) for line in replay.stdout.splitlines()]
    assert len(answers) == len(lines)
    assert answers[2]["decision"]["admitted"]


def _exec_mutant(kind: str, mutation: str) -> str:
    return (f"exec:{shlex.quote(sys.executable)} "
            "-m numaspec_tools.mutants.exec_adapter "
            f"{kind} {mutation}")


def test_the_command_finds_an_affinity_mutant_through_the_protocol(tmp_path: Path) -> None:
    """CHECK-7 through the protocol: the counterexample is an affinity session that
    ``numaspec node --affinity`` replays; an implementation that does not declare affinity
    sessions runs nothing."""
    out = tmp_path / "session.jsonl"
    bounds = ["--pods", "affinity", "--releases", "1.37", "--machines", "1x2x2x1",
              "--scopes", "container", "--depth", "2"]
    done = _check("--impl", _exec_mutant("affinity", "ignore_exclusive"), *bounds,
                  "--out", str(out))
    assert done.returncode == 1, done.stdout + done.stderr
    # the comparison with the reference (CHECK-4) sees it first, at the scheduler's check
    assert "VIOLATION after 2 step(s): step 6 (schedule pod 'x-1')" in done.stdout
    assert "numaspec node --affinity <<'EOF'" in done.stdout
    lines = out.read_text("utf-8").splitlines()
    replay = subprocess.run([sys.executable, "-m", "numaspec", "node", "--affinity"],
                            input="\n".join(lines), capture_output=True, text=True, timeout=60)
    answers = [json.loads(line) for line in replay.stdout.splitlines()]
    assert len(answers) == len(lines)
    assert affinity_violation([json.loads(line) for line in lines], answers) is None


def test_affinity_nodes_are_not_run_where_affinity_is_not_declared() -> None:
    """CHECK-4, CHECK-7: an implementation without affinity sessions runs none of them."""
    from numaspec.conformance.checking.command import _runner, _unclaimed, text

    bounds = Bounds(**{**AFFINE, "depth": 1})
    runner, connection = _runner("numaspec_tools.adapters.in_process:NodeOnlyAdapter", bounds.op)
    try:
        report = explore(bounds, runner, compare=True,
                         unclaimed=_unclaimed(connection, bounds.op))
    finally:
        connection.close()
    assert report.unclaimed_nodes == report.initial_nodes > 0
    assert "affinity" in report.unclaimed_reason
    assert "nothing was run: the implementation claims none of these nodes" in text(report)


@pytest.mark.parametrize(("args", "where"), [
    (["--machines", "9x9"], "--machines"),
    (["--machines", "3x1x1x1"], "--machines"),
    (["--machines", "1x2x2x1@3Gi"], "--machines"),
    (["--releases", "1.20"], "--releases"),
    (["--policies", ""], "--policies"),
    (["--jobs", "0"], "--jobs"),
    # a Ray address that does not answer (or, without the extra, Ray not installed)
    (["--ray", "127.0.0.1:1", "--depth", "1"], "--ray"),
])
def test_bad_bounds_are_one_line_errors(args: list[str], where: str) -> None:
    done = _check(*args)
    assert done.returncode == 4
    assert where in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.go
@pytest.mark.parametrize("minor", ["1.30", "1.37"])
def test_kubelet_conforms_exhaustively_within_small_bounds(minor: str) -> None:
    """CHECK-4 against kubelet's own managers: every path of one step from every initial
    node on the small machine (and, at 1.37, two from the restricted ones), compared with the
    reference, the invariants on kubelet's own answers."""
    from numaspec_tools.builds import kubelet as kubelet_builds

    adapter = f"exec:{shlex.quote(str(kubelet_builds.binary(minor)))}"
    for depth, policies in ((1, "none,best-effort,restricted,single-numa-node"),
                            (2, "restricted")):
        if depth == 2 and minor != "1.37":
            continue  # the longer paths at the newest release only
        done = _check("--impl", adapter, "--releases", minor, "--machines", "1x2x2x1",
                      "--policies", policies, "--depth", str(depth), "--json")
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
        report = json.loads(done.stdout)
        assert report["exhausted"]
        assert report["counterexample"] is None






def test_only_the_nodes_an_implementation_claims_are_run() -> None:
    """CHECK-4: nodes outside the claims are counted, not run (PROTO-7)."""
    from numaspec.conformance.checking.command import _runner, _unclaimed

    bounds = Bounds(releases=("1.37",), machines=("1x2x2x1",), depth=1, devices=False)
    runner, connection = _runner("numaspec_tools.adapters.in_process:PartialAdapter", "node")
    try:
        report = explore(bounds, runner, compare=True, unclaimed=_unclaimed(connection, "node"))
    finally:
        connection.close()
    assert report.counterexample is None
    run = report.initial_nodes - report.unclaimed_nodes
    assert run == 2 * 3  # restricted; both scopes; the three CPU Manager configurations
    assert "policy" in report.unclaimed_reason or "manager" in report.unclaimed_reason
    assert report.exhausted


@pytest.mark.parametrize(("cpu", "held", "broken"), [
    ("2", 2, False), ("2000m", 2, False), ("+2", 2, False), ("2e0", 2, False),
    ("1500m", 1, True), ("2", 3, True), ("+1", 2, True)])
def test_inv_6_reads_a_cpu_request_as_kubelet_does(cpu: str, held: int, broken: bool) -> None:
    """INV-6 counts a container's exclusive CPUs against its cpu request read as a quantity
    (QTY-1), however it is spelled: the suite's checker once read "+1" as no whole CPU and
    failed the reference (issue 33's respelled quantities)."""
    from numaspec.conformance.properties.node_machine import StateChecks

    pod = {"uid": "p", "containers": [{"name": "c", "resources": {"limits": {"cpu": cpu}}}]}
    decision = {"containers": [{"name": "c", "cpus": list(range(held)), "devices": {},
                                "memory": [], "hint": {"numa": [0], "preferred": True}}]}
    failures: list[str] = []
    checks = StateChecks({"kubeletVersion": "1.37", "machine": {"numaNodes": []}, "config": {}})
    checks.decision(pod, decision, "none", failures.append)
    assert any("INV-6" in f for f in failures) == broken, failures


# --- the reference's copies (CHECK-4) ---------------------------------------------------------


class _CheckedCopies(ReferenceRunner):
    """The copying runner, each path's answers checked against the reference replaying the
    path on a fresh session, and what it keeps along the path for the checks (F-MEM-OVERLAP's
    first step) against what the replay finds."""

    def __init__(self, *, affinity: bool = False) -> None:
        super().__init__(affinity=affinity)
        self.affinity = affinity
        self.paths: dict[int, tuple[Any, list[dict[str, Any]]]] = {}
        self.overlaps = 0

    def start(self, create: dict[str, Any]) -> tuple[Any, list[Any]]:
        handle, answers = super().start(create)
        self.paths[id(handle)] = (handle, [create, STATE])
        return handle, answers

    def extend(self, parent: Any, answers: list[Any], move: Any) -> tuple[Any, list[Any]]:
        child, said = super().extend(parent, answers, move)
        steps = [*self.paths[id(parent)][1], *move, STATE]
        self.paths[id(child)] = (child, steps)
        replayed, _, _, overlap = _reference_answers(steps, affinity=self.affinity)
        assert said == replayed, steps
        assert self.reference(child, steps, said)[3] == overlap, steps
        self.overlaps += overlap < len(steps)
        return child, said


@pytest.mark.parametrize("affinity", [False, True])
def test_the_copies_answer_as_a_replay(affinity: bool) -> None:
    """CHECK-4: the reference continues each path from a copy of the parent's node (its
    mutable state alone), with the answers of a replay of the whole path; and it
    keeps F-MEM-OVERLAP's first step along the path as the replay finds it."""
    bounds = Bounds(releases=("1.30", "1.37"), machines=("2x2x2x1",),
                    policies=("best-effort", "single-numa-node"), cpu=("static",),
                    memory=("Static",), pods="affinity" if affinity else "default",
                    depth=2)
    runner = _CheckedCopies(affinity=affinity)
    report = explore(bounds, runner)
    assert report.counterexample is None
    assert report.transitions > 100
    assert runner.overlaps > 0 or affinity  # memory across NUMA nodes before 1.32


# --- CHECK-10: the initial nodes shared among workers ------------------------------------------


def _folded(bounds: Bounds, runner: Any, *, compare: bool = False,
            max_states: int | None = None) -> Report:
    """What a partitioned run makes of the nodes: each explored whole, on its own and to the
    bounds' depth, as a worker explores it, then folded in the nodes' order."""
    explorer = NodeExplorer(bounds, runner, compare=compare)
    fold = Fold(bounds, max_states)
    children = None if max_states is None else max(1, max_states - 1)
    for create in initial_nodes(bounds):
        if fold.add(explorer.run(create, bounds.depth, children)):
            break
    return fold.finish(time.monotonic())


def _same(one: Report, other: Report) -> None:
    assert {**one.as_json(), "seconds": 0} == {**other.as_json(), "seconds": 0}


#: Node mutants whose violations lie at different depths on different initial nodes (every
#: policy), so that the later nodes count only to one step less (CHECK-5).
SHARED_MUTANTS = ("error_frees_a_pod", "refusal_keeps_cpus", "release_keeps_memory")


@pytest.mark.parametrize("name", SHARED_MUTANTS)
@pytest.mark.slow
def test_nodes_explored_apart_fold_into_the_one_process_report(name: str) -> None:
    """CHECK-10: the report and the shortest counterexample of the one-process run."""
    overrides = {**MUTANTS[name][0], "policies": tuple(Bounds().policies)}
    bounds = Bounds(**{**QUICK, **overrides})
    alone = explore(bounds, _mutant(name))
    assert alone.counterexample is not None
    _same(alone, _folded(bounds, _mutant(name)))


@pytest.mark.parametrize("max_states", [None, 1, 2, 60, 230])
def test_a_cap_on_the_states_folds_as_in_one_process(max_states: int | None) -> None:
    """CHECK-10 with --max-states: the run stops at the same state."""
    bounds = Bounds(releases=("1.37",), machines=("1x2x2x1",), policies=("restricted",),
                    depth=2)
    alone = explore(bounds, ReferenceRunner(), max_states=max_states)
    _same(alone, _folded(bounds, ReferenceRunner(), max_states=max_states))
    assert alone.exhausted == (max_states is None)


def _json(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    report = json.loads(done.stdout)
    assert isinstance(report, dict)
    report.pop("seconds")
    return report


@pytest.mark.parametrize("extra", [[], ["--max-states", "40"]])
@pytest.mark.slow
def test_jobs_give_the_report_of_one_process(extra: list[str]) -> None:
    """CHECK-10: ``--jobs 2`` reports what ``--jobs 1`` does (but the time)."""
    bounds = ["--releases", "1.37", "--machines", "1x2x2x1", "--pods", "small", "--depth",
              "2", "--json", *extra]
    alone, shared = _check(*bounds, "--jobs", "1"), _check(*bounds, "--jobs", "2")
    assert alone.returncode == shared.returncode == 0, alone.stderr + shared.stderr
    assert _json(alone) == _json(shared)


@pytest.mark.slow
def test_jobs_give_the_counterexample_of_one_process(tmp_path: Path) -> None:
    """CHECK-10: a mutant through the protocol, every policy: the same shortest session."""
    bounds = ["--impl", _exec_mutant("node", "one_cpu_too_many"), "--releases", "1.37",
              "--machines", "1x2x2x1", "--scopes", "container", "--memory", "None",
              "--depth", "2", "--json"]
    alone = _check(*bounds, "--jobs", "1", "--out", str(tmp_path / "alone.jsonl"))
    shared = _check(*bounds, "--jobs", "2", "--out", str(tmp_path / "shared.jsonl"))
    assert alone.returncode == shared.returncode == 1, alone.stderr + shared.stderr
    assert _json(alone) == _json(shared)
    assert _json(alone)["counterexample"] is not None
    assert (tmp_path / "alone.jsonl").read_text("utf-8") == (
        tmp_path / "shared.jsonl").read_text("utf-8")


@pytest.mark.usefixtures("ray_instance")
@pytest.mark.slow
def test_ray_tasks_give_the_report_of_one_process() -> None:
    """CHECK-10 on Ray: the reference's clean run, and a mutant's counterexample."""
    bounds = Bounds(releases=("1.37",), machines=("1x2x2x1",), pods="small", depth=2)
    _same(explore(bounds, ReferenceRunner()),
          explore_partitioned(bounds, REFERENCE_IMPL, Engine(ray="")))
    from numaspec.conformance.checking.command import _runner, _unclaimed

    impl = _exec_mutant("node", "one_cpu_too_many")
    bounds = Bounds(releases=("1.37",), machines=("1x2x2x1",), scopes=("container",),
                    memory=("None",), depth=2)
    runner, connection = _runner(impl, "node")
    try:
        alone = explore(bounds, runner, compare=True, unclaimed=_unclaimed(connection, "node"))
    finally:
        connection.close()
    assert alone.counterexample is not None
    _same(alone, explore_partitioned(bounds, impl, Engine(ray="")))


# --- CHECK-11: the instances of a pod kind are interchangeable ----------------------------------


def _swap(uid: str) -> str:
    """Instances 1 and 2 of every kind exchanged (the ghost uid, of no kind, kept)."""
    kind, _, number = uid.rpartition("-")
    return f"{kind}-{ {'1': '2', '2': '1'}[number]}" if kind else uid


def _swapped(step: dict[str, Any]) -> dict[str, Any]:
    if "pod" in step:
        return {**step, "pod": {**step["pod"], "uid": _swap(step["pod"]["uid"])}}
    if "uid" in step:
        return {**step, "uid": _swap(step["uid"])}
    return step


class _CheckedRenamings(ReferenceRunner):
    """The copying runner, each path also replayed with the instances of every kind
    exchanged: the answers must be the same, each ``state`` renamed (CHECK-11's premise that
    the node reads a uid only as a label)."""

    def __init__(self, bounds: Bounds) -> None:
        super().__init__(affinity=bounds.affinity)
        self.names = {uid: _swap(uid) for uid, _ in pod_alphabet(bounds)}
        self.paths: dict[int, list[dict[str, Any]]] = {}
        self.renamings = 0

    def start(self, create: dict[str, Any]) -> tuple[Any, list[Any]]:
        handle, answers = super().start(create)
        self.paths[id(handle)] = [create, STATE]
        return handle, answers

    def extend(self, parent: Any, answers: list[Any], move: Any) -> tuple[Any, list[Any]]:
        child, said = super().extend(parent, answers, move)
        steps = [*self.paths[id(parent)], *move, STATE]
        self.paths[id(child)] = steps
        exchanged = self.answers([_swapped(step) for step in steps])
        for answer, other in zip(said, exchanged, strict=True):
            if isinstance(answer, dict) and "state" in answer:
                rest, named = split_state(answer["state"])
                assert split_state(other["state"]) == (rest, renamed(named, self.names)), steps
            else:
                assert answer == other, steps
        self.renamings += 1
        return child, said


@pytest.mark.parametrize("pods", ["default", "affinity"])
def test_renaming_the_instances_renames_the_states(pods: str) -> None:
    """CHECK-11's premise, on every path of the unreduced run: a path with the instances of
    each kind exchanged has the same answers, its states renamed (the decisions, refusals
    and errors name no uid the node compares)."""
    bounds = Bounds(releases=("1.30", "1.37"), machines=("2x2x2x1",),
                    policies=("single-numa-node",), scopes=("pod",), cpu=("static",),
                    memory=("Static",), pods=pods, depth=3, symmetry=False)
    runner = _CheckedRenamings(bounds)
    report = explore(bounds, runner)
    assert report.counterexample is None
    assert runner.renamings == report.transitions > 150


def _reached(bounds: Bounds, key: Any = None) -> tuple[dict[tuple[int, Key], int], int]:
    """Each initial node's canonical states (CHECK-11) and the depth each is first reached
    at, by the reduced run or (``bounds.symmetry`` off) by the unreduced run, or by a run
    that takes ``key`` for a state's; and how many distinct states that run counted."""
    found: dict[tuple[int, Key], int] = {}
    distinct = 0
    for number, create in enumerate(initial_nodes(bounds)):
        def visit(depth: int, state: Any, live: frozenset[str], number: int = number) -> None:
            nonlocal distinct
            distinct += 1
            found.setdefault((number, canonical_key(state, live)), depth)
        NodeExplorer(bounds, ReferenceRunner(affinity=bounds.affinity), key=key,
                     visit=visit).run(create, bounds.depth)
    return found, distinct


@pytest.mark.parametrize("shape", MACHINES)
def test_the_reduced_run_reaches_every_canonical_state_at_its_depth(shape: str) -> None:
    """CHECK-11: on every machine shape, the canonical forms of the states the unreduced run
    reaches are those the reduced run reaches, each first at the same depth; and the reduced
    run has fewer states (the reduction is not vacuous)."""
    bounds = Bounds(releases=("1.37",), machines=(shape,), policies=("restricted",),
                    scopes=("container",), cpu=("static",), memory=("Static",), depth=4)
    reduced, counted = _reached(bounds)
    unreduced, more = _reached(attrs.evolve(bounds, symmetry=False))
    assert reduced == unreduced
    assert counted == len(reduced) < more


def test_the_comparison_catches_a_wrong_renaming() -> None:
    """CHECK-11's comparison can fail: a reduction that renames pods across kinds
    (``kinds_confused_key``) misses canonical states the unreduced run reaches."""
    bounds = Bounds(releases=("1.37",), machines=("1x2x2x1",), policies=("restricted",),
                    scopes=("container",), cpu=("static",), memory=("Static",), depth=4)
    wrong, _ = _reached(bounds, kinds_confused_key)
    unreduced, _ = _reached(attrs.evolve(bounds, symmetry=False))
    assert set(wrong) < set(unreduced)


def test_a_canonical_form_is_the_same_for_every_renaming() -> None:
    """CHECK-11: a state and its renaming have one canonical form, on the pods' lowest uids;
    a state with other pods does not share it."""
    def state(uids: dict[str, list[int]]) -> dict[str, Any]:
        return {"state": {"pods": sorted(uids), "cpu": {"defaultCpuSet": [0], "assignments": {
            uid: {"a": cpus} for uid, cpus in uids.items()}}, "memory": None,
            "devices": {"assignments": {}}}}

    one = canonical_key(state({"g1-2": [1], "g1-1": [2], "b-2": []}),
                        frozenset({"g1-1", "g1-2", "b-2"}))
    other = canonical_key(state({"g1-1": [1], "g1-2": [2], "b-1": []}),
                          frozenset({"g1-1", "g1-2", "b-1"}))
    assert one == other
    assert one[1] == frozenset({"g1-1", "g1-2", "b-1"})
    apart = canonical_key(state({"g1-1": [1], "g1-2": [3], "b-1": []}),
                          frozenset({"g1-1", "g1-2", "b-1"}))
    assert apart != one
    assert kind_of("ps-2") == "ps"


def test_numa_nodes_are_not_interchangeable() -> None:
    """CHECK-11: why NUMA nodes are not reduced.  On a 2-socket machine with 4 NUMA nodes, no
    CPU or memory reserved and a device on each NUMA node, exchanging the sockets (NUMA nodes
    0<->2, 1<->3) maps the machine and configuration onto themselves; yet from the state with
    one device pod on dev0 a second goes to dev1, and from its image, the pod on dev2, a
    second goes to dev0, not to dev3: the successors are not images (MASK-2's lowest mask)."""
    bounds = Bounds(releases=("1.37",), machines=("2x2x2x1",), policies=("restricted",),
                    scopes=("container",), cpu=("none",), memory=("None",))
    (create,) = initial_nodes(bounds)
    pods = dict(pod_alphabet(bounds))

    def devices(*steps: dict[str, Any]) -> dict[str, list[str]]:
        answers = ReferenceRunner().answers([create, *steps, STATE])
        return {uid: held["a"]["example.com/dev"]
                for uid, held in answers[-1]["state"]["devices"]["assignments"].items()}

    def admit(uid: str) -> dict[str, Any]:
        return {"op": "admit", "pod": pods[uid]}

    assert devices(admit("d-1")) == {"d-1": ["dev0"]}
    assert devices(admit("d-1"), admit("d-2")) == {"d-1": ["dev0"], "d-2": ["dev1"]}
    image = (admit("s-1"), admit("d-1"), {"op": "remove", "uid": "s-1"})
    assert devices(*image) == {"d-1": ["dev2"]}
    assert devices(*image, admit("d-2")) == {"d-1": ["dev2"], "d-2": ["dev0"]}  # not dev3


class _NodeOneMutant(NodeSession):
    """The reference with ``device_doubled_on_node_1`` (a fault on NUMA node 1 alone)."""

    def answer(self, line: bytes | str) -> dict[str, Any]:
        said = super().answer(line)
        if json.loads(line).get("op") == "create" and self.node is not None:
            device_doubled_on_node_1(self.node)
        return said


@pytest.mark.parametrize("depth", [4, pytest.param(5, marks=pytest.mark.slow)])
def test_a_wrong_reduction_loses_a_violation(depth: int) -> None:
    """CHECK-11's kept mutant: a reduction that takes NUMA node 1 for node 0
    (``numa_mirror_key``) never expands the state that shows a fault on node 1 alone; the
    pods' renaming, and the unreduced run, find it after four steps."""
    bounds = Bounds(releases=("1.37",), machines=("1x2x2x1",), policies=("none",),
                    scopes=("container",), cpu=("none",), memory=("None",), depth=depth)

    def found(bounds: Bounds, key: Any = None) -> Counterexample | None:
        explorer = NodeExplorer(bounds, SessionReplayRunner(_NodeOneMutant), key=key)
        fold = Fold(bounds, None)
        for create in initial_nodes(bounds):
            if fold.add(explorer.run(create, *fold.bounds())):
                break
        return fold.report.counterexample

    reduced, unreduced = found(bounds), found(attrs.evolve(bounds, symmetry=False))
    assert reduced is not None
    assert unreduced is not None
    assert _length(reduced) == _length(unreduced) == 4
    assert "INV-4" in reduced.message
    assert found(bounds, numa_mirror_key) is None
