"""``numaspec differential``: random merge cases, the reference against an implementation.

Unlike the suite, nothing here is expected in advance: every case goes to both, and every
answer of the implementation that does not agree with the reference's (``compare``, the
suite's own judgement) is a disagreement.  Each disagreement is shrunk (greedily: providers,
resources, hints, NUMA nodes, options and gates are taken away while the implementation still
disagrees) and written as one JSON Lines record, with the case it was found as, to a file that
``numaspec replay FILE --id ID --impl ...`` reads.  Cases come from
:mod:`numaspec.conformance.properties.random_cases`, seeded, for the releases the implementation
declares, and only those inside its claims (PROTO-7) are sent.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from numaspec.conformance.cases.vectors import compare
from numaspec.conformance.implementations.claims import Claims
from numaspec.conformance.implementations.connection import connect
from numaspec.conformance.properties.random_cases import random_merge_cases
from numaspec.errors import AdapterError
from numaspec.protocol import reference_result

__all__ = ["Differential", "differential", "shrink_merge_case"]

#: Disagreements shrunk per run (each shrink asks the implementation again, many times).
SHRUNK = 20


@attrs.frozen
class Differential:
    implementation: str
    cases: int
    verdicts: dict[str, int]
    disagreements: list[dict[str, Any]]

    def summary(self) -> str:
        counts = ", ".join(f"{n} {v}" for v, n in sorted(self.verdicts.items()))
        return (f"{self.cases} random merge cases against {self.implementation}: {counts}; "
                f"{len(self.disagreements)} disagreements with the reference")


def differential(impl: str, *, cases: int = 20_000, seed: int = 0, timeout: float = 30.0,
                 window: int = 32, shrink: int = SHRUNK) -> Differential:
    """``cases`` claimed random merge cases against ``impl``; the first ``shrink``
    disagreements are shrunk to minimal ones."""
    connection = connect(impl, timeout=timeout)
    try:
        declared = connection.implementation.kubelet_versions
        if "merge" not in connection.implementation.operations or not declared:
            raise AdapterError(f"{connection.implementation.name} declares no merge releases",
                               where="--impl")
        requests, expectations, drawn = _claimed_cases(connection.implementation.claims,
                                                       cases, seed, declared)
        answers = connection.run_many("merge", requests, window=window)
        result = _verdicts(connection, requests, expectations, answers, drawn=drawn, seed=seed)
        claims = connection.implementation.claims

        def disagrees(case: Any) -> bool:
            expected = reference_result("merge", case)
            if claims.outside("merge", case, expected, ()) is not None:
                return False
            answer = connection.run("merge", case)
            return answer.status == "result" and bool(
                compare("merge", case, expected, answer.result))

        for item in result.disagreements[:shrink]:
            if item["actual"] is None:
                continue  # adapter trouble: nothing to shrink against
            small = shrink_merge_case(item["case"], disagrees)
            if small != item["case"]:
                expected = reference_result("merge", small)
                answer = connection.run("merge", small)
                item.update({"found_as": item["case"], "case": small, "expected": expected,
                             "actual": answer.result,
                             "differences": compare("merge", small, expected, answer.result)})
    finally:
        connection.close()
    return result


def _verdicts(connection: Any, requests: list[Any], expectations: list[Any],
              answers: list[Any], *, drawn: int, seed: int) -> Differential:
    """The verdict of every answer, and the disagreements."""
    verdicts: Counter[str] = Counter()
    if drawn > len(requests):
        verdicts["not claimed (not sent)"] = drawn - len(requests)
    disagreements: list[dict[str, Any]] = []
    for i, (case, expected, answer) in enumerate(zip(requests, expectations, answers,
                                                     strict=True)):
        if answer.status != "result":
            verdicts[answer.status] += 1
            differences = [f"{answer.status}: {answer.message}"]
        else:
            differences = compare("merge", case, expected, answer.result)
            verdicts["agreed" if not differences else "disagreed"] += 1
        if differences and answer.status != "skipped":
            disagreements.append({"id": f"differential-{seed}-{i}", "op": "merge",
                                  "case": case, "expected": expected,
                                  "actual": answer.result, "differences": differences})
    return Differential(connection.implementation.name + " "
                        + connection.implementation.version, len(requests), dict(verdicts),
                        disagreements)


#: Batches of random cases drawn at most, to find enough inside a narrow claim.
_MAX_BATCHES = 20


def _claimed_cases(claims: Claims, cases: int, seed: int, declared: Sequence[str]
                   ) -> tuple[list[Any], list[Any], int]:
    """``cases`` random cases inside the implementation's claims (PROTO-7), their reference
    answers, and how many were drawn to find them.  An implementation that claims all of the
    merge gets exactly the cases of ``random_merge_cases(cases, seed, declared)``."""
    requests: list[Any] = []
    expectations: list[Any] = []
    drawn = 0
    for batch in range(_MAX_BATCHES):
        for case in random_merge_cases(cases, seed + batch * 1_000_003, declared):
            drawn += 1
            expected = reference_result("merge", case)
            if claims.outside("merge", case, expected, ()) is None:
                requests.append(case)
                expectations.append(expected)
                if len(requests) == cases:
                    return requests, expectations, drawn
    return requests, expectations, drawn


def _smaller(case: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every merge case one step smaller than ``case``: a provider, a resource or a hint
    less, an option or a gate less, a NUMA node no hint names less."""
    providers = case.get("providers") or []
    for i in range(len(providers)):
        yield {**case, "providers": providers[:i] + providers[i + 1:]}
    for i, provider in enumerate(providers):
        if not isinstance(provider, dict):
            continue
        for resource in list(provider):
            if len(provider) > 1:
                rest = {k: v for k, v in provider.items() if k != resource}
                yield {**case, "providers": [*providers[:i], rest, *providers[i + 1:]]}
            hints = provider[resource]
            for j in range(len(hints) if isinstance(hints, list) else 0):
                fewer = {**provider, resource: hints[:j] + hints[j + 1:]}
                yield {**case, "providers": [*providers[:i], fewer, *providers[i + 1:]]}
    for field in ("policy_options", "feature_gates"):
        table = case.get(field)
        if isinstance(table, dict) and table:
            for key in list(table):
                yield {**case, field: {k: v for k, v in table.items() if k != key}}
    named = {n for p in providers if isinstance(p, dict) for hints in p.values()
             if isinstance(hints, list) for h in hints if isinstance(h, dict)
             for n in (h.get("numa_affinity") or [])}
    nodes = case.get("numa_nodes") or []
    for node in nodes:
        if node not in named and len(nodes) > 1:
            smaller = {**case, "numa_nodes": [n for n in nodes if n != node]}
            distances = case.get("numa_distances")
            if isinstance(distances, dict):
                smaller["numa_distances"] = {k: v for k, v in distances.items()
                                             if str(k) != str(node)}
            yield smaller


def shrink_merge_case(case: dict[str, Any], still_fails: Callable[[Any], bool],
                      budget: int = 2_000) -> dict[str, Any]:
    """The smallest case reachable from ``case`` by :func:`_smaller` steps on which
    ``still_fails`` holds (greedy; at most ``budget`` tries)."""
    tries = 0
    while tries < budget:
        for smaller in _smaller(case):
            tries += 1
            if still_fails(smaller):
                case = smaller
                break
            if tries >= budget:
                return case
        else:
            return case
    return case


def main(impl: str, *, cases: int, seed: int, out: str | None, shrink: int = SHRUNK) -> int:
    result = differential(impl, cases=cases, seed=seed, shrink=shrink)
    print(result.summary())
    for item in result.disagreements[:5]:
        print(f"  {item['id']}: {json.dumps(item['case'], separators=(',', ':'))}\n"
              f"    {item['differences'][0]}")
    if result.disagreements and out:
        with Path(out).open("w", encoding="utf-8") as stream:
            for item in result.disagreements:
                stream.write(json.dumps({"type": "case", **item}, separators=(",", ":")) + "\n")
        print(f"all {len(result.disagreements)} written to {out} as JSON Lines, the first "
              f"{min(shrink, len(result.disagreements))} shrunk (numaspec replay {out} --id ID "
              f"--impl ...)")
    return 1 if result.disagreements else 0
