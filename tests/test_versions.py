"""VER-1 and VER-3: reading kubelet versions."""

from __future__ import annotations

import pytest

from numaspec import NEWEST, KubeletVersion, UnsupportedVersionError, parse_version
from numaspec.versions import default_feature_gates


@pytest.mark.parametrize("text", ["1.30", "v1.30", "1.30.4", "v1.30.4-rc.0", " 1.30 "])
def test_patch_levels_and_prefixes_mean_the_minor(text: str) -> None:  # VER-1
    assert parse_version(text) == KubeletVersion(30)


@pytest.mark.parametrize("text", ["1.17", "1.38", "2.0", "1.x", "", "1.030", "130", "v"])
def test_unsupported_or_malformed_versions_are_refused(text: str) -> None:  # VER-3
    with pytest.raises(UnsupportedVersionError) as info:
        parse_version(text)
    assert info.value.where == "kubelet_version"


def test_non_strings_are_refused() -> None:  # VER-3
    with pytest.raises(UnsupportedVersionError):
        parse_version(1.3)


def test_newest_is_the_default() -> None:  # VER-1
    assert str(NEWEST) == "1.37"


def test_gate_defaults() -> None:  # VER-2
    assert default_feature_gates(KubeletVersion(25)) == {}
    assert default_feature_gates(KubeletVersion(27)) == {
        "TopologyManagerPolicyOptions": False, "TopologyManagerPolicyAlphaOptions": False,
        "TopologyManagerPolicyBetaOptions": False}
    assert default_feature_gates(KubeletVersion(30)) == {
        "TopologyManagerPolicyOptions": True, "TopologyManagerPolicyAlphaOptions": False,
        "TopologyManagerPolicyBetaOptions": True}
