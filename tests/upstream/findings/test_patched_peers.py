"""A finding's fix in a patched build of the peer (RUN-23, ``adapters/peers/build.sh --patch``):
the suite's vectors against the adapter over the fixed module and over the pinned one, judged
with the pinned version's manifest, differ only in the cases booked on the finding, which
pass; another change a finding names is run the same way and its differences listed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from numaspec.conformance.cases import upstream_findings as uf
from numaspec_tools.builds import peers

CLI = [sys.executable, "-m", "numaspec.conformance.cli"]
#: the families with an adapter of numaspec's: each is one peer of adapters/peers
PEER_FAMILIES = ("dra-driver-cpu", "scheduler-plugins", "koordinator", "katalyst", "volcano")
RUNS = [(found, change) for found in uf.findings() if found.family in PEER_FAMILIES
        for change in found.changes]


def _verdicts(adapter: Path, manifest: Path, out: Path) -> dict[str, dict[str, Any]]:
    """The suite's vector cases against ``adapter`` (no properties), by case ID."""
    subprocess.run([*CLI, "conformance", "--impl", f"exec:{adapter}", "--expectations",
                    str(manifest), "--no-properties", "--out", str(out), "--no-progress"],
                   capture_output=True, text=True, timeout=1800)
    records = [json.loads(line) for line in
               (out / "report.jsonl").read_text(encoding="utf-8").splitlines()]
    return {r["id"]: r for r in records if r.get("type") == "case" and "verdict" in r}


def _booked_on(record: dict[str, Any], finding: str) -> bool:
    expectation = record.get("expectation") or {}
    return finding in (str(expectation.get("finding", "")), ) or \
        str(expectation.get("reason", "")).startswith(finding + " ")


@pytest.mark.parametrize(("found", "change"), RUNS,
                         ids=[f"{f.id}-{c.name}" for f, c in RUNS])
def test_a_fix_changes_only_the_cases_of_its_finding(found: uf.Finding, change: uf.Change,
                                                     tmp_path: Path) -> None:
    patch = Path(str(found.folder)) / change.patch
    base = peers.binary(found.family)
    patched = peers.patched_binary(found.family, patch)
    manifest = peers.manifest(found.family)
    before = _verdicts(base, manifest, tmp_path / "base")
    after = _verdicts(patched, manifest, tmp_path / "patched")
    assert before.keys() == after.keys()
    changed = {k: (before[k]["verdict"], after[k]["verdict"]) for k in before
               if before[k]["verdict"] != after[k]["verdict"]}
    if change.name == "fix":
        # the finding's own cases now pass, and nothing else moved
        assert changed, f"{found.id}'s fix changed no case of the suite"
        for case, (was, now) in changed.items():
            assert was == "xfailed", (case, was, now)
            assert _booked_on(before[case], found.id), (case, before[case].get("expectation"))
            assert now in ("passed", "xpassed"), (case, was, now, after[case].get("message"))
        assert not [k for k, r in after.items()
                    if r["verdict"] == "xfailed" and _booked_on(r, found.id)]
    else:
        # another change is described, not required to be a fix: its differences are the ones
        # the finding's page states
        stated = {case for case in changed if case in change.says}
        assert stated == set(changed), (
            f"{change.patch} changes cases its description does not name: "
            f"{sorted(set(changed) - stated)}")


def test_the_dra_driver_cpu_fix_agrees_with_kubelet_on_random_cases() -> None:
    """DRACPU-1's fix, beyond the vectors: the differential that found it agrees everywhere."""
    found = uf.finding("DRACPU-1")
    patched = peers.patched_binary("dra-driver-cpu", Path(str(found.folder)) / "fix.patch")
    done = subprocess.run([*CLI, "differential", "--shape", "cpus", "--cases", "2000",
                           "--impl", f"exec:{patched}", "--no-progress", "--shrink", "0"],
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "2000 agreed" in done.stdout, done.stdout
    assert "0 disagreements" in done.stdout, done.stdout
