"""Mutant CPU allocators (spec chapter cpu.md, CPU-21): the reference's ``cpus`` answer,
changed one way.  In process for P-CPUS (:class:`MutantCPUs`), behind the adapter protocol for
``numaspec differential --shape cpus`` (``mutants.cpus_mutants:LOWEST_FIRST`` and so on, for
``--impl``: the allocator mutants' adapter, serving ``cpus``)."""

from __future__ import annotations

from typing import Any

from numaspec.protocols.adapter_protocol import reference_result
from numaspec_tools.mutants.allocate_mutants import MutantAdapter

__all__ = ["IGNORES_UNCORE", "LOWEST_FIRST", "MUTATIONS", "MutantCPUs"]


def lowest_first(case: Any, answer: Any) -> Any:
    """Takes the lowest free CPU ids, whatever the topology."""
    if isinstance(answer, dict) and "cpus" in answer:
        return {"cpus": sorted(case["available"])[:case["count"]]}
    return answer


def ignores_uncore(case: Any, answer: Any) -> Any:
    """Allocates as if prefer-align-cpus-by-uncorecache were never set (a copy of the
    allocator that lost the option)."""
    del answer
    plain = {k: v for k, v in case.items() if k not in ("options", "feature_gates")}
    return reference_result("cpus", plain)


def takes_a_reserved_cpu(case: Any, answer: Any) -> Any:
    """Hands out, for its last CPU, one it was not given (DRACPU-1's kind of slip)."""
    if isinstance(answer, dict) and answer.get("cpus"):
        every = sorted(t for n in case["machine"]["numaNodes"] for c in n.get("cores", ())
                       for t in c["threads"])
        unavailable = [t for t in every if t not in case["available"]]
        if unavailable:
            return {"cpus": sorted([*answer["cpus"][:-1], unavailable[0]])}
    return answer


MUTATIONS = {"lowest_first": lowest_first, "ignores_uncore": ignores_uncore,
             "takes_a_reserved_cpu": takes_a_reserved_cpu}


class MutantCPUs:
    """In process, for P-CPUS: ``cpus(case)`` is the mutated answer."""

    name = "mutant-cpus"
    node_kubelet_versions = ("1.34", "1.35", "1.36", "1.37")

    def __init__(self, mutation: str) -> None:
        self.mutate = MUTATIONS[mutation]

    def cpus(self, case: Any) -> Any:
        return self.mutate(case, reference_result("cpus", case))


def LOWEST_FIRST() -> MutantAdapter:
    return MutantAdapter("lowest_first", op="cpus", mutations=MUTATIONS)


def IGNORES_UNCORE() -> MutantAdapter:
    return MutantAdapter("ignores_uncore", op="cpus", mutations=MUTATIONS)
