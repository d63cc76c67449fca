"""The ``predict`` operation's judge for the reference's own answers: the same answer exactly
(the runner judges an implementation's prediction by PRED-4 instead)."""

from __future__ import annotations

from typing import Any

from numaspec.conformance.cases.judges.judge import Judge
from numaspec.conformance.cases.judges.wording import LIMIT, require

__all__ = ["JUDGES"]


def _compare(_: Any, expected: Any, actual: Any) -> list[str]:
    from numaspec.conformance.cases.predictions import same_answer

    return [d[:LIMIT] for d in same_answer(expected, actual)]


def _case(case: Any, where: str) -> None:
    require(isinstance(case, dict) and set(case) == {"steps", "pod"}
             and isinstance(case["steps"], list) and bool(case["steps"]),
             '{"steps": [create/admit/remove request, ...], "pod": {...}}', where)


def _answer(answer: Any, where: str) -> None:
    require(isinstance(answer, dict) and isinstance(answer.get("fits"), bool),
             '{"fits": true | false, ...}', where)


JUDGES = (Judge("predict", _compare, case=_case, answer=_answer, channel="predict"),)
