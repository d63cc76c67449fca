"""In-place pod resize (KEP-1287) on a node (spec chapter ``resize.md``, RESIZE-*): what
kubelet answers when a live pod's containers ask for other cpu and memory, and what the node
counts for the pod once it accepts.

Upstream: ``pkg/apis/core/validation/validation.go`` (``ValidatePodResize``,
``validatePodLevelResourcesResize``), ``pkg/registry/core/pod/strategy.go`` (the resize
strategy: which pod-level changes it keeps), ``plugin/pkg/admission/podresize`` (the
``PodResizeValidator`` admission plugin; 1.36+),
``pkg/kubelet/kubelet.go`` (``handlePodResourcesResize``, ``canResizePod``; 1.33),
``pkg/kubelet/allocation/allocation_manager.go`` (``handlePodResourcesResize``,
``canResizePod``, ``canAdmitPod``; 1.34+), ``pkg/kubelet/allocation/handlers.go`` (the resize
admit handler; 1.36+), ``pkg/kubelet/cm/topologymanager/scope*.go`` and the static policies of
``cpumanager`` and ``memorymanager`` (the resize operation; 1.37).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

import attrs

from numaspec.errors import (
    InvalidFieldError,
    NotModelledError,
    UnknownPodError,
)
from numaspec.node.admission import Node, default_pod_level_resources
from numaspec.node.fit import node_capacity, pod_requests
from numaspec.node.nodeconfig import NodeConfig
from numaspec.node.pods import Container, Pod, PodResources, QOSClass, qos_class
from numaspec.node.quantity import milli_value, parse_quantity, value

__all__ = ["ContainerResize", "PodResourcesResize", "ResizeResult", "resize"]

#: RESIZE-2: the resources a resize may change.
_RESIZABLE = ("cpu", "memory")


@attrs.frozen
class ContainerResize:
    """RESIZE-1: one container's new requests and limits (as quantity strings)."""

    name: str
    requests: Mapping[str, str] = attrs.field(factory=dict)
    limits: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen
class PodResourcesResize:
    """RESIZE-8: the pod's new pod-level requests and limits (``spec.resources``, as
    quantity strings), all of them."""

    requests: Mapping[str, str] = attrs.field(factory=dict)
    limits: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen
class ResizeResult:
    """RESIZE-1: kubelet's answer.  ``status`` is ``InProgress`` (accepted: the
    PodResizeInProgress condition), ``Deferred`` or ``Infeasible`` (the PodResizePending
    condition's reason) or ``Unchanged`` (the resources asked are those allocated: kubelet
    sets no condition).  ``message`` is the condition's message; ``reason`` the refusing admit
    handler's own reason, for a Deferred resize (kubelet logs it; the condition says
    Deferred)."""

    status: str
    reason: str = ""
    message: str = ""

    def as_json(self) -> dict[str, str]:
        return {"status": self.status, "reason": self.reason, "message": self.message}


def _desired(node: Node, pod: Pod, changes: Sequence[ContainerResize],
             resources: PodResources | None) -> Pod:
    """RESIZE-2: the pod with the resized containers (RESIZE-8: and its new pod-level
    ``resources``), as the API server validates it."""
    by_name = {c.name: i for i, c in enumerate(pod.all_containers())}
    new = list(pod.all_containers())
    seen: set[str] = set()
    for index, change in enumerate(changes):
        where = f"containers[{index}]"
        if change.name not in by_name:
            raise InvalidFieldError(
                f"pod {pod.uid!r} has no container {change.name!r} (it has: "
                f"{', '.join(by_name)})", where=f"{where}.name")
        if change.name in seen:
            raise InvalidFieldError(f"container {change.name!r} is named twice",
                                    where=f"{where}.name")
        seen.add(change.name)
        old = new[by_name[change.name]]
        resized = Container.of(change.name, requests=change.requests, limits=change.limits,
                               restart_policy=old.restart_policy,
                               where=f"{where}.resources")
        # RESIZE-2: a request or limit cannot be removed; only cpu and memory may change.
        for field, before, after in (("requests", old.requests, resized.requests),
                                     ("limits", old.limits, resized.limits)):
            gone = sorted(set(before) - set(after))
            if gone:
                raise InvalidFieldError(f"resource {field} cannot be removed ({gone[0]})",
                                        where=f"{where}.resources.{field}")
            for name in set(before) | set(after):
                if name not in _RESIZABLE and before.get(name) != after.get(name):
                    raise InvalidFieldError("only cpu and memory resources are mutable "
                                            f"({name})", where=f"{where}.resources.{field}")
        if pod.is_init(change.name) and not old.restartable and (
                old.requests != resized.requests or old.limits != resized.limits) and not (
                node.version.minor >= 36 and node.config.gates().get(
                    "InPlacePodVerticalScalingInitContainers", False)):
            # RESIZE-2: a regular init container is resizable only with
            # InPlacePodVerticalScalingInitContainers (beta and on from 1.36).
            raise InvalidFieldError("resources for non-sidecar init containers are immutable",
                                    where=f"{where}.resources")
        new[by_name[change.name]] = resized
    inits = len(pod.init_containers)
    desired = attrs.evolve(pod, init_containers=tuple(new[:inits]),
                           containers=tuple(new[inits:]), resources=resources)
    if resources is not None and resources.is_set():
        # RESIZE-8, QOS-5: the new pod-level resources are completed (1.36: the resize's
        # body is defaulted; 1.37: the resize strategy completes them), then validated.
        resources = default_pod_level_resources(
            desired, resources, fix=node.version.minor >= 37 and node.config.gates().get(
                "PodLevelResourcesFixDefaulting", False),
            omit_partial=node.version.omits_partial_pod_limits)
        desired = attrs.evolve(desired, resources=resources)
    if resources is not None and pod.resources is not None:
        _check_pod_level_change(pod.resources, resources)
    node.check_live_pod(desired)
    if resources is not None:
        # RESIZE-8: the pod-level resources are validated as a new pod's are (ADMIT-7,
        # QOS-4): the containers' requests together at most the pod's.
        node.effective_pod(desired)
    if qos_class(desired) != qos_class(pod):
        raise InvalidFieldError("Pod QOS Class may not change as a result of resizing "
                                f"({qos_class(pod).value} to {qos_class(desired).value})",
                                where="containers")
    return desired


def _beyond_allocatable(node: Node, desired: Pod) -> None:
    """RESIZE-2 (1.36+): the API server's ``PodResizeValidator`` admission plugin, on by
    default and active while ``InPlacePodVerticalScaling`` is on, refuses a resize whose
    requests (``PodRequests``: init containers and pod-level requests as ADMIT-8 and ADMIT-11
    count them) alone exceed the node's allocatable (its status, ADMIT-8), cpu then memory,
    every short resource named.  The API server answers Forbidden; numaspec reports it as
    every API-server refusal, ``invalid-field``, in the plugin's words."""
    if node.version.minor < 36:
        return
    wanted = pod_requests(desired)
    short = []
    for name in ("cpu", "memory"):
        asked, allocatable = wanted.get(name, 0), node.allocatable.get(name, 0)
        if asked > allocatable:
            short.append(f"{name}, requested: {asked}, allocatable: {allocatable}")
    if short:
        raise InvalidFieldError("node didn't have enough allocatable resources: "
                                + "; ".join(short))


def _changed(pod: Pod, desired: Pod, resource: str) -> bool:
    """RESIZE-4: whether any container's request of ``resource`` changes (1.34+ compare the
    requests only: a Guaranteed container's limits equal them)."""
    return any(a.requests.get(resource) != b.requests.get(resource)
               for a, b in zip(pod.all_containers(), desired.all_containers(), strict=True))


def _absolute_allocatable(config: NodeConfig, capacity: Mapping[str, Fraction]
                          ) -> dict[str, int]:
    """RESIZE-5 (1.34-1.35): ``GetNodeAllocatableAbsolute``: the capacity minus
    systemReserved and kubeReserved (no eviction threshold, no hugepages), never below zero;
    with ``reservedSystemCPUs`` the cpu reservation is their count."""
    system = dict(config.system_reserved)
    kube = dict(config.kube_reserved)
    if config.reserved_system_cpus:
        kube.pop("cpu", None)
        system["cpu"] = str(len(config.reserved_system_cpus))
    out = {}
    for name in ("cpu", "memory"):
        left = capacity[name]
        for reserved in (system, kube):
            if name in reserved:
                left -= parse_quantity(reserved[name], where=name)
        left = max(left, Fraction(0))
        out[name] = milli_value(left) if name == "cpu" else value(left)
    return out


#: RESIZE-4: the Infeasible messages of a Guaranteed pod's resize under the static CPU
#: (resp. Memory) Manager: 1.33, 1.34-1.37, 1.38+ (:func:`_wording`).
_INFEASIBLE_CPU = (
    "Resize is infeasible for Guaranteed Pods alongside CPU Manager static policy",
    'Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"',
    "Resize is infeasible for Guaranteed Pods when CPU allocation mode is exclusive")
_INFEASIBLE_MEMORY = (
    "Resize is infeasible for Guaranteed Pods alongside Memory Manager static policy",
    'Resize is infeasible for Guaranteed Pods alongside Memory Manager policy "Static"',
    "Resize is infeasible for Guaranteed Pods when memory allocation mode is exclusive")


def _wording(node: Node) -> int:
    """RESIZE-4: which release's words: 0 for 1.33, 1 for 1.34-1.37, 2 from 1.38."""
    if node.version.resize_infeasible_by_allocation_mode:
        return 2
    return 0 if node.version.minor == 33 else 1


def _infeasible(node: Node, pod: Pod, desired: Pod) -> str | None:
    """RESIZE-4, RESIZE-5: the checks that make a resize Infeasible; the message, or None."""
    minor = node.version.minor
    config = node.config
    if qos_class(desired) is QOSClass.GUARANTEED:
        # RESIZE-4: the static CPU and Memory Managers cannot change exclusive CPUs or
        # memory blocks.  1.33: any resize of a Guaranteed pod; 1.34+: one that changes cpu
        # (resp. memory); 1.38+: the same conditions (the managers' allocation mode is
        # exclusive under exactly these policies), in other words.
        if config.cpu_manager_policy == "static" and (minor == 33 or _changed(pod, desired,
                                                                               "cpu")):
            return _INFEASIBLE_CPU[_wording(node)]
        if node.memory is not None and (minor == 33 or _changed(pod, desired, "memory")):
            return _INFEASIBLE_MEMORY[_wording(node)]
    if minor >= 36:
        return None
    # RESIZE-5 (1.33-1.35): the pod's requests against the whole node.
    if minor == 33:
        available = {"cpu": node.allocatable["cpu"], "memory": node.allocatable["memory"]}
    else:
        available = _absolute_allocatable(config, node_capacity(node.machine))
    wanted = pod_requests(desired)
    cpu, memory = wanted.get("cpu", 0), wanted.get("memory", 0)
    if memory > available["memory"]:
        return (f"Node didn't have enough capacity: memory, requested: {memory}, capacity: "
                f"{available['memory']}")
    if cpu > available["cpu"]:
        return (f"Node didn't have enough capacity: cpu, requested: {cpu}, capacity: "
                f"{available['cpu']}")
    return None


def _pod_level(node: Node, pod: Pod, change: PodResourcesResize | None
               ) -> PodResources | None:
    """RESIZE-8: the pod-level resources the resized pod will have, once the API server's
    checks of a resize that concerns them pass."""
    gates = node.config.gates()
    minor = node.version.minor
    new = None
    if change is not None:
        new = PodResources.of(requests=change.requests, limits=change.limits,
                              where="resources")
        if not gates.get("PodLevelResources", False):
            # QOS-4: with PodLevelResources off the API server drops the field.
            new = None
    old = pod.resources
    if old is None and new is None:
        return None
    if minor <= 34:
        raise InvalidFieldError("pods with pod-level resources cannot be resized",
                                where="uid" if change is None else "resources")
    if not gates.get("InPlacePodLevelResourcesVerticalScaling", False):
        raise InvalidFieldError(
            "resize of pods with pod-level resources is forbidden when "
            "InPlacePodLevelResourcesVerticalScaling is disabled",
            where="uid" if change is None else "resources")
    if minor == 35:
        raise NotModelledError(f"InPlacePodLevelResourcesVerticalScaling turned on in kubelet "
                               f"{node.version} (alpha) is not modelled",
                               where="config.featureGates")
    if new is None:
        return old
    if old is None and not new.is_set():
        raise InvalidFieldError("only cpu and memory resources are mutable (an empty "
                                "pod-level resources object)", where="resources")
    return new


def _check_pod_level_change(old: PodResources, new: PodResources) -> None:
    """RESIZE-8: ``validatePodLevelResourcesResize``: no pod-level request or limit taken
    away, and only cpu and memory changed."""
    for field, before, after in (("requests", old.requests, new.requests),
                                 ("limits", old.limits, new.limits)):
        gone = sorted(set(before) - set(after))
        if gone:
            raise InvalidFieldError(f"pod-level resource {field} cannot be removed "
                                    f"({gone[0]})", where=f"resources.{field}")
        for name in set(before) | set(after):
            if name not in _RESIZABLE and before.get(name) != after.get(name):
                raise InvalidFieldError("only cpu and memory resources are mutable at "
                                        f"pod-level ({name})", where=f"resources.{field}")


def _check_supported(node: Node) -> None:
    """RESIZE-3: the releases and gates where kubelet resizes pods, and what numaspec leaves
    out."""
    gates = node.config.gates()
    version = node.version
    # RESIZE-3: from 1.38 the gate is gone (naming it stops kubelet: VER-2) and kubelet
    # always evaluates a resize.
    if not version.resize_without_gate and not gates.get("InPlacePodVerticalScaling", False):
        raise InvalidFieldError(
            f"kubelet {version} with InPlacePodVerticalScaling off never evaluates a resize "
            "(and an API server with it off refuses the change)", where="op")
    if version.minor < 33:
        raise NotModelledError(f"the alpha in-place resize of kubelet {version} is not "
                               "modelled", where="op")
    for gate in ("InPlacePodVerticalScalingExclusiveCPUs",
                 "InPlacePodVerticalScalingExclusiveMemory"):
        if gates.get(gate, False):
            raise NotModelledError(f"{gate} (resizing exclusive CPUs or memory) is not "
                                   "modelled", where="config.featureGates")
    if node.affinity_labels is not None:
        raise NotModelledError("a resize on a node running NUMA-level inter-pod affinity is "
                               "not modelled", where="op")


def resize(node: Node, uid: str, changes: Sequence[ContainerResize],
           pod_resources: PodResourcesResize | None = None) -> ResizeResult:
    """RESIZE-1..RESIZE-8: ask ``node`` to resize its live pod ``uid``: the containers named
    in ``changes`` and, given ``pod_resources``, the pod-level resources.

    Accepted (``InProgress``), the node counts the pod with its new requests from then on;
    its exclusive CPUs, memory blocks and devices do not change (RESIZE-6).  Refused, nothing
    changes.  Bad input raises a typed error and leaves the node as it was."""
    pod = node.pods.get(uid)
    if pod is None:
        raise UnknownPodError(f"no pod {uid!r} on the node", where="uid")
    _check_supported(node)
    resources = _pod_level(node, pod, pod_resources)
    desired = _desired(node, pod, changes, resources)
    if desired == pod:
        return ResizeResult("Unchanged")
    _beyond_allocatable(node, desired)
    message = _infeasible(node, pod, desired)
    if message is not None:
        return ResizeResult("Infeasible", message=message)
    refusal = node.readmit(desired, resize_operation=node.version.minor >= 37)
    if refusal is not None:
        return ResizeResult("Deferred", refusal.reason, refusal.message)
    return ResizeResult("InProgress")
