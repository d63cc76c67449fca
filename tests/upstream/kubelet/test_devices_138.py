"""Kubelet 1.38 (read at 1.38.0-beta.0) for the Device Manager.

DEV-12: every device hint carries a utilization score: of the resource's healthy devices with
a NUMA node in the mask, the share allocated (the requesting pod's own devices included);
unhealthy devices and devices without topology never count.  Checked against the answers
worked out by reading kubelet 1.38.0-beta.0 (``calculateDeviceScore``) and against its own
node probe; NWIRE-4 gives the scores in the hints answer.  DEV-1..DEV-11 hold unchanged at
1.38: every node and hints vector of devices.json, retargeted to 1.38, is compared with the
probe (up to the step where numaspec's tie-break chose devices' NUMA nodes, DEV-6).

The 1.37 side is the vector dev-3-three-pods-unhealthy-and-no-topology; the scores here are
what it will hold at 1.38 once the node model holds 1.38.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from numaspec.conformance.cases.vectors import Vector
from numaspec_tools import vector_pieces
from numaspec_tools.testing.node_138 import (
    VECTORS,
    at_release,
    create,
    disagreements,
    hints_of,
    reference,
    vector_steps,
)

DEV = "example.com/dev"
SCENARIO = "dev-3-three-pods-unhealthy-and-no-topology"


def test_device_scores_worked_example() -> None:
    """DEV-12 on d0, d1 (NUMA 0), d2, unhealthy d3 (NUMA 1) and d4 (no topology): A's hints
    all score 1; after A, B's {0} 50 (1 of 2), {1} 1 (d2 free, d3 not counted), {0,1} 33 (1
    of 3); after B, A's regenerated hints {0} 100 and {0,1} 66 (its own device counts); C's
    {1} 1 and {0,1} 66."""
    answers = reference(vector_steps(SCENARIO))
    assert hints_of(answers[1], DEV) == [((0,), True, 1), ((0, 1), False, 1), ((1,), True, 1)]
    assert hints_of(answers[3], DEV) == [((0,), True, 50), ((0, 1), False, 33),
                                         ((1,), True, 1)]
    assert hints_of(answers[5], DEV) == hints_of(answers[6], DEV) == [
        ((0,), True, 100), ((0, 1), False, 66)]
    assert hints_of(answers[7], DEV) == [((0, 1), False, 66), ((1,), True, 1)]
    assert answers[9] == answers[10] == {"hints": {DEV: []}}
    before = reference(vector_steps(SCENARIO, "1.37"))
    assert all("score" not in h for a in before if "hints" in a
               for listed in a["hints"].values() for h in listed or ())
    assert disagreements(vector_steps(SCENARIO)) == []


def test_an_unhealthy_device_is_not_counted() -> None:
    """DEV-12: with d3 healthy, C's {1} still scores 1 (d3 free), but {0,1} 2 of 4: 50."""
    steps = vector_steps(SCENARIO)
    devices = steps[0]["node"]["machine"]["devices"][DEV]
    for device in devices:
        device.pop("healthy", None)
    answers = reference(steps)
    assert hints_of(answers[7], DEV) == [((0, 1), False, 50), ((1,), True, 1)]
    assert disagreements(steps) == []


def _machine(devices: list[dict[str, Any]]) -> dict[str, Any]:
    return {"numaNodes": [{"id": n, "memory": "4Gi", "cores": [
        {"socket": 0, "threads": [2 * n]}, {"socket": 0, "threads": [2 * n + 1]}]}
        for n in (0, 1, 2)], "devices": {DEV: devices}}


def _pod(uid: str, count: int, *, inits: int = 0) -> dict[str, Any]:
    pod: dict[str, Any] = {"uid": uid, "containers": [
        {"name": "c", "resources": {"limits": {DEV: str(count)}}}]}
    if inits:
        pod["initContainers"] = [{"name": "i", "resources": {"limits": {DEV: str(inits)}}}]
    return pod


def test_a_device_on_two_nodes_counts_once() -> None:
    """DEV-12: a device on NUMA 0 and 1 counts once for every mask it touches; pod scope
    regenerates from the pod's devices, scored with them held."""
    machine = _machine([{"id": "a", "numa": [0, 1]}, {"id": "b", "numa": [1]},
                        {"id": "c", "numa": [2]}, {"id": "d", "numa": [2]}])
    steps: list[dict[str, Any]] = [
        create(machine, {"topologyManagerPolicy": "best-effort",
                         "topologyManagerScope": "pod"}),
        {"op": "admit", "pod": _pod("p", 1)},
        {"op": "hints", "pod": _pod("q", 1)},
        {"op": "hints", "pod": _pod("p", 1)},
        {"op": "hints", "pod": _pod("r", 2)},
        {"op": "state"}]
    answers = reference(steps)
    assert answers[1]["decision"]["containers"][0]["devices"][DEV] == ["a"]
    # healthy devices per mask: {0}: a; {1}: a, b; {2}: c, d; a is held.  q has no {0}
    # (nothing free there); p regenerates from a, so only masks touching NUMA 0 or 1.
    assert hints_of(answers[2], DEV) == [
        ((0, 1), False, 50), ((0, 1, 2), False, 25), ((0, 2), False, 33), ((1,), True, 50),
        ((1, 2), False, 25), ((2,), True, 1)]
    assert hints_of(answers[3], DEV) == [
        ((0,), True, 100), ((0, 1), False, 50), ((0, 1, 2), False, 25), ((0, 2), False, 33),
        ((1,), True, 50), ((1, 2), False, 25)]
    assert hints_of(answers[4], DEV) == [
        ((0, 1, 2), False, 25), ((0, 2), False, 33), ((1, 2), False, 25), ((2,), True, 1)]
    assert disagreements(steps) == []


def test_reused_init_device_counts_once() -> None:
    """DEV-12: a regular init container's device, reused by its app container, is one
    allocated device, counted once in the container's and the pod's regenerated hints and in
    another pod's."""
    machine = _machine([{"id": "a", "numa": [0]}, {"id": "b", "numa": [0]},
                        {"id": "c", "numa": [1]}])
    steps: list[dict[str, Any]] = [
        create(machine, {"topologyManagerPolicy": "restricted"}),
        {"op": "admit", "pod": _pod("p", 1, inits=1)},
        {"op": "hints", "pod": _pod("p", 1, inits=1), "container": "c"},
        {"op": "hints", "pod": _pod("p", 1, inits=1)},
        {"op": "hints", "pod": _pod("q", 1), "container": "c"},
        {"op": "state"}]
    answers = reference(steps)
    assert answers[1]["decision"]["containers"][1]["devices"][DEV] == ["a"]
    assert hints_of(answers[2], DEV) == hints_of(answers[3], DEV) == [
        ((0,), True, 50), ((0, 1), False, 33)]
    assert hints_of(answers[4], DEV) == [((0,), True, 50), ((0, 1), False, 33),
                                         ((1,), True, 1)]
    assert disagreements(steps) == []


def test_restart_window_has_no_scores() -> None:
    """DEV-11 at 1.38: in the restart window the resource's hints are null, so no score;
    once its plugin registers, scored hints again, the checkpoint's devices held."""
    steps = vector_steps(SCENARIO)[:5]
    steps += [{"op": "restart", "unregistered": [DEV]},
              {"op": "hints", "pod": _pod("X", 1), "container": "c"},
              {"op": "register", "resource": DEV},
              {"op": "hints", "pod": _pod("X", 1), "container": "c"}]
    answers = reference(steps)
    assert answers[6] == {"hints": {DEV: None}}
    assert hints_of(answers[8], DEV) == [((0, 1), False, 66), ((1,), True, 1)]
    assert disagreements(steps) == []


def _device_vectors() -> list[Vector]:
    return [v for v in VECTORS.values() if v.op in ("node", "hints")
            and vector_pieces.stem(v.source) in ("devices", "device-preferred")
            and v.kubelet_version]


@pytest.mark.parametrize("vector", _device_vectors(), ids=lambda v: v.id)
def test_vector_at_138_agrees_with_kubelet(vector: Vector) -> None:
    """DEV-1..DEV-12: the vector's session at 1.38, the reference against kubelet
    1.38.0-beta.0's probe (hints with their scores)."""
    assert disagreements(at_release(copy.deepcopy(vector.case["steps"]))) == []
