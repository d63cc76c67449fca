"""WIRE-1: ``numaspec merge`` answers every line, in order, flushing each; and the
``numaspec conformance`` command end to end."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

from numaspec_tools import FIXTURES

BIN = [sys.executable, "-m", "numaspec.conformance.cli"]
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
    code = ("import sys\nfrom numaspec.conformance.cli import _build_parser\n_build_parser()\n"
            "loaded = [m for m in sys.modules if m == 'hypothesis' or "
            "m.startswith('numaspec.conformance.properties')]\nprint(loaded)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "[]"


# --- the command line itself: version, help everywhere, did-you-mean --------------------------


def _subparsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.append((f"{parser.prog} {name}".removeprefix("numaspec "), child))
                found += _subparsers(child)
    return found


def test_every_command_and_option_has_help() -> None:
    from numaspec.conformance.cli import _build_parser

    parser = _build_parser()
    commands = _subparsers(parser)
    assert {"merge", "node", "serve", "conformance", "rule", "vectors", "explain", "matrix",
            "vectors check", "vectors write", "vectors list"} <= {n.split(" ", 1)[-1]
                                                                 if n.startswith("numaspec")
                                                                 else n for n, _ in commands}
    missing = []
    for name, command in [("numaspec", parser), *commands]:
        if not command.description:
            missing.append(f"{name}: no description")
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
        # no default shows a path of the machine that built or installed numaspec
        assert sys.executable not in command.format_help(), name
    assert not missing, missing


def test_version_and_did_you_mean() -> None:
    import numaspec

    out = subprocess.run([sys.executable, "-m", "numaspec", "--version"], capture_output=True,
                         text=True)
    assert out.returncode == 0
    assert out.stdout.strip() == f"numaspec {numaspec.__version__}"
    out = subprocess.run([sys.executable, "-m", "numaspec", "conformence"],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert "did you mean 'conformance'?" in out.stderr
    assert "Traceback" not in out.stderr


def test_rule_prints_the_rule_and_refuses_an_unknown_id() -> None:
    out = subprocess.run([sys.executable, "-m", "numaspec", "rule", "merge-8", "--json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    (rule,) = json.loads(out.stdout)
    assert rule["id"] == "MERGE-8"
    assert rule["holds_in"].startswith("1.24")
    assert "policy.go" in rule["upstream"]
    assert "target" in rule["statement"]
    assert rule["checked_by"]
    out = subprocess.run([sys.executable, "-m", "numaspec", "rule", "MERGE-88"],
                         capture_output=True, text=True)
    assert out.returncode == 4
    # One prefix: the command names itself once (issue 38: "numaspec rule: rule: no rule").
    assert out.stderr.startswith("numaspec rule: no rule 'MERGE-88' in the spec; did you mean ")
    assert "Traceback" not in out.stderr


def test_rule_text_has_no_trailing_spaces() -> None:
    out = subprocess.run([sys.executable, "-m", "numaspec", "rule", "MERGE-8", "MERGE-4"],
                         capture_output=True, text=True, env={**os.environ, "COLUMNS": "72"})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("MERGE-8: ")
    assert any(line.startswith("MERGE-4: ") for line in lines)
    assert [line for line in lines if line != line.rstrip()] == []
    assert max(map(len, lines)) <= 72


def test_vectors_list_names_each_vector() -> None:
    out = subprocess.run([sys.executable, "-m", "numaspec", "vectors", "list",
                          str(FIXTURES / "vectors-small.json")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("small-merge-none-1.23  merge  1.23")
