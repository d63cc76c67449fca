"""A pod that asks for exclusive CPUs, memory or device-plugin devices and for DRA devices
too: what each container holds, what aligned it with what, and which pairs nothing aligns
(spec chapter ``dra.md``, DRA-11, DRA-12).

The Topology Manager places a container's exclusive CPUs, memory and device-plugin devices
on the NUMA nodes of one merged hint (ADMIT-1, ADMIT-2); the scheduler's allocator co-places
DRA devices only where a claim's ``matchAttribute`` names both requests (DRA-6); nothing
aligns the one with the other (DEV-8).  :func:`co_placement` states, for each container, its
placements, every pair of them, what aligned the pair (or the rule that says nothing does),
and where the two ended up, as far as the node and the drivers' attributes tell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from attrs import frozen

from numaspec.dra.allocator import Allocation, Picked
from numaspec.dra.constraints import lookup_attribute
from numaspec.dra.objects import Claim, Constraint, Device, Slice
from numaspec.errors import NotModelledError
from numaspec.node.admission import ContainerAssignment, Decision, Node
from numaspec.node.machine import Machine
from numaspec.node.pods import Pod

__all__ = [
    "NUMA_ATTRIBUTES",
    "PCIE_ROOT",
    "Admitted",
    "Allocated",
    "ClaimUse",
    "ContainerPlacements",
    "Pair",
    "Placement",
    "co_placement",
    "device_numa",
]

#: DRA-12: the attributes read as a DRA device's NUMA node, fully qualified, first found
#: first (spec chapter dra.md, "Drivers' topology attributes", cites each): the standard one
#: (KEP-6072, from 1.37), the de facto ``dra.net/numaNode`` (dranet, the SR-IOV driver,
#: dra-driver-cpu), dra-driver-cpu's own, and the NVIDIA driver's on VFIO devices.  A
#: negative value (the SR-IOV driver's -1) says nothing.  A case may name more
#: (``numa_attributes``).
NUMA_ATTRIBUTES = (
    "resource.kubernetes.io/numaNode",
    "dra.net/numaNode",
    "dra.cpu/numaNodeID",
    "gpu.nvidia.com/numa",
)
#: DRA-12: the standard PCIe root attribute (``k8s.io/dynamic-resource-allocation/
#: deviceattribute``), read to say whether two DRA devices share a PCIe root.
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"

#: DRA-12: where two placements ended up, by their NUMA nodes.
TOGETHER, APART, OVERLAP, UNKNOWN = "one NUMA node", "apart", "overlapping", "unknown"


@frozen
class ClaimUse:
    """DRA-11: one entry of a container's ``resources.claims``: the pod's claim, by the name
    the pod gives it, and one request of it (``""``: every request)."""

    claim: str
    request: str = ""


@frozen
class Placement:
    """DRA-12: one thing a container holds.  ``source``: ``topology-manager`` (exclusive CPUs,
    memory, a device-plugin resource) or ``dra`` (a request's devices); ``numa``: the NUMA
    nodes it sits on, ``None`` when nothing says; ``items``: CPU ids, memory block sizes or
    device ids; ``pcie_roots``: a DRA request's devices' PCIe roots, where published."""

    name: str
    source: str
    numa: tuple[int, ...] | None
    items: tuple[str, ...]
    claim: str = ""
    request: str = ""
    pcie_roots: tuple[str, ...] = ()

    def as_json(self) -> dict[str, object]:
        body: dict[str, object] = {"name": self.name, "by": self.source,
                                   "numa": None if self.numa is None else list(self.numa),
                                   "items": list(self.items)}
        if self.pcie_roots:
            body["pcie_roots"] = list(self.pcie_roots)
        return body


@frozen
class Pair:
    """DRA-12: two placements of one container (or one DRA request's devices among
    themselves: ``first == second``), what aligned them (``""``: nothing), the rule that
    says so, and where they ended up."""

    first: str
    second: str
    aligned_by: str
    rule: str
    as_placed: str

    def as_json(self) -> dict[str, str]:
        return {"first": self.first, "second": self.second, "aligned_by": self.aligned_by,
                "rule": self.rule, "as_placed": self.as_placed}


@frozen
class ContainerPlacements:
    """DRA-12: one container's placements and their pairs."""

    name: str
    placements: tuple[Placement, ...]
    pairs: tuple[Pair, ...]

    def as_json(self) -> dict[str, object]:
        return {"name": self.name, "placed": [p.as_json() for p in self.placements],
                "pairs": [p.as_json() for p in self.pairs]}


def device_numa(device: Device, driver: str, names: Sequence[str] = NUMA_ATTRIBUTES
                ) -> int | None:
    """DRA-12: the NUMA node a DRA device's driver publishes for it (the first of ``names``
    it has, as an integer), or ``None``."""
    for name in names:
        value = lookup_attribute(device, driver, name)
        if value is not None and value[0] == "ints":
            raise NotModelledError(f"device {device.name}: a NUMA attribute listing several "
                                   "nodes (DRA-18) is not read as one NUMA node",
                                   where=name)
        if value is not None and value[0] == "int" and int(value[1]) >= 0:
            return int(value[1])
    return None


def _pcie_root(device: Device, driver: str) -> str | None:
    value = lookup_attribute(device, driver, PCIE_ROOT)
    return str(value[1]) if value is not None and value[0] == "string" else None


def _tm_placements(assignment: ContainerAssignment, machine: Machine) -> list[Placement]:
    """ADMIT-5: what the Topology Manager's providers gave the container."""
    cpu_numa = {t: n.id for n in machine.numa_nodes for c in n.cores for t in c.threads}
    found: list[Placement] = []
    if assignment.cpus:
        found.append(Placement("cpus", "topology-manager",
                               tuple(sorted({cpu_numa[c] for c in assignment.cpus})),
                               tuple(str(c) for c in sorted(assignment.cpus))))
    if assignment.memory:
        found.append(Placement("memory", "topology-manager",
                               tuple(sorted({n for b in assignment.memory for n in b.numa})),
                               tuple(f"{b.type} {b.size}" for b in assignment.memory)))
    for resource, ids in sorted(assignment.devices.items()):
        if not ids:
            continue
        known = {d.id: d.numa for d in machine.devices.get(resource, ())}
        numa = {n for i in ids for n in known.get(i, ())}
        # a device without topology (numa ()) leaves the resource's place unknown
        located = all(known.get(i) for i in ids)
        found.append(Placement(resource, "topology-manager",
                               tuple(sorted(numa)) if located else None, tuple(ids)))
    return found


def _devices(slices: Sequence[Slice]) -> dict[tuple[str, str, str], Device]:
    """Each device of the newest generation of its pool, by ``(driver, pool, name)``."""
    newest: dict[tuple[str, str], int] = {}
    for s in slices:
        key = (s.driver, s.pool)
        newest[key] = max(newest.get(key, s.generation), s.generation)
    return {(s.driver, s.pool, d.name): d for s in slices
            if s.generation == newest[(s.driver, s.pool)] for d in s.devices}


def _dra_placements(uses: Sequence[ClaimUse], results: Mapping[str, Sequence[Picked]],
                    devices: Mapping[tuple[str, str, str], Device],
                    numa_names: Sequence[str]) -> list[Placement]:
    """DRA-11: the devices of the claims (or requests) the container names, one placement
    per request, in the order the container names its claims and the claim's result lists
    its requests."""
    found: list[Placement] = []
    for use in uses:
        picks = results.get(use.claim, ())
        by_request: dict[str, list[Picked]] = {}
        for pick in picks:
            if use.request and pick.request.partition("/")[0] != use.request:
                continue
            by_request.setdefault(pick.request, []).append(pick)
        for request, chosen in by_request.items():
            numa: set[int] = set()
            roots: list[str] = []
            located = True
            for pick in chosen:
                device = devices.get((pick.driver, pick.pool, pick.device))
                node = None if device is None else device_numa(device, pick.driver,
                                                               numa_names)
                if node is None:
                    located = False
                else:
                    numa.add(node)
                root = None if device is None else _pcie_root(device, pick.driver)
                if root is not None and root not in roots:
                    roots.append(root)
            found.append(Placement(f"claim {use.claim}/{request}", "dra",
                                   tuple(sorted(numa)) if located else None,
                                   tuple(p.id for p in chosen), use.claim, request,
                                   tuple(roots)))
    return found


def _as_placed(a: tuple[int, ...] | None, b: tuple[int, ...] | None) -> str:
    if not a or not b:
        return UNKNOWN
    if a == b and len(a) == 1:
        return TOGETHER
    if not set(a) & set(b):
        return APART
    return OVERLAP


def _covers(constraint: Constraint, request: str) -> bool:
    """DRA-6: a constraint covers the requests it names (all of the claim's when it names
    none); a ``request/subrequest`` pick is covered by a constraint naming either."""
    return (not constraint.requests or request in constraint.requests
            or request.partition("/")[0] in constraint.requests)


def _constraint(claim: Claim | None, first: str, second: str) -> str:
    """DRA-6: the attribute of a ``matchAttribute`` constraint of ``claim`` that covers both
    requests, or ``""`` (a ``distinctAttribute`` one aligns nothing, DRA-21)."""
    for constraint in claim.constraints if claim is not None else ():
        if (constraint.match_attribute is not None and _covers(constraint, first)
                and _covers(constraint, second)):
            return constraint.match_attribute
    return ""


def _pair(a: Placement, b: Placement, tm_rule: str, claims: Mapping[str, Claim]) -> Pair:
    where = _as_placed(a.numa, b.numa)
    if a.source == b.source == "topology-manager":
        if tm_rule == "POLICY-1":  # the none policy aligns nothing
            return Pair(a.name, b.name, "", "POLICY-1", where)
        return Pair(a.name, b.name, "topology-manager", tm_rule, where)
    if a.source != b.source:
        return Pair(a.name, b.name, "", "DEV-8", where)
    if a.claim == b.claim:
        attribute = _constraint(claims.get(a.claim), a.request, b.request)
        if attribute:
            return Pair(a.name, b.name, f"matchAttribute {attribute}", "DRA-6", where)
    return Pair(a.name, b.name, "", "DRA-6", where)


@frozen
class Admitted:
    """DRA-12: the node's side: its machine, its Topology Manager's policy and scope, and its
    admission of the pod (``None`` or not admitted: nothing was placed by it)."""

    machine: Machine
    policy: str
    scope: str
    decision: Decision | None

    @classmethod
    def on(cls, node: Node, decision: Decision | None) -> Admitted:
        """The node's machine and Topology Manager settings, with its ``decision``."""
        config = node.config
        return cls(node.machine, config.topology_manager_policy,
                   config.topology_manager_scope, decision)


@frozen
class Allocated:
    """DRA-12: the scheduler's side: the pod's claims by the pod's name for them; ``asked``:
    those the allocator was asked for, in the order of ``allocation.claims``; ``before``: the
    devices of those allocated before; ``slices``: where the devices' attributes are read;
    ``numa_names``: the attributes read as a NUMA node."""

    claims: Mapping[str, Claim]
    asked: Sequence[str]
    allocation: Allocation | None
    before: Mapping[str, Sequence[Picked]]
    slices: Sequence[Slice]
    numa_names: Sequence[str] = NUMA_ATTRIBUTES


def co_placement(pod: Pod, uses: Mapping[str, Sequence[ClaimUse]], node: Admitted,
                 dra: Allocated) -> list[ContainerPlacements]:
    """DRA-12: each container's placements and pairs, in the pod's container order (init
    containers first); ``uses``: each container's claims (DRA-11)."""
    results: dict[str, Sequence[Picked]] = dict(dra.before)
    if dra.allocation is not None and dra.allocation.outcome == "allocated":
        results.update(zip(dra.asked, dra.allocation.claims, strict=True))
    devices = _devices(dra.slices)
    decision = node.decision
    assigned = {c.name: c for c in decision.containers} if decision and decision.admitted \
        else {}
    tm_rule = "POLICY-1" if node.policy == "none" else (
        "ADMIT-2" if node.scope == "pod" else "ADMIT-1")
    answer = []
    for container in pod.all_containers():
        placed: list[Placement] = []
        if container.name in assigned:
            placed += _tm_placements(assigned[container.name], node.machine)
        placed += _dra_placements(uses.get(container.name, ()), results, devices,
                                  dra.numa_names)
        pairs = []
        for i, a in enumerate(placed):
            if a.source == "dra" and len(a.items) > 1:
                attribute = _constraint(dra.claims.get(a.claim), a.request, a.request)
                among = UNKNOWN if not a.numa else TOGETHER if len(a.numa) == 1 else APART
                pairs.append(Pair(a.name, a.name,
                                  f"matchAttribute {attribute}" if attribute else "", "DRA-6",
                                  among))
            pairs += [_pair(a, b, tm_rule, dra.claims) for b in placed[i + 1:]]
        answer.append(ContainerPlacements(container.name, tuple(placed), tuple(pairs)))
    return answer
