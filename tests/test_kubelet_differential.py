"""Differential check of the reference against the real kubelet merge code.

``adapters/kubelet/build.sh`` builds small Go programs that answer merge requests by calling
``k8s.io/kubernetes/pkg/kubelet/cm/topologymanager`` of pinned releases.  When they are built,
this test feeds each the same generated cases as the reference and demands the same answers.
Without them it is skipped with a message saying how to build them (the cold build downloads
about 1.3 GB of modules); making it mandatory in CI is issue 5.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import attrs
import pytest
from conftest import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numaspec.conformance.adapter import ErrorAnswer, reference
from numaspec.conformance.strategies import merge_requests, merge_requests_with_faults
from numaspec.conformance.vectors import decode_answer
from numaspec.versions import KubeletVersion
from numaspec.wire import MergeRequest, encode_merge_request

BIN = REPO / "adapters" / "kubelet" / "bin"
CASES = 1500


def builds() -> list[Path]:
    return sorted(BIN.glob("kubelet-merge-v*")) if BIN.is_dir() else []


def minor_of(binary: Path) -> int:
    return int(binary.name.split("-v1.")[1].split(".")[0])


def glue_only(request: MergeRequest) -> bool:
    """Start-up checks the oracle does not model yet (issue 5): explicit feature gates (it runs
    with each release's defaults) and 1.18-1.25 dropping options.  Every other case, the
    merge and kubelet's own start-up errors included, is compared."""
    return bool(request.feature_gates) or (
        bool(request.policy_options) and request.version.minor < 26)


@pytest.mark.skipif(not builds(), reason="kubelet oracles not built: run adapters/kubelet/build.sh")
@pytest.mark.parametrize("binary", builds(), ids=lambda p: p.name)
def test_reference_agrees_with_kubelet(binary: Path) -> None:
    version = KubeletVersion(minor_of(binary))
    cases: list[MergeRequest] = []

    @settings(max_examples=CASES, database=None, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.one_of(merge_requests([version]), merge_requests_with_faults()))
    def collect(request: MergeRequest) -> None:
        request = attrs.evolve(request, version=version)
        if not glue_only(request):
            cases.append(request)

    collect()
    lines = "".join(json.dumps(encode_merge_request(r)) + "\n" for r in cases)
    out = subprocess.run([str(binary)], input=lines, capture_output=True, text=True,
                         timeout=900).stdout.splitlines()
    assert len(out) == len(cases)
    disagreements: list[tuple[MergeRequest, object, object]] = []
    for request, line in zip(cases, out, strict=True):
        expected = reference.merge(request)
        got = json.loads(line)
        if "error" in got:
            if not isinstance(expected, ErrorAnswer):
                disagreements.append((request, got, expected))
            continue
        if decode_answer(got, binary.name) != expected:
            disagreements.append((request, got, expected))
    assert not disagreements, "\n".join(
        f"{json.dumps(encode_merge_request(r))}\n  kubelet: {g}\n  reference: {e}"
        for r, g, e in disagreements[:5])
