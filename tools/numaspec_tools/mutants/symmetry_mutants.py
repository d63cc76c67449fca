"""A deliberately wrong symmetry reduction for the model checker (spec/conformance/checking.md,
CHECK-11): NUMA nodes 0 and 1 of the ``1x2x2x1`` machine taken as interchangeable because they
have the same cores, memory and device.  They are not: kubelet breaks ties by number (MASK-2,
CPU-10) and the configuration reserves CPU 0 and memory on NUMA node 0, so a state and its
mirror image do not have mirrored successors.  tests/suite/test_checking.py shows the checker's
soundness comparison catching it, and a violation it loses."""

from __future__ import annotations

from typing import Any

from numaspec.conformance.checking.symmetry import Key, canonical_key, renamed, split_state

__all__ = ["MIRROR_CPUS", "device_doubled_on_node_1", "kinds_confused_key", "mirrored",
           "numa_mirror_key", "renamed_pods"]

#: NUMA node 0 <-> 1 of ``1x2x2x1``: CPUs 0, 1 on node 0 and 2, 3 on node 1.
MIRROR_CPUS = {0: 2, 1: 3, 2: 0, 3: 1}
_DEVICES = {"dev0": "dev1", "dev1": "dev0"}
_NUMA = {0: 1, 1: 0}
_NUMA_KEYS = {"0": "1", "1": "0"}


def _cpus(value: Any) -> Any:
    return sorted(MIRROR_CPUS[c] for c in value) if isinstance(value, list) else value


def mirrored(state: Any) -> Any:
    """A ``state`` answer (NODE-8) of a ``1x2x2x1`` node with NUMA nodes 0 and 1 swapped:
    every CPU, device and NUMA node it names, the reserved CPUs included."""
    if not isinstance(state, dict):
        return state
    out = dict(state)
    cpu = state.get("cpu")
    if isinstance(cpu, dict):
        out["cpu"] = {**cpu, "defaultCpuSet": _cpus(cpu["defaultCpuSet"]),
                      "reservedCpuSet": _cpus(cpu.get("reservedCpuSet")),
                      "assignments": {uid: {name: _cpus(held) for name, held in ctrs.items()}
                                      for uid, ctrs in cpu["assignments"].items()}}
    memory = state.get("memory")
    if isinstance(memory, dict):
        out["memory"] = {
            **memory,
            "machineState": {_NUMA_KEYS[n]: {**table, "cells": sorted(
                _NUMA[c] for c in table["cells"])}
                for n, table in memory["machineState"].items()},
            "assignments": {uid: {name: [{**block, "numa": sorted(
                _NUMA[n] for n in block["numa"])} for block in blocks]
                for name, blocks in ctrs.items()}
                for uid, ctrs in memory["assignments"].items()}}
    devices = state["devices"]

    def ids(held: list[str]) -> list[str]:
        return sorted(_DEVICES.get(d, d) for d in held)

    out["devices"] = {
        **devices,
        "allocated": {r: ids(held) for r, held in devices["allocated"].items()},
        "healthy": {r: ids(held) for r, held in devices["healthy"].items()},
        "assignments": {uid: {name: {r: ids(held) for r, held in res.items()}
                              for name, res in ctrs.items()}
                        for uid, ctrs in devices["assignments"].items()}}
    return out


def _reservations(state: Any) -> Any:
    """The same state with the configuration's reservations (CPU 0, the memory reserved on
    NUMA node 0) left out: the mistake is to take the machine's shape for its symmetry."""
    if not isinstance(state, dict):
        return state
    out = dict(state)
    if isinstance(state.get("cpu"), dict):
        out["cpu"] = {k: v for k, v in state["cpu"].items() if k != "reservedCpuSet"}
        out["cpu"]["defaultCpuSet"] = [c for c in state["cpu"]["defaultCpuSet"]
                                       if c not in state["cpu"]["reservedCpuSet"]]
    if isinstance(state.get("memory"), dict):
        out["memory"] = {**state["memory"], "machineState": {
            n: {**table, "memoryMap": {t: {f: v for f, v in m.items()
                                           if f not in ("systemReserved", "allocatable",
                                                        "free")}
                                       for t, m in table["memoryMap"].items()}}
            for n, table in state["memory"]["machineState"].items()}}
    return out


def numa_mirror_key(answer: Any, live: frozenset[str]) -> Key:
    """The wrong reduction: the least of a state's canonical form (CHECK-11) and its
    mirror's, the reservations left out of both."""
    state = _reservations(answer.get("state") if isinstance(answer, dict) else answer)
    return min(canonical_key(state, live), canonical_key(mirrored(state), live))


def device_doubled_on_node_1(node: Any) -> None:
    """A node whose Device Manager, while NUMA node 1's device is held and node 0's free,
    hands NUMA node 1's out again (INV-4): a fault on one NUMA node only, in a state a
    reduction taking node 1 for node 0 need never expand."""
    devices = node.devices
    choose = devices._devices_to_allocate

    def chosen(pod_uid: str, name: str, resource: str, required: int, **given: Any
               ) -> frozenset[str]:
        held = devices.allocated(resource)
        if required == 1 and "dev1" in held and "dev0" not in held:
            return frozenset({"dev1"})
        return frozenset(choose(pod_uid, name, resource, required, **given))

    devices._devices_to_allocate = chosen


def kinds_confused_key(answer: Any, live: frozenset[str]) -> Key:
    """A wrong renaming: every pod taken for an instance of one kind, whatever its body (the
    kinds' bodies differ, so states that the node tells apart by what comes next are one)."""
    state = answer.get("state") if isinstance(answer, dict) else answer
    names = {uid: f"pod-{n}" for n, uid in enumerate(sorted(live), 1)}
    return canonical_key(renamed_pods(state, names), frozenset(names.values()))


def renamed_pods(state: Any, names: dict[str, str]) -> Any:
    """A ``state`` answer with its pods renamed (the parts ``split_state`` finds)."""
    rest, named = split_state(state)
    out = dict(rest) if isinstance(rest, dict) else rest
    for field, value in renamed(named, names).items():
        if field in ("pods", "reserved"):
            out[field] = value
        else:
            out[field] = {**rest[field], "assignments": value}
    return out
