"""``numaspec bench``: merge cases per second through the adapter protocol.

A benchmark, not a test: it prints a figure and asserts nothing about speed. The cases are random
but seeded (``--seed``, :mod:`numaspec.conformance.properties.random_cases`), so that making them
costs little next to answering them. The reference's answers are computed before the clock starts,
so the figure also says whether the implementation agreed on every case."""

from __future__ import annotations

import time

from numaspec.conformance.implementations.connection import connect
from numaspec.conformance.properties.random_cases import random_merge_cases

__all__ = ["bench"]

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
