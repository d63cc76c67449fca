"""CrossHair checks the contracts (PEP 316 docstrings) of the mask and merge modules (the fast
merge's count choice, FAST-5, among them) with a
bounded budget.  A counterexample fails the test; otherwise each condition's verdict is
reported as CrossHair gives it: "confirmed over all paths" or "not confirmed" (no
counterexample within the budget, which is *not* a proof)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Callable

import pytest
from conftest import REPO

MODULES = ["numaspec.bitmask", "numaspec.merge", "numaspec.fast_merge"]
BUDGET = ["--max_uninteresting_iterations=20", "--per_condition_timeout=10"]


def crosshair(*targets: str) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "crosshair", "check", "--report_all", *BUDGET,
                          *targets], capture_output=True, text=True, timeout=900,
                         cwd=REPO / "tests")
    return (out.stdout + out.stderr).splitlines()


@pytest.mark.crosshair
def test_contracts_hold_within_budget(record_property: Callable[[str, object], None]) -> None:
    lines = crosshair(*MODULES)
    errors = [line for line in lines if ": error:" in line]
    assert errors == [], "\n".join(errors)
    verdicts = Counter(line.split(": info: ", 1)[1].strip() for line in lines
                       if ": info: " in line)
    record_property("crosshair_verdicts", dict(verdicts))  # printed in the run's summary
    assert sum(verdicts.values()) >= 10, lines  # the contracts were actually analysed


@pytest.mark.crosshair
def test_crosshair_finds_a_broken_contract() -> None:
    lines = crosshair("mutants.crosshair_mutant")
    assert any(": error:" in line for line in lines), lines
