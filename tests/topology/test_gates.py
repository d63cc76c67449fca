"""VER-2 and VER-4: the per-release feature gate table and kubelet's start-up check of the
configuration's gates, in the merge path and the node model."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

from numaspec import KubeletVersion
from numaspec.errors import InvalidFieldError
from numaspec.topology.gates import (
    default_gates,
    gate_enabled,
    gate_errors,
    gate_source,
    known_gates,
    last_known_in,
)
from numaspec.topology.versions import NEWEST, OLDEST

_PANIC = ("failed to merge global and in-flight KubeletConfiguration while setting defaults, "
          "error: ")
_TM_GATES = ("TopologyManagerPolicyOptions", "TopologyManagerPolicyAlphaOptions",
             "TopologyManagerPolicyBetaOptions")


def _v(minor: int) -> KubeletVersion:
    return KubeletVersion(minor)


def _kubelet_text(minor: int, text: str) -> str:
    return _PANIC + text if minor >= 32 else text


def test_the_table_covers_every_modelled_release_from_a_named_module() -> None:  # VER-2
    raw = json.loads(resources.files("numaspec.data").joinpath("feature-gates.json")
                     .read_text("utf-8"))
    assert sorted(raw["releases"], key=lambda m: int(m.split(".")[1])) == [
        f"1.{m}" for m in range(OLDEST.minor, NEWEST.minor + 1)]
    for minor in range(OLDEST.minor, NEWEST.minor + 1):
        source = gate_source(_v(minor))
        assert source.startswith(f"k8s.io/kubernetes@v1.{minor}.")
        gates = known_gates(_v(minor))
        assert {"AllAlpha", "AllBeta"} <= set(gates)
        assert len(gates) > 100
        for spec in gates.values():
            assert spec.pre_release in ("alpha", "beta", "GA", "deprecated", "pre-alpha")
            assert set(spec.dependencies) <= set(gates)


def test_topology_manager_gates_as_the_rule_tabulates() -> None:  # VER-2
    for minor in range(18, 26):
        assert not set(_TM_GATES) & set(known_gates(_v(minor)))
    for minor in (26, 27):
        assert {g: default_gates(_v(minor))[g] for g in _TM_GATES} == dict.fromkeys(
            _TM_GATES, False)
    for minor in range(28, 38):
        defaults = default_gates(_v(minor))
        assert {g: defaults[g] for g in _TM_GATES} == {
            "TopologyManagerPolicyOptions": True, "TopologyManagerPolicyAlphaOptions": False,
            "TopologyManagerPolicyBetaOptions": True}
        locked = known_gates(_v(minor))["TopologyManagerPolicyOptions"].lock_to_default
        assert locked == (minor >= 36)


def test_defaults_are_the_table_without_pre_alpha_gates() -> None:  # VER-2
    for minor in (18, 30, 31, 37):
        gates = known_gates(_v(minor))
        assert default_gates(_v(minor)) == {
            name: spec.default for name, spec in gates.items() if spec.pre_release != "pre-alpha"}
        # gate_enabled answers from the same defaults when the configuration sets nothing
        assert all(gate_enabled({}, _v(minor), name) is default
                   for name, default in default_gates(_v(minor)).items())
        assert not gate_enabled({}, _v(minor), "NoSuchGate")


@pytest.mark.parametrize("minor", range(18, 38))
def test_the_defaults_themselves_are_accepted(minor: int) -> None:  # VER-2
    assert gate_errors(default_gates(_v(minor)), _v(minor)) == []
    assert gate_errors({}, _v(minor)) == []


@pytest.mark.parametrize("minor", [18, 23, 30, 31, 32, 37])
def test_an_unknown_gate_stops_kubelet(minor: int) -> None:  # VER-2, VER-4
    [error] = gate_errors({"NoSuchGate": True}, _v(minor))
    assert error.kind == "invalid-field"
    assert error.where == "feature_gates.NoSuchGate"
    assert error.kubelet_message == _kubelet_text(minor, "unrecognized feature gate: NoSuchGate")


def test_a_removed_gate_is_unknown_and_the_message_says_since_when() -> None:  # VER-2
    removed = [(minor, name) for minor in range(19, 38)
               for name in known_gates(_v(minor - 1)) if name not in known_gates(_v(minor))]
    assert removed, "no gate was ever removed?"
    minor, name = removed[-1]
    [error] = gate_errors({name: True}, _v(minor))
    assert error.kubelet_message == _kubelet_text(minor, f"unrecognized feature gate: {name}")
    assert error.message.endswith(f"(removed after kubelet 1.{minor - 1})")
    assert last_known_in(name, _v(minor)) == _v(minor - 1)


def test_a_locked_gate_set_against_its_lock() -> None:  # VER-2
    for minor in range(18, 38):
        locked = sorted(n for n, s in known_gates(_v(minor)).items() if s.lock_to_default)
        if not locked:
            continue
        name = locked[0]
        default = known_gates(_v(minor))[name].default
        [error] = gate_errors({name: not default}, _v(minor))
        text = (f"cannot set feature gate {name} to {str(not default).lower()}, feature is "
                f"locked to {str(default).lower()}")
        assert error.kubelet_message == _kubelet_text(minor, text)
        assert gate_errors({name: default}, _v(minor)) == []  # the locked value is fine


def _locked_pair(minor: int) -> tuple[str, str]:
    locked = sorted(n for n, s in known_gates(_v(minor)).items()
                    if s.lock_to_default and s.default)
    return locked[0], locked[1]


@pytest.mark.parametrize("minor", [30, 31, 32, 37])
def test_several_refused_gates(minor: int) -> None:  # VER-4
    first, second = _locked_pair(minor)
    gates = {first: False, second: False, "ZZZUnknown": True, "ZZZZUnknown": True}
    errors = gate_errors(gates, _v(minor))
    one = f"cannot set feature gate {first} to false, feature is locked to true"
    two = f"cannot set feature gate {second} to false, feature is locked to true"
    if minor <= 30:  # the first refusal met stops the check
        assert [e.where for e in errors] == [f"feature_gates.{first}"]
        assert errors[0].kubelet_message == one
    else:  # collected, up to and including the first unknown gate
        assert [e.where for e in errors] == [f"feature_gates.{first}", f"feature_gates.{second}",
                                             "feature_gates.ZZZUnknown"]
        text = f"[{one}, {two}, unrecognized feature gate: ZZZUnknown]"
        assert {e.kubelet_message for e in errors} == {_kubelet_text(minor, text)}


def _dependency_example(minor: int) -> tuple[str, str]:
    gates = known_gates(_v(minor))
    return next((feature, dep) for feature, spec in sorted(gates.items())
                if spec.default and spec.dependencies
                for dep in spec.dependencies if not gates[dep].lock_to_default)


@pytest.mark.parametrize("minor", [35, 36, 37])
def test_an_enabled_gate_whose_dependency_is_off(minor: int) -> None:  # VER-2, VER-4
    feature, dep = _dependency_example(minor)
    errors = gate_errors({dep: False}, _v(minor))
    assert errors
    assert errors[0].where == f"feature_gates.{dep}"
    assert f"{feature} is enabled, but depends on features that are disabled: [{dep}]" in (
        errors[0].kubelet_message or "")
    # with the defaults merged in (as the node model passes them) the gate set off its
    # default is named, even where the dependent gate sorts first
    gates = known_gates(_v(minor))
    pair = next(((f, d) for f, spec in sorted(gates.items())
                 if spec.default for d in spec.dependencies
                 if f < d and not gates[d].lock_to_default and len(spec.dependencies) == 1
                 and sum(d in s.dependencies for s in gates.values()) == 1), None)
    if pair is not None:  # 1.37: DRADeviceTaintRules on DRADeviceTaints
        merged = {**default_gates(_v(minor)), pair[1]: False}
        [error] = gate_errors(merged, _v(minor))
        assert error.where == f"feature_gates.{pair[1]}"
    assert minor != 37 or pair is not None
    # switching the dependent gate off as well is accepted
    dependents = {f for f, s in known_gates(_v(minor)).items() if dep in s.dependencies}
    assert gate_errors({dep: False, **dict.fromkeys(dependents, False)}, _v(minor)) == []


def test_no_dependency_check_before_1_35() -> None:  # VER-2
    _feature, dep = _dependency_example(35)
    if dep in known_gates(_v(34)) and not known_gates(_v(34))[dep].lock_to_default:
        assert gate_errors({dep: False}, _v(34)) == []
    assert all(not s.dependencies for m in range(18, 35) for s in known_gates(_v(m)).values())


def _merge(minor: int, gates: dict[str, Any], policy: str = "restricted") -> Any:
    from numaspec.protocols.adapter_protocol import reference_result

    return reference_result("merge", {
        "kubelet_version": f"1.{minor}", "policy": policy, "numa_nodes": [0, 1],
        "feature_gates": gates,
        "providers": [{"cpu": [{"numa_affinity": [0], "preferred": True}]}]})


def test_the_merge_path_stops_at_a_refused_gate_before_the_policy_name() -> None:  # VER-2
    answer = _merge(37, {"NoSuchGate": True}, policy="Restricted")
    assert answer["error"]["kind"] == "invalid-field"
    assert answer["error"]["where"] == "feature_gates.NoSuchGate"
    assert answer["error"]["kubelet_message"] == _PANIC + "unrecognized feature gate: NoSuchGate"
    # a known gate at a value it may take does not change the merge
    assert _merge(30, {"CPUManagerPolicyAlphaOptions": True}) == _merge(30, {})


def test_the_node_stops_at_a_refused_gate() -> None:  # VER-2
    from numaspec.protocols.adapter_protocol import reference_result

    answer = reference_result("node", {"steps": [{"op": "create", "node": {
        "kubeletVersion": "1.33",
        "machine": {"numaNodes": [{"id": 0, "memory": "4Gi", "cores": [
            {"socket": 0, "threads": [0]}, {"socket": 0, "threads": [1]}]}]},
        "config": {"featureGates": {"NoSuchGate": True}}}}]})
    [step] = answer["answers"]
    assert step["error"]["kind"] == "invalid-field"
    assert step["error"]["where"] == "node.config.featureGates.NoSuchGate"


def test_errors_are_typed() -> None:  # VER-2
    errors = gate_errors({"NoSuchGate": False}, _v(20))
    assert all(isinstance(e, InvalidFieldError) for e in errors)
