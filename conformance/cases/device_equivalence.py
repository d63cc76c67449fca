"""RUN-12: node-protocol answers compared up to interchangeable devices.

Kubelet takes devices from a group in Go map order (DEV-6), numaspec the lowest ids first.
Two devices of one resource that report the same NUMA nodes are interchangeable for every
device rule (DEV-1..DEV-7 read a device's NUMA nodes and its health, never its id), and a
session never changes a device's health, so two answers that differ only by swapping such
devices are the same answer.  :func:`normalize_devices` makes that explicit: it replaces each
list of device ids of a decision (``containers[].devices``) and of a state (``allocated`` and
``assignments``) by the number of devices per NUMA node set, and keeps the ``healthy`` lists,
which are not a choice, as they are.  An id the machine does not list stays an id.

Kubelet allocates a container's device resources in the order it walks the container's limits,
a Go map; numaspec in name order.  When several of them cannot be allocated, the rejection
names whichever comes first, so for a pod with a container asking for more than one device
resource the device part of an ``UnexpectedAdmissionError`` message is compared up to which
resource (and its counts) it names.

Where a group holds devices on different NUMA node sets and only part of it is taken, the
choice changes which NUMA nodes a container's devices are on, and with it later hints: that is
not covered here (spec/conformance/findings.md, F-DEV-CHOICE); the reference lists such choices in
``DeviceManager.numa_choices``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["DeviceEquivalence", "device_numa", "normalize_devices"]

#: resource -> device id -> the NUMA nodes it reports (sorted; empty: no topology).
DeviceNuma = Mapping[str, Mapping[str, tuple[int, ...]]]


def device_numa(create: Any) -> dict[str, dict[str, tuple[int, ...]]]:
    """The devices of a ``create`` request's machine; ``{}`` for anything else."""
    node = create.get("node") if isinstance(create, dict) else None
    machine = node.get("machine") if isinstance(node, dict) else None
    devices = machine.get("devices") if isinstance(machine, dict) else None
    out: dict[str, dict[str, tuple[int, ...]]] = {}
    if not isinstance(devices, dict):
        return out
    for resource, listed in devices.items():
        if not isinstance(listed, list):
            continue
        found: dict[str, tuple[int, ...]] = {}
        for device in listed:
            if isinstance(device, dict) and isinstance(device.get("id"), str):
                numa = device.get("numa") or []
                found[device["id"]] = tuple(sorted(n for n in numa if isinstance(n, int)))
        out[str(resource)] = found
    return out


def _counts(numa: DeviceNuma, resource: str, ids: Any) -> Any:
    """``ids`` of ``resource`` as ``[[numa nodes, count], ...]`` sorted; ids unknown to the
    machine stay ``["id", id]`` entries."""
    if not isinstance(ids, list):
        return ids
    known = numa.get(resource, {})
    counts: dict[tuple[int, ...], int] = {}
    unknown: list[Any] = []
    for device in ids:
        if isinstance(device, str) and device in known:
            counts[known[device]] = counts.get(known[device], 0) + 1
        else:
            unknown.append(["id", device])
    return [[list(k), v] for k, v in sorted(counts.items())] + sorted(unknown, key=repr)


def _per_resource(numa: DeviceNuma, held: Any) -> Any:
    if not isinstance(held, dict):
        return held
    return {r: _counts(numa, r, ids) for r, ids in held.items()}


#: DEV-4's refusals that name one device resource.
_NAMES_A_RESOURCE = (
    re.compile(r"requested number of devices unavailable for \S+?\. Requested: \d+, "
               r"Available: \d+"),
    re.compile(r"no healthy devices present; cannot allocate unhealthy devices [^\s,]+"),
    re.compile(r"previously allocated devices are no longer healthy; cannot allocate "
               r"unhealthy devices [^\s,]+"),
)


def _asks_several(numa: DeviceNuma, request: Any) -> bool:
    """Whether the request's pod has a container whose limits name several device
    resources of the machine."""
    pod = request.get("pod") if isinstance(request, dict) else None
    if not isinstance(pod, dict):
        return False
    for key in ("initContainers", "containers"):
        for container in pod.get(key) or []:
            resources = container.get("resources") if isinstance(container, dict) else None
            limits = resources.get("limits") if isinstance(resources, dict) else None
            if isinstance(limits, dict) and sum(1 for r in limits if r in numa) > 1:
                return True
    return False


def normalize_devices(numa: DeviceNuma, answer: Any, request: Any = None) -> Any:
    """``answer`` (a node-protocol answer to ``request``) with its device choices counted per
    NUMA node set, and the resource a refusal names blanked where the pod's container asks
    for several (RUN-12); every other part unchanged.  Never raises on a malformed answer."""
    if not isinstance(answer, dict) or len(answer) != 1:
        return answer
    if isinstance(answer.get("decision"), dict):
        decision = dict(answer["decision"])
        if isinstance(decision.get("message"), str) and _asks_several(numa, request):
            for pattern in _NAMES_A_RESOURCE:
                decision["message"] = pattern.sub(
                    "a refusal naming one of the container's device resources",
                    decision["message"])
        if isinstance(decision.get("containers"), list):
            decision["containers"] = [
                {**c, "devices": _per_resource(numa, c["devices"])}
                if isinstance(c, dict) and "devices" in c else c
                for c in decision["containers"]]
        return {"decision": decision}
    state = answer.get("state")
    if isinstance(state, dict) and isinstance(state.get("devices"), dict):
        devices = dict(state["devices"])
        if "allocated" in devices:
            devices["allocated"] = _per_resource(numa, devices["allocated"])
        if isinstance(devices.get("assignments"), dict):
            devices["assignments"] = {
                uid: {name: _per_resource(numa, held) for name, held in containers.items()}
                if isinstance(containers, dict) else containers
                for uid, containers in devices["assignments"].items()}
        return {"state": {**state, "devices": devices}}
    return answer


def normalize_session(steps: Sequence[Any], answers: Sequence[Any]) -> list[Any]:
    """Every answer of a session normalized with the machine of the create step before it."""
    numa: DeviceNuma = {}
    out = []
    for index, answer in enumerate(answers):
        step = steps[index] if index < len(steps) else None
        if isinstance(step, dict) and step.get("op") == "create":
            numa = device_numa(step)
        out.append(normalize_devices(numa, answer, step))
    return out


class DeviceEquivalence:
    """A stateful ``normalize(request, answer)`` for one session at a time: it learns the
    machine's devices from each ``create`` request it sees."""

    def __init__(self) -> None:
        self.numa: DeviceNuma = {}

    def __call__(self, request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        if request.get("op") == "create":
            self.numa = device_numa(request)
        normalized: dict[str, Any] = normalize_devices(self.numa, answer, request)
        return normalized
