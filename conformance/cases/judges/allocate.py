"""The ``allocate`` operation's judge (DRA-2): the same answer up to the order of the node's
pools (:mod:`numaspec.conformance.cases.allocations`)."""

from __future__ import annotations

from typing import Any

from numaspec.conformance.cases.judges.judge import Judge
from numaspec.conformance.cases.judges.wording import require

__all__ = ["JUDGES"]


def _compare(case: Any, expected: Any, actual: Any) -> list[str]:
    from numaspec.conformance.cases.allocations import allocation_differences

    return allocation_differences(case, expected, actual)


def _case(case: Any, where: str) -> None:
    require(isinstance(case, dict), "an allocate case object", where)


def _answer(answer: Any, where: str) -> None:
    require(isinstance(answer, dict) and "outcome" in answer,
             '{"outcome": "allocated" | "unschedulable" | "error", ...}', where)


JUDGES = (Judge("allocate", _compare, case=_case, answer=_answer, channel="allocate"),)
