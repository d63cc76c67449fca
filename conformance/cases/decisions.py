"""Which rules decide a merge answer, and which decision an implementation took otherwise
(RUN-17, RUN-22).

Both read the reference's trace of the request (EXPLAIN-2: the lists the policy merged, the
target width, the rule that ranked the winner first, the policy rule that admitted), never a
list of rules a property happens to cite:

* :func:`reached`: the rules whose behaviour a merge request reaches.  A rule is *passed*
  only where some judged case reached it; a claimed rule that no case reached is *not
  exercised* (RUN-17).  Rules that every merge goes through (MERGE-1, HINT-1, HINT-4,
  MERGE-11, the masks) are reached by every case that is merged; the others only by the
  cases that bring their behaviour about (:data:`CONDITIONAL`).
* :func:`blame`: for a request on which an implementation's answer differs from the
  reference's, the rules whose decision differs, and the quantities the reference compared.
  When the implementation's hint is one of the merge's candidates, the rule ranking the
  reference's winner above it decides (MERGE-5, -6, -8, -9); when it is not, the reading of
  the request that would make it one names the rule (HINT-2, HINT-3, POLICY-4's filter,
  MERGE-2/-3's preferred flag); a refusal is booked on the rule of its kind.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from numaspec.protocols.explain import explain_merge

__all__ = ["CONDITIONAL", "Blame", "Tally", "blame", "reached", "refusal_rules", "sent", "tallying"]

#: Merge rules reached only by the cases that bring their behaviour about; every other rule a
#: merge case cites is reached by any case that is judged.
CONDITIONAL = frozenset({
    "POLICY-1", "POLICY-2", "POLICY-3", "POLICY-4", "POLICY-5", "POLICY-6",
    "HINT-2", "HINT-3",
    "MERGE-2", "MERGE-3", "MERGE-4", "MERGE-5", "MERGE-6", "MERGE-7", "MERGE-8", "MERGE-9",
    "MERGE-10", "MERGE-12", "MERGE-13", "MERGE-14", "HINT-5", "POLICY-7",
    "OPT-1", "OPT-2", "OPT-3", "OPT-4", "OPT-5", "OPT-6",
    "VER-2", "VER-3", "VER-4"})

_CLOSEST = "prefer-closest-numa-nodes"
_MAX = "max-allowable-numa-nodes"
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
#: Permutations walked at most to tell whether a hint is one of a merge's candidates.
_WALK = 200_000


def refusal_rules(kind: str, where: str = "") -> list[str]:
    """The rules that say when kubelet refuses with ``kind`` (WIRE-2's kinds)."""
    if kind == "invalid-policy-option-value":
        return ["OPT-4"] if _MAX in where else ["OPT-3"] if _CLOSEST in where else \
            ["OPT-3", "OPT-4"]
    if kind == "policy-option-not-enabled":
        return ["OPT-2"] if where.startswith("policy_options.") else ["OPT-1"]
    if kind == "invalid-field" and where.startswith("feature_gates"):
        return ["VER-2", "VER-4"]
    return {"unknown-policy": ["POLICY-5"], "unknown-policy-option": ["OPT-2"],
            "too-many-numa-nodes": ["OPT-5"], "missing-numa-distances": ["OPT-6"],
            "invalid-numa-distances": ["OPT-6"],
            "unsupported-version": ["VER-3"]}.get(kind, [])


def _minor(trace: Mapping[str, Any], case: Mapping[str, Any]) -> int:
    version = str(trace.get("kubelet_version") or case.get("kubelet_version") or "1.37")
    try:
        return int(version.lstrip("v").split(".")[1].split("-")[0])
    except (IndexError, ValueError):
        return 37


def _mask(nodes: Iterable[int] | None) -> int | None:
    return None if nodes is None else sum(1 << int(n) for n in nodes)


def _nodes(mask: int) -> str:
    return "{" + ",".join(str(n) for n in range(64) if mask >> n & 1) + "}"


def _count(mask: int) -> int:
    return bin(mask).count("1")


Hint = tuple[int | None, bool]


def _lists(trace: Mapping[str, Any]) -> list[list[Hint]]:
    return [[(_mask(h.get("numa")), bool(h.get("preferred"))) for h in listed]
            for listed in trace.get("lists") or ()]


def _raw_lists(providers: Sequence[Any], *, empty_is_null: bool = False,
               null_provider_is_empty: bool = False) -> list[list[Hint]]:
    """HINT-2, HINT-3: the providers' answers flattened, or read another way."""
    lists: list[list[Hint]] = []
    for provider in providers:
        if not provider:
            lists.append([(None, False)] if null_provider_is_empty else [(None, True)])
            continue
        for hints in provider.values():
            if hints is None or (hints == [] and empty_is_null):
                lists.append([(None, True)])
            elif hints == []:
                lists.append([(None, False)])
            else:
                lists.append([(_mask(h.get("numa_affinity")), bool(h.get("preferred")))
                              for h in hints])
    return lists


def _single(lists: list[list[Hint]]) -> list[list[Hint]]:
    return [[(m, p) for m, p in hints if p and (m is None or _count(m) == 1)] for hints in lists]


def _preferred_mixes(lists: Sequence[Sequence[Hint]]) -> bool:
    """Whether some permutation of preferred hints has two different affinities (where
    MERGE-2 and MERGE-3 part)."""
    if not lists or any(not any(p for _, p in hints) for hints in lists):
        return False
    masks = [{m for m, p in hints if p and m is not None} for hints in lists]
    return any(a != b for i, j in itertools.combinations(range(len(masks)), 2)
               for a in masks[i] for b in masks[j])


def _disjoint_pair(lists: Sequence[Sequence[Hint]], machine: int) -> bool:
    """Whether two lists hold hints that share no node of the machine (so some candidate is
    empty, MERGE-4); a sound test, not a complete one."""
    if any(not hints for hints in lists):
        return False
    masks = [{m & machine for m, _ in hints if m is not None} for hints in lists]
    if any(0 in found for found in masks):
        return True
    return any(a & b == 0 for i, j in itertools.combinations(range(len(masks)), 2)
               for a in masks[i] for b in masks[j])


def _closest(case: Mapping[str, Any], minor: int, policy: str) -> bool:
    options = case.get("policy_options") or {}
    return (minor >= 26 and policy != "single-numa-node"
            and options.get(_CLOSEST) in _TRUE and case.get("numa_distances") is not None)


def reached(case: Mapping[str, Any], trace: Mapping[str, Any] | None = None) -> set[str]:
    """The rules of :data:`CONDITIONAL` whose behaviour the merge request ``case`` reaches,
    by the reference's trace of it (``trace``, else computed)."""
    trace = trace if trace is not None else explain_merge(case)
    minor = _minor(trace, case)
    options = case.get("policy_options") or {}
    found: set[str] = set()
    if options:
        found.add("OPT-1")
        if minor >= 26:
            found.add("OPT-2")
        if _CLOSEST in options and minor >= 26:
            found.add("OPT-3")
            if options.get(_CLOSEST) in _TRUE:
                found.add("OPT-6")
        if _MAX in options and minor >= 31:
            found.add("OPT-4")
    if case.get("feature_gates"):
        found.update(("VER-2", "VER-4"))
    nodes = case.get("numa_nodes")
    if isinstance(nodes, list) and len(nodes) > 8:
        found.add("OPT-5")
    if found:  # a check of kubelet's start-up had something to say (POLICY-6: in which order)
        found.add("POLICY-6")
    error = trace.get("error")
    if isinstance(error, Mapping):
        found.add("POLICY-6")
        found.update(refusal_rules(str(error.get("kind")), str(error.get("where") or "")))
        return found
    policy = str(trace.get("policy", ""))
    if trace.get("decided_by"):
        found.add(str(trace["decided_by"]))
    if policy == "none":
        return found
    providers = case.get("providers") or []
    if any(not p for p in providers):
        found.add("HINT-2")
    if any(isinstance(p, Mapping) and any(h is None or h == [] for h in p.values())
           for p in providers):
        found.add("HINT-3")
    lists = _lists(trace)
    machine = _mask(trace.get("numa_nodes") or ()) or 0
    if _preferred_mixes(lists):
        found.add("MERGE-3" if minor >= 24 else "MERGE-2")
    if trace.get("empty_candidates") or _disjoint_pair(lists, machine):
        found.add("MERGE-4")
    chosen = str(trace.get("chosen_by") or "")
    if chosen:
        found.add(chosen)
    if chosen == "MERGE-9":
        found.add("MERGE-12")
    if policy == "single-numa-node" and options.get(_CLOSEST) in _TRUE and minor >= 26:
        found.add("MERGE-9")  # its clause: never under single-numa-node
    if minor >= 38:
        found.add("MERGE-14")  # every answer from 1.38 has a score, 0 included
        if policy in ("best-effort", "restricted"):
            found.add("POLICY-7")
        if any(isinstance(h, Mapping) and h.get("score") for p in providers
               if isinstance(p, Mapping) for hints in p.values() if isinstance(hints, list)
               for h in hints):
            found.update(("HINT-5", "MERGE-13"))
    return found


@attrs.frozen
class Blame:
    """The rules whose decision differs, and what the reference compared to decide."""

    rules: tuple[str, ...]
    why: tuple[str, ...] = ()


def _score_blame(wanted: Any, gotten: Any, expected: Any, actual: Any) -> Blame | None:
    """HINT-5, MERGE-13, MERGE-14: the same hint and admission, another score (or none)."""
    if not (isinstance(wanted, Mapping) and isinstance(gotten, Mapping)):
        return None
    if expected.get("admit") != actual.get("admit") or wanted.get("score") == gotten.get(
            "score") or gotten.get("score") in (wanted.get("scores") or ()):
        return None
    if "score" not in gotten or "score" not in wanted:
        return Blame(("HINT-5",), ("a score where the release has none, or none where it has "
                                   "one",))
    return Blame(("MERGE-13", "MERGE-14"), (
        f"the same hint, scored {gotten.get('score')} where kubelet scores "
        f"{wanted.get('scores') or wanted.get('score')}: the mean of the first permutation "
        "that merges to it",))


def _answer_hint(answer: Any, machine: int, single: bool) -> Hint | None:
    hint = answer.get("hint") if isinstance(answer, Mapping) else None
    if not isinstance(hint, Mapping):
        return None
    mask = _mask(hint.get("numa_affinity"))
    if mask is None and single:
        mask = machine  # POLICY-4: the whole machine is written as no affinity
    return (mask if mask is not None else machine), bool(hint.get("preferred"))


def _candidate_flags(lists: Sequence[Sequence[Hint]], machine: int, mask: int,
                     minor: int) -> set[bool] | None:
    """The preferred flags with which some permutation merges to ``mask``; None when there
    are too many permutations to walk."""
    total = 1
    for hints in lists:
        total *= len(hints)
    if total > _WALK:
        return None
    flags: set[bool] = set()
    for permutation in itertools.product(*lists):
        masks = [m for m, _ in permutation if m is not None]
        merged = machine
        for m in masks:
            merged &= m
        if merged != mask:
            continue
        preferred = all(p for _, p in permutation) and (
            minor < 24 or all(m == masks[0] for m in masks))
        flags.add(preferred)
        if len(flags) == 2:
            break
    return flags


def _distance_mean(case: Mapping[str, Any], mask: int) -> float | None:
    """MERGE-12's mean distance of ``mask`` (None where the rows do not give it)."""
    rows = case.get("numa_distances")
    ids = [n for n in range(64) if mask >> n & 1]
    if not isinstance(rows, Mapping) or not ids:
        return None
    total = 0.0
    try:
        for i in ids:
            for j in ids:
                total += float(rows[str(i)][j])
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    return total / len(ids) ** 2


def _ranking(case: Mapping[str, Any], trace: Mapping[str, Any], want: Hint, got: Hint, *,
             closest: bool, minor: int) -> Blame:
    """Two candidates of one merge: the rule that ranks ``want`` above ``got``."""
    (wmask, wpref), (gmask, gpref) = want, got
    assert wmask is not None and gmask is not None
    if wpref != gpref:
        return Blame(("MERGE-5",), (f"a preferred candidate ({_nodes(wmask if wpref else gmask)})"
                                    " beats every non-preferred one",))
    same = _count(wmask) == _count(gmask)
    if same and closest:
        a, b = _distance_mean(case, wmask), _distance_mean(case, gmask)
        if a == b:
            why = (f"mean distance {_nodes(wmask)} {a} = {_nodes(gmask)} {b}: equal, so the "
                   f"numerically smaller mask wins ({_nodes(min(wmask, gmask))})")
        else:
            why = (f"mean distance {_nodes(wmask)} {a} < {_nodes(gmask)} {b} (MERGE-12: every "
                   "ordered pair, self included)")
        return Blame(("MERGE-9",), (why,))
    if wpref:
        return Blame(("MERGE-6",), (f"{_nodes(wmask)} is narrower than {_nodes(gmask)} "
                                    "(MASK-2: fewer nodes, then the smaller word)",))
    if minor < 24:
        return Blame(("MERGE-7",), (f"{_nodes(wmask)} is narrower than {_nodes(gmask)}",))
    target = trace.get("target_width")
    return Blame(("MERGE-8",), (f"target width {target}: {_nodes(wmask)} ({_width(wmask)}) "
                                f"ranks above {_nodes(gmask)} ({_width(gmask)})",))


def _width(mask: int) -> str:
    count = _count(mask)
    return f"{count} node{'' if count == 1 else 's'}"


def blame(case: Mapping[str, Any], expected: Any, actual: Any) -> Blame:
    """The rules whose decision differs between the reference's answer ``expected`` to the
    merge request ``case`` and an implementation's ``actual`` (see the module docstring)."""
    trace = explain_merge(case)
    want_error = expected.get("error") if isinstance(expected, Mapping) else None
    got_error = actual.get("error") if isinstance(actual, Mapping) else None
    if isinstance(want_error, Mapping) or isinstance(got_error, Mapping):
        rules: list[str] = []
        for error in (want_error, got_error):
            if isinstance(error, Mapping):
                where = str(error.get("where") or error.get("message") or "")
                rules += [r for r in refusal_rules(str(error.get("kind")), where)
                          if r not in rules]
        if isinstance(want_error, Mapping) and isinstance(got_error, Mapping):
            rules.append("POLICY-6")  # two refusals: which check comes first
        kinds = [str(e.get("kind")) for e in (want_error, got_error) if isinstance(e, Mapping)]
        return Blame(tuple(rules), (f"refusal {' vs '.join(kinds)}",))
    if "error" in trace:
        return Blame(())
    minor = _minor(trace, case)
    policy = str(trace.get("policy", ""))
    single = bool(trace.get("single_numa_node_filter"))
    machine = _mask(trace.get("numa_nodes") or ()) or 0
    want = _answer_hint(expected, machine, single)
    got = _answer_hint(actual, machine, single)
    decided = [str(trace["decided_by"])] if trace.get("decided_by") else []
    if want is None or got is None:
        return Blame(tuple(decided))
    if want == got:
        wanted = expected.get("hint") if isinstance(expected, Mapping) else None
        gotten = actual.get("hint") if isinstance(actual, Mapping) else None
        scored = _score_blame(wanted, gotten, expected, actual)
        if scored is not None:
            return scored
        if wanted != gotten and single:
            return Blame(("POLICY-4",), ("single-numa-node writes the whole machine as no "
                                         "affinity",))
        return Blame(tuple(decided), (f"the same hint, admitted differently: {decided[0]} "
                                      "decides the admission",) if decided else ())
    closest = _closest(case, minor, policy)
    lists = _lists(trace)
    flags = _candidate_flags(lists, machine, got[0] or 0, minor)
    if flags is not None and got[1] in flags:
        return _ranking(case, trace, want, got, closest=closest, minor=minor)
    providers = case.get("providers") or []
    readings: list[tuple[str, list[list[Hint]], int, str]] = [
        ("HINT-3", _raw_lists(providers, empty_is_null=True), minor,
         "a resource mapped to [] read as no preference"),
        ("HINT-2", _raw_lists(providers, null_provider_is_empty=True), minor,
         "a provider without an opinion read as one that cannot place"),
    ]
    if single:
        readings = [(rule, _single(found), m, text) for rule, found, m, text in readings]
        readings.append(("POLICY-4", _raw_lists(providers), minor,
                         "the hints merged without single-numa-node's filter"))
    unfiltered = _single(_raw_lists(providers)) if single else _raw_lists(providers)
    readings.append(("MERGE-3" if minor >= 24 else "MERGE-2", unfiltered, 23 if minor >= 24
                     else 24, "a candidate preferred although its affinities differ"
                     if minor >= 24 else "a candidate not preferred because its affinities "
                                         "differ"))
    for rule, other, read_as, text in readings:
        found = _candidate_flags(other, machine, got[0] or 0, read_as)
        if found and got[1] in found:
            return Blame((rule,), (f"the implementation's hint is what {text} gives",))
    if got == (machine, False):
        return Blame(("MERGE-10",), ("the implementation found nothing to fit; the reference "
                                     f"merged {_nodes(want[0] or 0)}",))
    if got[0] == 0:
        return Blame(("MERGE-4",), ("an empty affinity is never chosen",))
    rules = [str(trace.get("chosen_by") or ""), *decided]
    return Blame(tuple(r for r in rules if r), ("the implementation's hint is no candidate "
                                                "of this merge",))


# --- what a property's requests reached ------------------------------------------------------


@attrs.define
class Tally:
    """RUN-17: what one property (or the differential) sent and what its requests reached:
    requests judged, per rule how many reached it, and the implementation's latest answers
    (so that a failure can be blamed on its counterexample, RUN-22)."""

    sent: int = 0
    reached: dict[str, int] = attrs.field(factory=dict)
    answers: dict[str, Any] = attrs.field(factory=dict)

    def add(self, op: str, case: Any, answer: Any = None, *, trace: Any = None) -> None:
        self.sent += 1
        if op != "merge" or not isinstance(case, Mapping):
            return
        key = _key(case)
        self.answers.pop(key, None)
        self.answers[key] = answer
        if len(self.answers) > 64:
            self.answers.pop(next(iter(self.answers)))
        for rule in reached(case, trace):
            self.reached[rule] = self.reached.get(rule, 0) + 1

    def answer_to(self, case: Any) -> Any:
        """The implementation's answer to ``case``, if it was among the latest asked."""
        return self.answers.get(_key(case)) if isinstance(case, Mapping) else None


def _key(case: Mapping[str, Any]) -> str:
    import json

    return json.dumps(case, sort_keys=True, separators=(",", ":"))


_TALLY: contextvars.ContextVar[Tally | None] = contextvars.ContextVar("tally", default=None)


@contextlib.contextmanager
def tallying() -> Iterator[Tally]:
    """While the block runs, every request a property sends is counted in the tally."""
    tally = Tally()
    token = _TALLY.set(tally)
    try:
        yield tally
    finally:
        _TALLY.reset(token)


def sent(op: str, case: Any, answer: Any = None) -> None:
    """A property sent ``case`` and was answered ``answer`` (JSON), in the tally in force."""
    tally = _TALLY.get()
    if tally is not None:
        tally.add(op, case, answer)
