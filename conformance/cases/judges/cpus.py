"""The ``cpus`` operation's judge (CPU-21)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaspec.conformance.cases.judges.judge import Draw, Judge
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


#: RUN-5: a ``cpus`` case's facts a manifest's ``match`` may name.
FACTS = {
    "cpus.shared_core_ids": "cpus: two cores of the machine have the same id (as sysfs "
                            "numbers cores, each socket from zero)",
}


def _facts(case: Mapping[str, Any], _expected: Any, _actual: Any) -> dict[str, Any]:
    """Whether two cores of the case's machine give the same ``id``."""
    machine = case.get("machine")
    nodes = machine.get("numaNodes") if isinstance(machine, Mapping) else None
    ids = [core.get("id") for node in nodes if isinstance(node, Mapping)
           for core in node.get("cores") or () if isinstance(core, Mapping)
           and core.get("id") is not None] if isinstance(nodes, list) else []
    return {"cpus.shared_core_ids": len(ids) != len(set(ids))}


_CASES = "numaspec.conformance.properties.cpus_cases"
JUDGES = (Judge("cpus", _compare_cpus, case=_case, answer=_answer, channel="cpus",
                fact_names=FACTS, facts=_facts,
                draws=(Draw("cpus", f"{_CASES}:draw_cpus_case", batch=200),),
                smaller=f"{_CASES}:smaller_cpus_cases", refusals_unclaimed=True),)
