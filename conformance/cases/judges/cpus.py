"""The ``cpus`` operation's judge (CPU-21)."""

from __future__ import annotations

from typing import Any

from numaspec.conformance.cases.judges.judge import Judge
from numaspec.conformance.cases.judges.wording import require, short

__all__ = ["JUDGES"]


def _compare_cpus(_: Any, expected: Any, actual: Any) -> list[str]:
    """CPU-21: the same CPUs; an unsatisfiable request agrees with one, its words free; an
    error agrees with an error of the same kind."""
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return [f"expected {short(expected)}, got {short(actual)}"]
    if "unsatisfiable" in expected and "unsatisfiable" in actual:
        return []
    if "error" in expected and "error" in actual:
        kinds = (expected["error"] or {}).get("kind"), (actual["error"] or {}).get("kind")
        return [] if kinds[0] == kinds[1] else [f"error kind {kinds[1]!r}, expected "
                                                 f"{kinds[0]!r}"]
    if expected == actual:
        return []
    return [f"expected {short(expected)}, got {short(actual)}"]



def _case(case: Any, where: str) -> None:
    require(isinstance(case, dict), "a cpus case object", where)


def _answer(answer: Any, where: str) -> None:
    require(isinstance(answer, dict) and len(answer) == 1
             and set(answer) <= {"cpus", "unsatisfiable", "error"},
             '{"cpus": [...]} | {"unsatisfiable": "..."} | {"error": {...}}', where)


JUDGES = (Judge("cpus", _compare_cpus, case=_case, answer=_answer, channel="cpus"),)
