"""The suite rejects an implementation with the Katalyst PR's OR-matching of selector keys
(spec chapter affinity.md, AFF-4, divergence D1), run as a separate process through the
adapter protocol like any outside implementation; and it skips the affinity cases, visibly,
for an implementation that does not declare the ``affinity`` operation."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from numaspec.conformance.running.reports import read_report
from numaspec.conformance.running.runner import RunConfig, run_conformance
from numaspec_tools import ADAPTERS

FIXTURE = ADAPTERS / "katalyst_or_matching.py"


def _run(tmp_path: Path, impl: str, keyword: str, *, properties: bool = True
         ) -> tuple[int, list[dict[str, Any]]]:
    config = RunConfig(impl=impl, out=str(tmp_path / "out"), keyword=keyword, timeout=60.0,
                       progress=False, properties=properties)
    status = run_conformance(config, stream=None)
    _, records, _ = read_report(tmp_path / "out" / "report.jsonl")
    return status, records


def test_or_matching_fixture_is_rejected(tmp_path: Path) -> None:
    """AFF-4: the fixture fails the D1 vectors and the required-affinity property, with a
    counterexample that replays; the run exits 1."""
    impl = f"exec:{shlex.quote(sys.executable)} {shlex.quote(str(FIXTURE))}"
    status, records = _run(tmp_path, impl, "aff-divergence-d1,P-AFF-REQUIRED")
    verdicts = {r["id"]: r["verdict"] for r in records}
    assert status == 1, verdicts
    d1 = [i for i in verdicts if "divergence-d1" in i and "d1b" not in i and "d1c" not in i]
    assert d1, f"no D1 vector in {sorted(verdicts)}"
    assert any(verdicts[i] == "failed" for i in d1), {i: verdicts[i] for i in d1}
    assert verdicts["P-AFF-REQUIRED"] == "failed"
    failed = next(r for r in records if r["id"] == "P-AFF-REQUIRED")
    assert failed["op"] == "affinity"
    assert failed["counterexample"]["steps"][0]["op"] == "create"
    assert "required affinity" in failed["message"]


def test_reference_passes_the_same_vectors(tmp_path: Path) -> None:
    """The same vectors pass on the reference (and P-AFF-REQUIRED does, in
    tests/suite/test_reference_conforms.py), so the failures above are the defect's."""
    status, records = _run(tmp_path, "numaspec.protocols.adapter_protocol:ReferenceAdapter",
                           "aff-divergence-d1", properties=False)
    assert status == 0
    assert {r["verdict"] for r in records} == {"passed"}


def test_undeclared_affinity_is_skipped_visibly(tmp_path: Path) -> None:
    """AWIRE-1: an implementation without the ``affinity`` operation gets every affinity case
    skipped as undeclared, with the reason, never silently dropped."""
    adapter = ADAPTERS / "misbehave.py"
    impl = f"exec:{shlex.quote(sys.executable)} {shlex.quote(str(adapter))} merge-only"
    status, records = _run(tmp_path, impl, "AFF-7")
    assert records
    assert {r["verdict"] for r in records} == {"skipped"}
    assert all(r["skip_source"] == "undeclared" for r in records)
    assert all(f"'{r['op']}'" in r["message"] for r in records)
    assert any(r["op"] == "affinity" for r in records)
    assert any(r["kind"] == "property" for r in records)
    assert status == 3
