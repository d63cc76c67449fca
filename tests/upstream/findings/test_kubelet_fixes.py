"""A kubelet finding's fix in a patched build of the release (RUN-23, RUN-19): ``numaspec
behaviour-diff`` of the release and the release with the fix answers differently only the
vectors the finding names (those that show it), over the suite's vectors and random merge
cases; another change a finding names is run the same way."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from numaspec.conformance.cases import upstream_findings as uf
from numaspec_tools.builds import kubelet
from numaspec_tools.builds.go import built, run_build
from numaspec_tools.rotation import rotated

CLI = [sys.executable, "-m", "numaspec.conformance.cli"]
#: the pinned releases numaspec's kubelet adapters are built for, by module version
MINORS = {version: minor for minor, version in kubelet.RELEASES.items()}
FOUND = [f for f in uf.findings()
         if f.module == "k8s.io/kubernetes" and f.version in MINORS]
RUNS = [(found, change) for found in FOUND for change in found.changes]
#: a third of the findings a commit, as their Go tests (test_upstream_findings)
GROUPS = 3


def _patched(found: uf.Finding, change: uf.Change, minor: str) -> Path:
    kubelet.binary(minor)
    name = f"{found.id}-{change.name}"
    patch = Path(str(found.folder)) / change.patch
    problem = run_build(kubelet.ROOT, ["--patch", str(patch), "--name", name, minor],
                        f"kubelet adapter with {found.id}'s {change.name}")
    return built(kubelet.BIN / f"kubelet-adapter-{kubelet.RELEASES[minor]}+{name}", problem,
                 "adapters/kubelet/build.sh --patch")


@pytest.mark.parametrize(("found", "change"),
                         rotated(RUNS, GROUPS, "the kubelet findings' patched builds",
                                 key=lambda run: FOUND.index(run[0])),
                         ids=[f"{f.id}-{c.name}" for f, c in RUNS])
def test_a_kubelet_fix_changes_only_the_questions_of_its_finding(
        found: uf.Finding, change: uf.Change, tmp_path: Path) -> None:
    minor = MINORS[found.version]
    base = kubelet.binary(minor)
    patched = _patched(found, change, minor)
    out = tmp_path / "diff.jsonl"
    done = subprocess.run([*CLI, "behaviour-diff", "--base", f"exec:{base}", "--patched",
                           f"exec:{patched}", "--cases", "300", "--large-cases", "0",
                           "--shrink", "0", "--timeout", "10", "--no-progress", "--out",
                           str(out)], capture_output=True, text=True, timeout=1800)
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    judged = [r for r in records if not r.get("unsettled")]
    if change.name != "fix":
        # another change is described: every vector it changes is named in what is said of it
        beyond = sorted({_vector(r) for r in judged if _vector(r) not in change.says})
    else:
        beyond = sorted({_vector(r) for r in judged if _vector(r) not in found.vectors and not (
            found.refusals_only and _refused_alike(r["expected"], r["actual"]))})
    assert not beyond, (f"{found.id}'s {change.name} changes answers beyond the finding: "
                        f"{beyond}\n{done.stdout[-3000:]}")


def _vector(record: dict[str, Any]) -> str:
    return str(record["id"]).split("@", 1)[0]


def _refused_alike(base: Any, patched: Any) -> bool:
    """Both answers refuse with the same kind of error (a session: answer by answer), whatever
    the words."""
    if isinstance(base, dict) and isinstance(patched, dict):
        if "error" in base and "error" in patched:
            return bool(base["error"].get("kind") == patched["error"].get("kind"))
        if "answers" in base and "answers" in patched:
            return _refused_alike(base["answers"], patched["answers"])
    if isinstance(base, list) and isinstance(patched, list) and len(base) == len(patched):
        return all(b == p or _refused_alike(b, p) for b, p in zip(base, patched, strict=True))
    return False
