"""``numaspec differential``: random merge cases (or, ``--shape allocate``, the DRA allocator's
``allocate`` cases, DRA-10), the reference against an implementation.

Unlike the suite, nothing here is expected in advance: every case goes to both, and every
answer of the implementation that does not agree with the reference's (``compare``, the
suite's own judgement) is a disagreement.  Each disagreement is shrunk (greedily: providers,
resources, hints, NUMA nodes, options and gates are taken away while the implementation still
disagrees) and written as one JSON Lines record, with the case it was found as, to a file that
``numaspec replay FILE --id ID --impl ...`` reads.  Cases come from
:mod:`numaspec.conformance.properties.random_cases`, seeded, for the releases the implementation
declares, and only those inside its claims (PROTO-7) are sent.

Case ``i`` of a seed is the same case however the campaign runs (``--jobs N``, ``--ray``:
:mod:`numaspec.conformance.running.sharding`), and its ID says which it is:
``differential-<seed>-<i>`` (``differential-large-<seed>-<i>`` for ``--shape large``).  The
campaign is the first ``cases`` claimed cases of the seed's sequence; each piece of the
sequence reports what it found, and the pieces are put together in case order, so the verdicts
and disagreements do not depend on how many pieces there were.
"""

from __future__ import annotations

import bisect
import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from numaspec.conformance.cases.allocations import TIMED_OUT
from numaspec.conformance.cases.divergences import Divergence, facts, matches
from numaspec.conformance.cases.expectations import load_manifest
from numaspec.conformance.cases.judges import JUDGES, compare
from numaspec.conformance.implementations.connection import Answer, Connection, connect
from numaspec.conformance.properties.random_cases import CaseShape, permutations, shrink_case
from numaspec.conformance.running.sharding import Engine, Runner, Tick
from numaspec.errors import AdapterError, NumaspecError
from numaspec.protocols.adapter_protocol import reference_result

__all__ = ["Differential", "InRun", "PieceResult", "differential", "in_run"]

#: Disagreements shrunk per run (each shrink asks the implementation again, many times).
SHRUNK = 20
#: The cases drawn at most: this many times ``cases``, to find enough inside a narrow claim.
_MAX_BATCHES = 20


@attrs.frozen
class Differential:
    implementation: str
    cases: int
    verdicts: dict[str, int]
    disagreements: list[dict[str, Any]]
    #: the most permutations (product of hint-list lengths) of a case sent
    largest: int = 0
    #: large shape: how many cases were sent per count of NUMA nodes
    numa_nodes: dict[int, int] = attrs.field(factory=dict)
    #: RUN-5: disagreements booked on a known divergence of the manifest, per finding
    explained: dict[str, int] = attrs.field(factory=dict)
    #: the operation the cases asked (``merge``, or ``allocate`` for DRA-10's)
    op: str = "merge"

    @property
    def unexplained(self) -> list[dict[str, Any]]:
        """The disagreements no known divergence explains (all of them without a manifest)."""
        return [d for d in self.disagreements if "finding" not in d]

    def summary(self) -> str:
        counts = ", ".join(f"{n} {v}" for v, n in sorted(self.verdicts.items()))
        text = (f"{self.cases} random {self.op} cases against {self.implementation}: {counts}; "
                f"{len(self.disagreements)} disagreements with the reference")
        if self.explained:
            text += (f", {len(self.unexplained)} unexplained (known divergences: "
                     + ", ".join(f"{f} {n}" for f, n in sorted(self.explained.items())) + ")")
        return text


def differential(impl: str, *, cases: int = 20_000, seed: int = 0, timeout: float = 30.0,
                 window: int = 32, shrink: int = SHRUNK, shape: CaseShape | None = None,
                 engine: Engine | None = None,
                 progress: Callable[[int, int], None] | None = None,
                 expectations: str | None = None) -> Differential:
    """``cases`` claimed random merge cases of ``shape`` against ``impl``, run on
    ``engine`` (default: this process); the first ``shrink`` disagreements that no known
    divergence of the ``expectations`` manifest explains are shrunk to minimal ones (RUN-5:
    each explained one is booked on its finding, by the matcher the suite uses)."""
    divergences = load_manifest(expectations).divergences_for(
        "differential", "differential") if expectations else ()
    piece = _Piece(impl, seed, shape or CaseShape(), timeout, window)
    with Runner(engine or Engine()) as runner:
        results: list[PieceResult] = []
        start = 0
        while True:  # one round, unless a narrow claim leaves too few cases to send
            count = _next_round(results, cases, start)
            pieces = runner.engine.pieces(start, count) or [range(start, start)]
            results += runner.map(piece, pieces, measure=PieceResult.measure,
                                  progress=_offset(progress, results))
            start += count
            for piece_result in results:
                if piece_result.error is not None:
                    raise AdapterError(piece_result.error)
            if count == 0 or _tally(results, cases).cases >= cases:
                break
        result = _tally(results, cases)
        found = result.disagreements
        explained: Counter[str] = Counter()
        for item in found:
            finding = _explained(item, divergences)
            if finding is not None:
                item["finding"] = finding
                explained[finding] += 1
        if explained:
            result = attrs.evolve(result, explained=dict(explained))
        result = attrs.evolve(result, op=piece.shape.op)
        # a search the scheduler's Filter timeout stopped (DRA-7) is not shrunk: each try
        # would wait for the timeout again, and where it stops depends on the machine
        chosen = [k for k, d in enumerate(found) if d["actual"] is not None
                  and "finding" not in d and not _timed_out(d["actual"])][:shrink]
        shrunk = _shrink_all(impl, timeout, [found[k] for k in chosen], runner)
        for k, item in zip(chosen, shrunk, strict=True):
            found[k] = item
    if piece.shape.op == "merge":
        _blame_all(found)
    return result


def _blame_all(found: list[dict[str, Any]]) -> None:
    """RUN-17: each merge disagreement names the rules that decided it, and what the
    reference compared (``rules``, ``why``)."""
    from numaspec.conformance.cases.decisions import blame

    for item in found:
        if item["actual"] is not None:
            decided = blame(item["case"], item["expected"], item["actual"])
            item["rules"], item["why"] = list(decided.rules), list(decided.why)


@attrs.frozen
class InRun:
    """RUN-22: the differential of one conformance run: what it judged, what each judged
    case reached (RUN-17), and its disagreements, each blamed on the rules that decided."""

    result: Differential
    seed: int
    asked: int
    reached: dict[str, int]
    #: why it stopped before ``asked`` cases were judged, if it did
    cut: str = ""


def in_run(connection: Connection, *, cases: int, seed: int, seconds: float,
           divergences: Sequence[Divergence] = (), shrink: int = 5,
           progress: Callable[[int], None] | None = None) -> InRun:
    """``cases`` claimed random merge cases of ``seed`` against the run's own connection
    (no second adapter started), judged as ``numaspec differential`` judges them; drawing
    stops after ``seconds`` (the record says so, and how many were judged); the first
    ``shrink`` unexplained disagreements are shrunk on the same connection, and each one
    names the rules that decided it (RUN-17)."""
    import time

    from numaspec.conformance.cases.decisions import Tally

    shape = CaseShape()
    piece = _Piece(connection.implementation.name, seed, shape, 30.0, 32)
    deadline = time.monotonic() + seconds
    results: list[PieceResult] = []
    start, cut = 0, ""
    step = 250
    while _tally(results, cases).cases < cases and start < cases * _MAX_BATCHES:
        if time.monotonic() > deadline:
            cut = f"stopped after {seconds:g} s (--differential-seconds)"
            break
        results.append(piece._run(connection, range(start, start + step), lambda *_: None))
        start += step
        if progress is not None:
            progress(_tally(results, cases).cases)
    result = _tally(results, cases)
    tally = Tally()
    versions = shape.versions(connection.implementation.kubelet_versions,
                              connection.implementation.name)
    judged = {int(str(d["id"]).rsplit("-", 1)[1]) for d in result.disagreements}
    taken = 0
    for piece_result in sorted(results, key=lambda r: r.low):
        unclaimed = set(piece_result.unclaimed)
        for i in range(piece_result.low, piece_result.high):
            if taken >= result.cases:
                break
            if i in unclaimed:
                continue
            taken += 1
            if i not in judged:  # RUN-17: what the agreed cases reached
                tally.add("merge", shape.case_at(seed, i, versions))
    explained: Counter[str] = Counter()
    for item in result.disagreements:
        finding = _explained(item, divergences)
        if finding is not None:
            item["finding"] = finding
            explained[finding] += 1
    chosen = [d for d in result.disagreements if "finding" not in d][:shrink]
    for item in chosen:
        if item["actual"] is not None:
            item.update(_shrunk(connection, item))
    _blame_all(result.disagreements)
    if explained:
        result = attrs.evolve(result, explained=dict(explained))
    return InRun(result, seed, cases, tally.reached, cut)


def _timed_out(actual: Any) -> bool:
    return isinstance(actual, dict) and actual.get("message") == TIMED_OUT


def _explained(item: dict[str, Any], divergences: Sequence[Divergence]) -> str | None:
    """The finding of the known divergence a disagreement falls in, or None."""
    if not divergences:
        return None
    actual = item["actual"]
    if actual is None and item["differences"][0].startswith("errored: "):
        actual = {"errored": item["differences"][0].removeprefix("errored: ")}
    found = facts(item.get("op", "merge"), item["case"], item["expected"], actual)
    return next((d.finding for d in divergences if matches(d.match, found)), None)


def _next_round(results: Sequence[PieceResult], cases: int, start: int) -> int:
    """How many cases the next round draws: ``cases`` first, then as many as the share of
    claimed cases so far says are still needed (and a tenth more), within the limit."""
    count = cases
    drawn = sum(r.high - r.low for r in results)
    if drawn:
        claimed = drawn - sum(len(r.unclaimed) for r in results)
        needed = cases - claimed
        count = needed * drawn // max(claimed, 1) * 11 // 10 + 1
    return max(0, min(count, cases * _MAX_BATCHES - start))


def _offset(progress: Callable[[int, int], None] | None, before: Sequence[PieceResult]
            ) -> Callable[[int, int], None] | None:
    """``progress`` of a later round: counted on from the rounds ``before`` it."""
    if progress is None:
        return None
    done = sum(r.high - r.low for r in before)
    failed = sum(len(r.verdicts) for r in before)
    return lambda d, f: progress(done + d, failed + f)


@attrs.frozen
class PieceResult:
    """What one piece of the sequence of cases found: its range, the cases in it outside the
    implementation's claims, and the verdict of each claimed case that was not ``agreed``
    (with a disagreement record unless it was ``skipped``)."""

    implementation: str
    low: int
    high: int
    unclaimed: tuple[int, ...] = ()
    verdicts: tuple[tuple[int, str], ...] = ()
    disagreements: tuple[dict[str, Any], ...] = ()
    #: (index, permutations) of each claimed case of more permutations than all before it
    #: in the piece (so that the largest up to any cut is known)
    records: tuple[tuple[int, int], ...] = ()
    #: large shape: the NUMA node count of each claimed case, in case order
    sizes: bytes = b""
    #: the implementation could not take part (numaspec's one-line description)
    error: str | None = None

    def measure(self) -> tuple[int, int]:
        """Cases finished and failures found (progress of a piece run elsewhere)."""
        return self.high - self.low, len(self.verdicts)


@attrs.frozen
class _Piece:
    """The task of one piece: its cases against a connection of its own."""

    impl: str
    seed: int
    shape: CaseShape
    timeout: float
    window: int

    def __call__(self, piece: range, tick: Tick) -> PieceResult:
        try:
            connection = connect(self.impl, timeout=self.timeout)
        except NumaspecError as exc:
            return PieceResult("", piece.start, piece.stop, error=exc.describe())
        try:
            return self._run(connection, piece, tick)
        except NumaspecError as exc:
            return PieceResult("", piece.start, piece.stop, error=exc.describe())
        finally:
            connection.close()

    def _run(self, connection: Connection, piece: range, tick: Tick) -> PieceResult:
        who = connection.implementation
        op = self.shape.op
        declared = who.declared(op)
        if op not in who.operations or not declared:
            raise AdapterError(f"{who.name} declares no {op} releases", where="--impl")
        versions = self.shape.versions(declared, who.name)
        unclaimed: list[int] = []
        verdicts: list[tuple[int, str]] = []
        disagreements: list[dict[str, Any]] = []
        records: list[tuple[int, int]] = []
        sizes = bytearray()
        for low in range(piece.start, piece.stop, self.shape.batch):
            indices, requests, expectations = [], [], []
            for i in range(low, min(low + self.shape.batch, piece.stop)):
                case = self.shape.case_at(self.seed, i, versions, who.allocate_features)
                expected = reference_result(op, case)
                if who.claims.outside(op, case, expected, ()) is not None or (
                        JUDGES[op].refusals_unclaimed and "error" in expected):
                    # (a case the reference refuses: DRA-0, or options kubelet refuses)
                    unclaimed.append(i)
                    continue
                indices.append(i)
                requests.append(case)
                expectations.append(expected)
                if op == "merge" and (not records or permutations(case) > records[-1][1]):
                    records.append((i, permutations(case)))
                if self.shape.name == "large":
                    sizes.append(len(case["numa_nodes"]))
            answers = connection.run_many(op, requests, window=self.window)
            before = len(verdicts)
            for i, case, expected, answer in zip(indices, requests, expectations, answers,
                                                 strict=True):
                verdict, record = self._judge(i, case, expected, answer)
                if verdict != "agreed":
                    verdicts.append((i, verdict))
                if record is not None:
                    disagreements.append(record)
            tick(len(range(low, min(low + self.shape.batch, piece.stop))),
                 len(verdicts) - before)
        return PieceResult(who.name + " " + who.version, piece.start, piece.stop,
                           tuple(unclaimed), tuple(verdicts), tuple(disagreements),
                           tuple(records), bytes(sizes))

    def _judge(self, i: int, case: Any, expected: Any, answer: Answer
               ) -> tuple[str, dict[str, Any] | None]:
        """The verdict of case ``i``, and its disagreement record (none when it agreed or
        was skipped)."""
        verdict: str = answer.status
        op = self.shape.op
        if verdict != "result":
            differences = [f"{answer.status}: {answer.message}"]
        else:
            differences = compare(op, case, expected, answer.result)
            verdict = "disagreed" if differences else "agreed"
        if verdict in ("agreed", "skipped"):
            return verdict, None
        return verdict, {"id": self.shape.case_id(self.seed, i), "op": op, "case": case,
                         "expected": expected, "actual": answer.result,
                         "differences": differences}


def _claimed_end(result: PieceResult, wanted: int) -> int:
    """The index just after the ``wanted``-th claimed case of ``result``'s piece (its end
    when the piece has fewer)."""
    index = result.low + wanted - 1
    for unclaimed in result.unclaimed:  # ascending: each one at or before pushes it on
        if unclaimed <= index:
            index += 1
    return min(index + 1, result.high)


def _tally(results: Sequence[PieceResult], cases: int) -> Differential:
    """The first ``cases`` claimed cases of the pieces, in case order: the campaign's
    verdicts and disagreements, whatever the pieces were."""
    verdicts: Counter[str] = Counter()
    disagreements: list[dict[str, Any]] = []
    sent = drawn = 0
    largest = 0
    nodes: Counter[int] = Counter()
    for result in sorted(results, key=lambda r: r.low):
        end = _claimed_end(result, cases - sent)
        skipped = bisect.bisect_left(result.unclaimed, end)
        taken = (end - result.low) - skipped
        off = [v for i, v in result.verdicts if i < end]
        verdicts.update(off)
        verdicts["agreed"] += taken - len(off)
        disagreements += [d for d in result.disagreements if _index(d) < end]
        largest = max([largest, *(p for i, p in result.records if i < end)])
        nodes.update(result.sizes[:taken])
        sent += taken
        drawn = end
        if sent >= cases:
            break
    if drawn > sent:
        verdicts["not claimed (not sent)"] = drawn - sent
    name = next((r.implementation for r in results if r.implementation), "")
    return Differential(name, sent, {v: n for v, n in verdicts.items() if n}, disagreements,
                        largest, dict(sorted(nodes.items())))


def _index(record: dict[str, Any]) -> int:
    return int(str(record["id"]).rsplit("-", 1)[1])


@attrs.frozen
class _Shrinker:
    """The task that shrinks some disagreements, on a connection of its own."""

    impl: str
    timeout: float

    def __call__(self, items: list[dict[str, Any]], tick: Tick) -> list[dict[str, Any]]:
        del tick
        connection = connect(self.impl, timeout=self.timeout)
        try:
            return [_shrunk(connection, item) for item in items]
        finally:
            connection.close()


def _shrunk(connection: Connection, item: dict[str, Any]) -> dict[str, Any]:
    """``item`` with its case shrunk while the implementation still disagrees on it."""
    claims = connection.implementation.claims
    op = item.get("op", "merge")
    # a disagreement about a refusal shrinks among refusals; any other never becomes one
    refused = isinstance(item.get("expected"), dict) and "error" in item["expected"]

    def disagrees(case: Any) -> bool:
        expected = reference_result(op, case)
        if claims.outside(op, case, expected, ()) is not None or (
                "error" in expected and not refused):
            return False
        # asked as often as the judge says (DRA-2: an allocation may depend on pools' order)
        for _ in range(JUDGES[op].asks):
            answer = connection.run(op, case)
            if answer.status == "result" and compare(op, case, expected, answer.result):
                return True
        return False

    small = shrink_case(op, item["case"], disagrees)
    if small == item["case"]:
        return item
    expected = reference_result(op, small)
    answer = connection.run(op, small)
    return {**item, "found_as": item["case"], "case": small, "expected": expected,
            "actual": answer.result,
            "differences": compare(op, small, expected, answer.result)}


def _shrink_all(impl: str, timeout: float, items: list[dict[str, Any]], runner: Runner
                ) -> list[dict[str, Any]]:
    """``items`` shrunk (those the implementation answered), in groups: one per job, or one
    per Ray task; in their order."""
    engine = runner.engine
    groups = min(len(items), len(items) if engine.ray is not None else engine.jobs)
    if groups == 0:
        return []
    chunks = [items[k::groups] for k in range(groups)]
    shrunk = list(items)
    for k, chunk in enumerate(runner.map(_Shrinker(impl, timeout), chunks)):
        shrunk[k::groups] = chunk
    return shrunk


def main(impl: str, *, cases: int, seed: int, out: str | None, shrink: int = SHRUNK,
         shape: CaseShape | None = None, engine: Engine | None = None, timeout: float = 30.0,
         progress: bool | None = None, expectations: str | None = None) -> int:
    """The ``numaspec differential`` command: 0 when every disagreement is explained by a
    known divergence of ``expectations`` (none without it), 1 otherwise."""
    from numaspec.conformance.running.reports import Progress

    bar = Progress(cases, enabled=progress)
    try:
        result = differential(impl, cases=cases, seed=seed, shrink=shrink, shape=shape,
                              engine=engine, timeout=timeout,
                              progress=bar.update, expectations=expectations)
    finally:
        bar.finish()
    print(result.summary())
    if shape is not None and shape.name == "large":
        per_count = ", ".join(f"{n}: {c}" for n, c in result.numa_nodes.items())
        print(f"cases per NUMA node count: {per_count}; largest case sent: "
              f"{result.largest:,} permutations")
    for item in result.unexplained[:5]:
        decided = (f"\n    decided by {', '.join(item['rules'])}: {'; '.join(item['why'])}"
                   if item.get("rules") else "")
        print(f"  {item['id']}: {_preview(item['case'])}\n    {item['differences'][0]}{decided}")
    if result.disagreements and out:
        with Path(out).open("w", encoding="utf-8") as stream:
            for item in result.disagreements:
                stream.write(json.dumps({"type": "case", **item}, separators=(",", ":")) + "\n")
        print(f"all {len(result.disagreements)} written to {out} as JSON Lines, the first "
              f"{min(shrink, len(result.disagreements))} shrunk (numaspec replay {out} --id ID "
              f"--impl ...)")
    return 1 if result.unexplained else 0


def _preview(case: Any, limit: int = 2000) -> str:
    """A case on one line, cut short (a large case is megabytes)."""
    text = json.dumps(case, separators=(",", ":"))
    return text if len(text) <= limit else text[:limit] + f"... ({len(text):,} characters)"
