"""Deliberately wrong allocators for prefer-align-cpus-by-uncorecache (CPU-19, CPU-20).  Each
has the signature of :func:`numaspec.node.cpu_assignment.take_by_topology` as the static policy
calls it with the option on; tests/node/test_uncore.py must reject every one of them
(``UNCORE_KILLED_BY`` names the test that does)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from numaspec.node.cpu import CPUTopology
from numaspec.node.cpu_assignment import take_by_topology
from numaspec.topology.versions import KubeletVersion

#: (topology, free CPUs, request, release) -> the CPUs handed out.
Allocator = Callable[[CPUTopology, Iterable[int], int, KubeletVersion], frozenset[int]]


def reference(topo: CPUTopology, free: Iterable[int], n: int,
              version: KubeletVersion) -> frozenset[int]:
    """The reference, as the static policy calls it with the option on."""
    return take_by_topology(topo, free, n, prefer_uncore=True,
                            uncore_rounds_up=version.uncore_partial_rounds_up)


def option_ignored(topo: CPUTopology, free: Iterable[int], n: int,
                   _version: KubeletVersion) -> frozenset[int]:
    """CPU-19 broken: the option has no effect (plain packing, CPU-10)."""
    return take_by_topology(topo, free, n)


def always_rounds_down(topo: CPUTopology, free: Iterable[int], n: int,
                       _version: KubeletVersion) -> frozenset[int]:
    """CPU-20 broken: 1.34+ still rounds the cores asked of a cache down (1.32's count)."""
    return take_by_topology(topo, free, n, prefer_uncore=True, uncore_rounds_up=False)


UNCORE_MUTANTS: dict[str, Allocator] = {
    "option_ignored": option_ignored,
    "always_rounds_down": always_rounds_down,
}
UNCORE_KILLED_BY = {
    "option_ignored": "test_one_cache_finishes_a_small_request",
    "always_rounds_down": "test_one_cache_finishes_a_small_request",
}
