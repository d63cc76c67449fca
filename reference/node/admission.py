"""A whole node: the Topology Manager's admission with its hint providers (spec chapter
``admission.md``, NODE-*, ADMIT-*).

Upstream: ``pkg/kubelet/cm/topologymanager/scope_container.go``, ``scope_pod.go``,
``scope_none.go`` and ``scope.go`` (``Admit``, ``allocateAlignedResources``),
``topology_manager.go`` (``TopologyAffinityError``), ``pkg/kubelet/cm/container_manager_linux.go``
(the managers are created, and registered as hint providers, in the order Device, CPU, Memory)
and ``pkg/kubelet/cm/admission/errors.go`` (how a provider error becomes the pod's result).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Protocol

import attrs

from numaspec.errors import (
    InvalidFieldError,
    InvalidQuantityError,
    NodeStartupError,
    NotModelledError,
    NumaspecError,
    PodAlreadyAdmittedError,
    UnknownPodError,
    UnknownResourceError,
)
from numaspec.node.affinity import (
    AffinityTerms,
    Placed,
    Region,
    admissible_region,
    filter_hints,
    parse_affinity,
)
from numaspec.node.cpu_assignment import CPUAllocationError
from numaspec.node.cpu_manager import (
    STATIC_POLICY_ERROR,
    StaticCPUManager,
    check_static_policy,
    parse_cpu_manager_options,
    take_by_policy,
)
from numaspec.node.devices import DeviceManager
from numaspec.node.fit import (
    check_node_allocatable,
    fit_rejection,
    node_allocatable,
    pod_requests,
    validate_pod_resources,
)
from numaspec.node.go_quantity import go_as_int64, go_parse
from numaspec.node.machine import HUGEPAGE_SIZES, Machine
from numaspec.node.memory import Block, MemoryManager
from numaspec.node.nodeconfig import NodeConfig, format_cpuset
from numaspec.node.pods import Container, Pod, PodResources, pod_level_resource
from numaspec.node.quantity import milli_value, parse_quantity, value
from numaspec.node.rejection import Rejection
from numaspec.node.trace import AdmissionTrace
from numaspec.topology.golang import go_map
from numaspec.topology.hints import ProviderHints, TopologyHint
from numaspec.topology.masks import NumaMask
from numaspec.topology.numa import NumaInfo
from numaspec.topology.options import feature_gate_errors
from numaspec.topology.policies import MergeOutcome, Policy, check_startup, merge_for_policy
from numaspec.topology.trace import MergeTrace

__all__ = ["AFFINITY_ERROR", "ContainerAssignment", "Decision", "Node",
           "TOPOLOGY_AFFINITY_ERROR"]

#: ADMIT-3: the reason and message of a Topology Manager policy rejection.
TOPOLOGY_AFFINITY_ERROR = ("TopologyAffinityError",
                           "Resources cannot be allocated with Topology locality")
#: AFF-9: the reason and message of a rejection for a placement outside the pod's admissible
#: region (fixed words, so that every implementation can give them).
AFFINITY_ERROR = ("NUMAInterPodAffinityError",
                  "Resources cannot be allocated within the NUMA nodes inter-pod affinity allows")
#: NODE-4: resource names a pod may ask for besides device-plugin resources.
_NATIVE_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})


class _Provider(Protocol):
    name: str

    def container_hints(self, pod: Pod, container: Container) -> ProviderHints: ...
    def pod_hints(self, pod: Pod) -> ProviderHints: ...
    def remove_pod(self, pod_uid: str) -> None: ...


@attrs.frozen
class ContainerAssignment:
    """ADMIT-5: what one container of an admitted pod got."""

    name: str
    hint: TopologyHint
    cpus: frozenset[int] = frozenset()
    memory: tuple[Block, ...] = ()
    devices: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)

    def as_json(self) -> dict[str, object]:
        """NWIRE-2: one container of a decision, as the node protocol writes it."""
        return {
            "name": self.name,
            "hint": {"numa": None if self.hint.numa_affinity is None
                     else list(self.hint.numa_affinity.nodes), "preferred": self.hint.preferred},
            "cpus": sorted(self.cpus),
            "memory": [b.as_json() for b in self.memory],
            "devices": {r: list(ids) for r, ids in self.devices.items()},
        }


@attrs.frozen
class Decision:
    """ADMIT-5: the admission result.  A rejected pod has no containers (ADMIT-6)."""

    admitted: bool
    reason: str = ""
    message: str = ""
    containers: tuple[ContainerAssignment, ...] = ()


class Node:
    """NODE-*, ADMIT-*: a node that admits and removes pods as kubelet does.

    Creating a node runs kubelet's start-up checks (NODE-5) and raises
    :class:`~numaspec.errors.NodeStartupError` where kubelet would not start.  Every method
    either succeeds or raises a :class:`~numaspec.errors.NumaspecError` and leaves the node as
    it was (NODE-6).
    """

    def __init__(self, machine: Machine, config: NodeConfig) -> None:
        self.machine = machine
        self.config = config
        self.version = config.kubelet_version
        gates = config.gates()
        try:
            # MERGE-12: a distance is a uint64, as cadvisor keeps it: NumaInfo checks every
            # row given, even where a NUMA node without one leaves the machine none.
            distances = machine.distances()
            if distances is None:
                NumaInfo(machine.numa_ids, {n.id: n.distances for n in machine.numa_nodes
                                            if n.distances is not None})
            numa = NumaInfo(machine.numa_ids, distances)
        except NumaspecError as exc:
            raise _in_node_terms(exc, machine) from None
        # VER-2: the feature gates are set before anything reads the configuration.
        gate_errors = feature_gate_errors(gates, self.version)
        if gate_errors:
            raise _in_node_terms(gate_errors[0], machine)
        # NODE-2, MEM-2 (1): configuration validation refuses a negative maxPods and
        # malformed reservedMemory entries.
        _check_reserved_memory_entries(config)
        # NODE-3: kubeReserved and systemReserved are parsed, then the eviction thresholds.
        _check_reserved_resources(config)
        _check_eviction_thresholds(config)
        # NODE-10: CPU Manager options with their gate off stop kubelet before any manager.
        _check_cpu_options_gate(config, gates)
        # NODE-5 (1): the Topology Manager is created first.
        try:
            self.tm_policy, self.tm_options = check_startup(
                config.topology_manager_policy, numa, self.version,
                config.topology_manager_policy_options, gates)
        except NumaspecError as exc:
            raise _in_node_terms(exc, machine) from None
        self.numa = numa
        if config.topology_manager_scope not in ("container", "pod"):
            raise NodeStartupError(
                f"topologyManagerScope {config.topology_manager_scope!r} must be one of "
                "\"container\" or \"pod\"", where="config.topologyManagerScope")
        # NODE-5 (2): the Device Manager, then (3) the CPU Manager, then (4) the Memory Manager.
        self.devices = DeviceManager(machine, self.version)
        self.cpu = self._cpu_manager(gates)
        try:
            self.memory = self._memory_manager(gates)
        except NotModelledError:
            # A reservation kubelet's Memory Manager would wrap around in is not modelled,
            # but kubelet starts that manager and then exits at NODE-9 when the same
            # reservation exceeds the capacity: that answer is known.
            check_node_allocatable(machine, config)
            raise
        # NODE-9: the container manager starts: node allocatable must fit the capacity.
        check_node_allocatable(machine, config)
        # ADMIT-8: what the resource-fit handler compares requests with.
        self.allocatable = node_allocatable(machine, config, machine.healthy_device_counts())
        self.pods: dict[str, Pod] = {}
        self.hints: dict[str, dict[str, TopologyHint]] = {}
        # AFF-*: the affinity extension, when the configuration turns it on.
        self.affinity_labels = config.inter_pod_affinity_labels
        self.terms: dict[str, AffinityTerms] = {}
        self._socket_peers = _socket_peers(machine)
        self._cpu_numa = {c.cpu: c.numa for c in machine.cpu_topology().cpus}
        self._device_numa = {(resource, d.id): d.numa
                             for resource, listed in machine.devices.items() for d in listed}

    def fork(self) -> Node:
        """NODE-6: a copy of the node that later steps on either leave the other as it is,
        as a deep copy would be, at the cost of the mutable state alone: the pods, the stored
        hints, the affinity terms and each manager's bookkeeping (its own record of the
        Device Manager's choices too).  The machine, the configuration and what start-up
        derived from them are never changed afterwards, and pods are frozen: they are shared."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.pods = dict(self.pods)
        twin.hints = {uid: dict(stored) for uid, stored in self.hints.items()}
        twin.terms = dict(self.terms)
        twin.devices = self.devices.fork()
        twin.cpu = None if self.cpu is None else self.cpu.snapshot()
        twin.memory = None if self.memory is None else self.memory.snapshot()
        return twin

    # -- start-up ------------------------------------------------------------------------------

    def _cpu_manager(self, gates: Mapping[str, bool]) -> StaticCPUManager | None:
        config = self.config
        if config.cpu_manager_policy == "none":
            return None
        if config.cpu_manager_policy != "static":
            raise _unknown_policy(config.cpu_manager_policy, "none, static", "cpuManagerPolicy")
        topology = self.machine.cpu_topology()
        count = config.reserved_cpu_count()
        options = parse_cpu_manager_options(config.cpu_manager_policy_options, self.version,
                                            gates)
        check_static_policy(topology, options, self.tm_policy.value)
        all_cpus = frozenset(c.cpu for c in topology.cpus)
        if config.reserved_system_cpus:
            unknown = config.reserved_system_cpus - all_cpus
            if unknown:
                raise NodeStartupError(
                    f"reservedSystemCPUs names CPUs the machine does not have: "
                    f"{sorted(unknown)}", where="config.reservedSystemCPUs")
            reserved = config.reserved_system_cpus
        else:
            try:
                reserved = take_by_policy(topology, self.version, options, all_cpus, count)
            except CPUAllocationError:
                reserved = frozenset()
        if len(reserved) != count:
            raise NodeStartupError(
                f"cannot reserve {count} CPUs on a machine with {len(all_cpus)}",
                where="config", kubelet_message=f"{STATIC_POLICY_ERROR}[cpumanager] unable to "
                "reserve the required "
                f"amount of CPUs (size of {format_cpuset(reserved)} did not equal {count})")
        return StaticCPUManager(topology, self.version, options, reserved)

    def _memory_manager(self, gates: Mapping[str, bool]) -> MemoryManager | None:
        config = self.config
        if self.version.minor <= 31 and not gates.get("MemoryManager", True):
            # NODE-11: with the MemoryManager gate off kubelet builds no Memory Manager (no
            # checks, no hints, no blocks); from 1.32 the gate is locked on.
            return None
        if config.memory_manager_policy == "None":
            return None
        if config.memory_manager_policy != "Static":
            raise _unknown_policy(config.memory_manager_policy, "None, Static",
                                  "memoryManagerPolicy")
        ids = set(self.machine.numa_ids)
        per_node: dict[int, dict[str, int]] = {n: {} for n in ids}
        totals: dict[str, object] = {}
        for index, (numa, limits) in enumerate(config.reserved_memory):
            where = f"config.reservedMemory[{index}]"
            if numa not in ids:
                msg = (f"the reserved memory configuration references a NUMA node {numa} that "
                       "does not exist on this machine")
                raise NodeStartupError(msg, where=f"{where}.numaNode", kubelet_message=msg)
            for name, text in limits.items():
                quantity = parse_quantity(text, where=f"{where}.limits.{name}")
                if quantity < 0 or quantity.denominator != 1:
                    raise InvalidFieldError("a reservation is a whole, non-negative number of "
                                            "bytes", where=f"{where}.limits.{name}")
                per_node[numa][name] = int(quantity)
                totals[name] = totals.get(name, 0) + quantity  # type: ignore[operator]
        reservation = config.allocatable_reservation()
        kinds = set(totals) | {k for k in reservation
                               if k == "memory" or k.startswith("hugepages-")}
        for kind in sorted(kinds):
            wanted = reservation.get(kind, 0)
            given = totals.get(kind, 0)
            if wanted != given:
                raise NodeStartupError(
                    f"reservedMemory of type {kind!r} adds up to {given} bytes, but node "
                    f"allocatable reserves {wanted} (kubeReserved + systemReserved + "
                    "evictionHard)", where="config.reservedMemory")
        # MEM-2: then each limit is read with Quantity.AsInt64 (convertReserved), which
        # cannot read every spelling of a whole number of bytes.
        for index, (_, limits) in enumerate(config.reserved_memory):
            for name, text in limits.items():
                if go_as_int64(go_parse(text)) is None:
                    raise NodeStartupError(
                        f"kubelet reads a reservation with Quantity.AsInt64, which cannot read "
                        f"{text!r} (Go holds it as a decimal, or at a negative power of ten): "
                        "write it as whole bytes or with an integer and a suffix",
                        where=f"config.reservedMemory[{index}].limits.{name}",
                        kubelet_message="could not covert a variable of type Quantity to int64")
        if sum(per_node[n].get("memory", 0) for n in ids) <= 0:
            msg = "[memorymanager] you should specify the system reserved memory"
            raise NodeStartupError(msg, where="config.reservedMemory", kubelet_message=msg)
        for node in self.machine.numa_nodes:
            hugepages = sum(node.hugepage_bytes(h) for h in HUGEPAGE_SIZES)
            if per_node[node.id].get("memory", 0) + hugepages > node.memory or any(
                    per_node[node.id].get(h, 0) > node.hugepage_bytes(h) for h in HUGEPAGE_SIZES):
                raise NotModelledError(
                    f"NUMA node {node.id} reserves more memory than it has; kubelet's unsigned "
                    "bookkeeping would wrap around", where="config.reservedMemory")
        return MemoryManager(self.machine, self.version, per_node)

    # -- admission -----------------------------------------------------------------------------

    def _providers(self) -> list[_Provider]:
        """NODE-5: registration order, which is the order of hints and of allocation."""
        found: list[_Provider] = [self.devices]
        if self.cpu is not None:
            found.append(self.cpu)
        if self.memory is not None:
            found.append(self.memory)
        return found

    def effective_pod(self, pod: Pod) -> Pod:
        """QOS-4, ADMIT-11: the pod as this kubelet reads it.  With PodLevelResources off
        kubelet ignores ``spec.resources`` (dropped here); with it on (default from 1.34) the
        node keeps them, and the CPU and Memory Managers leave such a pod alone (CPU-18,
        MEM-11); QOS-5 completes them; an empty object makes the pod BestEffort up to 1.36
        and is dropped from 1.37 (QOS-4).  What numaspec does not model is refused: the gate
        turned on before 1.34 (kubelet 1.32-1.33 have no such check) and
        PodLevelResourceManagers on."""
        resources = pod.resources
        if resources is None:
            return pod
        gates = self.config.gates()
        if not gates.get("PodLevelResources", False):
            return attrs.evolve(pod, resources=None)
        if resources.is_set():
            # QOS-5: the API server defaults them, then validates them.
            resources = default_pod_level_resources(
                pod, resources, fix=self.version.minor >= 37 and gates.get(
                    "PodLevelResourcesFixDefaulting", False),
                omit_partial=self.version.omits_partial_pod_limits)
            pod = attrs.evolve(pod, resources=resources)
        _check_pod_level(pod, resources)
        # QOS-4: an empty object makes the pod BestEffort up to 1.36; from 1.37
        # (PodLevelResourcesFixKubeletQOSClass) it is as if there were none.
        if not resources.is_set() and self.version.minor >= 37 and gates.get(
                "PodLevelResourcesFixKubeletQOSClass", False):
            return attrs.evolve(pod, resources=None)
        if self.version.minor < 34:
            raise NotModelledError(f"PodLevelResources turned on in kubelet {self.version} "
                                   "(alpha) is not modelled: its managers do not yet skip "
                                   "pod-level pods", where="config.featureGates")
        if gates.get("PodLevelResourceManagers", False):
            raise NotModelledError("PodLevelResourceManagers (pod-level exclusive CPUs and "
                                   "memory) is not modelled", where="config.featureGates")
        return pod

    def _check_pod(self, pod: Pod, *, live_ok: bool = False) -> None:
        if pod.uid in self.pods and not live_ok:
            raise PodAlreadyAdmittedError(f"pod {pod.uid!r} is already on the node",
                                          where="pod.uid")
        # ADMIT-7: a pod the API server refuses never reaches the node.
        validate_pod_resources(pod)
        seen: set[str] = set()
        for index, container in enumerate(pod.all_containers()):
            where = (f"pod.initContainers[{index}]" if index < len(pod.init_containers)
                     else f"pod.containers[{index - len(pod.init_containers)}]")
            if container.name in seen:
                raise InvalidFieldError(f"container name {container.name!r} is used twice",
                                        where=f"{where}.name")
            seen.add(container.name)
            for name in {*container.requests, *container.limits}:
                if name.startswith("hugepages-"):
                    if name in self.machine.hugepage_sizes:
                        continue
                    raise UnknownResourceError(
                        f"hugepage size {name!r} is not one the machine reports (it has: "
                        f"{', '.join(self.machine.hugepage_sizes) or 'none'})",
                        where=f"{where}.resources")
                if name in _NATIVE_RESOURCES:
                    continue
                if name not in self.devices.devices:
                    raise UnknownResourceError(
                        f"no device plugin on this node serves {name!r}",
                        where=f"{where}.resources")
                if name not in container.limits or \
                        container.requests.get(name) != container.limits[name]:
                    raise InvalidFieldError(
                        f"an extended resource needs a limit, and a request equal to it "
                        f"({name})", where=f"{where}.resources")
                if container.limits[name].denominator != 1:
                    raise InvalidFieldError(f"{name} must be a whole number",
                                            where=f"{where}.resources.limits")

    def admit(self, pod: Pod, trace: AdmissionTrace | None = None) -> Decision:
        """ADMIT-1..ADMIT-6: admit ``pod`` or say why not.  ``trace``, when given, records
        the reasoning (EXPLAIN-3)."""
        pod = self.effective_pod(pod)
        self._check_pod(pod)
        region = self.region(pod)
        if trace is not None:
            trace.start(pod.uid, self.version, self.tm_policy.value,
                        self.config.topology_manager_scope)
        saved = (self.devices.snapshot(), self.cpu and self.cpu.snapshot(),
                 self.memory and self.memory.snapshot())
        try:
            decision = self._admit(pod, region, trace)
        except NumaspecError:
            self.devices, self.cpu, self.memory = saved
            self.hints.pop(pod.uid, None)
            raise
        if decision.admitted:
            # ADMIT-8: the resource-fit handler runs after the Topology Manager's.
            rejection = fit_rejection(pod, self.pods.values(), self.allocatable)
            if rejection is not None:
                decision = Decision(False, rejection.reason, rejection.message)
                if trace is not None:
                    trace.refused("resource fit", rejection.reason, rejection.message,
                                  "ADMIT-8")
        if trace is not None:
            trace.decision(decision.admitted, decision.reason, decision.message,
                           [c.as_json() for c in decision.containers])
        if not decision.admitted:
            # ADMIT-6, ADMIT-9: kubelet frees a rejected pod's allocations (partial, or whole
            # when the fit handler rejects) by stale-state cleanup before it computes the next
            # hints; numaspec frees them at once.
            self._release(pod.uid)
            return decision
        self.pods[pod.uid] = pod
        if self.affinity_labels is not None:
            self.terms[pod.uid] = self._terms(pod)
        if self.memory is not None:
            self.memory.start_pod(pod)
        return decision

    # -- in-place resize (resize.md) -----------------------------------------------------------

    def check_live_pod(self, pod: Pod) -> None:
        """RESIZE-2: ``pod``, a live pod with new resources, checked as :meth:`admit` checks
        a pod (API validation, known resources)."""
        self._check_pod(pod, live_ok=True)

    def readmit(self, pod: Pod, *, resize_operation: bool) -> Rejection | None:
        """RESIZE-6: the admit handlers run again for a live pod with its desired resources,
        the other live pods as they are: the Topology Manager's handler, then the resource
        fit.  ``resize_operation`` (1.37): the CPU and Memory Managers give no hints for the
        resize and no provider allocates; otherwise (1.33-1.36) the pod is admitted as a new
        one, and the providers find its containers already hold what they hold.  Accepted, the
        node counts the pod with its desired resources.  Refused, the pod keeps its allocated
        resources; what the providers allocated on the way stays too (1.33-1.36: the static
        Memory Manager's blocks for finished init containers, finding 32), for the pod is live
        and nothing in kubelet takes a live pod's allocations back."""
        saved = (self.devices.snapshot(), self.cpu and self.cpu.snapshot(),
                 self.memory and self.memory.snapshot(),
                 {uid: dict(h) for uid, h in self.hints.items()})
        refusal: Rejection | None = None
        try:
            if resize_operation:
                refusal = self._readmit_resize(pod)
            else:
                decision = self._admit(pod, None)
                if not decision.admitted:
                    refusal = Rejection(decision.reason, decision.message)
            if refusal is None:
                refusal = fit_rejection(pod, [p for u, p in self.pods.items() if u != pod.uid],
                                        self.allocatable)
        except NumaspecError:
            self.devices, self.cpu, self.memory, self.hints = saved
            raise
        if refusal is not None:
            return refusal
        self.pods[pod.uid] = pod
        return None

    def _readmit_resize(self, pod: Pod) -> Rejection | None:
        """RESIZE-6 (1.37): only the Device Manager speaks (its hints regenerated from what
        the pod holds); nothing is allocated."""
        if self.tm_policy is Policy.NONE:
            return None
        silent: list[ProviderHints] = [None] * (len(self._providers()) - 1)
        stored = self.hints.setdefault(pod.uid, {})
        if self.config.topology_manager_scope == "pod":
            outcome = self._merge([self.devices.pod_hints(pod), *silent])
            if not outcome.admit:
                return Rejection(*TOPOLOGY_AFFINITY_ERROR)
            for container in pod.all_containers():
                stored[container.name] = outcome.hint
            return None
        for container in pod.all_containers():
            outcome = self._merge([self.devices.container_hints(pod, container), *silent])
            if not outcome.admit:
                return Rejection(*TOPOLOGY_AFFINITY_ERROR)
            stored[container.name] = outcome.hint
        return None

    # -- NUMA-level inter-pod affinity (affinity.md) -------------------------------------------

    def _terms(self, pod: Pod) -> AffinityTerms:
        assert self.affinity_labels is not None
        return parse_affinity(pod.labels, pod.annotations, self.affinity_labels)

    def numa_of(self, pod_uid: str) -> frozenset[int]:
        """AFF-5: the NUMA nodes a live pod holds resources on: its exclusive CPUs, its
        Memory Manager blocks and its devices that report a NUMA node."""
        pod = self.pods.get(pod_uid)
        if pod is None:
            return frozenset()
        found: set[int] = set()
        for container in pod.all_containers():
            found |= self._container_numa(pod_uid, container.name)
        return frozenset(found)

    def _container_numa(self, pod_uid: str, name: str) -> set[int]:
        found: set[int] = set()
        if self.cpu is not None:
            found |= {self._cpu_numa[c] for c in self.cpu.cpus_of(pod_uid, name)}
        if self.memory is not None:
            for block in self.memory.blocks_of(pod_uid, name):
                found |= set(block.numa)
        for resource, ids in self.devices.devices_of(pod_uid, name).items():
            for device in ids:
                found |= set(self._device_numa.get((resource, device), ()))
        return found

    def region(self, pod: Pod) -> Region | None:
        """AFF-7: where ``pod`` may hold resources beside the other live pods; ``None`` when
        the node does not run the affinity extension.  The pod itself never counts as one of
        the others (AFF-5), so a live pod's regenerated hints are not judged against itself.
        Raises the annotation errors of :func:`~numaspec.node.affinity.parse_affinity`."""
        if self.affinity_labels is None:
            return None
        others = [Placed(uid, self.terms[uid], self.numa_of(uid))
                  for uid in self.pods if uid != pod.uid]
        return admissible_region(self._terms(pod), others, self.machine.numa_ids,
                                 self._socket_peers)

    def _filtered(self, hints: ProviderHints, region: Region | None) -> ProviderHints:
        """AFF-8: inside each provider, before the merge."""
        if region is None:
            return hints
        return filter_hints(hints, region, self.machine.numa_ids)

    def provider_hints(self, pod: Pod, container: str | None = None
                       ) -> dict[str, tuple[TopologyHint, ...] | None]:
        """NWIRE-4: what the hint providers say about ``pod`` on the current state, nothing
        admitted or allocated.  With ``container``: that container's hints (kubelet's
        ``GetTopologyHints``); without: the pod's (``GetPodTopologyHints``).

        A resource no provider speaks about is absent; ``None`` is no preference (kubelet's nil
        list) and ``()`` no possible placement.  ``pod`` is checked as :meth:`admit` checks it,
        except that it may be live on the node (its containers' hints are then regenerated from
        what they hold: CPU-8, DEV-1, MEM-5).
        """
        pod = self.effective_pod(pod)
        self._check_pod(pod, live_ok=True)
        region = self.region(pod)
        if container is None:
            answers = [self._filtered(p.pod_hints(pod), region) for p in self._providers()]
        else:
            found = next((c for c in pod.all_containers() if c.name == container), None)
            if found is None:
                raise InvalidFieldError(
                    f"pod {pod.uid!r} has no container {container!r} (it has: "
                    f"{', '.join(c.name for c in pod.all_containers())})", where="container")
            answers = [self._filtered(p.container_hints(pod, found), region)
                       for p in self._providers()]
        merged: dict[str, tuple[TopologyHint, ...] | None] = {}
        for answer in answers:
            for resource, hints in (answer or {}).items():
                merged[resource] = None if hints is None else tuple(hints)
        return merged

    def _merge(self, hints: Sequence[ProviderHints], trace: AdmissionTrace | None = None,
               container: str | None = None) -> MergeOutcome:
        if trace is None:
            return merge_for_policy(self.tm_policy, hints, self.numa, self.tm_options,
                                    self.version)
        return self._traced_merge(hints, trace, container)

    def _traced_merge(self, hints: Sequence[ProviderHints], trace: AdmissionTrace,
                      container: str | None) -> MergeOutcome:
        """EXPLAIN-2: the same merge, with its trace and the refusal it leads to."""
        merge = MergeTrace()
        outcome = merge_for_policy(self.tm_policy, hints, self.numa, self.tm_options,
                                   self.version, trace=merge)
        trace.merge(container, {p.name: h for p, h in zip(self._providers(), hints,
                                                            strict=True)}, merge)
        if not outcome.admit:
            trace.refused("topology manager", *TOPOLOGY_AFFINITY_ERROR, rule="ADMIT-3")
        return outcome

    def _admit(self, pod: Pod, region: Region | None, trace: AdmissionTrace | None = None
               ) -> Decision:
        stored = self.hints.setdefault(pod.uid, {})
        containers = pod.all_containers()
        try:
            if self.tm_policy is Policy.NONE:
                # ADMIT-1: no hints at all; every container allocates without an affinity.
                for container in containers:
                    if trace is not None:
                        trace.no_merge(container.name)
                    self._allocate(pod, container, TopologyHint(None, False), region, trace)
            elif self.config.topology_manager_scope == "pod":
                # ADMIT-2: one merge for the whole pod, stored for every container.
                outcome = self._merge([self._filtered(p.pod_hints(pod), region)
                                       for p in self._providers()], trace)
                if not outcome.admit:
                    return Decision(False, *TOPOLOGY_AFFINITY_ERROR)
                for container in containers:
                    stored[container.name] = outcome.hint
                    self._allocate(pod, container, outcome.hint, region, trace)
            else:
                # ADMIT-1: container by container: hints, merge, store, allocate.
                for container in containers:
                    outcome = self._merge([self._filtered(p.container_hints(pod, container),
                                                          region)
                                           for p in self._providers()], trace,
                                          container.name)
                    if not outcome.admit:
                        return Decision(False, *TOPOLOGY_AFFINITY_ERROR)
                    stored[container.name] = outcome.hint
                    self._allocate(pod, container, outcome.hint, region, trace)
        except Rejection as rejection:
            return Decision(False, rejection.reason, rejection.message)
        return Decision(True, containers=tuple(
            ContainerAssignment(
                name=c.name,
                hint=stored.get(c.name, TopologyHint(None, False)),
                cpus=self.cpu.cpus_of(pod.uid, c.name) if self.cpu else frozenset(),
                memory=tuple(self.memory.blocks_of(pod.uid, c.name)) if self.memory else (),
                devices={r: tuple(ids) for r, ids in
                         self.devices.devices_of(pod.uid, c.name).items()})
            for c in containers))

    def _allocate(self, pod: Pod, container: Container, hint: TopologyHint,
                  region: Region | None, trace: AdmissionTrace | None = None) -> None:
        """ADMIT-4: providers allocate in registration order; the first failure rejects.
        AFF-9: with the affinity extension, so does a placement outside the region."""
        affinity: NumaMask | None = hint.numa_affinity
        step = "devices"
        try:
            self.devices.allocate(pod, container, affinity)
            if self.cpu is not None:
                step = "cpu"
                self.cpu.allocate(pod, container, affinity)
            if self.memory is not None:
                step = "memory"
                self.memory.allocate(pod, container, affinity, hint.preferred)
            if region is not None:
                step = "affinity"
                held = self._container_numa(pod.uid, container.name)
                if not region.admits(held):
                    raise Rejection(*AFFINITY_ERROR)
        except Rejection as rejection:
            if trace is not None:
                trace.refused(f"{step} ({container.name})", rejection.reason,
                              rejection.message, "AFF-9" if step == "affinity" else "ADMIT-4")
            raise

    def _release(self, pod_uid: str) -> None:
        for provider in self._providers():
            provider.remove_pod(pod_uid)
        self.hints.pop(pod_uid, None)

    def remove(self, pod_uid: str) -> None:
        """NODE-7: the pod is gone; everything it held is free again."""
        if pod_uid not in self.pods:
            raise UnknownPodError(f"no pod {pod_uid!r} on the node", where="uid")
        del self.pods[pod_uid]
        self.terms.pop(pod_uid, None)
        self._release(pod_uid)

    def restart(self, unregistered: Sequence[str] = ()) -> None:
        """DEV-11: kubelet restarts: every pod stays with what it holds (the managers' state
        files); the plugins of ``unregistered`` have not registered again yet."""
        for index, resource in enumerate(unregistered):
            where = f"unregistered[{index}]"
            if resource not in self.devices.devices:
                raise InvalidFieldError(f"no device plugin on this node serves {resource!r}",
                                        where=where)
            if resource in unregistered[:index]:
                raise InvalidFieldError(f"{resource!r} is listed twice", where=where)
        self.devices.restart(unregistered)

    def register(self, resource: str) -> None:
        """DEV-11: the plugin of ``resource`` registers again after a restart."""
        if resource not in self.devices.devices:
            raise InvalidFieldError(f"no device plugin on this node serves {resource!r}",
                                    where="resource")
        if resource not in self.devices.unregistered:
            raise InvalidFieldError(f"the plugin of {resource!r} is registered already",
                                    where="resource")
        self.devices.register(resource)

    def state(self) -> dict[str, object]:
        """NODE-8: a JSON-ready snapshot of every manager's state."""
        return {
            "pods": sorted(self.pods),
            "cpu": self.cpu.state() if self.cpu else None,
            "memory": self.memory.state() if self.memory else None,
            "devices": self.devices.state(),
        }


#: The merge request's field names (spec/protocols/merge-protocol.md) → where they come from in a
#: node.
_NODE_FIELDS = {"policy": "config.topologyManagerPolicy",
                "policy_options": "config.topologyManagerPolicyOptions",
                "feature_gates": "config.featureGates",
                "numa_nodes": "machine.numaNodes"}
_DISTANCE = re.compile(r"numa_distances\.(\d+)(.*)")


def _in_node_terms(error: NumaspecError, machine: Machine) -> NumaspecError:
    """NWIRE-3: the same error, its ``where`` named as the node's request names it (a distance
    row is the ``distances`` of the NUMA node's entry)."""
    head, dot, rest = error.where.partition(".")
    distance = _DISTANCE.fullmatch(error.where)
    if distance:
        where = f"{machine.where_of(int(distance[1]))}.distances{distance[2]}"
    elif head in _NODE_FIELDS:
        where = _NODE_FIELDS[head] + dot + rest
    else:
        return error
    return type(error)(error.message, where=where, kubelet_message=error.kubelet_message)


def _check_reserved_memory_entries(config: NodeConfig) -> None:
    """NODE-2, MEM-2 (1): kubelet's configuration validation refuses a negative ``maxPods``
    and (validateReservedMemoryConfiguration), for every ``reservedMemory`` entry, a limit
    type other than memory and hugepages, a zero limit, and a NUMA node and type given twice,
    whatever the Memory Manager policy; every error is reported, several as one bracketed
    list."""
    problems: list[str] = []
    seen: set[tuple[int, str]] = set()
    first_where = ""
    if config.max_pods < 0:
        problems.append(f"invalid configuration: maxPods (--max-pods) {config.max_pods} must "
                        "not be a negative number")
        first_where = "config.maxPods"
    for index, (numa, limits) in enumerate(config.reserved_memory):
        for name in sorted(limits):
            where = f"config.reservedMemory[{index}].limits.{name}"
            found: list[str] = []
            if name != "memory" and not name.startswith("hugepages-"):
                found.append(f"invalid configuration: the limit type {name!r} for NUMA node "
                             f"{numa} is not supported, only [memory hugepages-<HugePageSize>] "
                             "is accepted".replace(f"{name!r}", f'"{name}"'))
            if parse_quantity(limits[name], where=where) == 0:
                found.append("invalid configuration: reserved memory may not be zero for NUMA "
                             f'node {numa} and resource "{name}"')
            if (numa, name) in seen:
                found.append("invalid configuration: the reserved memory has a duplicate value "
                             f'for NUMA node {numa} and resource "{name}"')
            seen.add((numa, name))
            if found and not first_where:
                first_where = where
            problems.extend(found)
    if problems:
        msg = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
        raise NodeStartupError(msg, where=first_where, kubelet_message=msg)


#: NODE-3: the resources kubeReserved and systemReserved may name (server.go
#: parseResourceList); hugepages and extended resources cannot be reserved.
_RESERVABLE = ("cpu", "memory", "ephemeral-storage", "pid")


def _check_reserved_resources(config: NodeConfig) -> None:
    """NODE-3: kubelet parses kubeReserved, then systemReserved, and stops at the first map
    with a resource it cannot reserve, a quantity it cannot parse or a negative one.  Kubelet
    walks each map in Go's order, so with two bad entries in one map which it names varies:
    numaspec names the first by name and gives no ``kubelet_message``."""
    for field, flag, raw in (("kubeReserved", "--kube-reserved", config.kube_reserved),
                             ("systemReserved", "--system-reserved", config.system_reserved)):
        found: list[tuple[str, str]] = []
        for name in sorted(raw):
            text = raw[name]
            if name not in _RESERVABLE:
                found.append((name, f'cannot reserve "{name}" resource'))
                continue
            try:
                quantity = parse_quantity(text, where=f"config.{field}.{name}")
            except InvalidQuantityError as exc:
                found.append((name, f'failed to parse quantity "{text}" for "{name}" resource: '
                                    f"{exc.kubelet_message or exc.message}"))
                continue
            if quantity < 0:
                found.append((name, f'resource quantity for "{name}" cannot be negative: '
                                    f"{text}"))
        if found:
            name, why = found[0]
            msg = f"{flag} value failed to parse: {why}"
            raise NodeStartupError(msg, where=f"config.{field}.{name}",
                                   kubelet_message=msg if len(found) == 1 else None)


def _check_eviction_thresholds(config: NodeConfig) -> None:
    """NODE-3: kubelet parses ``evictionHard`` after the reservations and stops at a threshold
    given as a quantity that is zero or negative (a percentage is another rule's, and not
    modelled for memory).  Found by the suite against kubelet's probes (issue 33), which
    refuse ``memory.available: "0"``."""
    for signal, text in sorted((config.eviction_hard or {}).items()):
        if text.endswith("%"):
            continue
        where = f"config.evictionHard.{signal}"
        quantity = parse_quantity(text, where=where)
        if quantity <= 0:
            shown = "0" if quantity == 0 else text
            msg = f"eviction threshold {signal} must be positive: {shown}"
            raise NodeStartupError(msg, where=where,
                                   kubelet_message=msg if quantity == 0 else None)


def _check_cpu_options_gate(config: NodeConfig, gates: Mapping[str, bool]) -> None:
    """NODE-10: 1.29-1.32 (``CPUManagerPolicyOptions`` can be off; locked on from 1.33):
    options with the gate off stop kubelet, whatever the CPU policy."""
    raw = config.cpu_manager_policy_options
    if raw and config.kubelet_version.minor <= 32 and \
            not gates.get("CPUManagerPolicyOptions", True):
        msg = (f"CPU Manager policy options {go_map(raw)} require feature gates "
               '"CPUManager", "CPUManagerPolicyOptions" enabled')
        raise NodeStartupError(msg, where="config.cpuManagerPolicyOptions",
                               kubelet_message=msg)


def _unknown_policy(name: str, known: str, field: str) -> NodeStartupError:
    """NODE-5: a CPU or Memory Manager policy its manager does not know, in kubelet's words."""
    msg = f'unknown policy: "{name}"'
    return NodeStartupError(f"{msg} (known: {known})", where=f"config.{field}",
                            kubelet_message=msg)


def default_pod_level_resources(pod: Pod, resources: PodResources, *, fix: bool,
                                omit_partial: bool = False) -> PodResources:
    """QOS-5: the API server's defaulting of pod-level resources, from what the pod states
    (the containers' own requests already defaulted from their limits, QOS-2):

    1. a hugepage the containers limit and the pod neither requests nor limits gets the
       containers' aggregated limit as its pod-level limit;
    2. if the pod then has pod-level limits (``fix``: or requests), cpu and memory it does
       not request are requested at the containers' aggregated requests, and every
       pod-level limit still without a request is requested at that limit;
    3. only with ``fix`` (1.37's PodLevelResourcesFixDefaulting): a requested resource
       without a pod-level limit, which every container (init containers and sidecars
       included) limits, is limited at the larger of its request and the containers'
       aggregated limit; with ``omit_partial`` (1.38+,
       :attr:`~numaspec.topology.versions.KubeletVersion.omits_partial_pod_limits`) the
       aggregate has no cpu or memory that some container limits at zero, so neither is
       limited then."""
    from numaspec.node.fit import aggregate_containers

    given = resources.given_requests
    requests = dict(resources.requests if given is None else given)
    limits = dict(resources.limits)
    container_limits = aggregate_containers(pod, lambda c: c.limits)
    for name, amount in container_limits.items():
        if name.startswith("hugepages-") and name not in requests and name not in limits:
            limits[name] = amount
    if limits or (fix and requests):
        for name, amount in aggregate_containers(pod, lambda c: c.requests).items():
            if name in ("cpu", "memory") and name not in requests:
                requests[name] = amount
        for name, amount in limits.items():
            if name not in requests and pod_level_resource(name):
                requests[name] = amount
    if fix:
        every = list(pod.all_containers())
        if omit_partial:
            # QOS-5 (1.38+): AggregateContainerLimits leaves out a cpu or memory limit that
            # some container (init containers included) does not set above zero.
            for name in ("cpu", "memory"):
                if any(c.limits.get(name, 0) <= 0 for c in every):
                    container_limits.pop(name, None)
        for name in [n for n in requests if pod_level_resource(n) and n not in limits]:
            if every and all(name in c.limits for c in every) and name in container_limits:
                limits[name] = max(requests[name], container_limits[name])
    # Stored as completed: a later completion (a resize) starts from these.
    return PodResources(requests, limits, requests)


def _check_pod_level(pod: Pod, resources: PodResources) -> None:
    """ADMIT-7 for ``spec.resources``: only cpu, memory and hugepages; a request at most its
    limit; and at least what the containers ask together (API validation)."""
    for field, amounts in (("requests", resources.requests), ("limits", resources.limits)):
        for name in amounts:
            if not pod_level_resource(name):
                raise InvalidFieldError(f"{name!r} cannot be set at pod level (only cpu, "
                                        "memory and hugepages)",
                                        where=f"pod.resources.{field}.{name}")
    for name, amount in resources.requests.items():
        limit = resources.limits.get(name)
        if limit is not None and amount > limit:
            raise InvalidFieldError(f"the pod-level {name} request is above its limit",
                                    where=f"pod.resources.requests.{name}")
    containers = pod_requests(attrs.evolve(pod, resources=None))
    for name, amount in resources.requests.items():
        asked = containers.get(name, 0)
        mine = milli_value(amount) if name == "cpu" else value(amount)
        if asked > mine:
            raise InvalidFieldError(f"the pod-level {name} request is below what the "
                                    "containers request together",
                                    where=f"pod.resources.requests.{name}")


def _socket_peers(machine: Machine) -> dict[int, frozenset[int]]:
    """AFF-5: each NUMA node → the NUMA nodes that share a socket with it (itself included;
    a NUMA node without CPUs shares a socket with no other)."""
    sockets = {n.id: {core.socket for core in n.cores} for n in machine.numa_nodes}
    return {n: frozenset({n} | {m for m, theirs in sockets.items() if theirs & mine})
            for n, mine in sockets.items()}
