"""WIRE-1: ``numaspec merge`` answers every line, in order, flushing each; and the
``numaspec conformance`` command end to end."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

BIN = [sys.executable, "-m", "numaspec.cli"]
GOOD = json.dumps({"numa_nodes": [0, 1], "policy": "restricted",
                   "providers": [{"cpu": [{"numa_affinity": [1], "preferred": True}]}]})


def test_every_line_gets_one_answer_in_order() -> None:  # WIRE-1
    lines = [GOOD.encode(), b"{garbage", b"", b"\xff\xfe", b'{"numa_nodes": [0]', GOOD.encode()]
    out = subprocess.run([*BIN, "merge"], input=b"\n".join(lines) + b"\n",
                         capture_output=True, check=True, timeout=120)
    answers = [json.loads(line) for line in out.stdout.decode().splitlines()]
    assert len(answers) == len(lines)
    assert answers[0] == answers[-1] == {"hint": {"numa_affinity": [1], "preferred": True},
                                         "admit": True}
    assert [a["error"]["kind"] for a in answers[1:-1]] == ["malformed-json"] * 4
    assert out.stderr == b""


def _watchdog(proc: subprocess.Popen[bytes]) -> threading.Timer:
    # A safety net so a broken build cannot hang the test run; not a timing assertion.
    timer = threading.Timer(120, proc.kill)
    timer.start()
    return timer


def test_answers_are_flushed_line_by_line() -> None:  # WIRE-1
    proc = subprocess.Popen([*BIN, "merge"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    timer = _watchdog(proc)
    stdin: IO[bytes] = proc.stdin  # type: ignore[assignment]
    stdout: IO[bytes] = proc.stdout  # type: ignore[assignment]
    try:
        for _ in range(3):  # the next request is only written after the answer was read
            stdin.write(GOOD.encode() + b"\n")
            stdin.flush()
            assert json.loads(stdout.readline())["admit"] is True
        stdin.close()
        assert proc.wait() == 0
    finally:
        timer.cancel()
        proc.kill()


def test_conformance_command_prints_a_per_rule_summary(tmp_path: Path) -> None:
    out = subprocess.run([*BIN, "conformance", "-k", "P-NONE or seed001", "--out",
                          str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "first counterexample" in out.stdout  # the per-rule table's header (RUN-6)
    assert "POLICY-1" in out.stdout
    assert (tmp_path / "report.jsonl").exists()


def test_a_filter_that_selects_nothing_is_an_error(tmp_path: Path) -> None:
    out = subprocess.run([*BIN, "conformance", "-k", "no-such-case", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 4
    assert "no case matches 'no-such-case'" in out.stdout


def test_a_report_that_cannot_be_written_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = subprocess.run([*BIN, "conformance", "--out", str(blocker / "reports")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 4
    assert "cannot write the report" in out.stderr
    assert "Traceback" not in out.stdout + out.stderr


def test_conformance_command_reports_a_bad_impl_clearly(tmp_path: Path) -> None:
    out = subprocess.run([*BIN, "conformance", "--impl", "no_such_module:x", "--out",
                          str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 4
    assert "cannot import 'no_such_module'" in out.stdout
    assert "Traceback" not in out.stdout + out.stderr


def test_the_command_line_imports_no_property_before_the_profile() -> None:  # RUN-4
    """Building the parser must not create the Hypothesis properties: they would keep the
    settings of that moment, not the run's profile (a run under ``triage`` or ``ci`` would
    then draw random examples, and a mutant's kill would depend on luck)."""
    code = ("import sys\nfrom numaspec.cli import _build_parser\n_build_parser()\n"
            "loaded = [m for m in sys.modules if m == 'hypothesis' or "
            "m.startswith('numaspec.conformance.properties')]\nprint(loaded)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "[]"
