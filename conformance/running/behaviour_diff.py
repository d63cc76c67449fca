"""``numaspec behaviour-diff``: a kubelet change checked against the release it changes (RUN-19).

Two implementations of the same release, its build as released (``--base``) and a build with
a change applied (``--patched``, ``adapters/kubelet/build.sh --patch``), are asked the same
questions and every question they answer differently is reported.  Nothing is compared with the
reference here: the base release is the expectation, so a change that keeps kubelet's behaviour
shows no difference even where kubelet and numaspec differ.

Four parts, in this order:

* **conformance**: every vector instance of the suite at the release (merge, and the node
  operations when both declare them), its request sent to both;
* **differential**: ``--cases`` random merge cases of the small shape, and ``--large-cases`` of
  the large shape (kubelet's providers on a big machine), drawn as ``numaspec differential``
  draws them (case ``i`` of a seed is the same case), sent to both;
* **shrinking**: each differing random merge case is shrunk (providers, resources, hints, NUMA
  nodes, options taken away) while the two still answer differently, and kept as found too;
* **speed**: ``bench --sizes`` rows timed through both.

Each difference names the rules the reference's trace of it exercises (its ``explain``), and is
written, with ``--out``, as a JSON Lines record ``numaspec replay FILE --id ID --impl ...``
reads (``expected`` is the base's answer, ``actual`` the patched one's).

**Across releases** (RUN-19): when the two declare no merge release in common, each its own
(1.37.2 and 1.38.0-beta.0, a release and the next), the merge questions are drawn at the
base's release and sent to the patched build at its own (the request's ``kubelet_version``
rewritten); the node operations are not compared (a session names its release in every
step).  A score the patched release adds to every answer (HINT-5: hints have one from 1.38) is
not a difference where the base's answer has none; the summary counts those answers.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from numaspec.conformance.cases.blame import exercised_rules
from numaspec.conformance.cases.judges import compare
from numaspec.conformance.implementations.connection import Answer, Connection, connect
from numaspec.conformance.properties.random_cases import CaseShape, shrink_merge_case
from numaspec.errors import InvalidFieldError, NumaspecError

__all__ = ["BehaviourDiff", "Difference", "behaviour_diff", "differences", "main"]

#: The operations the conformance part compares (those both sides declare).
_OPS = ("merge", "node", "hints")


@attrs.frozen
class Difference:
    """One question the two builds answer differently."""

    part: str  # "conformance" | "differential" | "differential (large)"
    id: str
    op: str
    case: Any
    base: Answer
    patched: Answer
    differences: tuple[str, ...]
    rules: tuple[str, ...] = ()
    #: the case as it was found, when shrinking made it smaller
    found_as: Any = None
    #: the base answers it differently when asked again, or only one of the two answered in
    #: time: it cannot judge the change
    unsettled: bool = False

    def record(self) -> dict[str, Any]:
        """The JSON Lines record (``numaspec replay`` reads ``case`` by ``id``)."""
        item: dict[str, Any] = {
            "type": "case", "id": self.id, "op": self.op, "part": self.part,
            "case": self.case, "expected": _shown(self.base), "actual": _shown(self.patched),
            "differences": list(self.differences), "rules": list(self.rules)}
        if self.found_as is not None:
            item["found_as"] = self.found_as
        if self.unsettled:
            item["unsettled"] = True
        return item


@attrs.frozen
class BehaviourDiff:
    base: str
    patched: str
    release: str
    #: questions asked per part
    asked: dict[str, int]
    found: list[Difference]
    #: the bench --sizes rows (markdown), or "" when not asked
    speed: str = ""
    #: the patched build's own release, when it is not the base's (RUN-19 across releases)
    across: str | None = None
    #: across releases: answers alike but for the score the later release adds
    scored: int = 0

    @property
    def changed(self) -> list[Difference]:
        """The differences that judge the change (the base answers each alike every time)."""
        return [d for d in self.found if not d.unsettled]

    @property
    def unsettled(self) -> list[Difference]:
        """Questions the base itself answers differently from ask to ask (not judged)."""
        return [d for d in self.found if d.unsettled]

    def summary(self) -> str:
        per_part = Counter(d.part for d in self.changed)
        parts = "; ".join(f"{part}: {per_part.get(part, 0)} of {n:,} answered differently"
                          for part, n in self.asked.items())
        release = (f"kubelet {self.release}" if self.across is None else
                   f"the merge, asked at kubelet {self.release} and at {self.across}")
        text = f"{self.patched} against {self.base} ({release}): {parts}"
        if self.across is not None:
            text += (f"; {self.scored:,} answers alike but for the score {self.across} adds "
                     "(HINT-5)")
        timed = [d for d in self.unsettled if "timeout" in (d.base.status, d.patched.status)]
        unsettled = [d for d in self.unsettled if d not in timed]
        for found, why in ((unsettled, "the base answers differently from ask to ask"),
                           (timed, "only one of the two answered within --timeout")):
            if found:
                text += (f"; not judged: {len(found)} {why} ("
                         + ", ".join(d.id for d in found[:5])
                         + (", ..." if len(found) > 5 else "") + ")")
        return text


def _shown(answer: Answer) -> Any:
    return answer.result if answer.status == "result" else {answer.status: answer.message}


def differences(op: str, case: Any, base: Answer, patched: Answer) -> list[str]:
    """How two answers to one question differ (empty: they agree), judged as the suite judges
    an answer (the base's answer as the expectation): devices that report the same NUMA
    nodes are interchangeable (RUN-12), hints compared without regard to order."""
    if base.status != patched.status:
        return [f"base {base.status}{': ' + base.message if base.message else ''}; patched "
                f"{patched.status}{': ' + patched.message if patched.message else ''}"]
    if base.status != "result":
        return [] if base.message == patched.message else [
            f"both {base.status}: base {base.message!r}, patched {patched.message!r}"]
    return [t.replace("expected ", "base ", 1).replace(", got ", ", patched ", 1)
            for t in compare(op, case, base.result, patched.result)]


def _short(value: Any, limit: int = 400) -> str:
    text = json.dumps(value, separators=(",", ":"), sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "..."


def _rules(op: str, case: Any) -> tuple[str, ...]:
    """The rules the reference's trace of ``case`` names (RUN-17's exercised rules)."""
    from numaspec.protocols.explain import explain_case

    try:
        trace = explain_case(op, case)
    except NumaspecError:
        return ()
    return tuple(sorted(exercised_rules({"explain": trace})))


class _Pair:
    """The two connections, asked the same questions (across releases: the patched one at its
    own release)."""

    def __init__(self, base: str, patched: str, timeout: float) -> None:
        self.spec, self.timeout = base, timeout
        self.second: Connection | None = None  # a second base process, for unsettled()
        self.base = connect(base, timeout=timeout)
        try:
            self.patched = connect(patched, timeout=timeout)
        except BaseException:
            self.base.close()
            raise
        b, p = self.base.implementation, self.patched.implementation
        releases = sorted(set(b.kubelet_versions) & set(p.kubelet_versions), key=_order)
        self.across: str | None = None  # the patched build's release, when not the base's
        self.ops = [op for op in _OPS if op in b.operations and op in p.operations]
        if not releases:
            if not (b.kubelet_versions and p.kubelet_versions
                    and _order(max(p.kubelet_versions, key=_order))
                    > _order(max(b.kubelet_versions, key=_order))):
                self.close()
                raise InvalidFieldError(
                    f"{b.name} {b.version} and {p.name} {p.version} declare no merge release "
                    f"in common ({', '.join(b.kubelet_versions)} / "
                    f"{', '.join(p.kubelet_versions)}), and the patched one is not a later "
                    "release", where="--patched")
            releases = [max(b.kubelet_versions, key=_order)]
            self.across = max(p.kubelet_versions, key=_order)
            self.ops = ["merge"] if "merge" in self.ops else []
        self.releases = releases
        self.scored = 0  # across releases: answers that differ only by the patched one's score

    def ask(self, op: str, cases: list[Any]) -> list[tuple[Answer, Answer]]:
        sent = cases if self.across is None else [_at(case, self.across) for case in cases]
        return list(zip(self.base.run_many(op, cases), self.patched.run_many(op, sent),
                        strict=True))

    def differences(self, op: str, case: Any, base: Answer, patched: Answer) -> list[str]:
        """:func:`differences`; across releases, without the score the later release adds, and
        two skips alike whatever their words (the adapters' own decoding, WIRE-3, not
        kubelet's behaviour)."""
        if self.across is not None and base.status == patched.status == "skipped":
            return []
        if self.across is not None and patched.status == "result" and base.status == "result":
            unscored = _unscored(base.result, patched.result)
            if unscored is not patched.result:
                self.scored += 1
                patched = attrs.evolve(patched, result=unscored)
        return differences(op, case, base, patched)

    def differ(self, op: str, case: Any) -> bool:
        (base, patched), = self.ask(op, [case])
        return (bool(self.differences(op, case, base, patched))
                and not self.unjudged(op, case, base, patched))

    def unjudged(self, op: str, case: Any, base: Answer, patched: Answer) -> bool:
        """A difference that cannot judge the change: one side ran out of time (--timeout)
        and the other did not, or the base is unsettled."""
        if (base.status == "timeout") != (patched.status == "timeout"):
            return True
        return self.unsettled(op, case, base)

    def unsettled(self, op: str, case: Any, first: Answer, tries: int = 8) -> bool:
        """Whether the base itself answers ``case`` differently when asked again, in its
        process and in a second one (kubelet picks among devices by walking Go maps, whose
        order is random per process): such a question cannot judge a change."""
        if self.second is None:
            self.second = connect(self.spec, timeout=self.timeout)
        again = self.base.run_many(op, [case] * tries) + self.second.run_many(op, [case] * tries)
        return any(differences(op, case, first, answer) for answer in again)

    def close(self) -> None:
        for connection in (self.base, self.patched, self.second):
            if connection is not None:
                connection.close()


def _order(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in _minor(release).split(".") if part.isdigit())


def _at(case: Any, release: str) -> Any:
    """A merge request at another release (RUN-19 across releases)."""
    return {**case, "kubelet_version": release} if isinstance(case, dict) else case


def _unscored(base: Any, patched: Any) -> Any:
    """``patched`` without the hint's ``score``/``scores`` when ``base``'s hint has none (the
    same object when there is nothing to take away)."""
    if not (isinstance(base, dict) and isinstance(patched, dict)):
        return patched
    hint, theirs = base.get("hint"), patched.get("hint")
    if not (isinstance(hint, dict) and isinstance(theirs, dict)) or "score" in hint \
            or "score" not in theirs:
        return patched
    return {**patched, "hint": {k: v for k, v in theirs.items() if k not in ("score", "scores")}}


def behaviour_diff(base: str, patched: str, *, cases: int = 20_000, large_cases: int = 200,
                   seed: int = 0, shrink: int = 20, sizes: str | None = None,
                   max_permutations: int = 1_000_000, timeout: float = 20.0,
                   progress: Callable[[str, int, int], None] | None = None) -> BehaviourDiff:
    """Every question of the four parts asked of ``base`` and ``patched``; the first ``shrink``
    differing merge cases shrunk."""
    pair = _Pair(base, patched, timeout)
    try:
        release = pair.releases[-1]
        asked: dict[str, int] = {}
        found: list[Difference] = []
        tick = progress or _silent
        asked["conformance"] = _conformance(pair, release, found, tick)
        for name, shape, count in (
                ("differential", CaseShape("small"), cases),
                ("differential (large)", CaseShape("large", max_permutations=max_permutations),
                 large_cases)):
            if count > 0:
                asked[name] = _random(pair, name, shape, count, seed=seed, found=found,
                                      tick=tick)
        shrunk = 0
        for k, item in enumerate(found):
            # (a vector is kept as the spec states it: its ID names that case)
            if (item.part != "conformance" and item.op == "merge" and not item.unsettled
                    and shrunk < shrink):
                shrunk += 1
                found[k] = _shrunk(pair, item)
        found = [attrs.evolve(d, rules=_rules(d.op, d.case)) for d in found]
        speed = ""
        if sizes is not None:
            speed = _speed(base, patched, sizes, pair, max_permutations=max_permutations * 20)
        b, p = pair.base.implementation, pair.patched.implementation
        return BehaviourDiff(f"{b.name} {b.version}", f"{p.name} {p.version}", release, asked,
                             found, speed, across=pair.across, scored=pair.scored)
    finally:
        pair.close()


def _conformance(pair: _Pair, release: str, found: list[Difference],
                 tick: Callable[[str, int, int], None]) -> int:
    from numaspec.conformance.running.runner import load_cases

    chosen = [c for c in load_cases(properties=False, releases=[release])
              if c.op in pair.ops and _minor(c.kubelet_version) == _minor(release)]
    done = 0
    for op in pair.ops:
        of_op = [c for c in chosen if c.op == op]
        for low in range(0, len(of_op), 50):
            batch = of_op[low:low + 50]
            for case, (base, patched) in zip(batch, pair.ask(op, [c.case for c in batch]),
                                             strict=True):
                texts = pair.differences(op, case.case, base, patched)
                if texts:
                    found.append(Difference("conformance", case.id, op, case.case, base,
                                            patched, tuple(texts),
                                            unsettled=pair.unjudged(op, case.case, base,
                                                                    patched)))
            done += len(batch)
            tick("conformance", done, len(chosen))
    return len(chosen)


def _minor(version: str) -> str:
    return ".".join(version.lstrip("v").split(".")[:2])


def _silent(part: str, done: int, total: int) -> None:
    """No progress shown."""
    del part, done, total


def _random(pair: _Pair, part: str, shape: CaseShape, count: int, *, seed: int,
            found: list[Difference], tick: Callable[[str, int, int], None]) -> int:
    versions = shape.versions(pair.releases[-1:], "--base")
    done = 0
    while done < count:
        batch = list(range(done, min(done + shape.batch, count)))
        requests = [shape.case_at(seed, i, versions, ()) for i in batch]
        for i, case, (base, patched) in zip(batch, requests, pair.ask("merge", requests),
                                            strict=True):
            texts = pair.differences("merge", case, base, patched)
            if texts:
                found.append(Difference(part, shape.case_id(seed, i), "merge", case, base,
                                        patched, tuple(texts),
                                        unsettled=pair.unjudged("merge", case, base,
                                                                patched)))
        done += len(batch)
        tick(part, done, count)
    return count


def _shrunk(pair: _Pair, item: Difference) -> Difference:
    small = shrink_merge_case(item.case, lambda case: pair.differ("merge", case))
    if small == item.case:
        return item
    (base, patched), = pair.ask("merge", [small])
    return attrs.evolve(item, case=small, base=base, patched=patched, found_as=item.case,
                        differences=tuple(pair.differences("merge", small, base, patched)))


def _speed(base: str, patched: str, text: str, pair: _Pair, *, max_permutations: int,
           timeout: float = 60.0) -> str:
    """The bench --sizes rows through both, beside numaspec's fast merge, each shape twice:
    with bench's hints (each provider prefers hints of its own width, so no combination is
    preferred) and with every provider preferring single NUMA nodes (a preferred combination
    exists: kubernetes#137700's benchmark).  The base is sent a row of at most
    ``max_permutations``; the patched build every row, for up to ``timeout`` seconds ("timed
    out" past that).  A row
    the two answer differently says so; where the base was not sent, the patched answer is
    compared with numaspec's (its model of the base release)."""
    from numaspec.conformance.running import sizes
    from numaspec.protocols.merge_protocol import (
        decode_merge_request,
        encode_outcome,
        evaluate_request,
    )

    shapes = sizes.parse_shapes(text) if text else sizes.DEFAULT_SHAPES
    b, p = pair.base.implementation, pair.patched.implementation
    lines = [f"| NxPxH | preferred hints | permutations | numaspec fast merge | "
             f"{b.name} {b.version} | {p.name} {p.version} | base/patched | answers |",
             "|---|---|---|---|---|---|---|---|"]
    for shape in shapes:
        for label, case in (("each provider its own width", sizes.request(shape)),
                            ("single NUMA nodes", _single_preferred(sizes.request(shape)))):
            started = time.perf_counter()
            outcome = encode_outcome(evaluate_request(decode_merge_request(case)))
            fast = sizes.Timing(time.perf_counter() - started)
            if shape.permutations > max_permutations:
                base_time = sizes.Timing(None, note=f"not sent ({shape.permutations:.1e} "
                                                    "permutations)")
            else:
                base_time = sizes.through(base, case, 600.0)
            patched_time = sizes.through(
                patched, case if pair.across is None else _at(case, pair.across), timeout)
            if patched_time.answer is None:
                same = "—"
            elif base_time.answer is not None:
                same = "same" if base_time.answer == patched_time.answer else "DIFFER"
            else:  # kubelet's answer where it cannot give one in time: numaspec's (its model)
                same = ("same as numaspec" if patched_time.answer == outcome
                        else "DIFFERS from numaspec")
            lines.append(f"| {shape} | {label} | {shape.permutations:.3g} | "
                         f"{sizes.show_ms(fast)} | {_cell(base_time)} | {_cell(patched_time)} | "
                         f"{_ratio(base_time, patched_time)} | {same} |")
    return "\n".join(lines)


def _single_preferred(case: dict[str, Any]) -> dict[str, Any]:
    """``case`` with every provider preferring exactly its single-NUMA-node hints."""
    return {**case, "providers": [
        {name: [{**h, "preferred": len(h["numa_affinity"]) == 1} for h in hints]
         for name, hints in provider.items()} for provider in case["providers"]]}


def _cell(timing: Any) -> str:
    from numaspec.conformance.running import sizes

    if timing.seconds is not None:
        return sizes.show_ms(timing)
    note = str(timing.note)
    return "timed out" if note.startswith("timeout") else note


def _ratio(base: Any, patched: Any) -> str:
    if base.seconds is None or not patched.seconds:
        return "—"
    ratio = base.seconds / patched.seconds
    return f"{ratio:,.0f}x" if ratio >= 10 else f"{ratio:.2g}x"


def main(base: str, patched: str, *, cases: int, large_cases: int, seed: int, shrink: int,
         sizes: str | None, max_permutations: int, out: str | None, timeout: float = 20.0,
         progress: bool | None = None, shown: int = 10) -> int:
    """The command: 0 when the two builds answer every question alike, 1 otherwise."""
    from numaspec.conformance.running.reports import Progress

    bars: dict[str, Progress] = {}

    def tick(part: str, done: int, total: int) -> None:
        bar = bars.setdefault(part, Progress(total, enabled=progress))
        bar.update(done, 0, part)

    try:
        result = behaviour_diff(base, patched, cases=cases, large_cases=large_cases, seed=seed,
                                shrink=shrink, sizes=sizes, max_permutations=max_permutations,
                                timeout=timeout, progress=tick)
    finally:
        for bar in bars.values():
            bar.finish()
    print(result.summary())
    # different answers first, then different errors (a panic in another place)
    ordered = sorted(result.changed, key=lambda d: d.base.status != "result"
                     or "error" in (d.base.result or {}))
    for item in ordered[:shown]:
        print(f"\n{item.id} ({item.part}; rules: {', '.join(item.rules) or 'none named'})")
        print(f"  case: {_short(item.case, 2000)}")
        for text in item.differences:
            print(f"  {text}")
    if len(result.changed) > shown:
        print(f"\n... and {len(result.changed) - shown} more")
    if result.found and out:
        with Path(out).open("w", encoding="utf-8") as stream:
            for item in result.found:
                stream.write(json.dumps(item.record(), separators=(",", ":")) + "\n")
        print(f"\nall {len(result.found)} written to {out} (numaspec replay {out} --id ID "
              f"--impl ...)")
    if result.speed:
        print("\n" + result.speed)
    return 1 if result.changed else 0

