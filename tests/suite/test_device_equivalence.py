"""RUN-12: node answers are compared up to devices that report the same NUMA nodes.

The equivalence accepts an implementation that takes other devices of the same class (the
permutation mutant, as kubelet's Go map order does) on every device vector, where comparing
ids would not, and rejects one that puts a container's devices on other NUMA nodes (the
unaligned-first mutant, DEV-4 broken).  A refusal naming one of several device resources is
compared up to which one (kubelet walks a container's limits in map order)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from numaspec.conformance.cases.device_equivalence import (
    DeviceEquivalence,
    device_numa,
    normalize_devices,
)
from numaspec.conformance.cases.judges import compare
from numaspec.conformance.cases.vectors import Vector, load_vectors
from numaspec_tools.mutants.device_mutants import PermutedDevices, UnalignedFirst

DEVICE_VECTORS = [v for v in load_vectors() if v.op in ("node", "hints") and any(
    s.get("op") == "create" and s["node"]["machine"].get("devices") for s in v.case["steps"])]


def _run(impl: Any, vector: Vector) -> dict[str, Any]:
    return {"answers": [impl.handle(step) for step in vector.case["steps"]]}


@pytest.mark.parametrize("vector", DEVICE_VECTORS, ids=lambda v: v.id)
def test_a_permutation_within_classes_is_the_same_answer(vector: Vector) -> None:
    got = _run(PermutedDevices(), vector)
    assert compare(vector.op, vector.case, vector.expected, got) == []


def test_the_permutation_changes_ids() -> None:
    """Not vacuous: on some vectors the permuted ids differ from the recorded ones."""
    changed = [v.id for v in DEVICE_VECTORS
               if _run(PermutedDevices(), v) != v.expected]
    assert len(changed) >= 10, changed


def test_other_numa_nodes_are_another_answer() -> None:
    vector = next(v for v in DEVICE_VECTORS if v.id == "node-remove-frees-everything")
    differences = compare(vector.op, vector.case, vector.expected,
                          _run(UnalignedFirst(), vector))
    assert differences
    assert "devices" in " ".join(differences)


def test_the_unaligned_mutant_is_caught_on_several_vectors() -> None:
    caught = [v.id for v in DEVICE_VECTORS
              if compare(v.op, v.case, v.expected, _run(UnalignedFirst(), v))]
    assert len(caught) >= 3, caught


CREATE = {"op": "create", "node": {"machine": {"devices": {
    "a.com/x": [{"id": "x0", "numa": [0]}, {"id": "x1", "numa": [0]}, {"id": "x2", "numa": [1]},
                {"id": "x3"}],
    "a.com/y": [{"id": "y0", "numa": [0, 1]}]}}}}


def _decision(devices: dict[str, list[str]], message: str = "") -> dict[str, Any]:
    return {"decision": {"admitted": not message, "reason": "", "message": message,
                         "containers": [{"name": "c", "devices": devices}]}}


def test_counts_per_numa_node_set() -> None:
    numa = device_numa(CREATE)
    assert numa["a.com/x"] == {"x0": (0,), "x1": (0,), "x2": (1,), "x3": ()}
    same = normalize_devices(numa, _decision({"a.com/x": ["x0", "x2"]}))
    assert same == normalize_devices(numa, _decision({"a.com/x": ["x1", "x2"]}))
    assert same != normalize_devices(numa, _decision({"a.com/x": ["x0", "x1"]}))
    assert same != normalize_devices(numa, _decision({"a.com/x": ["x0", "x3"]}))
    # an id the machine does not list is never equal to a listed one
    assert same != normalize_devices(numa, _decision({"a.com/x": ["x0", "x9"]}))


def test_state_keeps_healthy_ids() -> None:
    numa = device_numa(CREATE)

    def state(allocated: list[str], healthy: list[str]) -> dict[str, Any]:
        return {"state": {"devices": {
            "allocated": {"a.com/x": allocated}, "healthy": {"a.com/x": healthy},
            "assignments": {"p": {"c": {"a.com/x": allocated}}}}}}
    assert normalize_devices(numa, state(["x0"], ["x0", "x1"])) == \
        normalize_devices(numa, state(["x1"], ["x0", "x1"]))
    assert normalize_devices(numa, state(["x0"], ["x0", "x1"])) != \
        normalize_devices(numa, state(["x0"], ["x0", "x2"]))


def test_a_refusal_naming_one_of_several_resources() -> None:
    eq = DeviceEquivalence()
    eq(CREATE, {"ok": True})
    both = {"op": "admit", "pod": {"uid": "p", "containers": [
        {"name": "c", "resources": {"limits": {"a.com/x": "4", "a.com/y": "2"}}}]}}
    one = {"op": "admit", "pod": {"uid": "p", "containers": [
        {"name": "c", "resources": {"limits": {"a.com/x": "5"}}}]}}
    x = ("Allocate failed due to requested number of devices unavailable for a.com/x. "
         "Requested: 4, Available: 3, which is unexpected")
    y = ("Allocate failed due to requested number of devices unavailable for a.com/y. "
         "Requested: 2, Available: 1, which is unexpected")
    assert eq(both, _decision({}, x)) == eq(both, _decision({}, y))
    assert eq(one, _decision({}, x)) != eq(one, _decision({}, y))
    assert json.dumps(eq(both, {"error": {"kind": "invalid-field"}})) == \
        '{"error": {"kind": "invalid-field"}}'
