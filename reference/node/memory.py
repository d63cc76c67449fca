"""The Memory Manager's Static policy as a stateful hint provider (spec chapter ``memory.md``,
MEM-1..MEM-12).

Upstream: ``pkg/kubelet/cm/memorymanager/policy_static.go`` (``getDefaultMachineState``,
``calculateHints``, ``regenerateHints``, ``Allocate``, ``updateMachineState``,
``RemoveContainer``, ``updatePodReusableMemory``, ``updateInitContainersMemoryBlocks``,
``getPodRequestedResources``), ``memory_manager.go`` (``AddContainer``; the reserved-memory
validation) and, from 1.38, ``pkg/kubelet/cm/topologymanager/score.go``
(``UtilizationScore``).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from numaspec.node.machine import MEMORY_TYPES, Machine
from numaspec.node.pods import Container, Pod, QOSClass, pod_total, qos_class
from numaspec.node.rejection import unexpected
from numaspec.topology.hints import ProviderHints, TopologyHint
from numaspec.topology.masks import NumaMask, iterate_masks
from numaspec.topology.scores import int64, utilization_score
from numaspec.topology.versions import KubeletVersion

__all__ = [
    "Block",
    "MemoryManager",
    "MemoryTable",
    "NodeState",
    "NotWholeBytesError",
    "container_memory",
    "pod_memory",
]


@attrs.define
class MemoryTable:
    """MEM-1: one NUMA node's bookkeeping of one memory type, in bytes."""

    total: int
    system_reserved: int
    allocatable: int
    reserved: int = 0
    free: int = 0

    def as_json(self) -> dict[str, int]:
        return {"total": self.total, "systemReserved": self.system_reserved,
                "allocatable": self.allocatable, "reserved": self.reserved, "free": self.free}


@attrs.define
class NodeState:
    """MEM-1: assignments (counted per block), the NUMA group (``cells``) and the tables."""

    assignments: int
    cells: tuple[int, ...]
    tables: dict[str, MemoryTable]


@attrs.frozen
class Block:
    """MEM-1: memory of one type pinned to a set of NUMA nodes for one container."""

    numa: tuple[int, ...]
    type: str
    size: int

    def as_json(self) -> dict[str, object]:
        return {"type": self.type, "size": self.size, "numa": list(self.numa)}


class NotWholeBytesError(Exception):
    """MEM-3: a memory quantity that is not a whole number of bytes (kubelet's ``AsInt64``
    fails on it): not a numaspec error of its own, each caller says what it means."""


def container_memory(container: Container) -> dict[str, int]:
    """MEM-3: the container's memory and hugepage requests in bytes; a quantity that is not a
    whole number of bytes is refused as kubelet refuses it (``AsInt64``)."""
    found: dict[str, int] = {}
    for name, quantity in container.requests.items():
        if name != "memory" and not name.startswith("hugepages-"):
            continue
        if quantity.denominator != 1:
            raise NotWholeBytesError
        found[name] = int(quantity)
    return found


def pod_memory(pod: Pod, *, every_type: bool = False) -> dict[str, int]:
    """MEM-3: the pod-scope request per type (:func:`numaspec.node.pods.pod_total`).  Up to
    1.37 keyed by the types the app containers ask for: a type only init containers ask for
    is dropped; with ``every_type`` (1.38+,
    :attr:`~numaspec.topology.versions.KubeletVersion.memory_pod_request_every_type`) every
    type any container (app, sidecar, regular init) asks for is kept."""
    totals = pod_total(pod, container_memory)
    if every_type:
        return totals
    app_types = {t for c in pod.containers for t in container_memory(c)}
    return {t: size for t, size in totals.items() if t in app_types}


def _managed(pod: Pod) -> bool:
    """MEM-3: the static policy pins the memory of Guaranteed pods; MEM-11: not of a pod with
    pod-level resources (kept by the node only where kubelet reads them)."""
    return qos_class(pod) is QOSClass.GUARANTEED and pod.resources is None


class MemoryManager:
    """MEM-1..MEM-10: the NUMA node map, the containers' blocks and the memory a pod's init
    containers leave for reuse."""

    name = "memory"

    def __init__(self, machine: Machine, version: KubeletVersion,
                 reserved: Mapping[int, Mapping[str, int]]) -> None:
        self.version = version
        self.nodes: dict[int, NodeState] = {}
        for node in machine.numa_nodes:
            tables: dict[str, MemoryTable] = {}
            hugepage_total = 0
            for name in machine.hugepage_sizes:
                total = node.hugepage_bytes(name)
                held = reserved.get(node.id, {}).get(name, 0)
                tables[name] = MemoryTable(total, held, total - held, 0, total - held)
                hugepage_total += total
            held = reserved.get(node.id, {}).get("memory", 0)
            allocatable = node.memory - held - hugepage_total
            tables["memory"] = MemoryTable(node.memory, held, allocatable, 0, allocatable)
            self.nodes[node.id] = NodeState(0, (node.id,), tables)
        self.blocks: dict[str, dict[str, list[Block]]] = {}
        self.reusable: dict[str, dict[tuple[int, ...], dict[str, int]]] = {}

    def snapshot(self) -> MemoryManager:
        """NODE-6: what a deep copy gives, at the cost of the NUMA node map, the blocks and
        the reusable memory alone (the version is never changed; a block is frozen)."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.nodes = {n: NodeState(state.assignments, state.cells,
                                   {t: MemoryTable(table.total, table.system_reserved,
                                                   table.allocatable, table.reserved,
                                                   table.free)
                                    for t, table in state.tables.items()})
                      for n, state in self.nodes.items()}
        twin.blocks = {uid: {name: list(held) for name, held in ctrs.items()}
                       for uid, ctrs in self.blocks.items()}
        twin.reusable = {uid: {nodes: dict(sizes) for nodes, sizes in masks.items()}
                         for uid, masks in self.reusable.items()}
        return twin

    # -- hints ---------------------------------------------------------------------------------

    def _score(self, nodes: tuple[int, ...], memory_type: str) -> int:
        """MEM-12 (1.38+): the type's Allocatable over ``nodes`` and what blocks hold there
        (Allocatable - Free), as a utilization score; 0 before 1.38."""
        if not self.version.scores_memory_hints:
            return 0
        # kubelet sums the uint64 tables, then reads the sums as int64
        tables = [self.nodes[n].tables[memory_type] for n in nodes]
        allocatable = int64(sum(t.allocatable for t in tables))
        free = int64(sum(t.free for t in tables))
        return utilization_score(allocatable, allocatable - free)

    def _calculate(self, pod: Pod, request: Mapping[str, int]) -> dict[str, list[TopologyHint]]:
        """MEM-4: single- and multi-NUMA hints under the group rule; MEM-12: each scored per
        type (the pod's reusable memory decides whether a mask fits, not its score)."""
        ids = sorted(self.nodes)
        min_affinity = len(ids)
        found: list[NumaMask] = []
        for mask in iterate_masks(ids):
            nodes = mask.nodes
            if any(sum(self.nodes[n].tables[t].allocatable for n in nodes) < size
                   for t, size in request.items()):
                continue
            min_affinity = min(min_affinity, mask.count())
            if len(nodes) == 1 and len(self.nodes[nodes[0]].cells) > 1:
                continue
            if self._violates(nodes):
                continue
            if any(sum(self.nodes[n].tables[t].free for n in nodes)
                   + self._reusable(pod.uid, nodes, t) < size for t, size in request.items()):
                continue
            found.append(mask)
        return {t: [TopologyHint(m, m.count() == min_affinity, self._score(m.nodes, t))
                    for m in found]
                for t in sorted(request) if found}

    def _regenerate(self, blocks: list[Block], request: Mapping[str, int]) -> ProviderHints:
        """MEM-5: hints of a container that already holds memory; any mismatch with the
        request means no preference (unlike the CPU and Device Managers).  MEM-12: each
        block's hint scores the block's own nodes (its own memory counts as held)."""
        if len(blocks) != len(request):
            return None
        hints: dict[str, list[TopologyHint] | None] = {t: [] for t in request}
        for block in blocks:
            if request.get(block.type) != block.size:
                return None
            listed = hints[block.type]
            assert listed is not None
            listed.append(TopologyHint(NumaMask.of(block.numa), True,
                                       self._score(block.numa, block.type)))
        return hints

    def container_hints(self, pod: Pod, container: Container) -> ProviderHints:
        if not _managed(pod):
            return None
        try:
            request = container_memory(container)
        except NotWholeBytesError:
            return None
        held = self.blocks.get(pod.uid, {}).get(container.name)
        if held is not None:
            return self._regenerate(held, request)
        return dict(self._calculate(pod, request))

    def pod_hints(self, pod: Pod) -> ProviderHints:
        """MEM-3, MEM-4: pod-scope hints; MEM-5: regenerated from the first container (init
        containers first) that holds blocks, compared with the pod's request up to 1.37 and
        with that container's own from 1.38."""
        if not _managed(pod):
            return None
        try:
            request = pod_memory(pod, every_type=self.version.memory_pod_request_every_type)
        except NotWholeBytesError:
            return None
        for container in pod.all_containers():
            held = self.blocks.get(pod.uid, {}).get(container.name)
            if held is None:
                continue
            if self.version.regenerates_pod_memory_per_container:
                try:
                    return self._regenerate(held, container_memory(container))
                except NotWholeBytesError:
                    return None
            return self._regenerate(held, request)
        return dict(self._calculate(pod, request))

    # -- allocation ----------------------------------------------------------------------------

    def _reusable(self, pod_uid: str, nodes: tuple[int, ...], memory_type: str) -> int:
        return self.reusable.get(pod_uid, {}).get(nodes, {}).get(memory_type, 0)

    def _best(self, hints: list[TopologyHint]) -> TopologyHint:
        """MEM-6: ``findBestHint``: preferred first, then the narrower mask."""
        best = hints[0]
        for hint in hints[1:]:
            assert hint.numa_affinity is not None and best.numa_affinity is not None
            if (hint.preferred and not best.preferred) or (hint.preferred == best.preferred and \
                    hint.numa_affinity.is_narrower_than(best.numa_affinity)):
                best = hint
        return best

    def allocate(self, pod: Pod, container: Container, affinity: NumaMask | None,
                 preferred: bool) -> None:
        """MEM-6, MEM-7: pin the container's memory to the Topology Manager's affinity, widened
        to a group that has the memory free when it does not."""
        if not _managed(pod):
            return
        held = self.blocks.get(pod.uid, {}).get(container.name)
        if held is not None:
            self._update_reusable(pod, container, held)
            return
        try:
            request = container_memory(container)
        except NotWholeBytesError:
            raise unexpected("[memorymanager] failed to represent quantity as int64") from None
        best = TopologyHint(affinity, preferred)
        if affinity is None:
            hints = self._calculate(pod, request)
            if not hints:
                raise unexpected("[memorymanager] failed to get the default NUMA affinity, no "
                                 "NUMA nodes with enough memory is available")
            default = self._best(hints["memory"]) if "memory" in hints else TopologyHint(
                None, False)
            if default.numa_affinity is None:
                # Kubelet reads the memory list only; with no memory request it dereferences
                # an empty hint.  numaspec refuses rather than guess.
                raise unexpected("[memorymanager] no default hint for a request without memory")
            if not default.preferred and preferred:
                raise unexpected("[memorymanager] failed to find the default preferred hint")
            best = default
        assert best.numa_affinity is not None
        if not self._fits(best.numa_affinity.nodes, request):
            hints = self._calculate(pod, request)
            wider = [h for h in hints.get("memory", [])
                     if h.numa_affinity is not None
                     and set(best.numa_affinity.nodes) <= set(h.numa_affinity.nodes)]
            if not wider:
                raise unexpected("[memorymanager] failed to find NUMA nodes to extend the "
                                 "current topology hint")
            extended = self._best(wider)
            if not extended.preferred and best.preferred:
                raise unexpected("[memorymanager] failed to find the extended preferred hint")
            best = extended
        assert best.numa_affinity is not None
        nodes = best.numa_affinity.nodes
        if self.version.minor >= 32 and self._violates(nodes):
            raise unexpected("[memorymanager] preferred hint violates NUMA node allocation")
        blocks = []
        for memory_type in sorted(request):
            size = request[memory_type]
            blocks.append(Block(nodes, memory_type, size))
            effective = max(0, size - self._reusable(pod.uid, nodes, memory_type))
            self._reserve(nodes, memory_type, effective)
        self._update_reusable(pod, container, blocks)
        self.blocks.setdefault(pod.uid, {})[container.name] = blocks
        self._shrink_init_blocks(pod, container, blocks)

    def _fits(self, nodes: tuple[int, ...], request: Mapping[str, int]) -> bool:
        return all(sum(self.nodes[n].tables[t].free for n in nodes) >= size
                   for t, size in request.items())

    def _violates(self, nodes: tuple[int, ...]) -> bool:
        """MEM-4, MEM-6: a multi-NUMA mask may not take a node used by single-NUMA memory or by
        another group (hints always skip such a mask; allocation refuses it from 1.32)."""
        if len(nodes) < 2:
            return False
        return any(self.nodes[n].assignments > 0 and (
            len(self.nodes[n].cells) == 1 or tuple(sorted(self.nodes[n].cells)) != nodes)
            for n in nodes)

    def _reserve(self, nodes: tuple[int, ...], memory_type: str, size: int) -> None:
        """MEM-7: every node of the mask counts one more assignment and joins the group; the
        memory is taken from the lowest node first."""
        for n in nodes:
            state = self.nodes[n]
            state.assignments += 1
            state.cells = nodes
            table = state.tables[memory_type]
            if size == 0 or table.free <= 0:
                continue
            taken = min(size, table.free)
            table.free -= taken
            table.reserved += taken
            size -= taken

    def _update_reusable(self, pod: Pod, container: Container, blocks: list[Block]) -> None:
        """MEM-8: a regular init container's blocks become reusable (the largest per mask and
        type); later containers use them up."""
        self.reusable = {k: v for k, v in self.reusable.items() if k == pod.uid}
        regular_init = pod.is_init(container.name) and not container.restartable
        if regular_init:
            mine = self.reusable.setdefault(pod.uid, {})
            for block in blocks:
                per_type = mine.setdefault(block.numa, {})
                per_type[block.type] = max(per_type.get(block.type, 0), block.size)
            return
        for block in blocks:
            left = self._reusable(pod.uid, block.numa, block.type)
            if left:
                self.reusable[pod.uid][block.numa][block.type] = max(0, left - block.size)

    def _shrink_init_blocks(self, pod: Pod, container: Container, blocks: list[Block]) -> None:
        """MEM-8: the earlier regular init containers' blocks on the same mask shrink by what
        the new container reused, so that the pod's blocks add up to what is reserved."""
        for block in blocks:
            size = block.size
            for init in pod.init_containers:
                if init.name == container.name or size == 0:
                    break
                if init.restartable:
                    continue
                held = self.blocks.get(pod.uid, {}).get(init.name)
                if not held:
                    continue
                for i, old in enumerate(held):
                    if old.size == 0 or old.type != block.type or old.numa != block.numa:
                        continue
                    cut = min(old.size, size)
                    held[i] = Block(old.numa, old.type, old.size - cut)
                    size -= cut

    def remove_container(self, pod_uid: str, name: str) -> None:
        """MEM-9: release the blocks, lowest node first; a node whose last assignment goes
        leaves its group."""
        held = self.blocks.get(pod_uid, {}).pop(name, None)
        if held is None:
            return
        if not self.blocks.get(pod_uid):
            self.blocks.pop(pod_uid, None)
        for block in held:
            size = block.size
            for n in block.numa:
                state = self.nodes[n]
                state.assignments -= 1
                if state.assignments == 0:
                    state.cells = (n,)
                if size == 0:
                    continue
                table = state.tables[block.type]
                if table.reserved == 0:
                    continue
                freed = min(size, table.reserved)
                table.reserved -= freed
                table.free += freed
                size -= freed

    def start_pod(self, pod: Pod) -> None:
        """MEM-10: when an admitted pod's containers start, each one releases the regular init
        containers before it (``AddContainer``); sidecars keep their memory."""
        for container in pod.all_containers():
            for init in pod.init_containers:
                if init.name == container.name:
                    break
                if init.restartable:
                    continue
                self.remove_container(pod.uid, init.name)

    def remove_pod(self, pod_uid: str) -> None:
        for name in list(self.blocks.get(pod_uid, {})):
            self.remove_container(pod_uid, name)
        self.reusable.pop(pod_uid, None)

    def blocks_of(self, pod_uid: str, name: str) -> list[Block]:
        return list(self.blocks.get(pod_uid, {}).get(name, []))

    def state(self) -> dict[str, object]:
        return {
            "machineState": {str(n): {
                "numberOfAssignments": s.assignments, "cells": sorted(s.cells),
                "memoryMap": {t: s.tables[t].as_json() for t in MEMORY_TYPES if t in s.tables}}
                for n, s in sorted(self.nodes.items())},
            "assignments": {uid: {name: [b.as_json() for b in blocks]
                                  for name, blocks in sorted(ctrs.items())}
                            for uid, ctrs in sorted(self.blocks.items())},
        }
