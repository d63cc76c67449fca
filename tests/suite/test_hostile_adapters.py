"""RUN-13, RUN-14, RUN-15: ``numaspec conformance`` finishes by itself against hostile adapters
(tools/numaspec_tools/adapters/misbehave.py), writes complete reports, and leaves no process behind.

Each run is a subprocess with a generous time limit: exceeding it is a hang, the failure these
tests exist for, not a statement about speed.  Every process an adapter starts inherits
``FIXTURE_RUN``, a fresh value per test, which is how the test finds what is left."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from numaspec.conformance.implementations.connection import load_answer, tagged_processes
from numaspec.conformance.running.reports import read_report
from numaspec_tools import ADAPTERS, FIXTURES

SMALL = str(FIXTURES / "vectors-small.json")
HANG = 180


def _command(mode: str, out: Path, *extra: str) -> list[str]:
    adapter = f"{shlex.quote(sys.executable)} " \
              f"{shlex.quote(str(ADAPTERS / 'misbehave.py'))} {mode}"
    return [sys.executable, "-m", "numaspec", "conformance", "--impl", f"exec:{adapter}",
            "--out", str(out), "--timeout", "3", "--no-progress", *extra]


def _env(run: str) -> dict[str, str]:
    return {**os.environ, "FIXTURE_RUN": run}


def _no_orphans(run: str) -> None:
    deadline = time.monotonic() + 10
    while (left := tagged_processes(f"FIXTURE_RUN={run}")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"processes left behind: {left}"


def _run(mode: str, out: Path, *extra: str) -> tuple[int, list[dict[str, Any]],
                                                     dict[str, Any]]:
    run = uuid.uuid4().hex
    done = subprocess.run(_command(mode, out, *extra), env=_env(run), capture_output=True,
                          text=True, timeout=HANG, check=False)
    header, records, footer = read_report(out / "report.jsonl")
    assert header["type"] == "header"
    assert footer["type"] == "footer"
    assert (out / "summary.md").exists()
    assert (out / "junit.xml").exists()
    _no_orphans(run)
    return done.returncode, records, footer


def test_non_finite_numbers_are_a_protocol_error(tmp_path: Path) -> None:  # RUN-13
    status, records, footer = _run("nan", tmp_path, "--vectors", SMALL, "--no-properties")
    assert len(records) == 10
    second = next(r for r in records if r["seq"] == 2)
    assert second["verdict"] == "protocol-error"
    assert "NaN" in second["message"]
    assert status == 1
    assert footer["exit_status"] == 1


def test_results_of_the_wrong_shape_stop_a_property_at_once(tmp_path: Path) -> None:  # RUN-13
    # four merge properties meet the wrong shape; one property of each other operation gets
    # the reference's own answers (the whole suite took a minute of CPU under CI)
    status, records, _ = _run("node-shaped", tmp_path, "--no-vectors", "-k",
                              "P-EQUAL-MASKS,P-NONE,P-SUBSETS,P-NO-PLACEMENT,P-AFF-EXCLUSIVE,"
                              "P-HINTS-SESSION,P-PREDICT")
    ran = [r for r in records if r["verdict"] not in ("skipped", "not-run")]
    broken = [r for r in ran if r["verdict"] == "protocol-error"]
    assert broken, "no property met the wrong shape"
    # named by the answer's own check (a field a merge result does not have) or, for a shape
    # with a merge result's fields, by the property's decoding (not a merge response)
    assert all("not a merge response" in r["message"] or "in a merge result" in r["message"]
               for r in broken)
    # the properties of other operations get the reference's own answers, and pass
    assert {r["verdict"] for r in ran} == {"protocol-error", "passed"}
    assert status == 1


def test_a_daemon_holding_stdout_does_not_hold_the_run(tmp_path: Path) -> None:  # RUN-14
    status, records, footer = _run("daemon", tmp_path, "--vectors", SMALL, "--no-properties")
    assert len(records) == 10
    assert next(r for r in records if r["seq"] == 2)["verdict"] == "crashed"
    assert footer["restarts"] >= 1
    assert status == 1


def test_sigterm_writes_the_footer_and_every_report(tmp_path: Path) -> None:  # RUN-15
    run = uuid.uuid4().hex
    with subprocess.Popen(_command("hang-always", tmp_path, "--vectors", SMALL,
                                   "--no-properties"),
                          env=_env(run), stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        report = tmp_path / "report.jsonl"
        deadline = time.monotonic() + HANG
        while not (report.exists() and report.read_text().strip()):
            assert time.monotonic() < deadline, "no header written"
            assert proc.poll() is None, "the run ended before its header"
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        status = proc.wait(timeout=HANG)
    assert status == 143
    header, _, footer = read_report(report)
    assert header["type"] == "header"
    assert footer["type"] == "footer"
    assert "SIGTERM" in footer["aborted"]
    assert footer["exit_status"] == 143
    assert (tmp_path / "summary.md").exists()
    assert (tmp_path / "junit.xml").exists()
    _no_orphans(run)


def test_an_answer_nested_too_deep_is_a_protocol_error(tmp_path: Path) -> None:  # RUN-13
    """An answer 100,000 arrays deep is that case's protocol error, like any malformed line:
    the runner never follows it down its own stack."""
    status, records, footer = _run("deep", tmp_path, "--vectors", SMALL, "--no-properties")
    assert len(records) == 10
    second = next(r for r in records if r["seq"] == 2)
    assert second["verdict"] == "protocol-error"
    assert "nested deeper than" in second["message"]
    assert {r["verdict"] for r in records if r["seq"] != 2} == {"passed"}
    assert status == 1
    assert footer["exit_status"] == 1


def test_a_start_answer_nested_too_deep_ends_the_run_with_a_reason(tmp_path: Path) -> None:
    status, records, footer = _run("deep-start", tmp_path, "--vectors", SMALL,
                                   "--no-properties")
    assert records == []
    assert "nested deeper than" in footer["aborted"]
    assert status == 4


def test_a_patch_release_declared_is_named_in_a_normal_run(tmp_path: Path) -> None:  # PROTO-2
    """A declaration numaspec cannot read is named, with the fix, in every run (not only
    under --strict), instead of a run that checks nothing and blames the adapter."""
    out = tmp_path / "out"
    done = subprocess.run(_command("patch-version", out, "--vectors", SMALL, "--no-properties"),
                          capture_output=True, text=True, timeout=HANG, check=False)
    _, records, footer = read_report(out / "report.jsonl")
    assert records == []
    assert done.returncode == 4
    for text in (footer["aborted"], done.stdout):
        assert "'1.30.14'" in text
        assert "kubelet_versions[0]" in text
        assert "'1.30'" in text


@pytest.mark.parametrize(("line", "deep"), [
    (b"[" * 100 + b"]" * 100, False),               # exactly the bound: read
    (b"[" * 101 + b"]" * 101, True),                # one more: refused
    (b"[" + b"[]," * 200 + b"[]]", False),          # many brackets, two deep: walked, read
    (b'{"a":"' + b"[" * 300 + b'"}', False),        # brackets in a string are no nesting
    (b'[{"a":' * 60 + b"1" + b"}]" * 60, True),     # 120 deep through objects: refused
])
def test_the_depth_bound_is_exact(line: bytes, deep: bool) -> None:  # RUN-13
    """An answer is refused for its depth, never for its count of brackets: the count only
    spares a shallow line the walk."""
    if deep:
        with pytest.raises(ValueError, match="nested deeper than"):
            load_answer(line)
    else:
        load_answer(line)
