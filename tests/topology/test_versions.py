"""VER-1 and VER-3: reading kubelet versions."""

from __future__ import annotations

import json

import pytest

from numaspec import DEFAULT, NEWEST, KubeletVersion, UnsupportedVersionError, parse_version
from numaspec.protocols.merge_protocol import decode_merge_request
from numaspec.topology.gates import default_gates


@pytest.mark.parametrize("text", ["1.30", "v1.30", "1.30.4", "v1.30.4-rc.0", " 1.30 "])
def test_patch_levels_and_prefixes_mean_the_minor(text: str) -> None:  # VER-1
    assert parse_version(text) == KubeletVersion(30)


@pytest.mark.parametrize("text", ["1.17", "1.39", "2.0", "1.x", "", "1.030", "130", "v"])
def test_unsupported_or_malformed_versions_are_refused(text: str) -> None:  # VER-3
    with pytest.raises(UnsupportedVersionError) as info:
        parse_version(text)
    assert info.value.where == "kubelet_version"


def test_non_strings_are_refused() -> None:  # VER-3
    with pytest.raises(UnsupportedVersionError):
        parse_version(1.3)


def test_the_newest_release_is_the_default_not_the_prerelease() -> None:  # VER-1
    assert str(DEFAULT) == "1.37"
    assert DEFAULT.prerelease is None
    assert str(NEWEST) == "1.38"
    assert NEWEST.prerelease == "1.38.0-beta.0"
    assert NEWEST.described == "1.38 (pre-release 1.38.0-beta.0)"
    assert decode_merge_request({"numa_nodes": [0], "policy": "none",
                                 "providers": []}).version == DEFAULT


def test_gate_defaults() -> None:  # VER-2
    for minor, expected in ((25, {}), (27, {
            "TopologyManagerPolicyOptions": False, "TopologyManagerPolicyAlphaOptions": False,
            "TopologyManagerPolicyBetaOptions": False}), (30, {
            "TopologyManagerPolicyOptions": True, "TopologyManagerPolicyAlphaOptions": False,
            "TopologyManagerPolicyBetaOptions": True})):
        defaults = default_gates(KubeletVersion(minor))
        assert {k: v for k, v in defaults.items() if k.startswith("TopologyManagerPolicy")} \
            == expected
        assert defaults["AllAlpha"] is False  # every release knows far more than these


def test_an_empty_policy_name_is_none_as_kubelet_defaults_it() -> None:
    """POLICY-5, found by the suite against kubelet: SetDefaults_KubeletConfiguration turns
    an empty topologyManagerPolicy into none in every release."""
    from numaspec.protocols.merge_protocol import MergeRequest, evaluate_request
    from numaspec.topology.hints import TopologyHint
    from numaspec.topology.masks import NumaMask

    for minor in (18, 19, 23, 30, 37):
        outcome = evaluate_request(MergeRequest(
            numa_nodes=(0, 1), policy="", version=KubeletVersion(minor),
            providers=({"cpu": (TopologyHint(NumaMask.of([0]), True),)},)))
        assert outcome.hint == TopologyHint(None, False)
        assert outcome.admit


@pytest.mark.parametrize(("minor", "gates", "message"), [
    (23, {"TopologyManagerPolicyOptions": True},
     "unrecognized feature gate: TopologyManagerPolicyOptions"),
    (25, {"TopologyManagerPolicyBetaOptions": False},
     "unrecognized feature gate: TopologyManagerPolicyBetaOptions"),
    (36, {"TopologyManagerPolicyOptions": False},
     "failed to merge global and in-flight KubeletConfiguration while setting defaults, error: "
     "cannot set feature gate TopologyManagerPolicyOptions to false, feature is locked to true"),
])
def test_bad_feature_gates_stop_kubelet_before_the_policy_name(
        minor: int, gates: dict[str, bool], message: str) -> None:
    """VER-2, POLICY-6: found by the suite against kubelet (1.23 gates, 1.37 lock order)."""
    from numaspec.errors import InvalidFieldError
    from numaspec.topology.numa import NumaInfo
    from numaspec.topology.policies import check_startup

    with pytest.raises(InvalidFieldError) as caught:
        check_startup("Restricted", NumaInfo((0, 1)), KubeletVersion(minor), {}, gates)
    assert caught.value.kubelet_message == message
    assert check_startup("restricted", NumaInfo((0, 1)), KubeletVersion(minor), {},
                         {"AllAlpha": False})  # a gate every release knows, at its default
    with pytest.raises(InvalidFieldError) as caught:  # any other name kubelet lacks stops it
        check_startup("restricted", NumaInfo((0, 1)), KubeletVersion(minor), {},
                      {"SomeOtherGate": True})
    assert caught.value.where == "feature_gates.SomeOtherGate"


def test_a_prerelease_read_for_the_merge_alone_says_so() -> None:  # VER-1, NODE-0
    """The day a pre-release is read for the merge before its managers are (as 1.38 was), a
    node case at it is not-modelled and the message says which part is modelled."""
    from unittest import mock

    from numaspec.node import nodeconfig
    from numaspec.protocols.node_protocol import NodeSession

    with mock.patch.object(nodeconfig, "NODE_VERSIONS", range(29, 38)):
        answer = NodeSession().answer(json.dumps({"op": "create", "node": {
            "kubeletVersion": "1.38", "machine": {"numaNodes": [
                {"id": 0, "memory": "1Gi", "cores": [{"socket": 0, "threads": [0]}]}]}}}))
    assert answer["error"]["kind"] == "not-modelled", answer
    assert "1.38 (pre-release 1.38.0-beta.0)" in answer["error"]["message"]
    assert "modelled for the Topology Manager's merge only" in answer["error"]["message"]
