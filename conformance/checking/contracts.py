"""Contracts (PEP 316 docstrings) on the node's state-changing functions, for CrossHair
(spec/conformance/checking.md, CHECK-8).

CrossHair cannot build a manager symbolically in any useful way: given a symbolic
:class:`~numaspec.node.cpu.CPUTopology` it explores almost only empty machines, and a manager it
builds has never allocated anything, so a contract on ``remove_pod`` would hold vacuously.
Each harness here therefore takes a few small ints and bools (the machine's shape, the
requests, which pod goes first), builds a node concretely, runs the state-changing functions
and returns what it saw; its docstring carries the contract over that record.  CrossHair
explores the small arguments; the managers themselves run concretely.

Each harness runs its session through a ``*_session`` function that takes the manager class,
so that ``tools/numaspec_tools/mutants/crosshair_node_mutants.py`` can run the same session on a
deliberately wrong manager under the same contract.
"""

from __future__ import annotations

from typing import NamedTuple

from numaspec.node.cpu_manager import CPUManagerOptions, StaticCPUManager
from numaspec.node.devices import DeviceManager
from numaspec.node.machine import Device, Machine
from numaspec.node.memory import MemoryManager
from numaspec.node.pods import Container, Pod
from numaspec.node.rejection import Rejection
from numaspec.topology.masks import NumaMask
from numaspec.topology.versions import parse_version

__all__ = ["CPUSession", "DeviceSession", "MemorySession", "cpu_allocate_release",
           "cpu_session", "devices_allocate_release", "devices_session",
           "memory_allocate_release", "memory_session"]

_GIB = 1 << 30
_DEVICE = "example.com/dev"
_VERSION = parse_version("1.33")


def _guaranteed(uid: str, *, cpus: int = 1, memory_gib: int = 1, devices: int = 0,
                init_devices: int = -1) -> Pod:
    """A Guaranteed pod of one app container (and one regular init container when
    ``init_devices`` is not negative)."""
    def container(name: str, dev: int) -> Container:
        amounts = {"cpu": str(cpus), "memory": f"{memory_gib}Gi"}
        if dev:
            amounts[_DEVICE] = str(dev)
        return Container.of(name, requests=amounts, limits=amounts)

    init = (container("init", init_devices),) if init_devices >= 0 else ()
    return Pod(uid, (container("app", devices),), init, uid=uid)


def _affinity(numa: int, numa_nodes: int) -> NumaMask | None:
    """NUMA node ``numa`` of ``numa_nodes``, both of them at ``numa == numa_nodes``, none
    (no hint) beyond."""
    if numa < numa_nodes:
        return NumaMask.of([numa])
    if numa == numa_nodes:
        return NumaMask.of(range(numa_nodes))
    return None


# -- CPU Manager, static policy ----------------------------------------------------------------

class CPUSession(NamedTuple):
    """What :func:`cpu_session` saw: the reserved CPUs, the CPUs available before, the CPUs
    each pod asked for and was given, the shared pool and the available CPUs after both
    allocations, after removing one pod and after removing both, and the shared pool at the
    start and the end."""

    reserved: frozenset[int]
    free_before: frozenset[int]
    asked: tuple[int, int]
    taken: tuple[frozenset[int], frozenset[int]]
    pool_after: frozenset[int]
    free_after: frozenset[int]
    free_one_removed: frozenset[int]
    kept: int
    free_released: frozenset[int]
    pool_before: frozenset[int]
    pool_released: frozenset[int]

    def allocation_holds(self) -> bool:
        """CPU-9, INV-4, INV-5, INV-6: each pod got as many CPUs as it asked, all of them
        available before, none reserved, none the other pod's, none left in the shared
        pool; the available CPUs are the others."""
        both = self.taken[0] | self.taken[1]
        return (all(len(cpus) == n and cpus <= self.free_before
                    for cpus, n in zip(self.taken, self.asked, strict=True))
                and not both & self.reserved and not self.taken[0] & self.taken[1]
                and not both & self.pool_after and self.free_after == self.free_before - both)

    def release_restores(self) -> bool:
        """CPU-17: removing a pod gives back exactly its CPUs; removing both restores the
        available CPUs and the shared pool."""
        return (self.free_one_removed == self.free_before - self.taken[self.kept]
                and self.free_released == self.free_before
                and self.pool_released == self.pool_before)


def cpu_session(manager: type[StaticCPUManager], *, sockets: int, threads: int, reserved: int,
                first: int, second: int, numa: int, distribute: bool,
                drop_first: bool) -> CPUSession:
    """Two pods on a static-policy CPU Manager (machine of ``sockets`` sockets, one NUMA node
    each, two cores of ``threads`` threads per NUMA node; CPUs ``0..reserved-1`` reserved):
    allocate ``first`` CPUs to one, with the affinity :func:`_affinity` makes of ``numa``,
    and ``second`` to the other without; remove one, then the other."""
    topology = Machine.symmetric(sockets=sockets, cores_per_numa=2,
                                 threads_per_core=threads).cpu_topology()
    options = CPUManagerOptions(distribute_across_numa=distribute)
    node = manager(topology, _VERSION, options, frozenset(range(reserved)))
    pool_before = node.default
    free_before = node.available()
    pods = (_guaranteed("a", cpus=first), _guaranteed("b", cpus=second))
    node.allocate(pods[0], pods[0].containers[0], _affinity(numa, sockets))
    node.allocate(pods[1], pods[1].containers[0], None)
    taken = (node.cpus_of("a", "app"), node.cpus_of("b", "app"))
    pool_after, free_after = node.default, node.available()
    gone, kept = ("a", 1) if drop_first else ("b", 0)
    node.remove_pod(gone)
    free_one_removed = node.available()
    node.remove_pod(pods[kept].uid)
    return CPUSession(frozenset(range(reserved)), free_before, (first, second), taken,
                      pool_after, free_after, free_one_removed, kept, node.available(),
                      pool_before, node.default)


def cpu_allocate_release(*, sockets: int, threads: int, reserved: int, first: int, second: int,
                         numa: int, distribute: bool, drop_first: bool) -> CPUSession:
    """Checks ``StaticCPUManager.allocate``, ``remove_pod`` and ``remove_container``
    (reference/node/cpu_manager.py) with ``take_by_topology`` (reference/node/cpu_assignment.py),
    packed and distributed: CPU-9, CPU-17, INV-4, INV-5, INV-6.  The CPUs each pod gets are
    available and exactly as many as it asks; the reserved CPUs are never assigned; the two pods
    share none and assigned CPUs leave the shared pool; a removal gives back exactly what the pod
    held, and removing both restores the pool.

    pre: 1 <= sockets <= 2 and 1 <= threads <= 2 and 1 <= reserved <= 2
    pre: 0 <= numa <= 2
    pre: 1 <= first and 1 <= second
    pre: first + second + reserved <= 2 * sockets * threads
    post: __return__.allocation_holds()
    post: __return__.release_restores()
    """
    return cpu_session(StaticCPUManager, sockets=sockets, threads=threads, reserved=reserved,
                       first=first, second=second, numa=numa, distribute=distribute,
                       drop_first=drop_first)


# -- Memory Manager, Static policy -------------------------------------------------------------

#: One state of the Memory Manager: per NUMA node, per memory type, (free, reserved,
#: allocatable), and the node's assignments count and group.
Tables = tuple[tuple[int, tuple[int, ...], tuple[tuple[str, int, int, int], ...]], ...]


def _tables(node: MemoryManager) -> Tables:
    return tuple((s.assignments, tuple(sorted(s.cells)),
                  tuple((t, m.free, m.reserved, m.allocatable)
                        for t, m in sorted(s.tables.items())))
                 for _, s in sorted(node.nodes.items()))


class MemorySession(NamedTuple):
    """What :func:`memory_session` saw: the state at the start, after each step, and at the
    end; which pods were admitted and the bytes asked of each memory type."""

    initial: Tables
    states: tuple[Tables, ...]
    admitted: tuple[bool, bool]
    asked: tuple[int, int]
    final: Tables

    def reservation_holds(self) -> bool:
        """INV-1 in every state: Free + Reserved = Allocatable for every NUMA node and
        memory type; MEM-7: once both pods are allocated, the memory Reserved is what the
        admitted pods asked."""
        balanced = all(free + reserved == allocatable for state in self.states
                       for _, _, tables in state for _, free, reserved, allocatable in tables)
        reserved = sum(r for _, _, tables in self.states[1] for t, _, r, _ in tables
                       if t == "memory")
        asked = sum(n for n, ok in zip(self.asked, self.admitted, strict=True) if ok)
        return balanced and reserved == asked

    def release_restores(self) -> bool:
        """MEM-9, INV-9: removing both pods restores every table, assignment count and
        group."""
        return self.final == self.initial


def memory_session(manager: type[MemoryManager], *, nodes: int, memory_gib: int,
                   reserved_gib: int, first: int, second: int, numa: int, preferred: bool,
                   drop_first: bool) -> MemorySession:
    """Two Guaranteed pods on a Memory Manager (``nodes`` NUMA nodes of ``memory_gib`` GiB,
    ``reserved_gib`` of node 0 reserved for the system): allocate ``first`` GiB to one
    within the affinity :func:`_affinity` makes of ``numa`` (preferred or not) and ``second``
    GiB to the other without; a refused allocation is recorded; then remove one pod, then the
    other."""
    machine = Machine.symmetric(sockets=nodes, cores_per_numa=1, threads_per_core=1,
                                memory=memory_gib * _GIB)
    node = manager(machine, _VERSION, {0: {"memory": reserved_gib * _GIB}} if reserved_gib
                   else {})
    initial = _tables(node)
    states = []
    pods = (_guaranteed("a", memory_gib=first), _guaranteed("b", memory_gib=second))
    admitted = []
    for pod, affinity in zip(pods, (_affinity(numa, nodes), None), strict=True):
        try:
            node.allocate(pod, pod.containers[0], affinity, preferred)
            admitted.append(True)
        except Rejection:
            admitted.append(False)
        states.append(_tables(node))
    for uid in ("a", "b") if drop_first else ("b", "a"):
        node.remove_pod(uid)
        states.append(_tables(node))
    return MemorySession(initial, tuple(states), (admitted[0], admitted[1]),
                         (first * _GIB, second * _GIB), _tables(node))


def memory_allocate_release(*, nodes: int, memory_gib: int, reserved_gib: int, first: int,
                            second: int, numa: int, preferred: bool,
                            drop_first: bool) -> MemorySession:
    """Checks ``MemoryManager.allocate``, ``_reserve``, ``remove_pod`` and
    ``remove_container`` (reference/node/memory.py): MEM-6, MEM-7, MEM-9, INV-1, INV-9.  In every
    state, free + reserved = allocatable for every NUMA node and memory type; the memory
    reserved is what the admitted pods asked; removing both pods restores the initial state.

    pre: 1 <= nodes <= 2 and 2 <= memory_gib <= 3 and 0 <= reserved_gib <= 1
    pre: 1 <= first <= 4 and 1 <= second <= 4
    pre: 0 <= numa <= 3
    post: __return__.reservation_holds()
    post: __return__.release_restores()
    """
    return memory_session(MemoryManager, nodes=nodes, memory_gib=memory_gib,
                          reserved_gib=reserved_gib, first=first, second=second, numa=numa,
                          preferred=preferred, drop_first=drop_first)


# -- Device Manager ----------------------------------------------------------------------------

class DeviceSession(NamedTuple):
    """What :func:`devices_session` saw: every device; the holdings (pod, container, devices
    asked, devices held) of the admitted pods after both allocations; which pods were
    admitted; the devices available after removing one pod, the devices the other pod held;
    the devices available and the pods holding any at the end."""

    everyone: frozenset[str]
    held: tuple[tuple[str, str, int, frozenset[str]], ...]
    admitted: tuple[bool, bool]
    free_one_removed: frozenset[str]
    kept: frozenset[str]
    free_released: frozenset[str]
    left: int

    def held_once_as_asked(self) -> bool:
        """INV-4: no device is held by two pods; DEV-4, INV-6: each container of an
        admitted pod holds exactly the devices it asked."""
        return (all(not x & y for u, _, _, x in self.held for v, _, _, y in self.held
                    if u != v)
                and all(len(ids) == asked for _, _, asked, ids in self.held))

    def release_restores(self) -> bool:
        """DEV-7: removing a pod frees exactly its devices; removing both frees every
        device and forgets both pods."""
        return (self.free_one_removed == self.everyone - self.kept
                and self.free_released == self.everyone and self.left == 0)


def devices_session(manager: type[DeviceManager], *, nodes: int, per_node: int, first: int,
                    init: int, second: int, numa: int, drop_first: bool) -> DeviceSession:
    """Two pods on a Device Manager (``nodes`` NUMA nodes with ``per_node`` devices each):
    one asks ``first`` devices within the affinity :func:`_affinity` makes of ``numa`` (its
    regular init container ``init`` before it, none if negative), the other ``second``
    without; a refused allocation is recorded; then one pod is removed, then the other."""
    devices = tuple(Device(f"d{n}{i}", (n,)) for n in range(nodes) for i in range(per_node))
    machine = Machine.symmetric(sockets=nodes, cores_per_numa=1, threads_per_core=1,
                                devices={_DEVICE: devices})
    node = manager(machine, _VERSION)
    pods = (_guaranteed("a", devices=first, init_devices=init), _guaranteed("b", devices=second))
    admitted = []
    for pod, affinity in zip(pods, (_affinity(numa, nodes), None), strict=True):
        before = node.snapshot()
        try:
            for container in pod.all_containers():
                node.allocate(pod, container, affinity)
            admitted.append(True)
        except Rejection:
            node = before  # NODE-6: a refused admission leaves the node as it was
            admitted.append(False)
    held = tuple((pod.uid, c.name, int(c.limits.get(_DEVICE, 0)),
                  node.pod_devices.get(pod.uid, {}).get(c.name, {}).get(_DEVICE, frozenset()))
                 for pod, ok in zip(pods, admitted, strict=True) if ok
                 for c in pod.all_containers())
    gone, kept = ("a", "b") if drop_first else ("b", "a")
    kept_ids = frozenset(d for uid, _, _, ids in held if uid == kept for d in ids)
    node.remove_pod(gone)
    free_one_removed = node.available(_DEVICE)
    node.remove_pod(kept)
    return DeviceSession(frozenset(d.id for d in devices), held, (admitted[0], admitted[1]),
                         free_one_removed, kept_ids, node.available(_DEVICE),
                         len(node.pod_devices))


def devices_allocate_release(*, nodes: int, per_node: int, first: int, init: int, second: int,
                             numa: int, drop_first: bool) -> DeviceSession:
    """Checks ``DeviceManager.allocate`` and ``remove_pod`` (reference/node/devices.py): DEV-4,
    DEV-5, DEV-7, INV-4, INV-6.  No device is held by two pods, or by a pod's init container
    and another pod; an admitted container holds exactly what it asked; removing a pod frees
    exactly its devices, and removing both frees every device.

    pre: 1 <= nodes <= 2 and 1 <= per_node <= 2
    pre: 1 <= first <= 3 and -1 <= init <= 2 and 1 <= second <= 3
    pre: 0 <= numa <= 3
    post: __return__.held_once_as_asked()
    post: __return__.release_restores()
    """
    return devices_session(DeviceManager, nodes=nodes, per_node=per_node, first=first,
                           init=init, second=second, numa=numa, drop_first=drop_first)
