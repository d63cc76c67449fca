"""CPU topology and the CPU Manager's static-policy hints (spec chapter ``cpu.md``).

Issue 3 groundwork: the machine's CPUs with their NUMA node, socket and core, and
``generateCPUTopologyHints`` of ``pkg/kubelet/cm/cpumanager/policy_static.go``.  Allocation,
reuse bookkeeping and the policy options other than align-by-socket come with the node model.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import attrs

from numaspec.errors import InvalidFieldError
from numaspec.topology.hints import TopologyHint
from numaspec.topology.masks import iterate_masks
from numaspec.topology.scores import utilization_score
from numaspec.topology.versions import DEFAULT, KubeletVersion

__all__ = ["CPUInfo", "CPUTopology", "generate_cpu_topology_hints"]


@attrs.frozen
class CPUInfo:
    """One logical CPU (hardware thread) and where it sits."""

    cpu: int
    numa: int
    socket: int
    core: int
    #: SYSFS-6: the core's uncore (L3) cache id as cadvisor reports it, ``None`` for none.
    uncore_cache: int | None = None

    @property
    def uncore(self) -> int:
        """CPU-19: the cache the static policy groups this CPU by: the uncore cache id, or the
        socket id when the core has none (``getUncoreCacheID`` in ``topology.go``)."""
        return self.socket if self.uncore_cache is None else self.uncore_cache


def _cpu_tuple(value: Iterable[CPUInfo]) -> tuple[CPUInfo, ...]:
    return tuple(sorted(value, key=lambda c: c.cpu))


@attrs.frozen
class CPUTopology:
    """The machine's logical CPUs (kubelet's ``CPUDetails``), ordered by CPU id."""

    cpus: tuple[CPUInfo, ...] = attrs.field(converter=_cpu_tuple)

    @cpus.validator
    def _check(self, _attribute: object, value: tuple[CPUInfo, ...]) -> None:
        ids = [c.cpu for c in value]
        if len(set(ids)) != len(ids):
            raise InvalidFieldError("a CPU id is listed twice", where="cpus")

    @classmethod
    def symmetric(cls, *, sockets: int, numa_per_socket: int, cores_per_numa: int,
                  threads_per_core: int = 2) -> CPUTopology:
        """A symmetric machine numbered as Linux usually numbers one: the first thread of
        every core first (cores in NUMA order), then the second threads, and so on."""
        cores = sockets * numa_per_socket * cores_per_numa
        return cls(CPUInfo(cpu=thread * cores + core, numa=core // cores_per_numa,
                           socket=core // (cores_per_numa * numa_per_socket), core=core)
                   for thread in range(threads_per_core) for core in range(cores))

    def numa_nodes(self) -> tuple[int, ...]:
        """CPU-1: the NUMA nodes that own at least one CPU, ascending."""
        return tuple(sorted({c.numa for c in self.cpus}))

    def sockets(self) -> frozenset[int]:
        return frozenset(c.socket for c in self.cpus)

    @functools.cached_property
    def _numa_by_cpu(self) -> dict[int, int]:
        return {c.cpu: c.numa for c in self.cpus}

    @functools.cached_property
    def _per_numa(self) -> dict[int, tuple[int, frozenset[int]]]:
        """Per NUMA node: how many CPUs it has, and its sockets."""
        count: dict[int, int] = {}
        sockets: dict[int, set[int]] = {}
        for c in self.cpus:
            count[c.numa] = count.get(c.numa, 0) + 1
            sockets.setdefault(c.numa, set()).add(c.socket)
        return {n: (count[n], frozenset(sockets[n])) for n in count}

    @functools.cached_property
    def _members(self) -> dict[str, dict[int, frozenset[int]]]:
        found: dict[str, dict[int, set[int]]] = {"numa": {}, "socket": {}, "core": {},
                                                 "uncore": {}}
        for c in self.cpus:
            for attr, units in found.items():
                units.setdefault(getattr(c, attr), set()).add(c.cpu)
        return {attr: {u: frozenset(m) for u, m in units.items()}
                for attr, units in found.items()}

    def members(self, attr: str) -> dict[int, frozenset[int]]:
        """The CPUs of every unit of one kind (``attr``: numa, socket, core or uncore)."""
        return self._members[attr]

    @functools.cached_property
    def _by_cpu(self) -> dict[int, CPUInfo]:
        return {c.cpu: c for c in self.cpus}

    def by_cpu(self) -> dict[int, CPUInfo]:
        """Each CPU's place, by id."""
        return self._by_cpu

    def numa_of(self, cpu: int) -> int:
        numa = self._numa_by_cpu.get(cpu)
        if numa is None:
            raise InvalidFieldError(f"CPU {cpu} is not on this machine", where="cpus")
        return numa

    def cpus_in(self, numa_nodes: Iterable[int]) -> frozenset[int]:
        wanted = set(numa_nodes)
        return frozenset(c.cpu for c in self.cpus if c.numa in wanted)

    def count_in(self, numa_nodes: Iterable[int]) -> int:
        """How many CPUs the NUMA nodes hold (``len(cpus_in(...))``, from per-node counts)."""
        per_numa = self._per_numa
        return sum(per_numa[n][0] for n in numa_nodes if n in per_numa)

    def sockets_in(self, numa_nodes: Iterable[int]) -> frozenset[int]:
        per_numa = self._per_numa
        return frozenset().union(*(per_numa[n][1] for n in numa_nodes if n in per_numa))


def _socket_aligned(topology: CPUTopology, nodes: tuple[int, ...], min_affinity: int) -> bool:
    """CPU-5: the hint spans exactly as many sockets as the narrowest fit needs."""
    per_socket = len(topology.numa_nodes()) // len(topology.sockets())
    if per_socket == 0:
        return False
    min_sockets = -(-min_affinity // per_socket)
    return len(topology.sockets_in(nodes)) == min_sockets


def generate_cpu_topology_hints(
    topology: CPUTopology,
    available: Iterable[int],
    reusable: Iterable[int],
    request: int,
    *,
    version: KubeletVersion = DEFAULT,
    align_by_socket: bool = False,
    free: Iterable[int] | None = None,
    reserved: Iterable[int] = (),
) -> list[TopologyHint]:
    """CPU-1..CPU-5: the CPU hints for ``request`` exclusive CPUs.

    Every subset of the NUMA nodes that own CPUs, in MASK-3's order, is a candidate:

    * CPU-2: the narrowest width whose *total* CPUs (free or not) could hold the request is
      the width a preferred hint must have;
    * CPU-3: a candidate is dropped if a reusable CPU lies outside it, or if its reusable
      plus available CPUs are fewer than the request;
    * CPU-4: a hint is preferred iff it has that narrowest width (1.18 also wanted the fewest
      sockets among the masks that narrowed the width);
    * CPU-5: with align-by-socket (1.25+), socket-aligned hints are preferred as well;
    * CPU-22 (1.38+): each hint has a score, :func:`utilization_score` of the mask's CPUs less
      ``reserved`` (*A*) and *A* less the ``free`` CPUs in the mask (the free pool: kubelet's
      default set less the reserved CPUs; ``available`` when not given, as when hints come
      from the free CPUs rather than from CPUs already held).
    """
    # Counted per NUMA node first (NWIRE-5): the same counts as per CPU, in time that does not
    # grow with CPUs times subsets.
    free_per_numa: dict[int, int] = {}
    for cpu in set(available):
        numa = topology.numa_of(cpu)
        free_per_numa[numa] = free_per_numa.get(numa, 0) + 1
    reuse_numa = [topology.numa_of(c) for c in set(reusable)]
    reuse_bits = 0
    for numa in reuse_numa:
        reuse_bits |= 1 << numa if 0 <= numa < 64 else 0
    scored = version.scores_cpu_hints
    # CPU-22: per NUMA node, its CPUs less the reserved ones, and its free CPUs
    allocatable_per_numa: dict[int, int] = {}
    pool_per_numa: dict[int, int] = {}
    if scored:
        held_back = frozenset(reserved)
        for c in topology.cpus:
            if c.cpu not in held_back:
                allocatable_per_numa[c.numa] = allocatable_per_numa.get(c.numa, 0) + 1
        if free is None:
            pool_per_numa = free_per_numa
        else:
            for cpu in set(free):
                numa = topology.numa_of(cpu)
                pool_per_numa[numa] = pool_per_numa.get(numa, 0) + 1
    nodes = topology.numa_nodes()
    min_affinity = len(nodes)
    min_sockets = len(topology.sockets())
    found = []
    for mask in iterate_masks(nodes):
        members = mask.nodes
        if topology.count_in(members) >= request and mask.count() < min_affinity:
            min_affinity = mask.count()
            min_sockets = min(min_sockets, len(topology.sockets_in(members)))
        if reuse_bits & ~mask.bits:
            continue
        matching = len(reuse_numa) + sum(free_per_numa.get(n, 0) for n in members)
        if matching >= request:
            found.append(mask)
    hints = []
    for mask in found:
        members = mask.nodes
        if align_by_socket and version.minor >= 25 and _socket_aligned(
                topology, members, min_affinity):
            preferred = True
        else:
            preferred = mask.count() == min_affinity
            if version.minor <= 18 and preferred:
                preferred = len(topology.sockets_in(members)) == min_sockets
        score = 0
        if scored:
            allocatable = sum(allocatable_per_numa.get(n, 0) for n in members)
            score = utilization_score(
                allocatable, allocatable - sum(pool_per_numa.get(n, 0) for n in members))
        hints.append(TopologyHint(mask, preferred, score))
    return hints
