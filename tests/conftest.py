"""Shared set-up: the Hypothesis profile (dev locally, ci under CI; see
numaspec.conformance.running.profiles)."""

from __future__ import annotations

from pathlib import Path

import pytest

from numaspec.conformance.running.profiles import load_profile

load_profile()

REPO = Path(__file__).resolve().parent.parent


_CROSSHAIR: dict[str, int] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    verdicts = dict(report.user_properties).get("crosshair_verdicts")
    if isinstance(verdicts, dict):
        _CROSSHAIR.update(verdicts)


def pytest_report_header() -> str:
    """Which pinned kubelet releases this run covers (tests/kubelet_builds.py SELECTED)."""
    import kubelet_builds

    return kubelet_builds.describe_selection()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _CROSSHAIR:
        terminalreporter.write_line(
            "CrossHair verdicts: " + ", ".join(
                f"{count} {verdict.rstrip('.').lower()}"
                for verdict, count in sorted(_CROSSHAIR.items())))
