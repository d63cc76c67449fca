"""The ``cpus`` operation (spec chapter cpu.md, CPU-21): the static policy's allocator alone,
for implementations that allocate CPUs by the CPU Manager's rules outside kubelet."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from numaspec.conformance.cases.vectors import compare, load_vectors
from numaspec.conformance.implementations.claims import Claims
from numaspec.conformance.implementations.strict import StrictChecker
from numaspec.protocols.adapter_protocol import reference_result


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
