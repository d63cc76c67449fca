"""``numaspec bench``: merge cases per second through the adapter protocol.

A benchmark, not a test: it prints a figure and asserts nothing about speed.  The cases are
random but seeded (``--seed``), built with :mod:`random` so that making them costs nothing
next to answering them: 1 to 8 NUMA nodes (ids not always contiguous), 1 to 4 providers of 0 to 4
hints, every policy, kubelet 1.18 to 1.37.  The reference's answers are computed before the
clock starts, so the figure also says whether the implementation agreed on every case.
"""

from __future__ import annotations

import random
import time
from typing import Any

from numaspec.conformance.connection import connect
from numaspec.versions import SUPPORTED_VERSIONS

__all__ = ["bench", "random_merge_cases"]

_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")


def random_merge_cases(count: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        nodes = sorted(rng.sample(range(12), rng.randint(1, 8)))
        providers = []
        for p in range(rng.randint(1, 4)):
            hints = [{"numa_affinity": sorted(rng.sample(nodes, rng.randint(1, len(nodes)))),
                      "preferred": rng.random() < 0.6} for _ in range(rng.randint(0, 4))]
            providers.append({f"resource-{p}": hints if hints or rng.random() < 0.5 else None})
        cases.append({"kubelet_version": str(rng.choice(SUPPORTED_VERSIONS)),
                      "numa_nodes": nodes, "policy": rng.choice(_POLICIES),
                      "providers": providers})
    return cases


def bench(impl: str, *, cases: int = 20_000, seed: int = 0, window: int = 32) -> int:
    from numaspec.protocol import reference_result

    requests = random_merge_cases(cases, seed)
    expected = [reference_result("merge", case) for case in requests]
    connection = connect(impl, timeout=30.0)
    try:
        started = time.perf_counter()
        answers = connection.run_many("merge", requests, window=window)
        elapsed = time.perf_counter() - started
    finally:
        connection.close()
    disagreements = sum(a.status != "result" or a.result != e
                        for a, e in zip(answers, expected, strict=True))
    print(f"{cases} merge cases in {elapsed:.2f}s: {cases / elapsed:,.0f} cases/s through "
          f"{impl} ({connection.implementation.name}, {window} in flight); {disagreements} "
          "answers differ "
          "from the reference")
    return 0
