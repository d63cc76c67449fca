"""Mutant allocators (spec chapter dra.md): the reference's ``allocate`` answer, changed one
way.  In process for the properties (:class:`MutantAllocator`), behind the adapter protocol
for ``numaspec differential --shape allocate`` (``mutants.allocate_mutants:REVERSED`` and so
on, for ``--impl``)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from typing import Any

from numaspec.protocols.adapter_protocol import ReferenceAdapter, reference_result

__all__ = ["ADMIN_AS_ANY", "FIRST_LISTED", "IGNORES_CONSTRAINTS", "IGNORES_TAINTS",
           "MUTATIONS", "REVERSED", "TIMES_OUT", "MutantAdapter", "MutantAllocator"]


def reversed_picks(case: Any, answer: Any) -> Any:
    """Lists each claim's devices last taken first."""
    del case
    if isinstance(answer, dict) and answer.get("outcome") == "allocated":
        return {**answer, "claims": [{"devices": c["devices"][::-1]}
                                     for c in answer["claims"]]}
    return answer


def ignores_constraints(case: Any, answer: Any) -> Any:
    """Allocates as if no claim had constraints."""
    del answer
    loose = copy.deepcopy(case)
    for claim in loose.get("claims", []):
        claim.get("spec", {}).get("devices", {}).pop("constraints", None)
    return reference_result("allocate", loose)


def times_out(case: Any, answer: Any) -> Any:
    """Answers every allocation as the scheduler's Filter timeout would (DRA-7)."""
    del case
    if isinstance(answer, dict) and answer.get("outcome") == "allocated":
        return {"outcome": "unschedulable", "message": "timed out trying to allocate devices"}
    return answer


def first_listed(case: Any, answer: Any) -> Any:
    """Searches pools and slices as listed whatever allocator the case chooses, naming none
    (how numaspec answered before DRA-8 chose the variant)."""
    from numaspec.errors import NumaspecError
    from numaspec.protocols.allocate_protocol import (
        allocate_answers,
        decode_allocate_case,
        encode_allocation,
    )

    if not isinstance(answer, dict) or "error" in answer:
        return answer
    try:
        return encode_allocation(next(allocate_answers(decode_allocate_case(case), "stable")))
    except NumaspecError:
        return answer


def ignores_taints(case: Any, answer: Any) -> Any:
    """Allocates as if no device were tainted (DRA-16)."""
    del answer
    clean = copy.deepcopy(case)
    for slice_ in clean.get("slices", []):
        for device in slice_.get("spec", {}).get("devices", []):
            device.pop("taints", None)
    return reference_result("allocate", clean)


def admin_as_any(case: Any, answer: Any) -> Any:
    """Lets a request with admin access take only free devices, as any other (DRA-17); its
    picks still say adminAccess."""
    plain = copy.deepcopy(case)
    admin = set()
    for ci, claim in enumerate(plain.get("claims", [])):
        for request in claim.get("spec", {}).get("devices", {}).get("requests", []):
            exact = request.get("exactly") or {}
            if exact.pop("adminAccess", None):
                admin.add((ci, request.get("name")))
    if not admin:
        return answer
    result = reference_result("allocate", plain)
    if isinstance(result, dict) and result.get("outcome") == "allocated":
        for ci, claim in enumerate(result["claims"]):
            for pick in claim["devices"]:
                if (ci, pick["request"]) in admin:
                    pick["adminAccess"] = True
    return result


def lists_as_scalars(case: Any, answer: Any) -> Any:
    """Matches attributes as scalars with ListTypeAttributes on (DRA-18), the same allocator
    answering."""
    features = list(case.get("features") or ())
    if "ListTypeAttributes" not in features or not isinstance(answer, dict):
        return answer
    scalar = {**case, "features": [f for f in features if f != "ListTypeAttributes"],
              "variant": answer.get("variant", "experimental")}
    result = reference_result("allocate", scalar)
    if isinstance(result, dict) and "error" not in result:
        return {**result, "variant": answer.get("variant")}
    return answer


def ignores_counters(case: Any, answer: Any) -> Any:
    """Allocates as if no device consumed counters (DRA-19): partitions of one device taken
    together."""
    free = copy.deepcopy(case)
    found = False
    for slice_ in free.get("slices", []):
        for device in slice_.get("spec", {}).get("devices", []):
            found |= device.pop("consumesCounters", None) is not None
    return reference_result("allocate", free) if found else answer


def allocated_consume_nothing(case: Any, answer: Any) -> Any:
    """Counts no counters for the devices allocated before the search (DRA-19)."""
    allocated = set(case.get("allocated") or ())
    free = copy.deepcopy(case)
    found = False
    for slice_ in free.get("slices", []):
        spec = slice_.get("spec", {})
        for device in spec.get("devices", []):
            if f"{spec.get('driver')}/{spec.get('pool', {}).get('name')}/" \
                    f"{device.get('name')}" in allocated:
                found |= device.pop("consumesCounters", None) is not None
    return reference_result("allocate", free) if found else answer


def shares_ignored(case: Any, answer: Any) -> Any:
    """Counts no allocated share (DRA-20): their devices' capacity all free."""
    if not case.get("allocatedShares"):
        return answer
    return reference_result("allocate", {k: v for k, v in case.items()
                                         if k != "allocatedShares"})


def never_shared(case: Any, answer: Any) -> Any:
    """Takes every device whole (DRA-20): ``allowMultipleAllocations`` ignored."""
    whole = copy.deepcopy(case)
    found = False
    for slice_ in whole.get("slices", []):
        for device in slice_.get("spec", {}).get("devices", []):
            found |= bool(device.pop("allowMultipleAllocations", None))
    return reference_result("allocate", whole) if found else answer


def ignores_distinct(case: Any, answer: Any) -> Any:
    """Keeps no ``distinctAttribute`` constraint (DRA-21)."""
    free = copy.deepcopy(case)
    found = False
    for claim in free.get("claims", []):
        devices = claim.get("spec", {}).get("devices", {})
        kept = [c for c in devices.get("constraints") or [] if "distinctAttribute" not in c]
        found |= len(kept) != len(devices.get("constraints") or [])
        devices["constraints"] = kept
    return reference_result("allocate", free) if found else answer


def ignores_quantities(case: Any, answer: Any) -> Any:
    """Drops every selector over capacities or versions (DRA-22): as if they were true."""
    free = copy.deepcopy(case)
    found = False
    for claim in free.get("claims", []):
        for request in claim.get("spec", {}).get("devices", {}).get("requests", []):
            for body in [request.get("exactly") or {}, *(request.get("firstAvailable") or [])]:
                kept = [s for s in body.get("selectors") or []
                        if not any(w in json.dumps(s) for w in ("capacity", "semver(",
                                                                 "quantity("))]
                found |= len(kept) != len(body.get("selectors") or [])
                body["selectors"] = kept
    return reference_result("allocate", free) if found else answer


def answers_malformed(_case: Any, answer: Any) -> Any:
    """Answers a case the API server would refuse as if it were valid (DRA-0): nothing to
    allocate there."""
    error = answer.get("error") if isinstance(answer, dict) else None
    if isinstance(error, dict) and error.get("kind") == "invalid-field":
        return {"outcome": "unschedulable", "variant": "stable",
                "message": "cannot allocate all claims"}
    return answer


def refuses_at_the_top(_case: Any, answer: Any) -> Any:
    """Refuses what the reference refuses, with the kind, but points at the whole case
    (DRA-0: where an error points is part of numaspec's line format)."""
    error = answer.get("error") if isinstance(answer, dict) else None
    if isinstance(error, dict):
        return {"error": {**error, "where": ""}}
    return answer


MUTATIONS = {"reversed_picks": reversed_picks, "ignores_constraints": ignores_constraints,
             "times_out": times_out, "first_listed": first_listed,
             "ignores_taints": ignores_taints, "admin_as_any": admin_as_any,
             "lists_as_scalars": lists_as_scalars, "ignores_counters": ignores_counters,
             "allocated_consume_nothing": allocated_consume_nothing,
             "shares_ignored": shares_ignored, "never_shared": never_shared,
             "ignores_distinct": ignores_distinct, "ignores_quantities": ignores_quantities,
             "answers_malformed": answers_malformed, "refuses_at_the_top": refuses_at_the_top}


class MutantAllocator:
    """In process, for a property: ``allocate(case)`` is the mutated answer."""

    name = "mutant-allocator"
    allocate_versions = ("1.33", "1.34", "1.35", "1.36", "1.37")

    def __init__(self, mutation: str) -> None:
        self.mutate = MUTATIONS[mutation]

    def allocate(self, case: Any) -> Any:
        return self.mutate(case, reference_result("allocate", case))


class MutantAdapter(ReferenceAdapter):
    """Behind the adapter protocol: the reference serving one operation (``allocate``
    unless told), its answers mutated by one of ``mutations`` (this module's unless told;
    tools/numaspec_tools/mutants/cpus_mutants.py passes its own)."""

    def __init__(self, mutation: str, *, op: str = "allocate",
                 mutations: Mapping[str, Callable[[Any, Any], Any]] | None = None) -> None:
        super().__init__()
        self.mutation = mutation
        self.op = op
        self.mutate = (MUTATIONS if mutations is None else mutations)[mutation]

    def start(self) -> dict[str, Any]:
        return {**super().start(), "name": f"mutant-{self.mutation}",
                "operations": [self.op]}

    def run(self, op: str, case: Any) -> dict[str, Any]:
        body = super().run(op, case)
        if op == self.op and "result" in body and "error" not in body["result"]:
            return {"result": self.mutate(case, body["result"])}
        return body


def REVERSED() -> MutantAdapter:
    return MutantAdapter("reversed_picks")


def IGNORES_CONSTRAINTS() -> MutantAdapter:
    return MutantAdapter("ignores_constraints")


def TIMES_OUT() -> MutantAdapter:
    return MutantAdapter("times_out")


def FIRST_LISTED() -> MutantAdapter:
    return MutantAdapter("first_listed")


def IGNORES_TAINTS() -> MutantAdapter:
    return MutantAdapter("ignores_taints")


def ADMIN_AS_ANY() -> MutantAdapter:
    return MutantAdapter("admin_as_any")
