"""The ``allocate`` operation's judge (DRA-2): the same answer up to the order of the node's
pools (:mod:`numaspec.conformance.cases.allocations`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaspec.conformance.cases.allocations import TIMED_OUT, allocation_differences
from numaspec.conformance.cases.judges.judge import Draw, Judge
from numaspec.conformance.cases.judges.wording import require

__all__ = ["JUDGES"]


def _compare(case: Any, expected: Any, actual: Any) -> list[str]:
    return allocation_differences(case, expected, actual)


def _case(case: Any, where: str) -> None:
    require(isinstance(case, dict), "an allocate case object", where)


def _answer(answer: Any, where: str) -> None:
    require(isinstance(answer, dict) and "outcome" in answer,
             '{"outcome": "allocated" | "unschedulable" | "error", ...}', where)


#: RUN-5: an allocation's facts a manifest's ``match`` may name.
FACTS = {
    "actual.timed_out": "allocate: the implementation answered unschedulable because its search "
                        "passed the scheduler's Filter timeout (DRA-7)",
    "allocate.release": "allocate: the case's Kubernetes release, as a minor (\"1.34\")",
}


def _facts(case: Mapping[str, Any], _expected: Any, actual: Any) -> dict[str, Any]:
    return {"actual.timed_out": (isinstance(actual, Mapping)
                                 and actual.get("outcome") == "unschedulable"
                                 and actual.get("message") == TIMED_OUT),
            "allocate.release": case.get("release")}


_CASES = "numaspec.conformance.properties.allocate_cases"
JUDGES = (Judge("allocate", _compare, case=_case, answer=_answer, channel="allocate",
                fact_names=FACTS, facts=_facts,
                draws=(Draw("allocate", f"{_CASES}:draw_allocate_case", batch=200),),
                smaller=f"{_CASES}:smaller_allocate_cases", asks=3,
                refusals_unclaimed=True),)
