"""Shared set-up: the Hypothesis profile (dev locally, ci under CI; see
numaspec.conformance.profiles)."""

from __future__ import annotations

from pathlib import Path

from numaspec.conformance.profiles import load_profile

load_profile()

REPO = Path(__file__).resolve().parent.parent


def pytest_terminal_summary(terminalreporter: object) -> None:
    from test_crosshair import VERDICTS

    if VERDICTS:
        write = terminalreporter.write_line  # type: ignore[attr-defined]
        write("CrossHair verdicts (numaspec.bitmask, numaspec.merge): " + ", ".join(
            f"{count} {verdict.rstrip('.').lower()}" for verdict, count in sorted(
                VERDICTS.items())))
