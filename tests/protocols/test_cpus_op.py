"""The ``cpus`` operation (spec chapter cpu.md, CPU-21): the static policy's allocator alone,
for implementations that allocate CPUs by the CPU Manager's rules outside kubelet."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numaspec.conformance.cases.divergences import facts
from numaspec.conformance.cases.judges import compare
from numaspec.conformance.cases.vectors import load_vectors
from numaspec.conformance.implementations.adapter import ReferenceImplementation
from numaspec.conformance.implementations.claims import Claims
from numaspec.conformance.implementations.strict import StrictChecker
from numaspec.conformance.properties.cpus import (
    cpus_are_sound,
    cpus_match_reference,
    soundness_problems,
)
from numaspec.conformance.properties.cpus_cases import random_cpus_case_at
from numaspec.conformance.properties.random_cases import CaseShape
from numaspec.conformance.running.differential import differential
from numaspec.errors import AdapterError
from numaspec.protocols.adapter_protocol import reference_result
from numaspec_tools.mutants.cpus_mutants import MUTATIONS, MutantCPUs

_QUICK = settings(max_examples=300, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))


def _check(prop: Any, impl: object) -> None:
    """Run a property against ``impl`` at _QUICK's settings (a fresh @given each time)."""
    _QUICK(given(data=st.data())(prop.hypothesis.inner_test))(impl)


def _case() -> dict[str, Any]:
    vector = next(v for v in load_vectors() if v.id == "cpus-uncore-two-full-caches-and-part")
    return copy.deepcopy(vector.case)


def test_the_answer_is_the_static_policys_allocation() -> None:
    """CPU-19, CPU-21: kubelet's own test case; without the option, plain packing."""
    case = _case()
    assert reference_result("cpus", case) == {"cpus": [1, 2, 4, 5, 6, 7, 8, 9, 10, 11]}
    del case["options"]
    assert reference_result("cpus", case) == {"cpus": list(range(1, 11))}


def test_too_few_cpus_is_unsatisfiable_in_kubelets_words() -> None:
    case = {**_case(), "available": [1, 2], "count": 3}
    answer = reference_result("cpus", case)
    assert answer == {"unsatisfiable": "not enough cpus available to satisfy request: "
                                       "requested=3, available=2"}


@pytest.mark.parametrize(("change", "kind", "where"), [
    (lambda c: {**c, "extra": 1}, "invalid-field", "extra"),
    (lambda c: {k: v for k, v in c.items() if k != "count"}, "invalid-field", "count"),
    (lambda c: {**c, "count": 0}, "invalid-field", "count"),
    (lambda c: {**c, "count": True}, "invalid-field", "count"),
    (lambda c: {**c, "available": [1, 99]}, "invalid-field", "available[1]"),
    (lambda c: {**c, "available": [1, 1]}, "invalid-field", "available[1]"),
    (lambda c: {**c, "kubelet_version": "1.28"}, "unsupported-version", "kubelet_version"),
    (lambda c: {**c, "machine": {"numaNodes": "x"}}, "invalid-field", "machine.numaNodes"),
    (lambda c: {**c, "options": {"no-such-option": "true"}}, "node-startup",
     "cpuManagerPolicyOptions"),
    (lambda c: {**c, "kubelet_version": "1.33"}, "node-startup", "cpuManagerPolicyOptions"),
    (lambda c: {**c, "feature_gates": {"X": "yes"}}, "invalid-field", "feature_gates.X"),
])
def test_a_bad_case_is_a_typed_error_naming_the_field(change: Any, kind: str,
                                                      where: str) -> None:
    """CPU-21, CPU-14: never a traceback; an option kubelet would not start with (unknown, or
    alpha with its gate off in 1.33) is kubelet's start-up error."""
    answer = reference_result("cpus", change(_case()))
    assert answer["error"]["kind"] == kind, answer
    assert answer["error"]["where"] == where, answer


def test_every_answer_meets_the_schema_and_compare_judges_it() -> None:
    checker = StrictChecker()
    case = _case()
    for answer in (reference_result("cpus", case),
                   reference_result("cpus", {**case, "count": 99}),
                   reference_result("cpus", {**case, "extra": 1})):
        assert checker.answer_problem({"seq": 1, "result": answer}, "cpus") is None, answer
    expected = reference_result("cpus", case)
    assert compare("cpus", case, expected, expected) == []
    assert compare("cpus", case, expected, {"cpus": [1, 2, 3]})
    assert compare("cpus", case, {"unsatisfiable": "x"}, {"unsatisfiable": "other words"}) == []
    assert compare("cpus", case, {"error": {"kind": "node-startup"}},
                   {"error": {"kind": "invalid-field"}})


def test_an_implementation_claims_the_options_it_models() -> None:
    """CPU-21: ``claims.node.cpu_policy_options`` bounds the cases it is judged on."""
    claims = Claims.from_json({"node": {"cpu_policy_options": ["full-pcpus-only"]}})
    reason = claims.outside("cpus", _case(), {}, ("CPU-21",))
    assert reason is not None
    assert "prefer-align-cpus-by-uncorecache" in reason
    assert Claims().outside("cpus", _case(), {}, ("CPU-21",)) is None


def test_an_allocator_that_always_applies_an_option_claims_it() -> None:
    """PROTO-7's ``cpus.options``: a case is claimed only when its options are exactly the
    ones always applied; the claim goes back to JSON as it came, and a bad one is refused
    naming the field."""
    always = {"prefer-align-cpus-by-uncorecache": "true"}
    claims = Claims.from_json({"cpus": {"options": always}})
    assert claims.outside("cpus", _case(), {}, ("CPU-21",)) is None
    plain = {k: v for k, v in _case().items() if k != "options"}
    reason = claims.outside("cpus", plain, {}, ("CPU-21",))
    assert reason is not None
    assert "always applies exactly: prefer-align-cpus-by-uncorecache=true" in reason
    assert claims.to_json()["cpus"] == {"options": always}
    assert "cpus" not in Claims().to_json()
    with pytest.raises(AdapterError) as caught:
        Claims.from_json({"cpus": {"options": ["prefer-align-cpus-by-uncorecache"]}})
    assert caught.value.where == "implementation.claims.cpus.options"


def test_p_cpus_holds_for_the_reference() -> None:
    _check(cpus_match_reference, ReferenceImplementation())


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_p_cpus_catches_each_mutant(mutation: str) -> None:
    """P-CPUS fails an allocator that takes the lowest free ids, one that lost the
    uncore-cache option, and one that hands out a CPU it was not given."""
    with pytest.raises(AssertionError):
        _check(cpus_match_reference, MutantCPUs(mutation))


def test_p_cpus_sound_holds_for_the_reference_and_a_different_but_sound_choice() -> None:
    """P-CPUS-SOUND judges without the reference's choice: the reference and an allocator
    that takes the lowest free ids both pass."""
    _check(cpus_are_sound, ReferenceImplementation())
    _check(cpus_are_sound, MutantCPUs("lowest_first"))


def test_p_cpus_sound_catches_a_cpu_that_was_not_given() -> None:
    with pytest.raises(AssertionError, match="were not available"):
        _check(cpus_are_sound, MutantCPUs("takes_a_reserved_cpu"))


def test_soundness_problems_name_each_slip() -> None:
    case = {"available": [1, 2, 3], "count": 2}
    assert soundness_problems(case, {"cpus": [1, 2]}) == []
    assert soundness_problems(case, {"cpus": [1, 1]}) == ["a CPU taken twice: [1, 1]"]
    assert soundness_problems(case, {"cpus": [1, 9]}) == ["CPUs [9] were not available"]
    assert soundness_problems(case, {"cpus": [1]}) == ["1 CPUs taken for 2"]
    assert soundness_problems(case, {"unsatisfiable": "x"}) != []
    assert soundness_problems({**case, "count": 4}, {"unsatisfiable": "x"}) == []


def test_the_differential_finds_and_shrinks_a_mutant() -> None:
    """``numaspec differential --shape cpus``: the mutant's disagreements found, the first
    shrunk to a smaller case it still disagrees on; the reference itself agrees, and case
    ``i`` of a seed is the same case however it is asked for."""
    shape = CaseShape("cpus")
    assert shape.op == "cpus"
    result = differential("numaspec_tools.mutants.cpus_mutants:LOWEST_FIRST",
                          cases=200, shape=shape, shrink=1)
    assert result.op == "cpus"
    assert result.disagreements, result.summary()
    first = result.disagreements[0]
    assert first["id"].startswith("differential-cpus-0-")
    assert "found_as" in first
    assert len(json.dumps(first["case"])) < len(json.dumps(first["found_as"]))
    clean = differential("numaspec.protocols.adapter_protocol:ReferenceAdapter", cases=300,
                         shape=shape)
    assert clean.disagreements == []
    assert clean.verdicts == {"agreed": 300}
    assert random_cpus_case_at(3, 7, ["1.35"]) == random_cpus_case_at(3, 7, ["1.35"])


def test_shared_core_ids_are_a_fact_a_manifest_can_name() -> None:
    """RUN-5: ``cpus.shared_core_ids`` says whether two cores of the machine give one id, as
    sysfs numbers cores on a machine of two sockets."""
    case = _case()
    assert facts("cpus", case, {}, {})["cpus.shared_core_ids"] is False
    for node in case["machine"]["numaNodes"]:
        for core in node["cores"]:
            core["id"] = 0
    assert facts("cpus", case, {}, {})["cpus.shared_core_ids"] is True
