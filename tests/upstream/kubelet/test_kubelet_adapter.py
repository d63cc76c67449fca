"""The suite against the real kubelet (issue 5): adapters/kubelet builds, for each pinned
release, a Go adapter over k8s.io/kubernetes that speaks the adapter protocol (PROTO-1..6).
The whole suite must pass against each (with the release's expectations manifest of known,
explained deviations), and on 20,000 random merge cases per release kubelet and the
reference must agree on every answer."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from numaspec.conformance.running.differential import differential
from numaspec.conformance.running.reports import read_report
from numaspec.conformance.running.runner import RunConfig, run_conformance
from numaspec_tools.builds.kubelet import RELEASES, ROOT, binary

CASES = 20_000


def manifest(minor: str) -> str | None:
    path = ROOT / "expectations" / f"kubelet-{RELEASES[minor]}.json"
    return str(path) if path.exists() else None


@pytest.mark.parametrize("minor", sorted(RELEASES))
def test_the_suite_passes_against_kubelet(minor: str, tmp_path: Path) -> None:
    adapter = binary(minor)
    printed = io.StringIO()
    status = run_conformance(RunConfig(impl=f"exec:{adapter}", out=str(tmp_path), strict=True,
                                       expectations=manifest(minor), timeout=60.0),
                             stream=printed)
    assert status == 0, printed.getvalue()[-6000:]
    _, records, _ = read_report(tmp_path / "report.jsonl")
    assert any(r["verdict"] == "passed" and r["op"] == "merge" for r in records)


@pytest.mark.parametrize("minor", sorted(RELEASES))
def test_kubelet_and_the_reference_agree_on_random_merges(minor: str) -> None:
    adapter = binary(minor)
    result = differential(f"exec:{adapter}", cases=CASES, seed=int(minor.split(".")[1]))
    print(result.summary())
    assert result.cases == CASES
    assert result.disagreements == [], "\n".join(
        f"{d['id']}: {d['case']}\n  {d['differences']}" for d in result.disagreements[:5])
