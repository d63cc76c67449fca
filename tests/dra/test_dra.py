"""DRA device co-placement (spec chapter dra.md): worked examples of the reference's allocator,
its refusals, the judge of an answer under any pool order, and mutants that prove the two
properties can fail."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numaspec.conformance.cases.allocations import allocation_differences
from numaspec.conformance.cases.vectors import load_vectors
from numaspec.conformance.implementations.adapter import ReferenceImplementation
from numaspec.conformance.implementations.strict import StrictChecker
from numaspec.conformance.properties.allocate import (
    allocation_is_sound,
    allocation_matches_reference,
)
from numaspec.conformance.properties.allocate_malformed import (
    FAULTS,
    malformed_cases_refused,
    nested_loops,
    well_formed,
)
from numaspec.conformance.properties.random_cases import CaseShape
from numaspec.conformance.running.differential import differential
from numaspec.errors import InvalidFieldError, NotModelledError
from numaspec.protocols.adapter_protocol import reference_result
from numaspec.protocols.allocate_protocol import reference_allocate
from numaspec_tools import REPO
from numaspec_tools.mutants.allocate_mutants import MutantAllocator

ROOT = "resource.kubernetes.io/pcieRoot"


def _slice(name: str, driver: str, devices: list[dict[str, Any]], *, pool: str = "node-a",
           count: int = 1, generation: int = 0, node: str = "node-a") -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {
        "driver": driver, "nodeName": node, "devices": devices,
        "pool": {"name": pool, "generation": generation, "resourceSliceCount": count}}}


def _class(name: str, driver: str) -> dict[str, Any]:
    return {"metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}}


def _claim(requests: list[dict[str, Any]], constraints: list[dict[str, Any]] | None = None,
           name: str = "pair") -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"devices": devices}}


def _exact(name: str, class_name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": class_name, **extra}}


GPUS = [{"name": f"gpu-{i}", "attributes": {ROOT: {"string": f"pci-{i // 2}"},
                                            "numa": {"int": i // 2}}} for i in range(4)]
NICS = [{"name": f"nic-{i}", "attributes": {ROOT: {"string": f"pci-{(3 - i) // 2}"},
                                            "numa": {"int": (3 - i) // 2}}} for i in range(4)]


def _node(claims: list[dict[str, Any]], *, allocated: tuple[str, ...] = (),
          release: str = "1.37", features: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"release": release, "features": list(features), "node": {"name": "node-a"},
            "slices": [_slice("gpus", "gpu.example.com", GPUS),
                       _slice("nics", "nic.example.com", NICS)],
            "classes": [_class("gpu", "gpu.example.com"), _class("nic", "nic.example.com")],
            "allocated": list(allocated), "claims": claims}


def _picks(answer: dict[str, Any]) -> list[list[str]]:
    assert answer["outcome"] == "allocated", answer
    return [[f"{d['request']}={d['device']}" for d in c["devices"]] for c in answer["claims"]]


PAIR = _claim([_exact("gpu", "gpu"), _exact("nic", "nic")],
              [{"requests": ["gpu", "nic"], "matchAttribute": ROOT}])


def test_gpu_and_nic_on_one_pcie_root() -> None:
    """DRA-6, DRA-7: gpu-0 is taken first; the NIC under its root is nic-2 (nic-0 and nic-1
    are under the other root)."""
    assert _picks(reference_result("allocate", _node([PAIR]))) == [["gpu=gpu-0", "nic=nic-2"]]


def test_the_pair_moves_when_the_first_gpu_is_taken() -> None:
    """DRA-7: an allocated device is skipped; the constraint still holds."""
    answer = reference_result("allocate", _node([PAIR], allocated=(
        "gpu.example.com/node-a/gpu-0",)))
    assert _picks(answer) == [["gpu=gpu-1", "nic=nic-2"]]


def test_backtracks_to_the_other_root() -> None:
    """DRA-7: with both NICs under root 0 taken, the search gives gpu-0 back and pairs
    under root 1."""
    answer = reference_result("allocate", _node([PAIR], allocated=(
        "nic.example.com/node-a/nic-2", "nic.example.com/node-a/nic-3")))
    assert _picks(answer) == [["gpu=gpu-2", "nic=nic-0"]]


def test_no_node_local_pair_left_is_unschedulable() -> None:
    """DRA-9: every root has lost its NICs or its GPUs: no assignment exists."""
    answer = reference_result("allocate", _node([PAIR], allocated=(
        "nic.example.com/node-a/nic-2", "nic.example.com/node-a/nic-3",
        "gpu.example.com/node-a/gpu-2", "gpu.example.com/node-a/gpu-3")))
    assert answer == {"outcome": "unschedulable", "variant": "stable"}


def test_two_devices_on_one_numa_node() -> None:
    """DRA-6: numa as the driver's own attribute, named with its domain."""
    claim = _claim([_exact("gpus", "gpu", count=2)],
                   [{"matchAttribute": "gpu.example.com/numa"}])
    answer = reference_result("allocate", _node([claim], allocated=(
        "gpu.example.com/node-a/gpu-1",)))
    assert _picks(answer) == [["gpus=gpu-2", "gpus=gpu-3"]]


def test_all_takes_every_device_and_fails_if_one_is_in_use() -> None:
    """DRA-4: All lists every selectable device; one in use and there is no answer."""
    claim = _claim([{"name": "all", "exactly": {"deviceClassName": "nic",
                                                "allocationMode": "All"}}])
    assert _picks(reference_result("allocate", _node([claim]))) == [
        [f"all=nic-{i}" for i in range(4)]]
    answer = reference_result("allocate", _node([claim], allocated=(
        "nic.example.com/node-a/nic-1",)))
    assert answer == {"outcome": "unschedulable", "variant": "stable"}


def test_prioritized_list_takes_the_first_subrequest_that_completes() -> None:
    """DRA-4: 3 GPUs on one root do not exist, so the 2-GPU alternative is taken."""
    claim = _claim([{"name": "gpus", "firstAvailable": [
        {"name": "three", "deviceClassName": "gpu", "count": 3},
        {"name": "two", "deviceClassName": "gpu", "count": 2}]}],
        [{"matchAttribute": ROOT}])
    answer = reference_result("allocate", _node([claim], features=("PrioritizedList",)))
    assert _picks(answer) == [["gpus/two=gpu-0", "gpus/two=gpu-1"]]
    refused = reference_result("allocate", _node([claim]))
    assert refused == {"outcome": "error", "message": (
        "claim default/pair, request gpus: has subrequests, but the DRAPrioritizedList "
        "feature is disabled"), "variant": "stable"}


def test_a_constraint_never_spans_two_claims() -> None:
    """DRA-6: the second claim's NIC is not bound to the first claim's GPU."""
    first = _claim([_exact("gpu", "gpu")], [{"matchAttribute": ROOT}], name="a")
    second = _claim([_exact("nic", "nic")], [{"matchAttribute": ROOT}], name="b")
    assert _picks(reference_result("allocate", _node([first, second]))) == [
        ["gpu=gpu-0"], ["nic=nic-0"]]


@pytest.mark.parametrize(("release", "tail"), [
    ("1.36", "claim default/pair: selector #0: CEL runtime error: no such key: model"),
    ("1.37", "claim default/pair: selector #0 on device gpu.example.com/node-a/gpu-0: CEL "
             "runtime error: no such key: model. consider using CEL optional chaining (.? "
             "followed by orValue()) or guarding the check with has() for optional fields"),
])
def test_a_selector_runtime_error_in_each_release_words(release: str, tail: str) -> None:
    """DRA-3: a missing attribute is an error; 1.37 names the device and adds a hint."""
    claim = _claim([_exact("gpu", "gpu", selectors=[{"cel": {
        "expression": 'device.attributes["gpu.example.com"].model == "a"'}}])])
    answer = reference_result("allocate", _node([claim], release=release))
    assert answer == {"outcome": "error", "message": tail, "variant": "stable"}


@pytest.mark.parametrize(("version", "taken"), [
    ("1.2.3-rc.1+build.5", True), ("0.0.0", True), ("1.0.0-0a.1", True),
    ("1.2", False), ("1.2.3-", False), ("1.2.3+", False), ("1.2.3-01", False)])
def test_versions_are_semver_2(version: str, taken: bool) -> None:
    """DRA-1: a version attribute is semver 2.0.0, as the API server's pattern takes it."""
    case = copy.deepcopy(_node([PAIR]))
    case["slices"][0]["spec"]["devices"][0]["attributes"]["fw"] = {"version": version}
    answer = reference_result("allocate", case)
    assert ("error" not in answer) is taken, answer


@pytest.mark.parametrize(("release", "kind"), [("1.37", "not-modelled"), ("1.38", None)])
def test_an_attribute_named_twice_reads_qualified_from_1_38(release: str,
                                                            kind: str | None) -> None:
    """DRA-3: ``model`` and ``gpu.example.com/model`` on one device: until 1.37 CEL reads
    either by Go's map order (finding 56), so the case is refused; from 1.38 the qualified
    spelling's value is read."""
    claim = _claim([_exact("gpu", "gpu", selectors=[{"cel": {
        "expression": 'device.attributes["gpu.example.com"].model == "b"'}}])])
    case = copy.deepcopy(_node([claim], release=release))
    for device in case["slices"][0]["spec"]["devices"]:
        device["attributes"].update(model={"string": "a"},
                                    **{"gpu.example.com/model": {"string": "b"}})
    answer = reference_result("allocate", case)
    if kind is not None:
        assert answer["error"]["kind"] == kind, answer
        assert "finding 56" in answer["error"]["message"]
    else:
        assert answer["outcome"] == "allocated", answer


def test_a_missing_class_is_an_error() -> None:
    """DRA-4: in the words of the scheduler's lister."""
    answer = reference_result("allocate", _node([_claim([_exact("x", "fpga")])]))
    assert answer == {"outcome": "error", "message": (
        "claim default/pair, request x: could not retrieve device class fpga: "
        'deviceclass.resource.k8s.io "fpga" not found'), "variant": "stable"}


@pytest.mark.parametrize(("edit", "kind", "where"), [
    (lambda c: c["slices"][0]["spec"]["devices"][0].update(taints=[{"key": "k"}]),
     "invalid-field", "slices[0].spec.devices[0].taints[0].effect"),
    (lambda c: c["slices"][0]["spec"]["devices"][0].update(taints=[
        {"key": "k", "effect": "NoGo"}]), "invalid-field",
     "slices[0].spec.devices[0].taints[0].effect"),
    (lambda c: c["claims"][0]["spec"]["devices"]["requests"][0]["exactly"].update(
        tolerations=[{"key": "k", "operator": "In"}]), "invalid-field",
     "claims[0].spec.devices.requests[0].exactly.tolerations[0].operator"),
    (lambda c: c["claims"][0]["spec"]["devices"]["requests"][0]["exactly"].update(
        adminAccess="yes"), "invalid-field", "claims[0].spec.devices.requests[0].exactly"
                                             ".adminAccess"),
    (lambda c: c["slices"][0]["spec"]["devices"][0].update(consumesCounters=[
        {"counterSet": "memory", "counters": {}}]), "invalid-field",
     "slices[0].spec.devices[0].consumesCounters[0].counters"),
    (lambda c: c["slices"][0]["spec"]["devices"][0].update(consumesCounters=[
        {"counterSet": "Memory", "counters": {"gb": {"value": "1"}}}]), "invalid-field",
     "slices[0].spec.devices[0].consumesCounters[0].counterSet"),
    (lambda c: c["slices"][0]["spec"]["devices"][0].update(consumesCounters=[
        {"counterSet": "memory", "counters": {"gb": {"value": "lots"}}}]), "invalid-quantity",
     "slices[0].spec.devices[0].consumesCounters[0].counters.gb.value"),
    (lambda c: c["slices"][0]["spec"]["devices"][0].update(consumesCounters=[
        {"counterSet": "memory", "counters": {"gb": {"value": "1"}}, "compatibilityGroups": [
            "a"]}]), "not-modelled",
     "slices[0].spec.devices[0].consumesCounters[0].compatibilityGroups"),
    (lambda c: c["claims"][0]["spec"]["devices"]["requests"][1]["exactly"].update(
        capacity={"requests": {"memory": "-1Gi"}}), "not-modelled",
     "claims[0].spec.devices.requests[1].exactly.capacity.requests.memory"),
    (lambda c: c.update(release="1.35") or c["claims"][0]["spec"]["devices"]["requests"][1][
        "exactly"].update(capacity={"requests": {"memory": "1Gi"}}), "not-modelled",
     "claims[0].spec.devices.requests[1].exactly.capacity"),
    (lambda c: c.update(release="1.32"), "unsupported-version", "release"),
    (lambda c: c.update(features=["Nope"]), "invalid-field", "features[0]"),
    (lambda c: c.update(release="1.35", features=["CompatibilityGroups"]), "invalid-field",
     "features[0]"),
    (lambda c: c["slices"][0]["spec"]["devices"][0]["attributes"].update(x={"int": "1"}),
     "invalid-field", "slices[0].spec.devices[0].attributes.x.int"),
    (lambda c: c["claims"][0]["spec"]["devices"]["requests"][0]["exactly"].update(count=-1),
     "invalid-field", "claims[0].spec.devices.requests[0].exactly.count"),
    # DRA-1: what the API server validates: semver 2.0.0 versions, values of at most 64 bytes
    (lambda c: c["slices"][0]["spec"]["devices"][0]["attributes"].update(
        fw={"version": "1.0"}), "invalid-field", "slices[0].spec.devices[0].attributes.fw.version"),
    (lambda c: c["slices"][0]["spec"]["devices"][0]["attributes"].update(
        fw={"version": "01.0.0"}), "invalid-field",
     "slices[0].spec.devices[0].attributes.fw.version"),
    (lambda c: c["slices"][0]["spec"]["devices"][0]["attributes"].update(
        fw={"versions": ["1.0.0", "v2.0.0"]}), "invalid-field",
     "slices[0].spec.devices[0].attributes.fw.versions[1]"),
    (lambda c: c["slices"][0]["spec"]["devices"][0]["attributes"].update(
        x={"string": "a" * 65}), "invalid-field", "slices[0].spec.devices[0].attributes.x.string"),
])
def test_bad_input_is_refused_naming_the_field(edit: Any, kind: str, where: str) -> None:
    """DRA-0, DRA-1, DRA-10: a typed error naming the field, never a traceback."""
    case = copy.deepcopy(_node([PAIR]))
    edit(case)
    answer = reference_result("allocate", case)
    assert answer["error"]["kind"] == kind, answer
    assert answer["error"]["where"] == where, answer


def test_an_answer_under_another_pool_order_is_right() -> None:
    """DRA-2: GPUs in two pools: the stable variant may search either first."""
    case = _node([_claim([_exact("gpu", "gpu")])])
    case["slices"] = [_slice("a", "gpu.example.com", GPUS[:2], pool="a"),
                      _slice("b", "gpu.example.com", GPUS[2:], pool="b")]
    expected = reference_result("allocate", case)
    assert _picks(expected) == [["gpu=gpu-0"]]
    other = {"outcome": "allocated", "claims": [{"devices": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "b", "device": "gpu-2"}]}]}
    assert allocation_differences(case, expected, other) == []
    wrong = {"outcome": "allocated", "claims": [{"devices": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "b", "device": "gpu-3"}]}]}
    assert allocation_differences(case, expected, wrong) != []
    # the incubating variant from 1.36 sorts pools: it must answer from pool a
    assert allocation_differences(case, expected, {**other, "variant": "incubating"}) != []


# --- mutants: each property can fail ---------------------------------------------------------


#: Derandomized: whether a mutant is caught must not change from run to run (a fresh clone's
#: run once missed ignores_distinct in 400 random cases).
_QUICK = settings(max_examples=400, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck), report_multiple_bugs=False)


def _check(prop: Any, impl: object) -> None:
    """Run a property against ``impl`` at _QUICK's settings (a fresh @given each time: the
    property's own is left as registered)."""
    _QUICK(given(data=st.data())(prop.hypothesis.inner_test))(impl)


def test_p_allocate_malformed_sends_only_what_the_protocol_schema_takes() -> None:
    """PROTO-6: every fault of P-ALLOCATE-MALFORMED is a request the protocol's schema
    accepts (strict mode checks numaspec's own requests: a fault the schema refuses, such as
    an unknown variant's name, stops the run as numaspec's bug)."""
    checker = StrictChecker()
    for fault in FAULTS:
        case = well_formed(fault.releases[0])
        fault.edit(case)
        checker.check_request({"cmd": "run", "seq": 1, "op": "allocate", "case": case})


@pytest.mark.parametrize(("mutation", "words"), [("answers_malformed", "not refused"),
                                                  ("refuses_at_the_top", "refused as")])
def test_p_allocate_malformed_catches_a_lenient_or_vague_decoder(mutation: str,
                                                                 words: str) -> None:
    """P-ALLOCATE-MALFORMED fails an allocator that answers a case the API server would
    refuse, and one that refuses it without pointing at what is wrong; the reference passes
    (every fault, its explicit example)."""
    run_every_fault = malformed_cases_refused.hypothesis.inner_test  # type: ignore[attr-defined]
    with pytest.raises(AssertionError, match=words):
        run_every_fault(MutantAllocator(mutation), None, None)
    run_every_fault(ReferenceImplementation(), None, None)


def test_p_allocate_catches_a_mutant_that_reorders_picks() -> None:
    """P-ALLOCATE fails an allocator that lists a claim's devices last taken first."""
    with pytest.raises(AssertionError):
        _check(allocation_matches_reference, MutantAllocator("reversed_picks"))


@pytest.mark.slow
def test_p_allocate_sound_catches_a_mutant_that_ignores_constraints() -> None:
    """P-ALLOCATE-SOUND fails an allocator that drops every matchAttribute, without asking
    the reference's search."""
    with pytest.raises(AssertionError, match="matchAttribute"):
        _check(allocation_is_sound, MutantAllocator("ignores_constraints"))


def test_both_properties_hold_for_the_reference() -> None:
    reference = ReferenceImplementation()
    _check(allocation_matches_reference, reference)
    _check(allocation_is_sound, reference)


@pytest.mark.slow
def test_the_differential_finds_and_shrinks_a_mutant() -> None:
    """``numaspec differential --shape allocate``: every disagreement of the mutant found,
    the first shrunk to a smaller case it still disagrees on; the reference itself agrees."""
    shape = CaseShape("allocate")
    result = differential("numaspec_tools.mutants.allocate_mutants:REVERSED",
                          cases=150, shape=shape, shrink=1)
    assert result.op == "allocate"
    assert result.cases == 150
    assert result.disagreements, result.summary()
    first = result.disagreements[0]
    assert "found_as" in first
    assert len(json.dumps(first["case"])) < len(
        json.dumps(first["found_as"]))
    clean = differential("numaspec.protocols.adapter_protocol:ReferenceAdapter", cases=300,
                         shape=shape)
    assert clean.disagreements == []
    assert clean.verdicts == {"agreed": 300}


def test_a_timed_out_search_is_set_aside_by_the_manifest_and_never_shrunk() -> None:
    """DRA-7, finding 38: an answer stopped by the scheduler's Filter timeout is a known
    divergence of the DRA manifests (``actual.timed_out``), and the differential does not
    shrink such answers (each try would wait for the timeout again)."""
    shape = CaseShape("allocate")
    manifest = str(REPO / "adapters" / "dra" / "expectations" / "dra-allocator-v0.37.2.json")
    plain = differential("numaspec_tools.mutants.allocate_mutants:TIMES_OUT", cases=60, shape=shape,
                         shrink=5)
    assert plain.disagreements
    assert not any("found_as" in d for d in plain.disagreements)
    known = differential("numaspec_tools.mutants.allocate_mutants:TIMES_OUT", cases=60, shape=shape,
                         expectations=manifest)
    assert known.unexplained == []
    assert known.explained == {"finding 38": len(known.disagreements)}


@pytest.mark.slow
def test_p_allocate_sound_catches_a_mutant_that_ignores_counters() -> None:
    """P-ALLOCATE-SOUND fails an allocator that takes partitions of one device together as
    if they consumed nothing (DRA-19), from the case alone."""
    with pytest.raises(AssertionError, match=r"consumed past|consumes counters, and the "
                                             r"feature is off"):
        _check(allocation_is_sound, MutantAllocator("ignores_counters"))


@pytest.mark.slow
@pytest.mark.parametrize(("mutation", "words"), [
    ("never_shared", r"given not as a share"),
    ("ignores_distinct", r"distinctAttribute .* does not hold")])
def test_p_allocate_sound_catches_the_capacity_mutants(mutation: str, words: str) -> None:
    """P-ALLOCATE-SOUND fails, from the case alone, an allocator that never shares a device
    or keeps no distinctAttribute (DRA-20, DRA-21); one that counts no allocated share is
    rarely caught in 400 random cases (a share must then overfill its device), and its
    vectors catch it (tests/dra/test_dra_variants.py)."""
    with pytest.raises(AssertionError, match=words):
        _check(allocation_is_sound, MutantAllocator(mutation))


def test_counters_before_1_36_are_refused_by_name() -> None:
    """DRA-19: shared counters before 1.36 are not modelled, and the refusal names the
    field."""
    case = next(v for v in load_vectors() if v.id == "dra-counters-partitions-backtrack").case
    with pytest.raises(NotModelledError, match="DRA-19") as raised:
        reference_allocate({**case, "release": "1.35"})
    assert raised.value.where == "slices[0].spec.sharedCounters"


def test_a_slice_with_counter_sets_and_devices_is_refused() -> None:
    """DRA-19: the API server refuses a slice with both, and so does numaspec."""
    case = next(v for v in load_vectors() if v.id == "dra-counters-partitions-backtrack").case
    both = copy.deepcopy(case)
    both["slices"][0]["spec"]["devices"] = [{"name": "x"}]
    with pytest.raises(InvalidFieldError, match="only one of sharedCounters or devices"):
        reference_allocate(both)


@pytest.mark.parametrize(("expression", "words"), [
    ('device.capacity["gpu.example.com"].memory.add(1).isLessThan(quantity("1"))',
     "function add is outside"),
    ('device.capacity["gpu.example.com"].memory.isInteger()', "function isInteger"),
    ('sign(quantity("-1")) < 0', "function sign"),
    ('device.capacity["gpu.example.com"].memory == 16', "'==' between a quantity and a other"),
    ('device.attributes["gpu.example.com"].fw == "1.2.3"', "'==' between a version"),
    ('device.attributes["gpu.example.com"].fw in [semver("1.2.3")]', "'in' between"),
    ('device.capacity["gpu.example.com"].memory.isGreaterThan(1) || true',
     "given a value of a kind it does not take"),
    ('device.attributes["gpu.example.com"].model.isLessThan(semver("1.0.0"))',
     "given a value of a kind it does not take")])
def test_cel_over_capacity_and_versions_refuses_what_go_answers_otherwise(
        expression: str, words: str) -> None:
    """DRA-22: the functions left out, equality across kinds, and a function given a kind it
    does not take (even where || absorbs the error) are refused by name, never answered."""
    case = next(v for v in load_vectors() if v.id == "dra-cel-capacity-is-greater-than").case
    case = copy.deepcopy(case)
    case["claims"][0]["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": expression}}]
    with pytest.raises(NotModelledError, match=words) as raised:
        reference_allocate(case)
    assert "DRA-22" in str(raised.value)


@pytest.mark.parametrize(("depth", "width", "words"), [
    (3, 50, "runtime limit of 1,000,000"),  # the real allocator stops at the limit here
    (3, 30, "runtime limit of 1,000,000"),  # under it, but past numaspec's bound
    (2, 100, "Iteration budget exceeded")])  # cel-expr-python's own budget
def test_a_selector_that_may_pass_the_cost_limit_is_refused(depth: int, width: int,
                                                             words: str) -> None:
    """DRA-3: a selector whose cost numaspec cannot bound under CEL's runtime limit, or that
    cel-expr-python stops, is refused by name, never answered
    (tests/upstream/dra/test_dra_adapters.py meets the real allocator's limit)."""
    case = copy.deepcopy(next(v for v in load_vectors()
                              if v.id == "dra-cel-exists-over-a-list-literal").case)
    case["claims"][0]["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": nested_loops(depth, width)}}]
    with pytest.raises(NotModelledError, match=words) as raised:
        reference_allocate(case)
    assert "DRA-3" in str(raised.value)


def test_a_selector_well_under_the_cost_limit_is_answered() -> None:
    """DRA-3: three loops over 20 numbers stay under the bound, and are answered."""
    case = copy.deepcopy(next(v for v in load_vectors()
                              if v.id == "dra-cel-exists-over-a-list-literal").case)
    case["claims"][0]["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": nested_loops(3, 20)}}]
    assert reference_allocate(case)["outcome"] == "allocated"


def test_cel_keys_of_a_capacity_map_and_scalar_results_are_not_refused() -> None:
    """DRA-22: ``in`` over a capacity map's keys and ``==`` on what compareTo or major()
    give are plain values, answered."""
    case = next(v for v in load_vectors() if v.id == "dra-cel-capacity-is-greater-than").case
    for expression in ('"memory" in device.capacity["gpu.example.com"]',
                       'device.capacity["gpu.example.com"].memory.compareTo(quantity("16Gi")) '
                       '== 0 && device.attributes["gpu.example.com"].fw.major() == 1'):
        edited = copy.deepcopy(case)
        edited["claims"][0]["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
            {"cel": {"expression": expression}}]
        assert reference_allocate(edited)["outcome"] == "allocated", expression
