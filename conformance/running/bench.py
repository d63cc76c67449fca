"""``numaspec bench``: merge cases per second through the adapter protocol.

A benchmark, not a test: it prints a figure and asserts nothing about speed. The cases are random
but seeded (``--seed``, :mod:`numaspec.conformance.properties.random_cases`), so that making them
costs little next to answering them. The reference's answers are computed before the clock starts,
so the figure also says whether the implementation agreed on every case.  ``--jobs N`` runs the
cases in N contiguous pieces (:mod:`numaspec.conformance.running.sharding`), each in its own
process with its own connection: the same cases, and the figure is all of them over the
longest piece's time.  ``--baseline IMPL`` sends the same cases to another implementation
(numaspec serve of an older commit, say) in turn with ``--impl``, in one run, and prints the
ratio.  ``numaspec bench --sizes`` is the size table instead (:mod:`.sizes`)."""

from __future__ import annotations

import time

import attrs

from numaspec.conformance.implementations.connection import connect
from numaspec.conformance.properties.random_cases import random_merge_cases

__all__ = ["BenchPiece", "bench", "compare"]


@attrs.frozen
class BenchPiece:
    """One piece of a bench: its cases through one connection (a picklable task)."""

    impl: str
    seed: int
    window: int

    def __call__(self, piece: range, _tick: object = None) -> tuple[int, float, int, str]:
        """(cases, seconds, disagreements, implementation name) for the cases of ``piece``."""
        from numaspec.protocols.adapter_protocol import reference_result

        requests = random_merge_cases(len(piece), self.seed, start=piece.start)
        expected = [reference_result("merge", case) for case in requests]
        connection = connect(self.impl, timeout=30.0)
        try:
            started = time.perf_counter()
            answers = connection.run_many("merge", requests, window=self.window)
            elapsed = time.perf_counter() - started
        finally:
            connection.close()
        disagreements = sum(a.status != "result" or a.result != e
                            for a, e in zip(answers, expected, strict=True))
        return len(requests), elapsed, disagreements, connection.implementation.name


def compare(impl: str, baseline: str, *, cases: int = 20_000, seed: int = 0,
            window: int = 32, rounds: int = 2) -> int:
    """``numaspec bench --baseline``: the same cases through ``baseline`` and ``impl`` in
    turn, ``rounds`` times each, in one run (so the machine's load falls on both); the best
    round of each, and the ratio."""
    best: dict[str, tuple[float, int, str]] = {}
    for _ in range(rounds):
        for which in (baseline, impl):
            _count, elapsed, disagreements, name = BenchPiece(which, seed, window)(range(cases))
            if which not in best or elapsed < best[which][0]:
                best[which] = (elapsed, disagreements, name)
    lines = []
    for label, which in (("baseline", baseline), ("this", impl)):
        elapsed, disagreements, name = best[which]
        lines.append(f"{label}: {cases / elapsed:,.0f} cases/s through {which} ({name}; best "
                     f"of {rounds}); {disagreements} answers differ from the reference")
    print("\n".join(lines))
    print(f"{best[baseline][0] / best[impl][0]:.2f}x the baseline's cases per second "
          f"({cases:,} merge cases, seed {seed}, {window} in flight)")
    return 0


def bench(impl: str, *, cases: int = 20_000, seed: int = 0, window: int = 32,
          jobs: int = 1, baseline: str | None = None) -> int:
    if baseline is not None:
        return compare(impl, baseline, cases=cases, seed=seed, window=window)
    if jobs == 1:
        count, elapsed, disagreements, name = BenchPiece(impl, seed, window)(range(cases))
        how = f"{window} in flight"
    else:
        from numaspec.conformance.running.sharding import Engine, run_sharded, shard_ranges

        results = run_sharded(BenchPiece(impl, seed, window), shard_ranges(cases, jobs),
                              engine=Engine(jobs=jobs))
        # The pieces run at once: their cases over the longest piece's time on the clock.
        elapsed = max(r[1] for r in results)
        count = sum(r[0] for r in results)
        disagreements = sum(r[2] for r in results)
        name = results[0][3]
        how = f"{jobs} processes, {window} in flight each"
    print(f"{count} merge cases in {elapsed:.2f}s: {count / elapsed:,.0f} cases/s through "
          f"{impl} ({name}, {how}); {disagreements} answers differ from the reference")
    return 0
