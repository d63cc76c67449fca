"""The ``mixed`` operation's judge (DRA-13): the same answer exactly, part by part (only the
reference answers it; its cases search one pool per driver)."""

from __future__ import annotations

from typing import Any

from numaspec.conformance.cases.judges.judge import Judge
from numaspec.conformance.cases.judges.wording import require, short

__all__ = ["JUDGES"]


def _compare_mixed(_: Any, expected: Any, actual: Any) -> list[str]:
    """DRA-13: each part that differs, named, with both sides."""
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return [] if expected == actual else [f"expected {short(expected)}, got "
                                              f"{short(actual)}"]
    return [f"{key}: expected {short(expected.get(key))}, got {short(actual.get(key))}"
            for key in sorted(set(expected) | set(actual))
            if expected.get(key) != actual.get(key)]



def _case(case: Any, where: str) -> None:
    require(isinstance(case, dict) and isinstance(case.get("dra"), dict)
             and isinstance(case.get("steps"), list), "a mixed case object", where)


def _answer(answer: Any, where: str) -> None:
    require(isinstance(answer, dict) and ("allocation" in answer or "error" in answer),
             '{"allocation": ..., "admission": ..., "containers": [...]}', where)


JUDGES = (Judge("mixed", _compare_mixed, case=_case, answer=_answer, channel=None),)
