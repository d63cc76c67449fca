"""Deliberately wrong node implementations.  Each breaks one rule; the node state machine
must reject every one of them (tests/suite/test_node_machine.py).  They patch a reference node right
after it is created, so each differs from the reference in exactly one place."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from numaspec.node.admission import Decision, Node
from numaspec.node.cpu_manager import StaticCPUManager
from numaspec.node.memory import MemoryManager
from numaspec.node.pods import Container, Pod
from numaspec.protocols.node_protocol import NodeSession
from numaspec.topology.hints import ProviderHints, TopologyHint
from numaspec.topology.masks import NumaMask, iterate_masks
from numaspec.topology.policies import MergeOutcome


def _init_reuse_ignored(node: Node) -> None:
    """CPU-15/DEV-5/MEM-8 broken: finished init containers leave nothing for reuse."""
    if node.cpu is not None:
        node.cpu._update_reuse = lambda *_: None  # type: ignore[method-assign]
    if node.memory is not None:
        node.memory._update_reusable = lambda *_: None  # type: ignore[method-assign]


def _group_rule_ignored(node: Node) -> None:
    """MEM-4 broken: hints ignore the NUMA groups."""
    memory = node.memory
    if memory is None:
        return

    def calculate(_pod: Pod, request: dict[str, int]) -> dict[str, list[TopologyHint]]:
        ids = sorted(memory.nodes)
        min_affinity = len(ids)
        found: list[NumaMask] = []
        for mask in iterate_masks(ids):
            nodes = mask.nodes
            if any(sum(memory.nodes[n].tables[t].allocatable for n in nodes) < size
                   for t, size in request.items()):
                continue
            min_affinity = min(min_affinity, mask.count())
            if any(sum(memory.nodes[n].tables[t].free for n in nodes) < size
                   for t, size in request.items()):
                continue
            found.append(mask)
        return {t: [TopologyHint(m, m.count() == min_affinity) for m in found]
                for t in sorted(request) if found}

    memory._calculate = calculate  # type: ignore[assignment,method-assign]


def _reserved_cpus_handed_out(node: Node) -> None:
    """CPU-8/CPU-9 broken: the reserved CPUs count as available."""
    cpu = node.cpu
    if cpu is not None:
        cpu.available = lambda: cpu.default  # type: ignore[method-assign]


def _free_not_decremented(node: Node) -> None:
    """MEM-7 broken: reserving memory does not take it out of Free."""
    memory = node.memory
    if memory is None:
        return

    def reserve(nodes: tuple[int, ...], memory_type: str, size: int) -> None:
        for n in nodes:
            state = memory.nodes[n]
            state.assignments += 1
            state.cells = nodes
            table = state.tables[memory_type]
            taken = min(size, table.free)
            table.reserved += taken
            size -= taken

    memory._reserve = reserve  # type: ignore[method-assign]


def _sidecar_cpus_reused(node: Node) -> None:
    """CPU-15 broken: a sidecar's CPUs are offered to the app containers like a finished init
    container's, although the sidecar keeps running."""
    cpu = node.cpu
    if cpu is None:
        return

    def update(pod: Pod, container: Container, cpus: frozenset[int]) -> None:
        cpu.to_reuse = {pod.uid: cpu.to_reuse.get(pod.uid, frozenset())}
        if pod.is_init(container.name):
            cpu.to_reuse[pod.uid] |= cpus
        else:
            cpu.to_reuse[pod.uid] -= cpus

    cpu._update_reuse = update  # type: ignore[method-assign]


def _policy_admits_all(node: Node) -> None:
    """ADMIT-3 broken: the policy's verdict is ignored."""
    merge = node._merge

    def admit_all(hints: Any, *args: Any) -> MergeOutcome:
        return MergeOutcome(merge(hints, *args).hint, True)

    node._merge = admit_all  # type: ignore[method-assign,assignment]


def _one_cpu_too_many(node: Node) -> None:
    """CPU-9 broken: the allocator hands out one CPU more than asked when it can."""
    cpu = node.cpu
    if cpu is None:
        return
    take = cpu._take

    def greedy(available: frozenset[int], n: int) -> frozenset[int]:
        return take(available, min(n + 1, len(available)) if n else n)

    cpu._take = greedy  # type: ignore[method-assign]


def _affinity_ignored_by_cpus(node: Node) -> None:
    """CPU-16 broken: CPUs are taken in packing order whatever the affinity says."""
    cpu = node.cpu
    if cpu is not None:
        cpu._aligned = lambda affinity, allocatable: allocatable  # type: ignore[method-assign]  # noqa: ARG005


def _release_keeps_memory(node: Node) -> None:
    """MEM-9 broken: releasing a block leaves its memory Reserved."""
    memory = node.memory
    if memory is None:
        return
    remove = memory.remove_container

    def keep(pod_uid: str, name: str) -> None:
        frozen = {n: {t: (tab.free, tab.reserved) for t, tab in s.tables.items()}
                  for n, s in memory.nodes.items()}
        remove(pod_uid, name)
        for n, tables in frozen.items():
            for t, (free, reserved) in tables.items():
                memory.nodes[n].tables[t].free = free
                memory.nodes[n].tables[t].reserved = reserved

    memory.remove_container = keep  # type: ignore[method-assign]


def _hugepages_counted_twice(node: Node) -> None:
    """MEM-1 broken: regular memory's Allocatable forgets the hugepages."""
    memory = node.memory
    if memory is None:
        return
    for numa in node.machine.numa_nodes:
        extra = sum(numa.hugepage_bytes(h) for h in node.machine.hugepage_sizes)
        table = memory.nodes[numa.id].tables["memory"]
        table.allocatable += extra
        table.free += extra


def _group_spills_to_next_node(node: Node) -> None:
    """MEM-7 broken: a block's group also claims the next NUMA node up (the lowest after the
    highest)."""
    memory = node.memory
    if memory is None:
        return
    reserve = memory._reserve

    def spill(nodes: tuple[int, ...], memory_type: str, size: int) -> None:
        reserve(nodes, memory_type, size)
        ids = sorted(memory.nodes)
        following = next((n for n in ids if n > max(nodes)), ids[0])
        if following not in nodes:
            for n in nodes:
                memory.nodes[n].cells = (*nodes, following)

    memory._reserve = spill  # type: ignore[method-assign]


def _refusal_keeps_cpus(node: Node) -> None:
    """ADMIT-6/ADMIT-10 broken: a refused pod's exclusive CPUs stay taken."""
    cpu = node.cpu
    if cpu is None:
        return
    release = node._release
    original = node.admit

    def release_but_cpus(pod_uid: str) -> None:
        for provider in node._providers():
            if provider is not cpu:
                provider.remove_pod(pod_uid)

    def admit(pod: Pod) -> Decision:
        node._release = release_but_cpus  # type: ignore[method-assign]
        try:
            return original(pod)
        finally:
            node._release = release  # type: ignore[method-assign]

    node.admit = admit  # type: ignore[method-assign,assignment]


def _error_frees_a_pod(node: Node) -> None:
    """ADMIT-10 broken: removing a pod the node does not hold frees another one's resources
    before it answers with the error (and the session does not restore its snapshot)."""
    original = node.remove

    def remove(pod_uid: str) -> None:
        if pod_uid not in node.pods and node.pods:
            node._release(sorted(node.pods)[0])
        original(pod_uid)

    node.remove = remove  # type: ignore[method-assign]


def _preferred_by_free_cpus(node: Node) -> None:
    """CPU-4 broken as a re-implementation reading kubernetes#84597 would: the preferred width
    is the narrowest mask with enough *free* CPUs, not with enough CPUs at all (CPU-2), so a
    wider mask is preferred once the narrow ones are full (a peer bug of the kind
    ../shared/research/peers.md section 2 item 4 describes)."""
    cpu = node.cpu
    if cpu is None:
        return
    original = cpu._hints

    def hints(available: frozenset[int], reusable: frozenset[int], n: int) -> ProviderHints:
        found = original(available, reusable, n)
        listed = (found or {}).get("cpu")
        if not listed:
            return found
        narrowest = min(h.numa_affinity.count() for h in listed
                        if h.numa_affinity is not None)
        return {"cpu": [TopologyHint(h.numa_affinity, h.numa_affinity is not None
                                     and h.numa_affinity.count() == narrowest)
                        for h in listed]}

    cpu._hints = hints  # type: ignore[method-assign]


def _sidecar_devices_reused(node: Node) -> None:
    """DEV-5 broken as kubernetes#131379 reports of a scheduler: a sidecar's devices are left
    for the app containers to reuse, although a sidecar runs for the pod's whole life."""
    devices = node.devices
    original = devices.allocate

    def allocate(pod: Pod, container: Container, affinity: NumaMask | None) -> None:
        original(pod, container, affinity)
        if pod.is_init(container.name) and container.restartable:
            reuse = devices.to_reuse.setdefault(pod.uid, {})
            for resource, ids in devices.pod_devices.get(pod.uid, {}).get(
                    container.name, {}).items():
                reuse[resource] = reuse.get(resource, frozenset()) | ids

    devices.allocate = allocate  # type: ignore[method-assign]


NODE_MUTATIONS: dict[str, Callable[[Node], None]] = {
    "preferred_by_free_cpus": _preferred_by_free_cpus,
    "sidecar_devices_reused": _sidecar_devices_reused,
    "refusal_keeps_cpus": _refusal_keeps_cpus,
    "error_frees_a_pod": _error_frees_a_pod,
    "policy_admits_all": _policy_admits_all,
    "one_cpu_too_many": _one_cpu_too_many,
    "affinity_ignored_by_cpus": _affinity_ignored_by_cpus,
    "release_keeps_memory": _release_keeps_memory,
    "hugepages_counted_twice": _hugepages_counted_twice,
    "group_spills_to_next_node": _group_spills_to_next_node,
    "init_reuse_ignored": _init_reuse_ignored,
    "group_rule_ignored": _group_rule_ignored,
    "reserved_cpus_handed_out": _reserved_cpus_handed_out,
    "free_not_decremented": _free_not_decremented,
    "sidecar_cpus_reused": _sidecar_cpus_reused,
}


#: Mutations that only change the hints a provider gives, not (within the test budgets) any
#: admission: only asking for hints shows them (P-HINTS-SESSION,
#: tests/suite/power/test_mutants_exec.py).
HINTS_ONLY = frozenset({"preferred_by_free_cpus"})

#: Mutations that also take away the session's snapshot of ADMIT-10.
UNGUARDED_SESSIONS = frozenset({"error_frees_a_pod"})


class MutantNode:
    """The reference node protocol with one mutation applied to every node it creates."""

    def __init__(self, mutation: str) -> None:
        self.name = f"mutant:{mutation}"
        self.mutate = NODE_MUTATIONS[mutation]
        self.session = NodeSession()
        if mutation in UNGUARDED_SESSIONS:
            self.session.handle = self.session._handle  # type: ignore[method-assign]

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        answer = self.session.answer(json.dumps(request))
        if request.get("op") == "create" and self.session.node is not None:
            self.mutate(self.session.node)
        return answer


__all__ = ["HINTS_ONLY", "NODE_MUTATIONS", "MutantNode", "MemoryManager", "StaticCPUManager"]
