"""distribute-cpus-across-numa reads its chosen NUMA combination after the walk over
combinations has written over it (spec chapter cpu.md, CPU-12), in 1.29 to 1.37.

Kubelet's walk makes each combination by adding one member to the storage of its prefix, and
the allocator keeps that storage rather than a copy; later combinations sharing the storage
change what the kept one reads.  The model here is independent of the reference's: it walks
with explicit storage (room for 1, 2, 4, 8, ... members, fresh storage only when full) and
works at the level of how many CPUs each NUMA node gives, then judges the reference's CPUs by
their NUMA nodes.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numaspec.errors import NotModelledError
from numaspec.node.cpu import CPUInfo, CPUTopology
from numaspec.node.cpu_assignment import CPUAllocationError, take_by_topology
from numaspec.protocols.adapter_protocol import reference_result
from numaspec.topology.versions import KubeletVersion

# -- the two known cases ------------------------------------------------------------------------


def _machine(numa: int, per: int) -> dict[str, Any]:
    """``numa`` NUMA nodes (a socket each) of ``per`` single-thread cores: node n holds CPUs
    n*per .. n*per+per-1."""
    return {"numaNodes": [{"id": n, "memory": "16Gi", "cores": [
        {"socket": n, "threads": [n * per + c]} for c in range(per)]} for n in range(numa)]}


def _cpus_case(version: str) -> dict[str, Any]:
    return {"kubelet_version": version, "machine": _machine(5, 2), "available": list(range(10)),
            "count": 7, "options": {"distribute-cpus-across-numa": "true"},
            "feature_gates": {"CPUManagerPolicyAlphaOptions": True}}


def _node_case(version: str) -> dict[str, Any]:
    return {"steps": [
        {"op": "create", "node": {"kubeletVersion": version, "machine": _machine(6, 2), "config": {
            "cpuManagerPolicy": "static", "reservedSystemCPUs": "0",
            "cpuManagerPolicyOptions": {"distribute-cpus-across-numa": "true"},
            "featureGates": {"CPUManagerPolicyAlphaOptions": True}}}},
        {"op": "admit", "pod": {"uid": "p", "containers": [
            {"name": "c", "resources": {"limits": {"cpu": "8", "memory": "1Gi"}}}]}}]}


@pytest.mark.parametrize("version", ["1.29", "1.30", "1.33", "1.36", "1.37"])
def test_five_nodes_seven_cpus_take_one_from_a_node_never_chosen(version: str) -> None:
    """CPU-12: NUMA nodes 0-3 are chosen; the kept combination reads 0, 1, 2, 4, so CPU 8
    (node 4) comes instead of CPU 6 (node 3).  Kubelet 1.37.2's own code answers 0-5, 8."""
    assert reference_result("cpus", _cpus_case(version)) == {"cpus": [0, 1, 2, 3, 4, 5, 8]}


@pytest.mark.parametrize("version", ["1.29", "1.30", "1.37"])
def test_six_nodes_one_reserved_eight_cpus_on_nodes_1_2_3_5(version: str) -> None:
    """CPU-12: the node form: nodes 1-4 are chosen, read as 1, 2, 3, 5 (the kubelet 1.30.14
    and 1.37.2 adapters answer 2-7, 10, 11)."""
    answers = reference_result("node", _node_case(version))["answers"]
    assert answers[0] == {"ok": True}
    assert answers[1]["decision"]["containers"][0]["cpus"] == [2, 3, 4, 5, 6, 7, 10, 11]


def _topology(numa: int, per: int, threads: int = 1) -> CPUTopology:
    cores = numa * per
    return CPUTopology([CPUInfo(cpu=t * cores + c, numa=c // per, socket=c // per, core=c,
                                uncore_cache=c // per)
                        for t in range(threads) for c in range(cores)])


def test_a_copy_takes_what_was_chosen() -> None:
    """CPU-12: with the combination copied (1.38) the same requests take the chosen nodes."""
    five = take_by_topology(_topology(5, 2), range(10), 7, distribute_across_numa=True)
    assert sorted(five) == [0, 1, 2, 3, 4, 5, 6]
    six = take_by_topology(_topology(6, 2), range(1, 12), 8, distribute_across_numa=True)
    assert sorted(six) == [2, 3, 4, 5, 6, 7, 8, 9]
    assert not KubeletVersion(37).copies_numa_combinations
    assert KubeletVersion(38).copies_numa_combinations


# -- an independent model -----------------------------------------------------------------------


class _Kept:
    """A combination as kubelet keeps it: a length and the storage it was written in."""

    def __init__(self, storage: list[int], length: int) -> None:
        self.storage, self.length = storage, length

    def read(self) -> tuple[int, ...]:
        return tuple(self.storage[:self.length])


def _walk(items: list[int], size: int) -> Iterator[_Kept]:
    """The combinations of ``size`` of ``items`` in order, each built by adding a member to its
    prefix's storage: in place when there is room, else in fresh storage of twice the room
    (one place at first) holding a copy of the prefix."""
    def grow(start: int, storage: list[int], length: int) -> Iterator[_Kept]:
        if length == size:
            yield _Kept(storage, length)
            return
        for i in range(start, len(items) - (size - length) + 1):
            if length < len(storage):
                room = storage
            else:
                room = storage[:length] + [-1] * (max(1, 2 * len(storage)) - length)
            room[length] = items[i]
            yield from grow(i + 1, room, length + 1)
    if size >= 1:
        yield from grow(0, [], 0)


def _round3(x: float) -> float:
    return math.floor(x * 1000 + 0.5) / 1000


def _balance(values: list[int]) -> float:
    mean = _round3(sum(values) / len(values))
    return _round3(math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)))


#: What the model says: CPUs per NUMA node, "error" (kubelet's accounting error), "hang" (its
#: loop never ends) or None (no combination: kubelet packs instead, not judged here).
Outcome = dict[int, int] | str | None


def _model(free: dict[int, int], total_numa: int, total_cpus: int, n: int, *, group: int,
           caps: bool) -> Outcome:
    """Distribute ``n`` CPUs in groups of ``group`` over NUMA nodes with ``free`` CPUs (one
    socket per node, so nodes go fewest free first, then by id), keeping combinations as
    :func:`_walk` leaves them.  ``caps``: 1.37 lowers the even share to what the nodes read
    can give."""
    numas = sorted((x for x in free if free[x] > 0), key=lambda x: (free[x], x))
    groups_per_numa = ((total_cpus - 1) // group + 1 - 1) // total_numa + 1
    needed = (n - 1) // group + 1
    for k in range((needed - 1) // groups_per_numa + 1, min(needed, len(numas)) + 1):
        best, best_combo, best_rest = math.inf, None, None
        for kept in _walk(numas, k):
            if best == 0:
                break
            combo = kept.read()
            if sum(free[x] for x in combo) < n or \
                    sum(free[x] // group for x in combo) * group < n:
                continue
            share = n // k // group * group
            if any(free[x] < share for x in combo):
                continue
            after = {x: free[x] - (share if x in combo else 0) for x in numas}
            left = n - share * k
            local, local_rest = math.inf, None
            if left == 0:
                local = _balance(list(after.values()))
            pool = [x for x in combo if after[x] >= group]
            for size in range(len(pool), 0, -1):
                if left == 0:
                    break
                for kept_rest in _walk(pool, size):
                    subset = kept_rest.read()
                    trial = dict(after)
                    if sum(trial[x] for x in subset) < left:
                        continue
                    todo = left
                    while todo > 0:
                        moved = False
                        for x in subset:
                            if todo and trial[x] >= group:
                                trial[x] -= group
                                todo -= group
                                moved = True
                        if not moved:
                            return "hang"
                    score = _balance(list(trial.values()))
                    if score < local:
                        local, local_rest = score, kept_rest
            if local < best:
                best, best_combo, best_rest = local, kept, local_rest
        if best_combo is None:
            continue
        chosen = best_combo.read()
        rest = best_rest.read() if best_rest is not None else ()
        share = n // k // group * group
        if caps:
            share = min(share, *(free[x] // group * group for x in chosen))
        left_free = dict(free)
        taken: Counter[int] = Counter()
        for x in chosen:
            if left_free[x] >= share:
                left_free[x] -= share
                taken[x] += share
        todo = n - share * k
        while todo > 0:
            moved = False
            for x in rest:
                if todo and left_free[x] >= group:
                    left_free[x] -= group
                    taken[x] += group
                    todo -= group
                    moved = True
            if not moved:
                return "hang"
        if sum(taken.values()) != n:
            return "error"
        return {x: c for x, c in taken.items() if c}
    return None


def _judge(take: Callable[..., frozenset[int]], topo: CPUTopology, available: list[int],
           n: int, *, full: bool, caps: bool) -> Outcome:
    try:
        cpus = take(topo, available, n, distribute_across_numa=True, full_pcpus_only=full,
                    copies_combinations=False, caps_distributed_share=caps)
    except CPUAllocationError:
        return "error"
    except NotModelledError:
        return "hang"
    numa = {c.cpu: c.numa for c in topo.cpus}
    return dict(Counter(numa[c] for c in cpus))


def _case(rng: random.Random) -> tuple[CPUTopology, list[int], int, bool, bool, Outcome]:
    numa, per, threads = rng.randint(4, 9), rng.randint(1, 4), rng.choice([1, 1, 2])
    topo = _topology(numa, per, threads)
    keep = rng.choice([1.0, 0.9, 0.7, 0.5])
    available = [c.cpu for c in topo.cpus if rng.random() < keep] or [0]
    full = threads == 2 and rng.random() < 0.5
    group = threads if full else 1
    n = group * rng.randint(1, max(1, len(available) // group))
    caps = rng.random() < 0.5
    free = Counter(c.numa for c in topo.cpus if c.cpu in set(available))
    expected = _model(dict(free), numa, len(topo.cpus), n, group=group, caps=caps)
    return topo, available, n, full, caps, expected


def _disagreements(take: Callable[..., frozenset[int]], seed: int, count: int
                   ) -> tuple[int, int, list[str]]:
    """How many of ``count`` random cases the model judges, and where ``take`` differs."""
    rng = random.Random(seed)
    judged, wrong = 0, []
    for i in range(count):
        topo, available, n, full, caps, expected = _case(rng)
        if expected is None:
            continue
        judged += 1
        got = _judge(take, topo, available, n, full=full, caps=caps)
        if got != expected:
            wrong.append(f"case {i}: {len(topo.numa_nodes())} NUMA nodes, {n} of "
                         f"{available}: model {expected}, got {got}")
    return judged, len(wrong), wrong


def _kubelet_walk_unaliased(topo: CPUTopology, available: list[int], n: int,
                            **options: Any) -> frozenset[int]:
    """The mutant: the allocator as if it kept copies (1.38's) at every release."""
    options["copies_combinations"] = True
    return take_by_topology(topo, available, n, **options)


def test_the_walks_storage_rule() -> None:
    """CPU-12: a kept combination of 4 keeps 3 members, of 6 to 8 keeps 5, of 9 keeps all:
    the first combination of each size, read after the whole walk."""
    items = list(range(12))
    for size, reads in [(3, (0, 1, 2)), (4, (0, 1, 2, 11)), (5, (0, 1, 2, 3, 4)),
                        (6, (0, 1, 2, 3, 4, 11)), (7, (0, 1, 2, 3, 4, 10, 11)),
                        (8, (0, 1, 2, 3, 4, 9, 10, 11)), (9, tuple(range(9))),
                        (10, (*range(9), 11))]:
        walk = _walk(items, size)
        first = next(walk)
        for _ in walk:
            pass
        assert first.read() == reads, size


def test_the_reference_agrees_with_the_independent_model() -> None:
    """CPU-12: on random machines of 4 to 9 NUMA nodes the reference's CPUs per NUMA node are
    the model's, and aliasing changes the answer in a good share of them (the property is not
    empty)."""
    judged, wrong, shown = _disagreements(take_by_topology, seed=12, count=1500)
    assert wrong == 0, shown[:5]
    assert judged > 1000
    _, changed, _ = _disagreements(_kubelet_walk_unaliased, seed=12, count=1500)
    assert changed > 50


def test_the_property_fails_without_the_aliasing_model() -> None:
    """CPU-12: the mutant that copies every combination (1.38's allocator at 1.29-1.37)
    disagrees with the model, and with kubelet's answers to the two known cases."""
    _, wrong, shown = _disagreements(_kubelet_walk_unaliased, seed=13, count=400)
    assert wrong > 0, shown
    five = _kubelet_walk_unaliased(_topology(5, 2), list(range(10)), 7,
                                   distribute_across_numa=True)
    assert sorted(five) != [0, 1, 2, 3, 4, 5, 8]


@settings(max_examples=200, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_cases_agree(seed: int) -> None:
    """CPU-12: the same comparison, cases drawn by hypothesis."""
    topo, available, n, full, caps, expected = _case(random.Random(seed))
    if expected is not None:
        assert _judge(take_by_topology, topo, available, n, full=full, caps=caps) == expected
