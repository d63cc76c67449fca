"""The suite against the real kubelet (issue 5): adapters/kubelet builds, for each pinned
release, a Go adapter over k8s.io/kubernetes that speaks the adapter protocol (PROTO-1..6).
The whole suite must pass against each (with the release's expectations manifest of known,
explained deviations): every vector instance the release holds, and the properties and the
in-run differential of random merges (RUN-22) drawn from the commit's seed
(numaspec_tools.rotation: 50 examples a property and 5,000 random merges a run, new ones on
every commit, so consecutive commits cover more than one run could)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from numaspec.conformance.running.reports import read_report
from numaspec.conformance.running.runner import DIFFERENTIAL_ID, RunConfig, run_conformance
from numaspec_tools.builds.kubelet import RELEASES, ROOT, binary
from numaspec_tools.rotation import ROTATING_PROFILE, commit_seed


def manifest(minor: str) -> str | None:
    path = ROOT / "expectations" / f"kubelet-{RELEASES[minor]}.json"
    return str(path) if path.exists() else None


@pytest.mark.parametrize("minor", sorted(RELEASES))
def test_the_suite_passes_against_kubelet(minor: str, tmp_path: Path) -> None:
    adapter = binary(minor)
    printed = io.StringIO()
    seed = commit_seed()
    status = run_conformance(RunConfig(impl=f"exec:{adapter}", out=str(tmp_path), strict=True,
                                       expectations=manifest(minor), timeout=60.0,
                                       profile=ROTATING_PROFILE, seed=seed),
                             stream=printed)
    assert status == 0, (
        f"{printed.getvalue()[-6000:]}\nseed {seed} (the commit's): replay with "
        f"numaspec conformance --impl exec:{adapter} --profile {ROTATING_PROFILE} "
        f"--seed {seed} --strict --expectations {manifest(minor)}")
    _, records, _ = read_report(tmp_path / "report.jsonl")
    assert any(r["verdict"] == "passed" and r["op"] == "merge" for r in records)
    # RUN-22: the random merges were drawn and judged (5,000 a run, the commit's seed)
    assert any(r["id"] == DIFFERENTIAL_ID and r["verdict"] == "passed" for r in records)
