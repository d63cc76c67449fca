"""Kubelet 1.38's CPU Manager, read at 1.38.0-beta.0 (spec chapter cpu.md): CPU-10, CPU-12,
CPU-13 and CPU-19 as 1.38 allocates, and CPU-22's hint scores; CPU-18 still refuses the
pod-level gate.

The reading's examples (A to H) are 1.38 vectors in spec/vectors/node/cpu.json, uncore.json and
cpus.json (``STAGED`` here, their IDs ending in ``-1.38``; their 1.37 side the vectors ending in
``-1.37``).  Each answer was worked out by hand from kubelet 1.38.0-beta.0's
``cpu_assignment.go`` and ``policy_static.go``; kubelet 1.38.0-beta.0's own node probe gives
the same (:func:`test_kubelet_138_agrees_with_staged_vector`), and so does a copy of its
``cpu_assignment.go`` for the allocator cases.
"""

from __future__ import annotations

import json
import random
from typing import Any
from unittest import mock

import pytest

from numaspec.conformance.cases import vectors as vector_files
from numaspec.conformance.cases.judges import compare
from numaspec.conformance.speccheck import parse_rules
from numaspec.errors import NotModelledError
from numaspec.node.cpu import CPUInfo, CPUTopology, generate_cpu_topology_hints
from numaspec.node.cpu_assignment import CPUAllocationError
from numaspec.node.cpu_manager import CPUManagerOptions, StaticCPUManager, take_by_policy
from numaspec.protocols.adapter_protocol import reference_result
from numaspec.protocols.node_protocol import NodeSession, decode_pod
from numaspec.topology.masks import NumaMask
from numaspec.topology.scores import utilization_score
from numaspec.topology.versions import KubeletVersion
from numaspec_tools import REPO, vector_pieces
from numaspec_tools.builds import kubelet as kubelet_builds
from numaspec_tools.testing.sessions import normalizer

V37, V38 = KubeletVersion(37), KubeletVersion(38)


# -- the examples' machines and sessions ---------------------------------------------------------


def _core(socket: int, *threads: int, uncore: int | None = None) -> dict[str, Any]:
    core: dict[str, Any] = {"socket": socket, "threads": list(threads)}
    if uncore is not None:
        core["uncoreCache"] = uncore
    return core


def _numa(node: int, cores: list[dict[str, Any]], memory: str = "4Gi") -> dict[str, Any]:
    return {"id": node, "memory": memory, "cores": cores}


#: A: sockets of 4 and 3 CPUs (NUMA nodes {0,1} {2,3} | {4,5} {6}), single-thread cores.
UNEVEN_SOCKETS = {"numaNodes": [_numa(0, [_core(0, 0), _core(0, 1)]),
                                _numa(1, [_core(0, 2), _core(0, 3)]),
                                _numa(2, [_core(1, 4), _core(1, 5)]),
                                _numa(3, [_core(1, 6)])]}
#: A2: cores {0,1} {2,3} {4,5} {6} on one socket and NUMA node.
UNEVEN_CORES = {"numaNodes": [_numa(0, [_core(0, 0, 1), _core(0, 2, 3), _core(0, 4, 5),
                                        _core(0, 6)])]}
#: B: uncore caches 0-3, 4-7, 8-11 over NUMA nodes 0-5 and 6-11 (cache 1 spans both).
CACHE_OVER_TWO_NUMA = {"numaNodes": [
    _numa(0, [_core(0, c, uncore=0 if c < 4 else 1) for c in range(6)], "16Gi"),
    _numa(1, [_core(0, c, uncore=1 if c < 8 else 2) for c in range(6, 12)], "16Gi")]}
#: C: one NUMA node, caches of 4 (0-3) and 8 (4-11) CPUs.
UNEVEN_CACHES = {"numaNodes": [_numa(0, [_core(0, c, uncore=0 if c < 4 else 1)
                                         for c in range(12)])]}
#: D: NUMA nodes 0-5 and 6-11, a socket each.
TWO_BY_SIX = {"numaNodes": [_numa(0, [_core(0, c) for c in range(6)]),
                            _numa(1, [_core(1, c) for c in range(6, 12)])]}
#: E: one socket of cores {0,1} {2,3} {4,5} {6,7} (siblings numbered next to each other).
ADJACENT_SIBLINGS = {"numaNodes": [_numa(0, [_core(0, 2 * k, 2 * k + 1) for k in range(4)])]}
#: F: the vector cex-distribute-remainder-loop's machine: 4 NUMA nodes x 3 two-thread cores.
FOUR_BY_THREE_SMT = {"numaNodes": [_numa(n, [_core(n, 6 * n + 2 * k, 6 * n + 2 * k + 1)
                                             for k in range(3)]) for n in range(4)]}
#: G: NUMA node n = {2n, 2n+1}, a socket each.
PAIRS = {"numaNodes": [_numa(n, [_core(n, 2 * n), _core(n, 2 * n + 1)], "16Gi")
                       for n in range(6)]}
#: H: NUMA nodes 0-3 and 4-7, a socket each.
TWO_BY_FOUR = {"numaNodes": [_numa(0, [_core(0, c) for c in range(4)]),
                             _numa(1, [_core(1, c) for c in range(4, 8)])]}

ALPHA = {"CPUManagerPolicyAlphaOptions": True}


def _container(name: str, cpu: int) -> dict[str, Any]:
    return {"name": name, "resources": {"limits": {"cpu": str(cpu), "memory": "1Gi"}}}


def _pod(uid: str, *containers: tuple[str, int]) -> dict[str, Any]:
    return {"uid": uid, "containers": [_container(n, c) for n, c in containers]}


def _create(version: str, machine: dict[str, Any], **config: Any) -> dict[str, Any]:
    return {"op": "create", "node": {"kubeletVersion": version, "machine": machine,
                                     "config": {"cpuManagerPolicy": "static", **config}}}


def _admitted(*containers: tuple[str, list[int] | None, bool, list[int]]) -> dict[str, Any]:
    return {"decision": {"admitted": True, "reason": "", "message": "", "containers": [
        {"name": name, "hint": {"numa": numa, "preferred": preferred}, "cpus": cpus,
         "memory": [], "devices": {}} for name, numa, preferred, cpus in containers]}}


def _state(default: list[int], reserved: list[int],
           assignments: dict[str, dict[str, list[int]]]) -> dict[str, Any]:
    return {"state": {"pods": sorted(assignments), "cpu": {
        "defaultCpuSet": default, "reservedCpuSet": reserved, "assignments": assignments},
        "memory": None, "devices": {"allocated": {}, "healthy": {}, "assignments": {}}}}


def _hints(*hints: tuple[list[int], bool, int]) -> dict[str, Any]:
    return {"hints": {"cpu": [{"numa": numa, "preferred": preferred, "score": score}
                              for numa, preferred, score in hints]}}


OK = {"ok": True}
PROBE_138 = ("kubelet: agrees (kubelet 1.38.0-beta.0 node probe, "
             "test_kubelet_138_agrees_with_staged_vector)")


def _node_vector(vector_id: str, description: str, rules: list[str], steps: list[Any],
                 answers: list[Any], *, notes: str) -> dict[str, Any]:
    op = "hints" if any(s["op"] == "hints" for s in steps) else "node"
    return {"id": vector_id, "description": description, "rules": rules, "releases": "1.38",
            "op": op, "derived": "hand", "case": {"steps": steps},
            "expected": {"answers": answers}, "notes": notes}


def _hint_scores_at_138() -> dict[str, Any]:
    """Example H: the 1.38 instance of vector cpu-22-hint-scores (spec/vectors/node/cpu.json,
    derived from the reference, its range 1.29-1.38), with its answers worked out by hand: when the
    node model holds 1.38, ``vectors write`` gives that instance these answers."""
    v = "1.38"
    return _node_vector(
        "cpu-22-hint-scores@1.38",
        "two NUMA nodes of 4 CPUs, reserved 0, restricted: every CPU hint carries its "
        "score, the share of the mask's CPUs (less the reserved) that is not free, also "
        "when hints are regenerated from the CPUs a live container holds",
        ["CPU-22", "CPU-8"],
        [_create(v, TWO_BY_FOUR, reservedSystemCPUs="0", topologyManagerPolicy="restricted"),
         {"op": "hints", "pod": _pod("a", ("c", 2))},
         {"op": "admit", "pod": _pod("a", ("c", 2))},
         {"op": "hints", "pod": _pod("b", ("c", 2))},
         {"op": "admit", "pod": _pod("b", ("c", 2))},
         {"op": "hints", "pod": _pod("a", ("c", 2)), "container": "c"},
         {"op": "hints", "pod": _pod("a", ("c", 2))}, {"op": "state"}],
        [OK, _hints(([0], True, 1), ([1], True, 1), ([0, 1], False, 1)),
         _admitted(("c", [0], True, [1, 2])),
         _hints(([1], True, 1), ([0, 1], False, 28)),
         _admitted(("c", [1], True, [4, 5])),
         _hints(([0], True, 66), ([0, 1], False, 57)),
         _hints(([0], True, 66), ([0, 1], False, 57)),
         _state([0, 3, 6, 7], [0], {"a": {"c": [1, 2]}, "b": {"c": [4, 5]}})],
        notes=f"{PROBE_138}.  By hand from generateCPUTopologyHints and UtilizationScore "
        "(1.38.0-beta.0): a wholly free mask scores 1; for b, {0,1} has 7 allocatable "
        "CPUs and 5 free: 200/7 = 28; a's regenerated hints are scored on the free pool "
        "(CPU 3 on node 0, 3, 6, 7 overall): 200/3 = 66 and 400/7 = 57.  1.37.2: the "
        "same masks and choices, no scores (vector cpu-22-hint-scores itself).")


#: The 1.38 vectors of the reading's examples (A to H), as spec/vectors holds them.
STAGED = [v for name in ("cpu", "uncore", "cpus") for v in vector_pieces.read(name)
          if v["id"].endswith("-1.38")]
SCORES_138 = _hint_scores_at_138()

#: The examples' 1.37 side, as in spec/vectors (their 1.37 answers): id -> the 1.38 vector.
SPLIT = {
    "cpu-10-uneven-cores-reserved-cpu-1.37": "cpu-10-uneven-cores-reserved-cpu-1.38",
    "uncore-average-gate-1.37": "uncore-average-gate-1.38",
    "cpu-12-affinity-wider-than-needed-1.37": "cpu-12-affinity-wider-than-needed-1.38",
    "cpu-13-spread-adjacent-siblings-1.37": "cpu-13-spread-adjacent-siblings-1.38",
    "cpu-13-spread-reserved-by-count-1.37": "cpu-13-spread-reserved-by-count-1.38",
}


def _staged_by_id() -> dict[str, dict[str, Any]]:
    return {v["id"]: v for v in STAGED}


# -- the switches ------------------------------------------------------------------------------


def test_the_1_38_switches() -> None:
    """CPU-10, CPU-12, CPU-13, CPU-19, CPU-22: each change is one named switch, on from 1.38."""
    names = ["frees_units_by_own_size", "distributes_over_affinity_width",
             "checks_remainder_in_whole_groups", "spreads_round_robin_over_cores",
             "takes_each_uncore_cache_once", "scores_cpu_hints", "copies_numa_combinations"]
    for name in names:
        assert getattr(V38, name), name
        assert not getattr(V37, name), name


def test_the_rules_hold_in_1_38() -> None:
    """The split rules run to 1.38 (one rule each, with a "from 1.38" statement, as CPU-20's
    1.34 change reads); CPU-22 holds from 1.38; every CPU rule holds in 1.38."""
    rules = {r.id: r for r in parse_rules(REPO / "spec") if r.id.startswith("CPU-")}
    for rule in rules.values():
        assert rule.meta["Holds in"].endswith("1.38"), rule.id
    assert rules["CPU-22"].meta["Holds in"] == "1.38"
    chapter = " ".join((REPO / "spec" / "node" / "cpu.md").read_text(encoding="utf-8").split())
    sections = {part.split(":", 1)[0]: part for part in chapter.split(" ### ")[1:]}
    for rule_id in ("CPU-10", "CPU-12", "CPU-13", "CPU-19"):
        assert "rom 1.38" in sections[rule_id], rule_id


# -- the allocator -----------------------------------------------------------------------------


def _topology(machine: dict[str, Any]) -> CPUTopology:
    """The machine as the node reads it: a core named by its lowest thread."""
    return CPUTopology(
        CPUInfo(cpu=t, numa=n["id"], socket=c["socket"], core=min(c["threads"]),
                uncore_cache=c.get("uncoreCache"))
        for n in machine["numaNodes"] for c in n["cores"] for t in c["threads"])


def _take(machine: dict[str, Any], version: KubeletVersion, available: list[int], n: int,
          hint: int = 0, **options: bool) -> list[int]:
    return sorted(take_by_policy(_topology(machine), version, CPUManagerOptions(**options),
                                 frozenset(available), n, min_numas_from_hint=hint))


def test_cpu_10_a_socket_is_free_when_all_its_own_cpus_are() -> None:
    """CPU-10 (example A): 1.37 takes socket 0 (3 free = the average) with reserved CPU 0."""
    assert _take(UNEVEN_SOCKETS, V37, [1, 2, 3, 4, 5, 6], 4) == [0, 1, 2, 3]
    assert _take(UNEVEN_SOCKETS, V38, [1, 2, 3, 4, 5, 6], 4) == [1, 4, 5, 6]


def test_cpu_10_a_core_is_free_when_all_its_own_threads_are() -> None:
    """CPU-10 (example A2): 1.37 takes core 0 (one free = the average) with reserved CPU 1;
    1.38 takes the one-thread core 6 whole, and CPU 0 alone."""
    assert _take(UNEVEN_CORES, V37, [0, 2, 3, 4, 5, 6], 2) == [0, 1]
    assert _take(UNEVEN_CORES, V38, [0, 2, 3, 4, 5, 6], 2) == [0, 6]


def test_cpu_19_a_cache_over_two_numa_nodes_is_taken_once() -> None:
    """CPU-19 (example B, finding 25): 1.37 counts cache 1 twice and hands out 4 CPUs for 8."""
    free = list(range(1, 11))
    assert _take(CACHE_OVER_TWO_NUMA, V37, free, 8, prefer_align_by_uncore_cache=True) == \
        [4, 5, 6, 7]
    assert _take(CACHE_OVER_TWO_NUMA, V38, free, 8, prefer_align_by_uncore_cache=True) == \
        [1, 2, 3, 4, 5, 6, 7, 8]


def test_cpu_19_no_machine_average_gate() -> None:
    """CPU-19 (example C): 5 < 12 CPUs / 2 caches, so 1.37 takes no whole cache."""
    free = list(range(11))
    assert _take(UNEVEN_CACHES, V37, free, 5, prefer_align_by_uncore_cache=True) == \
        [4, 5, 6, 7, 8]
    assert _take(UNEVEN_CACHES, V38, free, 5, prefer_align_by_uncore_cache=True) == \
        [0, 1, 2, 3, 4]
    # a wholly free cache larger than the need is not taken whole: cache 1 finishes 3
    assert _take(UNEVEN_CACHES, V38, [4, 5, 6, 7, 8, 9, 10, 11], 3,
                 prefer_align_by_uncore_cache=True) == [4, 5, 6]


def test_cpu_12_the_affinity_width_is_a_floor() -> None:
    """CPU-12 (example D): the aligned take spreads over the hint's width from 1.38; a width
    above the most the request can use is ignored; 1.37 never reads it."""
    free = list(range(1, 12))
    assert _take(TWO_BY_SIX, V37, free, 4, 2, distribute_across_numa=True) == [6, 7, 8, 9]
    assert _take(TWO_BY_SIX, V38, free, 4, 2, distribute_across_numa=True) == [1, 2, 6, 7]
    assert _take(TWO_BY_SIX, V38, free, 4, 0, distribute_across_numa=True) == [6, 7, 8, 9]
    assert _take(TWO_BY_SIX, V38, [3, 4, 5, 8, 9, 10, 11], 4, 2,
                 distribute_across_numa=True) == [3, 4, 8, 9]
    # one CPU can use one NUMA node at most: the width 2 is ignored
    assert _take(TWO_BY_SIX, V38, free, 1, 2, distribute_across_numa=True) == [6]
    # without distribute-cpus-across-numa the width changes nothing: packed, fullest node
    assert _take(TWO_BY_SIX, V38, free, 4, 2) == [1, 2, 3, 4]


def test_cpu_12_the_affinity_width_is_passed_for_the_aligned_take_only() -> None:
    """CPU-12, CPU-16: allocateCPUs passes the affinity's count to the aligned take, 0 to the
    rest; the width counts NUMA nodes without CPUs too."""
    topo = _topology(TWO_BY_SIX)
    manager = StaticCPUManager(topo, V38, CPUManagerOptions(distribute_across_numa=True),
                               frozenset({0}))
    pod = decode_pod(_pod("p", ("c", 4)))
    manager.allocate(pod, pod.containers[0], NumaMask.of([0, 1]))
    assert sorted(manager.cpus_of("p", "c")) == [1, 2, 6, 7]
    with mock.patch("numaspec.node.cpu_manager.take_by_policy",
                    wraps=take_by_policy) as spy:
        other = decode_pod(_pod("q", ("c", 6)))
        manager.allocate(other, other.containers[0], NumaMask.of([1, 2, 3]))
    assert [c.kwargs.get("min_numas_from_hint", 0) for c in spy.call_args_list] == [3, 0]


def test_cpu_12_the_remainder_is_held_in_whole_groups() -> None:
    """CPU-12 (example F, finding 10): 1.37's loop never ends (not-modelled); 1.38 skips the
    subsets that cannot hold the remainder in whole cores."""
    free = [c for c in range(24) if c % 6 != 0]
    options = {"distribute_across_numa": True, "full_pcpus_only": True}
    with pytest.raises(NotModelledError):
        _take(FOUR_BY_THREE_SMT, V37, free, 14, **options)
    assert _take(FOUR_BY_THREE_SMT, V38, free, 14, **options) == \
        [2, 3, 4, 5, 8, 9, 10, 11, 14, 15, 16, 17, 20, 21]


def test_cpu_12_the_chosen_combination_is_kept() -> None:
    """CPU-12 (example G, finding 48): 1.38 takes the NUMA nodes it chose."""
    options = {"distribute_across_numa": True}
    assert _take(PAIRS, V37, list(range(1, 12)), 8, **options) == [2, 3, 4, 5, 6, 7, 10, 11]
    assert _take(PAIRS, V38, list(range(1, 12)), 8, **options) == [2, 3, 4, 5, 6, 7, 8, 9]


def test_cpu_13_round_robin_over_each_sockets_cores() -> None:
    """CPU-13 (example E): one thread per core per round, the fullest core first; the reserved
    CPUs by count follow the same order (CPU-17)."""
    spread = {"distribute_across_cores": True}
    assert _take(ADJACENT_SIBLINGS, V37, list(range(1, 8)), 3, **spread) == [1, 2, 3]
    assert _take(ADJACENT_SIBLINGS, V38, list(range(1, 8)), 3, **spread) == [1, 2, 4]
    assert _take(ADJACENT_SIBLINGS, V37, list(range(8)), 2, **spread) == [0, 1]
    assert _take(ADJACENT_SIBLINGS, V38, list(range(8)), 2, **spread) == [0, 2]
    assert _take(ADJACENT_SIBLINGS, V38, [1, 3, 4, 5, 6, 7], 3, **spread) == [1, 3, 4]
    # all four cores give one thread before any gives a second
    assert _take(ADJACENT_SIBLINGS, V38, list(range(8)), 5, **spread) == [0, 1, 2, 4, 6]


def test_the_cpus_operation_at_1_38() -> None:
    """CPU-21: the ``cpus`` case of example G's small form."""
    vector = _staged_by_id()["cpus-distribute-kept-combination-copied-1.38"]
    assert reference_result("cpus", vector["case"]) == vector["expected"]


# -- the allocator's soundness at 1.38 ----------------------------------------------------------


def _random_machine(rng: random.Random) -> CPUTopology:
    """Sockets of NUMA nodes of cores of one, two or four threads, some CPUs missing (uneven
    sockets and cores), uncore caches per NUMA node, per socket, by pairs of cores or
    straddling NUMA nodes; CPU ids by core or interleaved."""
    sockets, per_socket, per_numa = rng.randint(1, 3), rng.choice([1, 1, 2, 3]), rng.randint(1, 4)
    threads = rng.choice([1, 2, 2, 4])
    interleave = rng.random() < 0.5
    cores = sockets * per_socket * per_numa
    layout = rng.choice(["numa", "socket", "span", "pairs"])
    rows = []
    for t in range(threads):
        for c in range(cores):
            numa = c // per_numa
            cache = {"numa": numa, "socket": numa // per_socket, "pairs": c // 2,
                     "span": (c + per_numa // 2) // per_numa}[layout]
            rows.append((t * cores + c if interleave else c * threads + t, numa,
                         numa // per_socket, c, cache))
    if rng.random() < 0.5:
        for _ in range(rng.randint(1, max(1, len(rows) // 4))):
            if len(rows) > 2:
                rows.pop(rng.randrange(len(rows)))
    lowest: dict[int, int] = {}
    for cpu, _, _, core, _ in rows:
        lowest[core] = min(lowest.get(core, cpu), cpu)
    return CPUTopology(CPUInfo(cpu=cpu, numa=numa, socket=socket, core=lowest[core],
                               uncore_cache=cache) for cpu, numa, socket, core, cache in rows)


_OPTION_SETS: list[dict[str, bool]] = [
    {}, {"prefer_align_by_uncore_cache": True}, {"distribute_across_cores": True},
    {"distribute_across_numa": True}, {"distribute_across_numa": True, "full_pcpus_only": True},
    {"distribute_across_numa": True, "align_by_socket": True},
    {"distribute_across_numa": True, "full_pcpus_only": True, "align_by_socket": True}]


def _unsound(version: KubeletVersion, seed: int, count: int) -> dict[str, int]:
    """How many random takes hand out a CPU not available, the wrong number of CPUs, or never
    end (kubelet's loop: not-modelled)."""
    rng = random.Random(seed)
    found = {"not available": 0, "wrong count": 0, "never ends": 0, "cases": 0}
    for _ in range(count):
        topo = _random_machine(rng)
        options = rng.choice(_OPTION_SETS)
        keep = rng.choice([1.0, 0.9, 0.7, 0.5])
        available = frozenset(c.cpu for c in topo.cpus if rng.random() < keep) or \
            frozenset({topo.cpus[0].cpu})
        n = rng.randint(1, len(available))
        if options.get("full_pcpus_only") and rng.random() < 0.8:
            group = len(topo.cpus) // len({c.core for c in topo.cpus})
            n = max(group, n // group * group)
        hint = rng.randint(0, len(topo.numa_nodes()))
        found["cases"] += 1
        try:
            got = take_by_policy(topo, version, CPUManagerOptions(**options), available, n,
                                 min_numas_from_hint=hint)
        except NotModelledError:
            found["never ends"] += 1
            continue
        except CPUAllocationError:
            continue
        found["not available"] += not got <= available
        found["wrong count"] += len(got) != n
    return found


def test_1_38_hands_out_only_available_cpus_and_always_answers() -> None:
    """CPU-10, CPU-12, CPU-19 at 1.38: on random machines, uneven ones included, the
    allocator takes exactly the CPUs asked, all of them available, and its loops end; 1.37
    breaks each of the three (findings 33, 25 and 10), so the property is not empty."""
    new = _unsound(V38, seed=38, count=3000)
    assert new == {"not available": 0, "wrong count": 0, "never ends": 0, "cases": 3000}
    old = _unsound(V37, seed=38, count=3000)
    assert old["not available"] > 0, old
    assert old["wrong count"] > 0, old
    assert old["never ends"] > 0, old


# -- CPU-22: hint scores -----------------------------------------------------------------------


def test_cpu_22_the_score_formula() -> None:
    """CPU-22 (HINT-5's formula): 0 without allocatable CPUs, at least 1, rounded down."""
    assert utilization_score(0, 0) == 0
    assert utilization_score(-1, 0) == 0
    assert utilization_score(3, 0) == 1
    assert utilization_score(7, 2) == 28
    assert utilization_score(3, 2) == 66
    assert utilization_score(7, 4) == 57
    assert utilization_score(4, 4) == 100
    assert utilization_score(200, 1) == 1


def test_cpu_22_scores_only_from_1_38() -> None:
    """CPU-22: the same masks and preferences at 1.37 and 1.38; only 1.38 scores them, a mask
    over several NUMA nodes as a whole, the reserved CPUs left out."""
    topo = _topology(TWO_BY_FOUR)
    free = frozenset({3, 6, 7})
    old = generate_cpu_topology_hints(topo, free, (), 2, version=V37, free=free,
                                      reserved={0})
    new = generate_cpu_topology_hints(topo, free, (), 2, version=V38, free=free,
                                      reserved={0})
    assert [(h.numa_affinity, h.preferred) for h in old] == \
        [(h.numa_affinity, h.preferred) for h in new]
    assert [h.score for h in old] == [0, 0]
    # node 0 has one free CPU: no hint; node 1: 4 allocatable, 2 free; both: 7 and 3
    assert {h.numa_affinity.nodes: (h.preferred, h.score) for h in new
            if h.numa_affinity is not None} == {(1,): (True, 50), (0, 1): (False, 57)}


def test_cpu_22_usable_cpus_do_not_change_the_score() -> None:
    """CPU-22: hints regenerated from held CPUs are scored on the free pool, so held CPUs
    count as in use; the reusable CPUs of an init container too."""
    topo = _topology(TWO_BY_FOUR)
    held = frozenset({1, 2})
    hints = generate_cpu_topology_hints(topo, held, (), 2, version=V38,
                                        free=frozenset({3, 4, 5, 6, 7}), reserved={0})
    assert [(h.numa_affinity.nodes, h.preferred, h.score) for h in hints
            if h.numa_affinity is not None] == [((0,), True, 66), ((0, 1), False, 28)]
    manager = StaticCPUManager(topo, V38, CPUManagerOptions(), frozenset({0}))
    pod = decode_pod({"uid": "p", "initContainers": [_container("init", 2)],
                      "containers": [_container("app", 3)]})
    manager.allocate(pod, pod.init_containers[0], NumaMask.of([0]))
    assert sorted(manager.cpus_of("p", "init")) == [1, 2]
    hints_app = manager.container_hints(pod, pod.containers[0])
    assert hints_app is not None
    # the reusable CPUs are on node 0, so every hint holds it (CPU-3); they count as in use
    assert {h.numa_affinity.nodes: h.score for h in hints_app["cpu"] or ()
            if h.numa_affinity is not None} == {(0,): 66, (0, 1): 28}


def test_cpu_22_every_hint_of_the_node_is_scored() -> None:
    """CPU-22 (example H): the node's CPU hints at 1.38, through the provider itself."""
    vector = SCORES_138
    session = NodeSession()
    for step, answer in zip(vector["case"]["steps"], vector["expected"]["answers"],
                            strict=True):
        got = session.handle(step)
        if step["op"] != "hints":
            continue
        assert session.node is not None
        found = session.node.provider_hints(decode_pod(step["pod"]), step.get("container"))
        scored = sorted((list(h.numa_affinity.nodes), h.preferred, h.score)
                        for h in found["cpu"] or () if h.numa_affinity is not None)
        want = sorted((h["numa"], h["preferred"], h["score"])
                      for h in answer["hints"]["cpu"])
        assert scored == want, step
        assert got["hints"]["cpu"] is not None


def test_cpu_18_the_pod_level_gate_is_still_refused_at_1_38() -> None:
    """CPU-18: a pod-level pod on a node with PodLevelResourceManagers on is not modelled at
    1.38 either (1.38's restore of a pod's recorded CPUs is behind that gate)."""
    pod = {"uid": "p", "resources": {"requests": {"cpu": "4", "memory": "1Gi"},
                                     "limits": {"cpu": "4", "memory": "1Gi"}},
           "containers": [_container("app", 2)]}
    session = NodeSession()
    created = session.answer(json.dumps(_create(
        "1.38", TWO_BY_FOUR, reservedSystemCPUs="0", topologyManagerPolicy="restricted",
        topologyManagerScope="pod", featureGates={"PodLevelResourceManagers": True})))
    assert created == OK
    answer = session.answer(json.dumps({"op": "admit", "pod": pod}))
    assert answer["error"]["kind"] == "not-modelled", answer


# -- the staged vectors ------------------------------------------------------------------------


def test_the_reading_examples_are_vectors() -> None:
    """Examples A to H of the reading are vectors of their own, hand-derived, at 1.38 only
    (their 1.37 side is a vector of its own, :data:`SPLIT`)."""
    assert len(STAGED) == 10
    for vector in STAGED:
        assert vector["derived"] == "hand", vector["id"]
        assert vector["releases"] == "1.38", vector["id"]


def test_the_scores_vector_at_1_38() -> None:
    """CPU-22: vector cpu-22-hint-scores holds to 1.38; at 1.38 the reference answers it with
    the scores worked out by hand (``vectors write`` will record them there)."""
    known = {v.id: v for v in vector_files.load_vectors()}["cpu-22-hint-scores"]
    assert known.releases == (29, 38)
    case = json.loads(json.dumps(known.case).replace('"1.37"', '"1.38"'))
    assert case == SCORES_138["case"]
    session = NodeSession()
    answers = [session.answer(json.dumps(step)) for step in case["steps"]]
    assert compare("hints", case, SCORES_138["expected"],
                   {"answers": answers}) == []


def test_each_1_37_side_has_its_1_38_vector() -> None:
    """The examples' 1.37 vectors in spec/vectors stop at 1.37; their 1.38 answers are here."""
    known = {v.id: v for v in vector_files.load_vectors()}
    staged = _staged_by_id()
    for old, new in SPLIT.items():
        releases = known[old].releases
        assert releases is not None, old
        assert releases[1] == 37, old
        assert new in staged
        steps_old = json.dumps(known[old].case).replace('"1.37"', '"1.38"')
        assert json.loads(steps_old) == staged[new]["case"], old


@pytest.mark.go
@pytest.mark.parametrize("vector", [*(v for v in STAGED if v["op"] == "hints"), SCORES_138],
                         ids=lambda v: v["id"])
def test_kubelet_138_agrees_with_staged_vector(vector: dict[str, Any]) -> None:
    """kubelet 1.38.0-beta.0's own node probe gives every staged hints answer (the staged
    ``node`` vectors, whose notes name the 1.38 probe, run in tests/node/test_node_vectors.py)."""
    with kubelet_builds.node_probe("1.38") as probe:
        steps = vector["case"]["steps"]
        ours, theirs = normalizer(), normalizer()
        got = [ours(r, probe.handle(r)) for r in steps]
        want = [theirs(r, a) for r, a in zip(steps, vector["expected"]["answers"], strict=True)]
        assert got == want


# -- random sessions against kubelet 1.38 --------------------------------------------------------

_NODE_OPTIONS: list[set[str]] = [
    set(), {"full-pcpus-only"}, {"distribute-cpus-across-numa"},
    {"distribute-cpus-across-numa", "full-pcpus-only"},
    {"distribute-cpus-across-numa", "align-by-socket"},
    {"distribute-cpus-across-numa", "full-pcpus-only", "align-by-socket"},
    {"distribute-cpus-across-cores"}, {"prefer-align-cpus-by-uncorecache"},
    {"prefer-align-cpus-by-uncorecache", "full-pcpus-only"}, {"align-by-socket"},
    {"strict-cpu-reservation"}, {"distribute-cpus-across-cores", "strict-cpu-reservation"}]


def _machine_json(topo: CPUTopology) -> dict[str, Any]:
    numas: dict[int, dict[int, CPUInfo]] = {}
    threads: dict[int, list[int]] = {}
    for c in topo.cpus:
        numas.setdefault(c.numa, {})[c.core] = c
        threads.setdefault(c.core, []).append(c.cpu)
    return {"numaNodes": [_numa(n, [_core(c.socket, *sorted(threads[k]), uncore=c.uncore_cache)
                                    for k, c in sorted(cores.items())], "64Gi")
                          for n, cores in sorted(numas.items())]}


def _random_session(rng: random.Random) -> list[dict[str, Any]]:
    """A CPU-only node (no Memory Manager, no devices) and pods of Guaranteed containers,
    some fractional, some with an init container; hints before and after admission;
    removals."""
    topo = _random_machine(rng)
    cpus = [c.cpu for c in topo.cpus]
    options = rng.choice(_NODE_OPTIONS)
    config: dict[str, Any] = {
        "topologyManagerPolicy": rng.choice(["none", "best-effort", "restricted",
                                             "single-numa-node"]),
        "topologyManagerScope": rng.choice(["container", "pod"]), "featureGates": ALPHA}
    if options:
        config["cpuManagerPolicyOptions"] = dict.fromkeys(sorted(options), "true")
    if rng.random() < 0.6:
        count = rng.randint(1, max(1, min(3, len(cpus) - 1)))
        config["reservedSystemCPUs"] = ",".join(map(str, sorted(rng.sample(cpus, count))))
    else:
        config["kubeReserved"] = {"cpu": str(rng.randint(1, max(1, min(3, len(cpus) - 1))))}
    steps = [_create("1.38", _machine_json(topo), **config)]
    live: list[str] = []

    def container(name: str) -> dict[str, Any]:
        n = rng.randint(1, max(1, min(len(cpus), 8)))
        cpu = str(n) if rng.random() < 0.9 else f"{n * 1000 - 500}m"
        return {"name": name, "resources": {"limits": {"cpu": cpu, "memory": "256Mi"}}}

    for i in range(rng.randint(2, 7)):
        if rng.random() < 0.15 and live:
            steps.append({"op": "remove", "uid": live.pop(rng.randrange(len(live)))})
            continue
        pod: dict[str, Any] = {"uid": f"p{i}", "containers": [
            container(f"c{k}") for k in range(rng.choice([1, 1, 1, 2, 3]))]}
        if rng.random() < 0.2:
            pod["initContainers"] = [container("init")]
        if rng.random() < 0.6:
            steps.append({"op": "hints", "pod": pod})
            steps.append({"op": "hints", "pod": pod, "container": pod["containers"][-1]["name"]})
        steps.append({"op": "admit", "pod": pod})
        live.append(pod["uid"])
        if rng.random() < 0.3:
            steps.append({"op": "hints", "pod": pod, "container": pod["containers"][0]["name"]})
            steps.append({"op": "hints", "pod": pod})
    steps.append({"op": "state"})
    return steps


def _view(step: dict[str, Any], answer: dict[str, Any]) -> Any:
    """What is compared: decisions whole, the CPU state, the CPU hints with their scores."""
    if "error" in answer:
        return "error"
    if step["op"] == "hints":
        listed = answer["hints"].get("cpu")
        return None if listed is None else sorted(
            (h["numa"] or [], h["preferred"], h.get("score", 0)) for h in listed)
    if step["op"] == "state":
        cpu = answer["state"].get("cpu") or {}
        return cpu.get("defaultCpuSet"), cpu.get("assignments")
    return answer


@pytest.mark.go
def test_random_cpu_sessions_agree_with_kubelet_138() -> None:
    """CPU-10, CPU-12, CPU-13, CPU-19, CPU-22 and the CPU rules that did not change, at 1.38:
    random CPU-only nodes and pods against kubelet 1.38.0-beta.0's node probe, step by step.

    Left out: the hints of a pod kubelet just refused.  Kubelet keeps that pod's reusable CPUs
    (``cpusToReuse``) until another pod is allocated, while the reference restores them with
    the rest of the state (admission.md, a refused admission); the same difference at every
    release, not 1.38's."""
    rng = random.Random(1380)
    compared = 0
    with kubelet_builds.node_probe("1.38") as probe:
        for _ in range(150):
            steps = _random_session(rng)
            session = NodeSession()
            refused: set[str] = set()
            for step in steps:
                if step["op"] == "hints" and step["pod"]["uid"] in refused:
                    continue
                theirs = probe.handle(step)
                ours = session.answer(json.dumps(step))
                if not theirs.get("decision", {}).get("admitted", True):
                    refused.add(step["pod"]["uid"])
                assert _view(step, ours) == _view(step, theirs), (step, steps)
                compared += 1
    assert compared > 1000


def _unscored(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _unscored(v) for k, v in value.items() if k != "score"}
    if isinstance(value, list):
        return [_unscored(v) for v in value]
    return value


def test_hand_vectors_differ_at_1_38_only_by_scores() -> None:
    """CPU-22: a hand vector of an earlier release whose 1.38 answer is its own plus CPU-22's
    scores (the affinity vectors: the scores are the CPU Manager's, filled in from the
    reference) holds nothing else at 1.38 that was not worked out by hand."""
    checked = 0
    for vector in vector_files.load_vectors():
        if vector.derived != "hand" or vector.kubelet_version == "1.38":
            continue
        at_138 = vector.expected_at("1.38")
        if at_138 is vector.expected or "scores" not in (vector.notes or ""):
            continue
        assert _unscored(at_138) == _unscored(vector.expected), vector.id
        assert at_138 != vector.expected, vector.id
        checked += 1
    assert checked >= 14
