"""What a scheduler sees of a node (spec chapter ``predict.md``: NRT-1..NRT-10, PRED-1).

Scheduler-side NUMA plugins (scheduler-plugins' NodeResourceTopologyMatch first) never see
kubelet's state: they read a NodeResourceTopology object (NRT, API group
``topology.node.k8s.io/v1alpha2``) that the resource-topology-exporter (RTE) publishes from
what kubelet's podresources API tells it.  This module states that derivation for a numaspec
node (:func:`node_resource_topology`) and what else a scheduler knows of it
(:func:`scheduler_view`).  The ``predict`` operation built on it (the case a scheduler-side
implementation is asked, and the reference's answer, the node's own admission of the pod) is
part of the adapter protocol: :mod:`numaspec.protocols.adapter_protocol`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from numaspec.errors import NotModelledError
from numaspec.node.admission import Node
from numaspec.node.fit import format_quantity
from numaspec.node.pods import Pod

__all__ = [
    "NODE_NAME",
    "node_resource_topology",
    "scheduler_view",
]

#: The node's name in the NRT and the scheduler's node object (numaspec's nodes have none).
NODE_NAME = "numaspec-node"
#: NRT-6: the first release whose podresources ``List`` reports sidecars.
_SIDECARS_LISTED_SINCE = 30


def _quantity(value: int) -> str:
    """NRT-7: RTE writes integer DecimalSI quantities."""
    return format_quantity(Fraction(value), binary=False)


def _listed_containers(node: Node, pod: Pod) -> list[str]:
    """NRT-6: the containers podresources ``List`` reports for a live pod: its app
    containers, and from 1.30 its sidecars (restartable init containers); never a regular
    init container."""
    names = [c.name for c in pod.containers]
    if node.version.minor >= _SIDECARS_LISTED_SINCE:
        names = [c.name for c in pod.init_containers if c.restartable] + names
    return names


def node_resource_topology(node: Node, name: str = NODE_NAME) -> dict[str, Any]:
    """NRT-1..NRT-10: the NodeResourceTopology RTE would publish for ``node``, as JSON."""
    ids = list(node.machine.numa_ids)
    if ids != list(range(len(ids))):
        # NRT-1: RTE looks NUMA nodes up by index; other ids are not modelled.
        raise NotModelledError(
            f"NUMA node ids {ids} are not 0..{len(ids) - 1}: the resource-topology-exporter "
            "indexes NUMA nodes by position and is not modelled for other ids (NRT-1)",
            where="machine.numaNodes")
    allocatable: dict[int, dict[str, int]] = {n: {} for n in ids}
    used: dict[int, dict[str, int]] = {n: {} for n in ids}

    def add(table: dict[int, dict[str, int]], numa: int, resource: str, amount: int) -> None:
        table[numa][resource] = table[numa].get(resource, 0) + amount

    cpu_numa = {c.cpu: c.numa for c in node.machine.cpu_topology().cpus}
    if node.cpu is not None:
        # NRT-2: the static policy's allocatable CPUs are every CPU but the reserved ones.
        for cpu, numa in cpu_numa.items():
            if cpu not in node.cpu.reserved:
                add(allocatable, numa, "cpu", 1)
    if node.memory is not None:
        # NRT-3: one single-NUMA block per NUMA node and memory type, of its Allocatable,
        # none where that is 0.
        for numa, state in node.memory.nodes.items():
            for resource, table in state.tables.items():
                if table.allocatable != 0:
                    add(allocatable, numa, resource, table.allocatable)
    for resource, devices in node.devices.devices.items():
        # NRT-4: healthy devices, counted on each NUMA node of their topology.
        for device in devices.values():
            if device.id in node.devices.healthy[resource]:
                for numa in device.numa:
                    add(allocatable, numa, resource, 1)
    for uid, pod in node.pods.items():
        # NRT-6: what podresources List reports as held by the listed containers.
        for container in _listed_containers(node, pod):
            if node.cpu is not None:
                for cpu in node.cpu.assignments.get(uid, {}).get(container, frozenset()):
                    add(used, cpu_numa[cpu], "cpu", 1)
            if node.memory is not None:
                for block in node.memory.blocks_of(uid, container):
                    for numa in block.numa:
                        add(used, numa, block.type, block.size)
            for resource, held in node.devices.devices_of(uid, container).items():
                for device_id in held:
                    for numa in node.devices.devices[resource][device_id].numa:
                        add(used, numa, resource, 1)
    zones = []
    by_id = {n.id: n for n in node.machine.numa_nodes}
    for numa in ids:
        machine_node = by_id[numa]
        logical = sum(len(core.threads) for core in machine_node.cores)
        capacity = {"cpu": logical, "memory": machine_node.memory}
        for size in machine_node.hugepages:
            capacity[size] = machine_node.hugepage_bytes(size)
        resources = []
        if not allocatable[numa]:
            # NRT-5: a zone with nothing allocatable lists cpu at 0 ("all reserved").
            resources.append({"name": "cpu", "capacity": _quantity(logical),
                              "allocatable": "0", "available": "0"})
        for resource in sorted(allocatable[numa]):
            alloc = allocatable[numa][resource]
            # NRT-7: available is allocatable minus used, never below 0.
            available = max(alloc - used[numa].get(resource, 0), 0)
            # NRT-8: capacity as RTE reads it, devices' being their allocatable, and never
            # below the allocatable.
            cap = capacity.get(resource, alloc) if "/" not in resource else alloc
            cap = alloc if cap == 0 or cap < alloc else cap
            resources.append({"name": resource, "capacity": _quantity(cap),
                              "allocatable": _quantity(alloc),
                              "available": _quantity(available)})
        row = machine_node.distances
        costs = [] if row is None else [
            {"name": f"node-{j}", "value": value} for j, value in enumerate(row)]
        zone: dict[str, Any] = {"name": f"node-{numa}", "type": "Node"}
        if costs:
            zone["costs"] = costs
        zone["resources"] = resources
        zones.append(zone)
    return {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {"name": name},
        "zones": zones,
        # NRT-9: the Topology Manager's scope and policy as the kubelet configuration says.
        "attributes": [
            {"name": "topologyManagerScope", "value": node.config.topology_manager_scope},
            {"name": "topologyManagerPolicy", "value": node.config.topology_manager_policy},
        ],
    }


def scheduler_view(node: Node, name: str = NODE_NAME) -> dict[str, Any]:
    """PRED-1: what a scheduler knows of the node: its NRT and the node object's
    status.allocatable (ADMIT-8's allocatable: cpu in cores or millicores, the rest in
    whole units)."""
    allocatable: dict[str, str] = {}
    for resource, amount in sorted(node.allocatable.items()):
        allocatable[resource] = (format_quantity(Fraction(amount, 1000), binary=False)
                                 if resource == "cpu" else str(amount))
    return {"nrt": node_resource_topology(node, name),
            "node": {"name": name, "allocatable": allocatable}}
