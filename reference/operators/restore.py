"""A running node brought back from kubelet's own state files (spec chapter ``operators.md``,
OPS-1..OPS-5).

Kubelet restarts its managers from ``cpu_manager_state``, ``memory_manager_state`` and the
device manager's checkpoint; :func:`restore_state` does the same to a fresh
:class:`~numaspec.node.admission.Node`: it checks each file as the manager checks it when kubelet
starts (a file kubelet would refuse stops here too, naming the file and what disagrees), then
forgets what belongs to pods that are no longer active, as kubelet does before its next
admission.  Nothing is recomputed: the CPUs, memory blocks and devices are the ones recorded.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from numaspec.errors import (
    InvalidFieldError,
    NotModelledError,
    NumaspecError,
    StateConflictError,
)
from numaspec.node.admission import Node
from numaspec.node.cpu_manager import guaranteed_cpus
from numaspec.node.memory import (
    Block,
    MemoryManager,
    MemoryTable,
    NodeState,
    NotWholeBytesError,
    container_memory,
)
from numaspec.node.nodeconfig import format_cpuset
from numaspec.node.pods import Pod
from numaspec.topology.golang import go_map_order_count, go_map_orders

if TYPE_CHECKING:
    from numaspec.operators.importers.checkpoints import (
        CPUManagerState,
        DeviceCheckpoint,
        MemoryManagerState,
    )

__all__ = ["RestoreReport", "RunningPod", "pods_from_state", "restore_state", "state_files"]

#: OPS-1: the phases of a pod kubelet no longer counts as active.
TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


@attrs.frozen
class RunningPod:
    """A pod the node runs, with where it was read from (for error messages)."""

    pod: Pod
    source: str = ""
    phase: str | None = None
    #: container name -> the runtime's container ID (no ``containerd://`` prefix): what a v1
    #: ``cpu_manager_state`` keys its entries by.
    container_ids: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen
class RestoreReport:
    """What :func:`restore_state` did besides restoring: the pods it left out as terminated,
    the state it dropped as stale (OPS-3), and the checks kubelet would fail if it restarted
    now (OPS-2), each as a sentence naming the file."""

    active: tuple[str, ...] = ()
    terminated: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    #: OPS-2: what a running kubelet wrote and would itself refuse when it restarts.
    restart_warnings: tuple[str, ...] = ()

    def as_json(self) -> dict[str, list[str]]:
        return {"active": list(self.active), "terminated": list(self.terminated),
                "stale": list(self.stale), "restart_warnings": list(self.restart_warnings)}


def restore_state(node: Node, pods: Sequence[RunningPod], *,
                  cpu: CPUManagerState | None = None,
                  memory: MemoryManagerState | None = None,
                  devices: DeviceCheckpoint | None = None) -> RestoreReport:
    """OPS-1..OPS-5: put ``pods`` and the recorded allocations on the fresh ``node``.

    Raises :class:`~numaspec.errors.StateConflictError` where kubelet would not start with
    these files on this machine and configuration, or where the files and the pods cannot
    both be true; the node is then unusable (build another)."""
    if node.pods:
        raise StateConflictError("state can only be restored onto a node without pods")
    active: dict[str, RunningPod] = {}
    terminated = []
    for running in pods:
        uid = running.pod.uid
        if running.phase in TERMINAL_PHASES:
            terminated.append(f"{running.source or uid}: pod {uid!r} is {running.phase} "
                              "(not active: it holds nothing and is not counted)")
            continue
        if uid in active:
            raise StateConflictError(f"pod uid {uid!r} is listed twice (also in "
                                     f"{active[uid].source or 'the pods given'})",
                                     where=running.source)
        try:
            effective = attrs.evolve(running, pod=node.effective_pod(running.pod))
            node._check_pod(effective.pod)
        except NumaspecError as exc:
            raise exc.relocated(_join(running.source, exc.where)) from None
        active[uid] = effective
    stale: list[str] = []
    if cpu is not None or memory is not None:
        from numaspec.operators.importers.checkpoints import as_read_by

        # CKPT-1, CKPT-2, CKPT-4: the files as this release reads them (1.29-1.36 read a
        # 1.37 file's top-level fields; 1.29-1.35 refuse a memory checksum of 0)
        cpu = as_read_by(cpu, node.version.minor) if cpu is not None else None
        memory = as_read_by(memory, node.version.minor) if memory is not None else None
    for record, file in ((cpu, "cpu_manager_state"), (memory, "memory_manager_state")):
        if record is not None:
            _readable(node, file, record.format, record.path)
            if record.pod_entries:
                raise NotModelledError(
                    "the state holds pod-level entries (the PodLevelResourceManagers gate): "
                    "pod-level resources are not modelled yet", where=f"{record.path}: "
                    "podEntries")
    if devices is not None and not _reads(node, "kubelet_internal_checkpoint", devices.format):
        stale.append(f"{devices.path}: kubelet {node.version} does not read a "
                     f"{devices.format} device checkpoint: it starts without the devices' "
                     "allocations, and so does numaspec")
        devices = None
    if cpu is not None and cpu.container_entries:
        cpu = _by_container_names(cpu, active)
    warnings: list[str] = []
    _restore_cpu(node, active, cpu, stale, warnings)
    _restore_memory(node, active, memory, stale, warnings)
    _restore_devices(node, active, devices, stale)
    for uid, running in active.items():
        node.pods[uid] = running.pod
        if node.affinity_labels is not None:
            node.terms[uid] = node._terms(running.pod)
    return RestoreReport(tuple(active), tuple(terminated), tuple(stale), tuple(warnings))


def _reads(node: Node, file: str, fmt: str) -> bool:
    from numaspec.operators.importers.checkpoints import FORMAT_READ_BY

    known = FORMAT_READ_BY.get((file, fmt))
    return known is not None and known[0][0] <= node.version.minor <= known[0][1]


def _readable(node: Node, file: str, fmt: str, path: str) -> None:
    """OPS-2, CKPT-1..3: kubelet refuses to start on a CPU or Memory Manager state in a
    format its release does not read."""
    if not _reads(node, file, fmt):
        raise StateConflictError(f"kubelet {node.version} does not read a {fmt} {file}: it "
                                 "refuses to start", where=path)


def _by_container_names(state: CPUManagerState, active: Mapping[str, RunningPod]
                        ) -> CPUManagerState:
    """CKPT-1: a v1 state keys CPUs by container ID; kubelet (1.29-1.36) maps each to its
    pod and container through the runtime, and refuses to start on an ID it does not know."""
    owners = {cid: (uid, name) for uid, running in active.items()
              for name, cid in running.container_ids.items()}
    entries: dict[str, dict[str, frozenset[int]]] = {}
    for cid, cpus in sorted(state.container_entries.items()):
        owner = owners.get(cid)
        if owner is None:
            raise StateConflictError(
                f"container ID {cid} is not one of the given pods' containers "
                "(status.containerStatuses[].containerID): kubelet refuses to start",
                where=f"{state.path}: entries.{cid}")
        entries.setdefault(owner[0], {})[owner[1]] = cpus
    return attrs.evolve(state, entries=entries, container_entries={})


def _join(source: str, where: str) -> str:
    if not source:
        return where
    return f"{source}: {where.removeprefix('pod.')}" if where else source


def _containers(pod: Pod) -> set[str]:
    return {c.name for c in pod.all_containers()}


# --- CPU Manager ---------------------------------------------------------------------------


def _restore_cpu(node: Node, active: Mapping[str, RunningPod], state: CPUManagerState | None,
                 stale: list[str], warnings: list[str]) -> None:
    """OPS-2 (cpu): the checks kubelet's static policy makes of its state when it starts
    (``validateState``), then OPS-3's stale entries dropped as ``removeStaleState`` drops
    them."""
    configured = node.config.cpu_manager_policy
    manager = node.cpu
    if state is None:
        if manager is not None:
            _no_state_for(active, "cpu_manager_state", "exclusive CPUs",
                          lambda p: any(guaranteed_cpus(p, c) for c in p.all_containers()))
        return
    where = state.path
    if state.policy_name != configured:
        raise StateConflictError(
            f"the state was written by the {state.policy_name!r} CPU Manager policy and the "
            f"configuration says {configured!r}: kubelet refuses to start (configured policy "
            "differs from state checkpoint policy; drain the node and delete the file)",
            where=f"{where}: policyName")
    if manager is None:
        return
    default = frozenset(state.default_cpu_set)
    entries = {uid: dict(containers) for uid, containers in state.entries.items()}
    everything = frozenset(c.cpu for c in manager.topology.cpus)
    if manager.options.strict_reservation:
        everything -= manager.reserved
    if not default and not entries:
        return  # a fresh state: the manager's own
    if not default and not manager.options.strict_reservation:
        raise StateConflictError("the default CPU set is empty but CPUs are assigned: "
                                 "kubelet refuses the file", where=f"{where}: defaultCpuSet")
    if not default:
        # Finding 23: with strict-cpu-reservation the shared pool can run dry; kubelet wrote
        # this and runs with it, but its start-up check refuses an empty default set.
        warnings.append(f"{where}: defaultCpuSet: kubelet would refuse to restart with this "
                        "file (default cpuset cannot be empty): strict-cpu-reservation keeps "
                        "the reserved CPUs out of the shared pool and every other CPU is "
                        "exclusive; the node runs with it, and numaspec keeps the recorded "
                        "state")
    if manager.options.strict_reservation:
        if manager.reserved & default:
            raise StateConflictError(
                f"strictly reserved CPUs {format_cpuset(manager.reserved & default)} are in the "
                f"default set {format_cpuset(default)}", where=f"{where}: defaultCpuSet")
    elif not manager.reserved <= default:
        raise StateConflictError(
            f"the reserved CPUs {format_cpuset(manager.reserved)} are not all in the default set "
            f"{format_cpuset(default)} (the reservation changed since the file was written?)",
            where=f"{where}: defaultCpuSet")
    held: set[int] = set()
    for uid, containers in sorted(entries.items()):
        for name, cpus in sorted(containers.items()):
            if default & cpus:
                raise StateConflictError(
                    f"pod {uid}, container {name}: CPUs {format_cpuset(cpus)} are also in the "
                    f"default set {format_cpuset(default)}", where=f"{where}: entries.{uid}.{name}")
            held |= cpus
    if default | held != everything:
        raise StateConflictError(
            f"the state knows CPUs {format_cpuset(default | held)}, the machine has "
            f"{format_cpuset(everything)}" + (" (without the strictly reserved ones)"
                                      if manager.options.strict_reservation else ""),
            where=f"{where}: defaultCpuSet")
    manager.default = default
    manager.assignments = {uid: {n: frozenset(c) for n, c in containers.items()}
                           for uid, containers in entries.items()}
    for uid, containers in sorted(entries.items()):
        running = active.get(uid)
        if running is None:
            stale.append(f"{where}: pod {uid} is not among the node's pods: its CPUs "
                         f"{format_cpuset(frozenset().union(*containers.values()))} are freed")
            manager.remove_pod(uid)
            continue
        for name in sorted(set(containers) - _containers(running.pod)):
            stale.append(f"{where}: pod {uid} has no container {name!r}: its CPUs "
                         f"{format_cpuset(containers[name])} are freed")
            manager.remove_container(uid, name)


def _no_state_for(active: Mapping[str, RunningPod], file: str, what: str,
                  holds: Callable[[Pod], bool]) -> None:
    """OPS-4: without the manager's state file, running pods that would hold something in it
    make the answer a guess: refuse."""
    for uid, running in active.items():
        if holds(running.pod):
            raise StateConflictError(
                f"pod {uid} would hold {what}, and no {file} was given: numaspec cannot tell "
                f"which (give kubelet's state directory, or leave the pod out)",
                where=running.source)


# --- Memory Manager ------------------------------------------------------------------------


def _restore_memory(node: Node, active: Mapping[str, RunningPod],
                    state: MemoryManagerState | None, stale: list[str],
                    warnings: list[str]) -> None:
    """OPS-2 (memory): the static policy's start-up check: the machine state must be what the
    fresh machine state plus every recorded block gives, field by field."""
    manager = node.memory
    configured = node.config.memory_manager_policy
    if state is None:
        if manager is not None:
            _no_state_for(active, "memory_manager_state", "memory blocks", _holds_memory)
        return
    where = state.path
    if state.policy_name != configured:
        raise StateConflictError(
            f"the state was written by the {state.policy_name!r} Memory Manager policy and the "
            f"configuration says {configured!r}: kubelet refuses to start", where=f"{where}: "
            "policyName")
    if manager is None:
        return
    if not state.machine_state:
        if state.entries:
            raise StateConflictError("the machine state is empty but memory is assigned",
                                     where=f"{where}: machineState")
        return
    fresh = manager  # the default machine state: restored below, after the check
    recorded: list[tuple[str, str, list[Block]]] = []  # in the file's order
    for uid, containers in state.entries.items():
        for name, records in containers.items():
            mine: list[Block] = []
            for index, record in enumerate(records):
                at = f"{where}: entries.{uid}.{name}[{index}]"
                numa = tuple(record.numa)
                if not numa or any(n not in fresh.nodes for n in numa):
                    raise StateConflictError(
                        f"the block is on NUMA nodes {list(numa)}; the machine has "
                        f"{sorted(fresh.nodes)}", where=at)
                if record.type not in fresh.nodes[numa[0]].tables:
                    raise StateConflictError(
                        f"memory type {record.type!r} is not one the machine has "
                        f"({', '.join(fresh.nodes[numa[0]].tables)})", where=at)
                if record.size < 0:
                    raise InvalidFieldError("a block's size must not be negative", where=at)
                mine.append(Block(numa, record.type, record.size))
            recorded.append((uid, name, mine))
    _check_start_up(fresh, recorded, state, where=where, warnings=warnings,
                    minor=node.version.minor)
    blocks: dict[str, dict[str, list[Block]]] = {}
    for uid, name, mine in sorted(recorded, key=lambda h: (h[0], h[1])):
        if mine:
            blocks.setdefault(uid, {})[name] = mine
    manager.nodes = {n: NodeState(kept.assignments, tuple(kept.cells), {
        kind: MemoryTable(t.total, t.system_reserved, t.allocatable, t.reserved, t.free)
        for kind, t in kept.tables.items()}) for n, kept in dict(state.machine_state).items()}
    manager.blocks = blocks
    for uid, held in sorted(blocks.items()):
        running = active.get(uid)
        if running is None:
            stale.append(f"{where}: pod {uid} is not among the node's pods: its memory "
                         "blocks are freed")
            manager.remove_pod(uid)
            continue
        for name in sorted(set(held) - _containers(running.pod)):
            stale.append(f"{where}: pod {uid} has no container {name!r}: its memory blocks "
                         "are freed")
            manager.remove_container(uid, name)


def _holds_memory(pod: Pod) -> bool:
    from numaspec.node.pods import QOSClass, qos_class

    if qos_class(pod) is not QOSClass.GUARANTEED:
        return False
    try:
        return any(container_memory(c) for c in pod.all_containers())
    except NotWholeBytesError:  # a fractional byte count: the manager refuses the pod anyway
        return False


#: OPS-2: from 1.32 the Memory Manager's start-up check compares free and reserved memory
#: summed over each node's group, not node by node (kubernetes#127074); 1.29-1.30 compare each
#: node's table whole (1.31 not checked: no 1.31 build resolves here; numaspec takes 1.30's).
GROUP_SUMS_FROM = 32


#: OPS-2: the most orders of the recorded blocks numaspec replays kubelet's start-up check in.
MOST_ORDERS = 720


def _check_start_up(fresh: MemoryManager, held: Sequence[tuple[str, str, list[Block]]],
                    state: MemoryManagerState, *, where: str, warnings: list[str],
                    minor: int) -> None:
    """OPS-2: kubelet's static policy reserves every recorded block again on the default
    machine state, pod by pod and container by container in Go's map order, and compares the
    result with the file.  Blocks of one NUMA node commute; blocks over a group do not (the
    group a node is given is the last block's, and memory is taken lowest node first), so
    where such blocks share nodes the verdict depends on the order, and every order Go's maps
    can take (:func:`~numaspec.topology.golang.go_map_orders`) is tried, up to
    :data:`MOST_ORDERS`: kubelet refuses in all of them, in some, or in none."""
    grouped = {n for _, _, mine in held for b in mine if len(b.numa) > 1 for n in b.numa}
    moving = [(uid, name) for uid, name, mine in held
              if any(n in grouped for b in mine for n in b.numa)]
    settled = fresh.snapshot()
    for uid, name, mine in held:
        if (uid, name) not in moving:
            for block in mine:
                settled._reserve(block.numa, block.type, block.size)
    by_name = {(uid, name): mine for uid, name, mine in held}
    pods = list(dict.fromkeys(uid for uid, _ in moving))
    # Pods first, then each pod's containers: every map has an order of its own.
    maps = [(pods, len(state.entries))] + [
        ([n for u, n in moving if u == uid], len(state.entries[uid])) for uid in pods]
    total = math.prod(go_map_order_count(len(keys), size) for keys, size in maps)
    tried = refused = 0
    first: list[str] = []
    for pod_order, *containers in itertools.islice(_every_order(maps), MOST_ORDERS):
        tried += 1
        replay = settled.snapshot()
        named = dict(zip(pods, containers, strict=True))
        for uid in pod_order:
            for name in named[uid]:
                for block in by_name[(uid, name)]:
                    replay._reserve(block.numa, block.type, block.size)
        found = _differences(replay, state, where, minor)
        if found:
            refused += 1
            first = first or found
    if not refused:
        return
    shown = first[0] + (f" (and {len(first) - 1} more)" if len(first) > 1 else "")
    if refused == tried == total:
        warnings.append(
            f"{where}: kubelet would refuse to restart with this file (the expected machine "
            f"state is different from the real one): {shown}; the node runs with it, and "
            "numaspec keeps the recorded state")
        return
    orders = (f"{refused} of the {total} orders its maps can take" if tried == total else
              f"{refused} of the first {tried} of the {total} orders its maps can take "
              "(numaspec tries no more)")
    warnings.append(
        f"{where}: kubelet may refuse to restart with this file (the expected machine state "
        "is different from the real one): its start-up check reserves the recorded blocks "
        f"again in Go's map order, and in {orders} the result differs, e.g. {shown}; the "
        "node runs with it, and numaspec keeps the recorded state")


def _every_order(maps: Sequence[tuple[list[str], int]]) -> Iterator[tuple[tuple[str, ...], ...]]:
    """Each combination of one order per map (its keys, its size), generated lazily."""
    if not maps:
        yield ()
        return
    (keys, size), rest = maps[0], maps[1:]
    for order in go_map_orders(keys, size):
        for others in _every_order(rest):
            yield (order, *others)


def _differences(expected: MemoryManager, state: MemoryManagerState, where: str,
                 minor: int) -> list[str]:
    """OPS-2: the recorded machine state against the fresh one with the blocks reserved
    again.  What the machine and configuration fix (the NUMA nodes, the memory types, each
    table's total, system reservation and allocatable, and each type's reserved memory summed
    must agree: otherwise the files describe another node (an error).  What a running kubelet
    can have written and still refuse when it restarts (findings 9, 22, 24 and 59: assignment
    counts, groups, reserved and free memory per node, or from 1.32 per group, and reserved
    memory no block accounts for) is returned, one sentence each."""
    found = dict(state.machine_state)
    if set(found) != set(expected.nodes):
        raise StateConflictError(
            f"the state has NUMA nodes {sorted(found)}, the machine {sorted(expected.nodes)}",
            where=f"{where}: machineState")
    differences: list[str] = []
    sums: dict[str, list[int]] = {}
    for numa, mine in sorted(expected.nodes.items()):
        theirs = found[numa]
        at = f"{where}: machineState.{numa}"
        if set(theirs.tables) != set(mine.tables):
            raise StateConflictError(
                f"memory types {sorted(theirs.tables)} in the state, {sorted(mine.tables)} on "
                "the machine", where=f"{at}.memoryMap")
        if theirs.assignments != mine.assignments:
            differences.append(f"{at}.numberOfAssignments: {theirs.assignments} recorded, "
                               f"{mine.assignments} recomputed")
        if sorted(theirs.cells) != sorted(mine.cells):
            differences.append(f"{at}.cells: {sorted(theirs.cells)} recorded, "
                               f"{sorted(mine.cells)} recomputed")
        # kubelet sums over the recorded node's group (1.32+), or looks at the node (1.30).
        group = [n for n in theirs.cells if n in found] if minor >= GROUP_SUMS_FROM else [numa]
        for kind, table in sorted(mine.tables.items()):
            other = theirs.tables[kind]
            for field, ours, recorded in (
                    ("total", table.total, other.total),
                    ("systemReserved", table.system_reserved, other.system_reserved),
                    ("allocatable", table.allocatable, other.allocatable)):
                if recorded != ours:
                    raise StateConflictError(
                        f"the state says {recorded}, the machine and configuration give "
                        f"{ours}: these files are another node's, or the reservations changed "
                        "(kubelet refuses to start: the expected machine state is different "
                        "from the real one)", where=f"{at}.memoryMap.{kind}.{field}")
            recorded_sums = [sum(getattr(found[n].tables[kind], f) for n in group
                                 if kind in found[n].tables) for f in ("reserved", "free")]
            recomputed_sums = [sum(getattr(expected.nodes[n].tables[kind], f) for n in group
                                   if kind in expected.nodes[n].tables)
                               for f in ("reserved", "free")]
            if recorded_sums != recomputed_sums:
                span = "node" if len(group) == 1 else f"group {sorted(group)}"
                differences.append(
                    f"{at}.memoryMap.{kind}: reserved {recorded_sums[0]}, free "
                    f"{recorded_sums[1]} recorded over the {span}; {recomputed_sums[0]} and "
                    f"{recomputed_sums[1]} recomputed")
            total = sums.setdefault(kind, [0, 0])
            total[0] += other.reserved
            total[1] += table.reserved
    for kind, (recorded, recomputed) in sorted(sums.items()):
        if recorded != recomputed:
            # Releasing lowest node first, whoever booked the memory (MEM-9), can leave memory
            # reserved that no block accounts for (finding 24): kubelet runs with it.
            differences.insert(0, f"{where}: machineState: {recorded} bytes of {kind} are "
                                  f"reserved, the blocks add up to {recomputed}")
    return differences


# --- Device Manager ------------------------------------------------------------------------


def _restore_devices(node: Node, active: Mapping[str, RunningPod],
                     checkpoint: DeviceCheckpoint | None, stale: list[str]) -> None:
    """OPS-2 (devices): every recorded device must be one the machine's device map lists, on
    the NUMA nodes the checkpoint recorded; OPS-3: pods no longer active lose their devices
    (kubelet: ``UpdateAllocatedDevices``; containers are not dropped one by one)."""
    manager = node.devices
    if checkpoint is None:
        _no_state_for(active, "device checkpoint", "devices",
                      lambda p: any(r in manager.devices for c in p.all_containers()
                                    for r in c.limits))
        return
    where = checkpoint.path
    held: dict[str, dict[str, dict[str, frozenset[str]]]] = {}
    for index, entry in enumerate(checkpoint.entries):
        at = f"{where}: PodDeviceEntries[{index}]"
        known = manager.devices.get(entry.resource)
        if known is None:
            raise StateConflictError(
                f"pod {entry.pod_uid} holds {entry.resource!r} devices, which the machine's "
                "device map does not list", where=at)
        ids: set[str] = set()  # the devices of one entry
        for numa, listed in sorted(entry.devices.items()):
            for device_id in listed:
                device = known.get(device_id)
                if device is None:
                    raise StateConflictError(
                        f"device {device_id!r} of {entry.resource} is not in the machine's "
                        "device map", where=at)
                if numa >= 0 and numa not in device.numa:
                    raise StateConflictError(
                        f"device {device_id!r} was allocated on NUMA node {numa}; the machine "
                        f"puts it on {list(device.numa) or 'none'}", where=at)
                if numa < 0 and device.numa:
                    raise StateConflictError(
                        f"device {device_id!r} was allocated without a NUMA node; the machine "
                        f"puts it on {list(device.numa)}", where=at)
                ids.add(device_id)
        mine = held.setdefault(entry.pod_uid, {}).setdefault(entry.container, {})
        mine[entry.resource] = mine.get(entry.resource, frozenset()) | frozenset(ids)
    owners: dict[tuple[str, str], str] = {}
    for uid, containers in sorted(held.items()):
        if uid not in active:
            stale.append(f"{where}: pod {uid} is not among the node's pods: its devices are "
                         "freed")
            continue
        for resources in containers.values():
            for resource, taken in sorted(resources.items()):
                for device_id in sorted(taken):
                    other = owners.setdefault((resource, device_id), uid)
                    if other != uid:
                        raise StateConflictError(
                            f"device {device_id!r} of {resource} is held by pods {other} and "
                            f"{uid}", where=where)
    manager.pod_devices = {uid: containers for uid, containers in held.items()
                           if uid in active}


# --- pods known only from the state --------------------------------------------------------


def pods_from_state(cpu: CPUManagerState | None, memory: MemoryManagerState | None,
                    devices: DeviceCheckpoint | None) -> tuple[RunningPod, ...]:
    """OPS-10: without the node's pods, the pods the state files name, each container asking
    exactly what the files say it holds (its exclusive CPUs, its memory blocks, its devices),
    request equal to limit.  Pods that hold nothing exclusive are not in the files at all."""
    from fractions import Fraction

    from numaspec.node.pods import Container

    held: dict[str, dict[str, dict[str, Fraction]]] = {}
    sources: dict[str, str] = {}

    def add(uid: str, name: str, resource: str, amount: int, source: str) -> None:
        amounts = held.setdefault(uid, {}).setdefault(name, {})  # a 0-byte block: kept
        sources.setdefault(uid, source)
        if amount > 0:
            amounts[resource] = amounts.get(resource, Fraction(0)) + amount

    for uid, containers in (cpu.entries.items() if cpu else ()):
        for name, cpus in containers.items():
            add(uid, name, "cpu", len(cpus), cpu.path if cpu else "")
    for uid, blocks in (memory.entries.items() if memory else ()):
        for name, listed in blocks.items():
            for block in listed:
                add(uid, name, block.type, block.size, memory.path if memory else "")
    for entry in (devices.entries if devices else ()):
        ids = {i for listed in entry.devices.values() for i in listed}
        add(entry.pod_uid, entry.container, entry.resource, len(ids),
            devices.path if devices else "")
    return tuple(
        RunningPod(Pod(uid, tuple(Container(name, dict(amounts), dict(amounts))
                                  for name, amounts in sorted(containers.items()))),
                   f"{sources[uid]}: pod {uid} (known only from the state)")
        for uid, containers in sorted(held.items()))


# --- the other way: a node's state as kubelet's files --------------------------------------


def state_files(node: Node) -> dict[str, str]:
    """OPS-9: the node's state as kubelet 1.29-1.36 write it: ``cpu_manager_state``,
    ``memory_manager_state`` and ``device-plugins/kubelet_internal_checkpoint`` (CKPT-8),
    keyed by their paths under kubelet's root directory.  :func:`restore_state` on a fresh
    node with the same pods gives the same state back."""
    from numaspec.operators.importers.checkpoints import (
        DeviceEntry,
        MemoryBlockRecord,
        MemoryNodeRecord,
        MemoryTableRecord,
        encode_cpu_manager_state,
        encode_device_checkpoint,
        encode_memory_manager_state,
    )

    cpu = node.cpu
    files = {"cpu_manager_state": encode_cpu_manager_state(
        "static" if cpu else "none", cpu.default if cpu else (),
        cpu.assignments if cpu else {})}
    memory = node.memory
    if memory is None:
        files["memory_manager_state"] = encode_memory_manager_state("None", {}, {})
    else:
        files["memory_manager_state"] = encode_memory_manager_state(
            "Static",
            {n: MemoryNodeRecord(s.assignments, tuple(s.cells), {
                kind: MemoryTableRecord(t.total, t.system_reserved, t.allocatable, t.reserved,
                                        t.free) for kind, t in s.tables.items()})
             for n, s in memory.nodes.items()},
            {uid: {name: [MemoryBlockRecord(b.numa, b.type, b.size) for b in blocks]
                   for name, blocks in containers.items()}
             for uid, containers in memory.blocks.items()})
    devices = node.devices
    entries = []
    for uid, containers in sorted(devices.pod_devices.items()):
        for name, resources in sorted(containers.items()):
            for resource, ids in sorted(resources.items()):
                by_numa: dict[int, list[str]] = {}
                for device_id in sorted(ids):
                    numa = devices.devices[resource][device_id].numa or (-1,)
                    for n in numa:
                        by_numa.setdefault(n, []).append(device_id)
                entries.append(DeviceEntry(uid, name, resource,
                                           {n: tuple(v) for n, v in by_numa.items()}))
    files["device-plugins/kubelet_internal_checkpoint"] = encode_device_checkpoint(
        entries, {r: sorted(ids) for r, ids in devices.healthy.items()})
    return files
