"""The machine a node model runs on (spec chapter ``admission.md``, NODE-1).

Shaped like cadvisor's ``MachineInfo.Topology``, which is what kubelet reads: NUMA nodes, each
with its memory, its pre-allocated hugepages (page counts per size), its distance row and its
cores; a core is a socket id and its hardware threads.  Device plugins' devices, with the NUMA
nodes they report (none for a device without topology) and their health, complete it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import attrs

from numaspec.errors import InvalidFieldError, InvalidNumaIdError
from numaspec.node.cpu import CPUInfo, CPUTopology
from numaspec.topology.masks import MAX_NUMA_ID

__all__ = [
    "HUGEPAGE_SIZES",
    "MEMORY_TYPES",
    "Core",
    "Device",
    "DevicePlugin",
    "Machine",
    "NumaNode",
    "id_order",
]

#: NODE-1: the hugepage sizes a machine may pre-allocate, with their page size in bytes.
HUGEPAGE_SIZES: Mapping[str, int] = {"hugepages-2Mi": 2 << 20, "hugepages-1Gi": 1 << 30}
#: The memory types the Memory Manager tracks, in the order numaspec reports them.
MEMORY_TYPES = ("memory", *HUGEPAGE_SIZES)


def _int_tuple(values: Iterable[int]) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


def id_order(nodes: Sequence[NumaNode]) -> tuple[int, ...]:
    """NWIRE-3: the positions of ``nodes`` in ascending id order (stable: the order a Machine
    keeps them in), which a decoder passes as ``listed_at``."""
    return tuple(sorted(range(len(nodes)), key=lambda i: nodes[i].id))


def _sorted_nodes(nodes: Iterable[NumaNode]) -> tuple[NumaNode, ...]:
    listed = tuple(nodes)
    return tuple(listed[i] for i in id_order(listed))


@attrs.frozen
class Core:
    """A physical core: its socket and its hardware threads (logical CPU ids).

    Kubelet names a core by its lowest thread id (``getUniqueCoreID`` in
    ``pkg/kubelet/cm/cpumanager/topology/topology.go``), so no core id is needed here.
    """

    socket: int
    threads: tuple[int, ...] = attrs.field(converter=_int_tuple)
    #: Informational (SYSFS-2): the ``core_id`` the kernel reports (unique per socket only).
    core_id: int | None = None
    #: Informational (SYSFS-2): the ``die_id`` the kernel reports; kubelet does not read it.
    die: int | None = None
    #: SYSFS-6: the id of the uncore (L3) cache cadvisor reports for the core, or ``None`` when
    #: cadvisor reports none (the L3 spans the whole NUMA node, or no cache information);
    #: kubelet then uses the socket id (``getUncoreCacheID``, 1.32+).
    uncore_cache: int | None = None


@attrs.frozen
class NumaNode:
    id: int
    memory: int
    hugepages: Mapping[str, int] = attrs.field(factory=dict)
    distances: tuple[int, ...] | None = None
    cores: tuple[Core, ...] = ()

    def hugepage_bytes(self, name: str) -> int:
        return self.hugepages.get(name, 0) * HUGEPAGE_SIZES[name]


@attrs.frozen
class Device:
    """One device of a device plugin.  ``numa == ()`` is a device without topology."""

    id: str
    numa: tuple[int, ...] = ()
    healthy: bool = True


@attrs.frozen
class DevicePlugin:
    """DEV-10: what numaspec knows of a resource's device plugin beyond its devices: it
    offers ``GetPreferredAllocation`` with this preference (device ids, most wanted first).

    Asked for ``size`` devices out of the ids it is offered, with some ids it must include,
    the plugin answers the must-include ids, then the ids of ``preferred`` in that order
    (only those it was offered, unless ``offered_only`` is false), until it has ``size``."""

    preferred: tuple[str, ...] = ()
    offered_only: bool = True

    def answer(self, offered: frozenset[str], must_include: frozenset[str],
               size: int) -> tuple[str, ...]:
        """DEV-10: the plugin's answer to one ``GetPreferredAllocation`` request."""
        chosen = sorted(must_include)
        for device in self.preferred:
            if len(chosen) >= size:
                break
            if device in chosen:  # the must-include ids are there already
                continue
            if self.offered_only and device not in offered:
                continue
            chosen.append(device)
        return tuple(chosen)


def _check_ids(machine: Machine) -> None:
    """NODE-1: the NUMA nodes, in the order the request listed them (so that the error points
    at the entry that repeats an id, not at the first)."""
    seen: set[int] = set()
    cpus: set[int] = set()
    for position in sorted(range(len(machine.numa_nodes)), key=machine.listed_index):
        node = machine.numa_nodes[position]
        where = machine.where(position)
        if not 0 <= node.id <= MAX_NUMA_ID:
            raise InvalidNumaIdError(f"NUMA node id {node.id} is outside 0..{MAX_NUMA_ID}",
                                     where=f"{where}.id")
        if node.id in seen:
            raise InvalidNumaIdError(f"NUMA node {node.id} is listed twice", where=f"{where}.id")
        seen.add(node.id)
        if node.memory < 0:
            raise InvalidFieldError("memory must not be negative", where=f"{where}.memory")
        for name, pages in node.hugepages.items():
            if name not in HUGEPAGE_SIZES:
                raise InvalidFieldError(
                    f"unknown hugepage size {name!r} (known: {', '.join(HUGEPAGE_SIZES)})",
                    where=f"{where}.hugepages")
            if pages < 0:
                raise InvalidFieldError("a page count must not be negative",
                                        where=f"{where}.hugepages.{name}")
        for c_index, core in enumerate(node.cores):
            if not core.threads:
                raise InvalidFieldError("a core needs at least one thread",
                                        where=f"{where}.cores[{c_index}].threads")
            for cpu in core.threads:
                if cpu < 0 or cpu in cpus:
                    raise InvalidFieldError(
                        f"CPU {cpu} is negative or listed twice on the machine",
                        where=f"{where}.cores[{c_index}].threads")
                cpus.add(cpu)
            if core.socket < 0:
                raise InvalidFieldError("a socket id must not be negative",
                                        where=f"{where}.cores[{c_index}].socket")


@attrs.frozen
class Machine:
    """NODE-1: the machine.  NUMA nodes are kept in ascending id order."""

    numa_nodes: tuple[NumaNode, ...] = attrs.field(converter=_sorted_nodes)
    devices: Mapping[str, tuple[Device, ...]] = attrs.field(factory=dict)
    #: DEV-10: the resources whose plugins offer GetPreferredAllocation, and how they prefer.
    device_plugins: Mapping[str, DevicePlugin] = attrs.field(factory=dict)
    #: NWIRE-3: where each NUMA node of ``numa_nodes`` stood in the list it was given in (the
    #: request's ``numaNodes``), so that an error points at the entry; none: in id order.
    listed_at: tuple[int, ...] = attrs.field(default=(), eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        _check_ids(self)
        for resource, plugin in self.device_plugins.items():
            where = f"machine.devicePlugins.{resource}"
            if resource not in self.devices:
                raise InvalidFieldError("a device plugin for a resource the machine lists no "
                                        "devices of", where=where)
            if len(set(plugin.preferred)) != len(plugin.preferred):
                raise InvalidFieldError("a device id is listed twice",
                                        where=f"{where}.preferredAllocation")
        sizes = {frozenset(node.hugepages) for node in self.numa_nodes}
        if len(sizes) > 1:
            raise InvalidFieldError("every NUMA node must list the same hugepage sizes (cadvisor "
                                    "reports every size the kernel supports on every node; give "
                                    "0 pages where there are none)", where="machine.numaNodes")
        if not any(node.cores for node in self.numa_nodes):
            raise InvalidFieldError("the machine has no CPU at all (kubelet: could not detect "
                                    "number of cpus)", where="machine.numaNodes")
        ids = set(self.numa_ids)
        for resource, devices in self.devices.items():
            where = f"machine.devices.{resource}"
            if "/" not in resource:
                raise InvalidFieldError(
                    "a device plugin resource is an extended resource name such as "
                    "'example.com/gpu'", where=where)
            names = [d.id for d in devices]
            if len(set(names)) != len(names):
                raise InvalidFieldError("a device id is listed twice", where=where)
            for index, device in enumerate(devices):
                for numa in device.numa:
                    if numa not in ids:
                        raise InvalidNumaIdError(
                            f"device {device.id!r} reports NUMA node {numa}, which the machine "
                            "does not have", where=f"{where}[{index}].numa")

    @property
    def hugepage_sizes(self) -> tuple[str, ...]:
        """The hugepage sizes the machine reports, in HUGEPAGE_SIZES order."""
        listed = set(self.numa_nodes[0].hugepages) if self.numa_nodes else set()
        return tuple(name for name in HUGEPAGE_SIZES if name in listed)

    def listed_index(self, position: int) -> int:
        """Where the NUMA node at ``position`` of ``numa_nodes`` was listed."""
        if len(self.listed_at) == len(self.numa_nodes):
            return self.listed_at[position]
        return position

    def where(self, position: int) -> str:
        """NWIRE-3: the path of the NUMA node at ``position`` of ``numa_nodes``."""
        return f"machine.numaNodes[{self.listed_index(position)}]"

    def where_of(self, numa: int) -> str:
        """NWIRE-3: the path of NUMA node ``numa`` (the machine's list when it has none)."""
        for position, node in enumerate(self.numa_nodes):
            if node.id == numa:
                return self.where(position)
        return "machine.numaNodes"

    @property
    def numa_ids(self) -> tuple[int, ...]:
        return tuple(node.id for node in self.numa_nodes)

    def distances(self) -> dict[int, tuple[int, ...]] | None:
        """The distance rows, or ``None`` if any node lacks one."""
        rows = {node.id: node.distances for node in self.numa_nodes}
        if any(row is None for row in rows.values()):
            return None
        return {k: v for k, v in rows.items() if v is not None}

    def sockets(self) -> frozenset[int]:
        return frozenset(core.socket for node in self.numa_nodes for core in node.cores)

    def healthy_device_counts(self) -> dict[str, int]:
        """How many healthy devices each device resource has: the capacity node allocatable
        counts for it (NODE-3)."""
        return {resource: sum(1 for d in listed if d.healthy)
                for resource, listed in self.devices.items()}

    def cpu_topology(self) -> CPUTopology:
        """Kubelet's ``topology.Discover``: every thread with its NUMA node, socket and core,
        the core being named by its lowest thread, and its uncore cache (CPU-19)."""
        return CPUTopology(
            CPUInfo(cpu=cpu, numa=node.id, socket=core.socket, core=min(core.threads),
                    uncore_cache=core.uncore_cache)
            for node in self.numa_nodes for core in node.cores for cpu in core.threads)

    @classmethod
    def symmetric(cls, *, sockets: int = 2, numa_per_socket: int = 1, cores_per_numa: int = 4,
                  threads_per_core: int = 2, memory: int = 16 << 30,
                  hugepages: Mapping[str, int] | None = None,
                  devices: Mapping[str, tuple[Device, ...]] | None = None) -> Machine:
        """A symmetric machine numbered as Linux usually numbers one (see
        :meth:`CPUTopology.symmetric`), every NUMA node with the same memory."""
        topo = CPUTopology.symmetric(sockets=sockets, numa_per_socket=numa_per_socket,
                                     cores_per_numa=cores_per_numa,
                                     threads_per_core=threads_per_core)
        nodes = []
        count = sockets * numa_per_socket
        for numa in range(count):
            cores: dict[int, list[CPUInfo]] = {}
            for info in topo.cpus:
                if info.numa == numa:
                    cores.setdefault(info.core, []).append(info)
            nodes.append(NumaNode(
                id=numa, memory=memory, hugepages=dict(hugepages or {}),
                distances=tuple([10 if other == numa else 20 for other in range(count)]),
                cores=tuple(Core(socket=infos[0].socket, threads=tuple(i.cpu for i in infos))
                            for _, infos in sorted(cores.items()))))
        return cls(tuple(nodes), dict(devices or {}))
