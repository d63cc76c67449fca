"""CPU-1..CPU-5: the CPU Manager's static-policy hints, on the worked examples of the seeds
and of the providers digest (A.12), and a socket-alignment example (A6.5)."""

from __future__ import annotations

import pytest

from numaspec import NumaMask, TopologyHint
from numaspec.node.cpu import CPUInfo, CPUTopology, generate_cpu_topology_hints
from numaspec.topology.versions import KubeletVersion


def hints(*pairs: tuple[list[int], bool]) -> list[TopologyHint]:
    return [TopologyHint(NumaMask.of(nodes), preferred) for nodes, preferred in pairs]


# Topology T1: 8 CPUs without SMT; NUMA 0 = {0,1,2,3}, NUMA 1 = {4,5,6,7}; CPU 0 reserved.
T1 = CPUTopology(CPUInfo(cpu=c, numa=c // 4, socket=c // 4, core=c) for c in range(8))
FREE = set(range(1, 8))


@pytest.mark.parametrize(("request_", "available", "reusable", "expected"), [
    (3, FREE, set(), hints(([0], True), ([1], True), ([0, 1], False))),    # E1
    (4, FREE, set(), hints(([1], True), ([0, 1], False))),                 # E2: CPU-2 capacity
    (5, FREE, set(), hints(([0, 1], True))),                               # E3
    (4, FREE - {4}, set(), hints(([0, 1], False))),                        # E4
    (2, FREE - {4, 5}, {4, 5}, hints(([1], True), ([0, 1], False))),       # E5: CPU-3 reuse
    (8, FREE, set(), []),                                                  # nothing fits
])
def test_digest_examples(request_: int, available: set[int], reusable: set[int],
                         expected: list[TopologyHint]) -> None:
    assert generate_cpu_topology_hints(T1, available, reusable, request_) == expected


def test_seed000_two_nodes_two_cpus() -> None:
    """Seed 000: 2 NUMA nodes x 2 CPUs, request 2: {0} T, {1} T, {0,1} F."""
    topo = CPUTopology(CPUInfo(cpu=c, numa=c // 2, socket=c // 2, core=c) for c in range(4))
    assert generate_cpu_topology_hints(topo, range(4), (), 2) == hints(
        ([0], True), ([1], True), ([0, 1], False))


def test_seed001_free_cpus_on_different_nodes() -> None:
    """Seed 001: 2 NUMA x 4 CPUs, only CPUs 3 and 4 free, request 2: only {0,1}, not
    preferred (preference is judged by capacity, CPU-2)."""
    topo = CPUTopology(CPUInfo(cpu=c, numa=c // 4, socket=c // 4, core=c) for c in range(8))
    assert generate_cpu_topology_hints(topo, {3, 4}, (), 2) == hints(([0, 1], False))


def test_numa_nodes_without_cpus_never_appear() -> None:  # CPU-1
    topo = CPUTopology(CPUInfo(cpu=c, numa=2 * (c // 2), socket=0, core=c) for c in range(4))
    assert generate_cpu_topology_hints(topo, range(4), (), 1) == hints(
        ([0], True), ([2], True), ([0, 2], False))


TWO_BY_TWO = CPUTopology.symmetric(sockets=2, numa_per_socket=2, cores_per_numa=2)


def test_align_by_socket() -> None:  # CPU-5 (A6.5)
    got = generate_cpu_topology_hints(TWO_BY_TWO, range(16), (), 2, align_by_socket=True)
    preferred = {h.numa_affinity.nodes for h in got if h.preferred and h.numa_affinity}
    assert preferred == {(0,), (1,), (2,), (3,), (0, 1), (2, 3)}
    assert (0, 2) not in preferred


def test_align_by_socket_does_not_exist_before_125() -> None:  # CPU-5
    got = generate_cpu_topology_hints(TWO_BY_TWO, range(16), (), 2, align_by_socket=True,
                                      version=KubeletVersion(24))
    assert {h.numa_affinity.nodes for h in got if h.preferred and h.numa_affinity} == {
        (0,), (1,), (2,), (3,)}


def test_118_also_wants_the_fewest_sockets() -> None:  # CPU-4
    # A request of 6 needs two NUMA nodes; {0,1} shares a socket, {0,2} spans two.
    new = generate_cpu_topology_hints(TWO_BY_TWO, range(16), (), 6)
    old = generate_cpu_topology_hints(TWO_BY_TWO, range(16), (), 6, version=KubeletVersion(18))
    def pref(found: list[TopologyHint]) -> set[tuple[int, ...]]:
        return {h.numa_affinity.nodes for h in found if h.preferred and h.numa_affinity}

    assert pref(new) == {(0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3)}
    assert pref(old) == {(0, 1), (2, 3)}


def test_symmetric_numbering() -> None:
    topo = CPUTopology.symmetric(sockets=1, numa_per_socket=2, cores_per_numa=2)
    assert [(c.cpu, c.numa, c.core) for c in topo.cpus] == [
        (0, 0, 0), (1, 0, 1), (2, 1, 2), (3, 1, 3), (4, 0, 0), (5, 0, 1), (6, 1, 2), (7, 1, 3)]
