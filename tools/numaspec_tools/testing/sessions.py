"""The comparison a node differential makes (tests/upstream/kubelet/test_node_differential.py
and every test that replays node vectors against kubelet's node probe): devices up to RUN-12's
equivalence, decisions whole, and of the state what both sides report."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numaspec.conformance.cases.device_equivalence import DeviceEquivalence


def normalizer() -> Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]:
    """A normalizer for one session at a time (it learns each machine's devices from the
    create request): devices up to RUN-12's equivalence, then :func:`normalize`."""
    devices = DeviceEquivalence()

    def both(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        return normalize(request, devices(request, answer))
    return both


def _scalar_resources(pod: dict[str, Any]) -> set[str]:
    """The hugepages and extended resources any container of ``pod`` asks for."""
    names: set[str] = set()
    for container in [*pod.get("initContainers", []), *pod.get("containers", [])]:
        for amounts in (container.get("resources") or {}).values():
            names.update(n for n in amounts if n not in ("cpu", "memory", "ephemeral-storage"))
    return names


def normalize(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """Compare what both sides report: decisions whole; of the state, the CPU Manager's
    shared pool and assignments, the Memory Manager's tables and blocks and the Device
    Manager's state; of an error, only that it is one (the probe reports kubelet's own error
    texts).

    ADMIT-8: the fit handler checks hugepages and extended resources in Go map order, so
    when a pod asks for several of them and does not fit, which one kubelet names varies
    from run to run (numaspec names the first by name): such a refusal is compared as
    "out of one of them"."""
    if "error" in answer:
        return {"error": True}
    decision = answer.get("decision")
    pod = request.get("pod") or {}
    scalars = _scalar_resources(pod)
    if (decision and len(scalars) > 1
            and decision.get("reason", "").removeprefix("OutOf") in scalars):
        return {"decision": {**decision, "reason": "OutOf<one of several scalars>",
                             "message": "<the one kubelet met first>"}}
    if "state" in answer:
        state = answer["state"]
        cpu = state.get("cpu") or {}
        memory = state.get("memory") or {}
        # With the none CPU policy kubelet's state is an empty pool; the reference has none.
        return {"cpu": {k: cpu.get(k) for k in ("defaultCpuSet", "assignments")}
                if cpu and cpu.get("defaultCpuSet") else None,
                "memory": {k: memory.get(k) for k in ("machineState", "assignments")}
                if memory.get("machineState") else None,
                "devices": state.get("devices")}
    return answer
