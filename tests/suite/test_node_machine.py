"""The stateful node test passes on the reference and rejects every node mutant.  Under the
ci profile the reference run is 300 examples of 30 steps.

It checks INV-1, INV-2, INV-3, INV-4, INV-5, INV-6, INV-7, INV-8 and INV-9 after every step
(INV-3 and INV-9 from 1.32, where kubelet guarantees them), and ADMIT-10 (a refused
admission and a step answered with an error leave the state as it was), over nodes and
pods built through the node protocol (NWIRE-1, NWIRE-2, NWIRE-3), with both scopes and
every policy (ADMIT-1, ADMIT-2, ADMIT-3, ADMIT-4, ADMIT-5, ADMIT-6), and devices (DEV-1,
DEV-2, DEV-3, DEV-4, DEV-5, DEV-6, DEV-7).  Every invariant is shown failing on a mutant
of its own, without the comparison with the reference; every mutant is rejected by the
full machine.  The mutants break ADMIT-3, ADMIT-6, ADMIT-10, CPU-8, CPU-9, CPU-15,
CPU-16, CPU-17, MEM-1, MEM-4, MEM-7 and MEM-9."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from numaspec.conformance.cases.vectors import stored_case
from numaspec.conformance.properties.node_machine import (
    ReferenceNode,
    irregular_memory_groups,
    make_node_machine,
    restored,
    uneven_cpus,
)
from numaspec.conformance.properties.node_sessions import _reference_answers, check_answers
from numaspec_tools.mutants.node_mutants import HINTS_ONLY, NODE_MUTATIONS, MutantNode

STEPS = 30


def test_reference_passes_the_node_machine() -> None:
    """The reference against the invariants alone (comparing it with itself proves nothing)."""
    machine = make_node_machine(ReferenceNode, compare=False)
    current = settings()
    run_state_machine_as_test(machine, settings=settings(
        current, max_examples=max(current.max_examples, 200), stateful_step_count=STEPS))


#: Kills are fixed facts: one seed, no shrinking, a fixed budget under every profile.
KILL = settings(max_examples=600, stateful_step_count=STEPS, database=None, derandomize=True,
                phases=[Phase.explicit, Phase.generate], report_multiple_bugs=False,
                deadline=None, suppress_health_check=list(HealthCheck))
#: Each invariant fails on a mutant without any comparison with the reference.
CAUGHT_BY_INVARIANTS = {
    "free_not_decremented": "INV-1",
    "hugepages_counted_twice": "INV-2",
    "group_spills_to_next_node": "INV-3",
    "sidecar_cpus_reused": "INV-4",
    "reserved_cpus_handed_out": "INV-5",
    "one_cpu_too_many": "INV-6",
    "policy_admits_all": "INV-7",
    "affinity_ignored_by_cpus": "INV-8",
    "release_keeps_memory": "INV-9",
    "refusal_keeps_cpus": "ADMIT-10",
    "error_frees_a_pod": "ADMIT-10",
}


@pytest.mark.parametrize("mutation", sorted(set(NODE_MUTATIONS) - HINTS_ONLY))
@pytest.mark.slow
def test_node_mutant_is_rejected(mutation: str) -> None:
    """The machine admits and removes but never asks for hints: the mutants that change only
    hints (HINTS_ONLY) are rejected through hints sessions
    (tests/suite/power/test_mutants_exec.py)."""
    machine = make_node_machine(lambda: MutantNode(mutation))
    with pytest.raises(AssertionError):
        run_state_machine_as_test(machine, settings=KILL)


@pytest.mark.parametrize(("mutation", "invariant"), sorted(CAUGHT_BY_INVARIANTS.items()))
@pytest.mark.slow
def test_node_mutant_breaks_an_invariant(mutation: str, invariant: str) -> None:
    machine = make_node_machine(lambda: MutantNode(mutation), compare=False,
                                transactional=invariant == "ADMIT-10")
    with pytest.raises(AssertionError, match=f"{invariant}:"):
        run_state_machine_as_test(machine, settings=KILL)


def _memory_state(cells: dict[int, list[int]], blocks: list[list[int]]) -> dict[str, object]:
    return {"memory": {
        "machineState": {str(n): {"cells": c, "numberOfAssignments": 1} for n, c in cells.items()},
        "assignments": {"p": {f"c{i}": [{"type": "memory", "size": 1, "numa": b}]
                              for i, b in enumerate(blocks)}}}}


@pytest.mark.parametrize(("cells", "blocks", "irregular"), [
    ({0: [0], 1: [1]}, [[0], [1]], False),
    ({0: [0, 1], 1: [0, 1]}, [[0, 1]], False),
    ({0: [0, 1], 1: [0, 1]}, [[0, 1], [1]], True),    # pinned to one node of a group
    ({0: [0, 1], 1: [0, 1, 2], 2: [1, 2]}, [[0, 1], [1, 2]], True),  # overlapping groups
])
def test_irregular_memory_groups(cells: dict[int, list[int]], blocks: list[list[int]],
                                 irregular: bool) -> None:
    """F-MEM-OVERLAP: the 1.30 differential compares until the reference's groups turn
    irregular; the detector must see both shapes of it and nothing else."""
    found = irregular_memory_groups(_memory_state(cells, blocks))
    assert (found is not None) == irregular, found
    assert irregular_memory_groups({"memory": None}) is None


def _vector_answers(vector_id: str, release: str) -> tuple[list[dict[str, Any]], list[Any]]:
    steps = stored_case(vector_id, (release,))["steps"]
    return steps, [json.loads(json.dumps(a)) for a in _reference_answers(steps)[0]]


def test_inv_5_is_not_asked_of_a_machine_with_uneven_sockets() -> None:
    """Finding 33: on a machine whose sockets differ in size kubelet may hand out a reserved
    CPU, and the session check lets it; the same assignment on even sockets fails INV-5."""
    steps, answers = _vector_answers("inv-5-uneven-sockets-reserved-cpu", "1.30")
    assert uneven_cpus(steps[0]["node"])
    assert 0 in answers[2]["state"]["cpu"]["assignments"]["g"]["c"]
    assert check_answers(steps, answers, compare=False) is None
    even = json.loads(json.dumps(steps))
    even[0]["node"]["machine"]["numaNodes"][3]["cores"].append({"socket": 1, "threads": [7]})
    assert not uneven_cpus(even[0]["node"])
    problem = check_answers(even, answers, compare=False)
    assert problem is not None
    assert "INV-5: g/c holds reserved CPUs [0]" in problem


def test_inv_4_lets_an_uneven_machine_hold_a_cpu_twice() -> None:
    """Finding 33: on a machine whose sockets differ in size kubelet may hand out a CPU another
    container holds, and return it to the shared pool when the first goes; the session check
    lets it there, and the same answers on even sockets fail INV-4."""
    steps, answers = _vector_answers("inv-4-uneven-sockets-cpu-held-twice", "1.32")
    assert uneven_cpus(steps[0]["node"])
    held = answers[3]["state"]["cpu"]["assignments"]
    assert set(held["fill0"]["app0"]) & set(held["fill1"]["app0"])
    assert check_answers(steps, answers, compare=False) is None
    even = json.loads(json.dumps(steps))
    even[0]["node"]["machine"]["numaNodes"][0]["cores"].append(
        {"socket": 0, "uncoreCache": 0, "threads": [5]})
    assert not uneven_cpus(even[0]["node"])
    problem = check_answers(even, answers, compare=False)
    assert problem is not None
    assert "INV-4" in problem, problem


def test_inv_9_lets_an_uneven_machine_return_a_reserved_cpu_to_the_pool() -> None:
    """Finding 33: under strict-cpu-reservation a reserved CPU kubelet gave away on an uneven
    machine joins the shared pool when its container goes; INV-9 does not count it there, and
    counts it on even sockets (where INV-5 fails the assignment first)."""
    steps, answers = _vector_answers("inv-9-uneven-strict-reserved-cpu-returns", "1.37")
    assert uneven_cpus(steps[0]["node"])
    assert 0 not in answers[1]["state"]["cpu"]["defaultCpuSet"]
    assert 0 in answers[-1]["state"]["cpu"]["defaultCpuSet"]
    assert restored(answers[1], answers[-1], uneven=True)
    assert not restored(answers[1], answers[-1], uneven=False)
    assert check_answers(steps, answers, compare=False) is None
    even = json.loads(json.dumps(steps))
    even[0]["node"]["machine"]["numaNodes"][2]["cores"].append(
        {"socket": 1, "uncoreCache": 2, "threads": [7]})
    assert not uneven_cpus(even[0]["node"])
    problem = check_answers(even, answers, compare=False)
    assert problem is not None
    assert "INV-5" in problem, problem


@pytest.mark.parametrize("release", ["1.34", "1.36"])
def test_a_deferred_resize_may_keep_only_the_init_containers_blocks(release: str) -> None:
    """Finding 32: a Deferred resize of 1.34-1.36 may leave the finished init container's new
    blocks (the reference's answers pass), and nothing more: the reserved bytes grown by more
    than those blocks hold, or an app container's blocks changed, is ADMIT-10's failure."""
    steps, answers = _vector_answers("resize-deferred-init-memory-blocks-1.34", release)
    assert answers[4]["resize"]["status"] == "Deferred"
    assert "i" in answers[5]["state"]["memory"]["assignments"]["g"]
    assert check_answers(steps, answers, compare=False) is None
    more = json.loads(json.dumps(answers))
    table = more[5]["state"]["memory"]["machineState"]["1"]["memoryMap"]["memory"]
    # 2Gi more: the reserved bytes then grew by 3Gi, more than the init container's 2Gi block.
    table["reserved"], table["free"] = table["reserved"] + (2 << 30), table["free"] - (2 << 30)
    problem = check_answers(steps, more, compare=False)
    assert problem is not None
    assert "ADMIT-10: a refused step changed the node" in problem
    moved = json.loads(json.dumps(answers))
    moved[5]["state"]["memory"]["assignments"]["g"]["c"][0]["numa"] = [1]
    problem = check_answers(steps, moved, compare=False)
    assert problem is not None
    assert "the memory assignments changed" in problem


def test_the_uneven_exception_ends_at_1_37() -> None:
    """Finding 33 is fixed in 1.38 (CPU-10): the same uneven machine at 1.38 is held to INV-5,
    so 1.37's answer (a reserved CPU handed out) fails there, and 1.38's own answer passes."""
    steps, answers = _vector_answers("inv-5-uneven-sockets-reserved-cpu", "1.37")
    assert uneven_cpus(steps[0]["node"])
    at_138 = json.loads(json.dumps(steps))
    at_138[0]["node"]["kubeletVersion"] = "1.38"
    assert not uneven_cpus(at_138[0]["node"])
    problem = check_answers(at_138, answers, compare=False)
    assert problem is not None
    assert "INV-5" in problem, problem
    own = [json.loads(json.dumps(a)) for a in _reference_answers(at_138)[0]]
    assert check_answers(at_138, own, compare=False) is None
