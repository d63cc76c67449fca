"""Deliberately wrong node managers under the contracts of
``numaspec.conformance.checking.contracts``, to show that each contract can fail (CHECK-8).

Each mutant harness runs the real harness's session on a wrong manager under the real
harness's preconditions and the one postcondition the mutant breaks, word for word
(``tests/suite/test_crosshair.py`` checks that they are the real harness's): a postcondition that
held would only spend its whole budget.
"""

from __future__ import annotations

from numaspec.conformance.checking.contracts import (
    CPUSession,
    DeviceSession,
    MemorySession,
    cpu_session,
    devices_session,
    memory_session,
)
from numaspec.node.cpu_manager import StaticCPUManager
from numaspec.node.devices import DeviceManager
from numaspec.node.memory import MemoryManager


class ReservedCPUsHandedOut(StaticCPUManager):
    """INV-5 broken: the reserved CPUs count as available."""

    def available(self) -> frozenset[int]:
        return self.default


class CPUsKeptOnRemove(StaticCPUManager):
    """CPU-17 broken: a removed container's CPUs never return to the shared pool."""

    def remove_container(self, pod_uid: str, name: str) -> None:
        self.assignments.get(pod_uid, {}).pop(name, None)
        if not self.assignments.get(pod_uid):
            self.assignments.pop(pod_uid, None)


class ReserveForgetsReserved(MemoryManager):
    """INV-1 broken: ``_reserve`` takes the memory from Free without adding it to Reserved."""

    def _reserve(self, nodes: tuple[int, ...], memory_type: str, size: int) -> None:
        for n in nodes:
            state = self.nodes[n]
            state.assignments += 1
            state.cells = nodes
            table = state.tables[memory_type]
            taken = min(size, max(table.free, 0))
            table.free -= taken
            size -= taken


class RemoveKeepsAssignments(MemoryManager):
    """MEM-9 broken: a removed container's memory is freed but its NUMA nodes keep counting
    the assignment (and so stay in their group)."""

    def remove_container(self, pod_uid: str, name: str) -> None:
        held = self.blocks.get(pod_uid, {}).get(name)
        counts = {n: s.assignments for n, s in self.nodes.items()}
        super().remove_container(pod_uid, name)
        if held is not None:
            for n, state in self.nodes.items():
                state.assignments = counts[n]


class DevicesOfOthersAvailable(DeviceManager):
    """INV-4 broken: devices other pods hold count as available."""

    def allocated(self, resource: str) -> frozenset[str]:  # noqa: ARG002
        return frozenset()


class DevicesKeptOnRemove(DeviceManager):
    """DEV-7 broken: removing a pod forgets only its reusable devices."""

    def remove_pod(self, pod_uid: str) -> None:
        self.to_reuse.pop(pod_uid, None)


def cpu_reserved_handed_out(
        *, sockets: int, threads: int, reserved: int, first: int, second: int, numa: int,
        distribute: bool, drop_first: bool) -> CPUSession:
    """``cpu_allocate_release`` on :class:`ReservedCPUsHandedOut`.

    pre: 1 <= sockets <= 2 and 1 <= threads <= 2 and 1 <= reserved <= 2
    pre: 0 <= numa <= 2
    pre: 1 <= first and 1 <= second
    pre: first + second + reserved <= 2 * sockets * threads
    post: __return__.allocation_holds()
    """
    return cpu_session(ReservedCPUsHandedOut, sockets=sockets, threads=threads, reserved=reserved,
                       first=first, second=second, numa=numa, distribute=distribute,
                       drop_first=drop_first)


def cpu_kept_on_remove(
        *, sockets: int, threads: int, reserved: int, first: int, second: int, numa: int,
        distribute: bool, drop_first: bool) -> CPUSession:
    """``cpu_allocate_release`` on :class:`CPUsKeptOnRemove`.

    pre: 1 <= sockets <= 2 and 1 <= threads <= 2 and 1 <= reserved <= 2
    pre: 0 <= numa <= 2
    pre: 1 <= first and 1 <= second
    pre: first + second + reserved <= 2 * sockets * threads
    post: __return__.release_restores()
    """
    return cpu_session(CPUsKeptOnRemove, sockets=sockets, threads=threads, reserved=reserved,
                       first=first, second=second, numa=numa, distribute=distribute,
                       drop_first=drop_first)


def memory_reserve_forgets_reserved(
        *, nodes: int, memory_gib: int, reserved_gib: int, first: int, second: int,
        numa: int, preferred: bool, drop_first: bool) -> MemorySession:
    """``memory_allocate_release`` on :class:`ReserveForgetsReserved`.

    pre: 1 <= nodes <= 2 and 2 <= memory_gib <= 3 and 0 <= reserved_gib <= 1
    pre: 1 <= first <= 4 and 1 <= second <= 4
    pre: 0 <= numa <= 3
    post: __return__.reservation_holds()
    """
    return memory_session(ReserveForgetsReserved, nodes=nodes, memory_gib=memory_gib,
                          reserved_gib=reserved_gib, first=first, second=second, numa=numa,
                          preferred=preferred, drop_first=drop_first)


def memory_remove_keeps_assignments(
        *, nodes: int, memory_gib: int, reserved_gib: int, first: int, second: int,
        numa: int, preferred: bool, drop_first: bool) -> MemorySession:
    """``memory_allocate_release`` on :class:`RemoveKeepsAssignments`.

    pre: 1 <= nodes <= 2 and 2 <= memory_gib <= 3 and 0 <= reserved_gib <= 1
    pre: 1 <= first <= 4 and 1 <= second <= 4
    pre: 0 <= numa <= 3
    post: __return__.release_restores()
    """
    return memory_session(RemoveKeepsAssignments, nodes=nodes, memory_gib=memory_gib,
                          reserved_gib=reserved_gib, first=first, second=second, numa=numa,
                          preferred=preferred, drop_first=drop_first)


def devices_of_others_available(
        *, nodes: int, per_node: int, first: int, init: int, second: int, numa: int,
        drop_first: bool) -> DeviceSession:
    """``devices_allocate_release`` on :class:`DevicesOfOthersAvailable`.

    pre: 1 <= nodes <= 2 and 1 <= per_node <= 2
    pre: 1 <= first <= 3 and -1 <= init <= 2 and 1 <= second <= 3
    pre: 0 <= numa <= 3
    post: __return__.held_once_as_asked()
    """
    return devices_session(DevicesOfOthersAvailable, nodes=nodes, per_node=per_node, first=first,
                           init=init, second=second, numa=numa, drop_first=drop_first)


def devices_kept_on_remove(
        *, nodes: int, per_node: int, first: int, init: int, second: int, numa: int,
        drop_first: bool) -> DeviceSession:
    """``devices_allocate_release`` on :class:`DevicesKeptOnRemove`.

    pre: 1 <= nodes <= 2 and 1 <= per_node <= 2
    pre: 1 <= first <= 3 and -1 <= init <= 2 and 1 <= second <= 3
    pre: 0 <= numa <= 3
    post: __return__.release_restores()
    """
    return devices_session(DevicesKeptOnRemove, nodes=nodes, per_node=per_node, first=first,
                           init=init, second=second, numa=numa, drop_first=drop_first)


#: The real harness each mutant harness runs on a wrong manager.
MUTANT_OF = {
    "cpu_reserved_handed_out": "cpu_allocate_release",
    "cpu_kept_on_remove": "cpu_allocate_release",
    "memory_reserve_forgets_reserved": "memory_allocate_release",
    "memory_remove_keeps_assignments": "memory_allocate_release",
    "devices_of_others_available": "devices_allocate_release",
    "devices_kept_on_remove": "devices_allocate_release",
}
