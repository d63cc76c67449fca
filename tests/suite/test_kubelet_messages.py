"""RUN-11: where the spec states kubelet's own text for a refusal (an error's
``kubelet_message``), an implementation that reports kubelet's text must report the same
words; where kubelet names whichever bad option or gate its map order meets first, the text is
not compared."""

from __future__ import annotations

import pytest

from numaspec.conformance.cases.judges import compare


@pytest.mark.parametrize(("expected", "actual", "agree"), [
    ("unknown policy: \"x\"", "unknown policy: \"x\"", True),
    ("Resource \"cpu\" has a reservation of 3. Resource \"memory\" has a reservation of 1Gi.",
     "Resource \"memory\" has a reservation of 1Gi. Resource \"cpu\" has a reservation of 3.",
     True),
    ("topology manager policy beta-level options not enabled",
     "Topology Manager Policy Beta-level Options not enabled", False),
    ("requested: 3, used: 0, capacity: 2", "requested: 3, used: 0, capacity: 4", False),
])
def test_kubelet_message_is_compared_by_words(expected: str, actual: str, agree: bool) -> None:
    """RUN-11: where both sides state kubelet's text, the words must agree (any order)."""
    case = {"kubelet_version": "1.33", "numa_nodes": [0], "policy": "best-effort",
            "providers": [], "policy_options": {"max-allowable-numa-nodes": "x"}}
    want = {"error": {"kind": "invalid-policy-option-value", "message": "m",
                      "kubelet_message": expected}}
    got = {"error": {"kind": "invalid-policy-option-value", "message": "other",
                     "kubelet_message": actual}}
    assert (compare("merge", case, want, got) == []) == agree
    session = {"steps": [{"op": "create", "node": {"kubeletVersion": "1.33"}}]}
    node_want, node_got = {"answers": [want]}, {"answers": [got]}
    assert (compare("node", session, node_want, node_got) == []) == agree
    # Without kubelet's text on the implementation's side, the kind alone decides.
    del got["error"]["kubelet_message"]
    assert compare("merge", case, want, got) == []


def test_kubelet_message_is_not_compared_when_kubelet_picks_by_map_order() -> None:
    """RUN-11: several bad options: kubelet names whichever its map order meets first."""
    case = {"kubelet_version": "1.33", "numa_nodes": [0], "policy": "best-effort",
            "providers": [], "policy_options": {"max-allowable-numa-nodes": "x",
                                                "zzz-unknown": "1"}}
    want = {"error": {"kind": "invalid-policy-option-value", "message": "m",
                      "kubelet_message": "bad value for option max-allowable-numa-nodes"}}
    got = {"error": {"kind": "unknown-policy-option", "message": "m",
                     "kubelet_message": "unknown Topology Manager Policy option zzz-unknown"}}
    assert compare("merge", case, want, got) == []


def test_kubelet_message_is_not_compared_when_several_gates_are_refused() -> None:
    """RUN-11, VER-4: up to 1.30 kubelet names the first refused gate its map order meets
    (found by the differential against kubelet 1.25.16)."""
    case = {"kubelet_version": "1.25", "numa_nodes": [0], "policy": "best-effort",
            "providers": [], "feature_gates": {"TopologyManagerPolicyAlphaOptions": False,
                                               "TopologyManagerPolicyOptions": False}}
    want = {"error": {"kind": "invalid-field", "message": "m", "kubelet_message":
                      "unrecognized feature gate: TopologyManagerPolicyAlphaOptions"}}
    got = {"error": {"kind": "invalid-field", "message": "m", "kubelet_message":
                     "unrecognized feature gate: TopologyManagerPolicyOptions"}}
    assert compare("merge", case, want, got) == []
