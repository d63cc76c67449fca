"""``numaspec differential``: random merge cases, the reference against an implementation.

Unlike the suite, nothing here is expected in advance: every case goes to both, and every
answer of the implementation that does not agree with the reference's (``compare``, the
suite's own judgement) is a disagreement.  The disagreements are written as a replayable file
(``numaspec replay FILE --id ID --impl ...``).  Cases come from
:mod:`numaspec.conformance.properties.random_cases`, seeded, for the releases the implementation
declares, and only those inside its claims (PROTO-7) are sent.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from numaspec.conformance.cases.vectors import compare
from numaspec.conformance.implementations.claims import Claims
from numaspec.conformance.implementations.connection import connect
from numaspec.conformance.properties.random_cases import random_merge_cases
from numaspec.errors import AdapterError
from numaspec.protocol import reference_result

__all__ = ["Differential", "differential"]


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
                 window: int = 32) -> Differential:
    connection = connect(impl, timeout=timeout)
    try:
        declared = connection.implementation.kubelet_versions
        if "merge" not in connection.implementation.operations or not declared:
            raise AdapterError(f"{connection.implementation.name} declares no merge releases",
                               where="--impl")
        requests, expectations, drawn = _claimed_cases(connection.implementation.claims,
                                                       cases, seed, declared)
        answers = connection.run_many("merge", requests, window=window)
    finally:
        connection.close()
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


def main(impl: str, *, cases: int, seed: int, out: str | None) -> int:
    result = differential(impl, cases=cases, seed=seed)
    print(result.summary())
    for item in result.disagreements[:5]:
        print(f"  {item['id']}: {json.dumps(item['case'])}\n    {item['differences'][0]}")
    if result.disagreements and out:
        Path(out).write_text(json.dumps({"vectors": result.disagreements}, indent=1) + "\n",
                             encoding="utf-8")
        print(f"all {len(result.disagreements)} written to {out} "
              f"(numaspec replay {out} --id ID --impl ...)")
    return 1 if result.disagreements else 0
