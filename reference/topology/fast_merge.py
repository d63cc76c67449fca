"""The fast merge: the definitional merge's answer without its cross product (spec chapter
``fast-merge.md``, FAST-1..FAST-7).

:func:`numaspec.topology.merge.best_hint` walks every permutation of the hint lists.  Only two
things about the walk decide its answer: which ``(affinity, preferred)`` candidates occur at all,
and a total order on them that every release's fold keeps the best of (FAST-1).  This module
computes the set of occurring candidates directly and takes the best of it:

* preferred candidates (FAST-2): from 1.24 a permutation is preferred only when all its
  affinities are one word, so they are read off the lists in one pass; up to 1.23 they are
  the affinities reachable from the preferred hints alone (FAST-3);
* every other candidate is an affinity reachable as one AND per list (FAST-3), computed by a
  fold over the lists' *distinct* masks that keeps the set of partial ANDs, switching to the
  superset-sum (zeta / Mobius) transform of all 2**n subsets when that is cheaper (FAST-4);
* the best one is found by narrowing to one node count, then comparing masks (FAST-5).

Masks are first restricted to the machine's nodes and renumbered 0..n-1 in ascending id
order: counts, emptiness and the unsigned order of words are unchanged by that renumbering
(FAST-3), and the transforms then need 2**n entries, not 2**64.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple, TypeAlias

import attrs
import numpy as np
import numpy.typing as npt

from numaspec.errors import MergeTooLargeError
from numaspec.topology.hints import HintArray, TopologyHint
from numaspec.topology.masks import NumaMask
from numaspec.topology.numa import NumaInfo
from numaspec.topology.options import PolicyOptions
from numaspec.topology.versions import KubeletVersion

__all__ = ["FastMerge", "Listed", "Space", "Tuning", "as_words", "fast_best_hint", "fast_merge",
           "reachable"]

Words: TypeAlias = npt.NDArray[np.uint64]
Counts: TypeAlias = npt.NDArray[np.int64]
#: A set of compact masks: a Python set (small), a sorted array of distinct masks, or an
#: indicator over all 2**n masks (the zeta regime).
_Reach: TypeAlias = "set[int] | _Sorted | _Indicator"


@attrs.frozen
class Tuning:
    """Where the fast merge changes regime (FAST-4).  The answer never depends on these; the
    tests draw them to drive every regime, the defaults are chosen for speed.

    ``small_work``: a fold step of at most this many ANDs runs on Python sets.
    ``zeta_nodes``: the largest machine the transform regime is used on (2**n entries).
    ``zeta_factor``: a fold step switches to the transform when it would take more than this
    many times the transform's ``3 * n * 2**n`` element operations.
    ``max_distinct`` / ``max_work``: above ``zeta_nodes``, the bounds of the fold (FAST-6).
    ``small_select``: a candidate set of at most this many masks is ranked in Python.
    """

    small_work: int = 4096
    zeta_nodes: int = 22
    zeta_factor: float = 1.0
    max_distinct: int = 1 << 22
    max_work: int = 1 << 31
    small_select: int = 512


DEFAULT_TUNING = Tuning()


@attrs.frozen
class FastMerge:
    """The answer, and what the explain trace says about how it was found (EXPLAIN-2)."""

    hint: TopologyHint
    rule: str  # the rule that ranks the winner first, or MERGE-10
    permutations: int  # the size of the cross product the definitional walk would take
    distinct: int  # how many distinct non-empty candidate affinities there were
    regime: str  # "preferred", "sets", "sorted", "transform" or "none" (FAST-4)
    witness: tuple[TopologyHint, ...] | None  # one permutation that merges to the winner


# --- the machine's nodes, renumbered -----------------------------------------------------------


class Space:
    """FAST-3: masks restricted to the machine and renumbered 0..n-1 in ascending id order."""

    def __init__(self, numa: NumaInfo) -> None:
        self.ids = sorted(numa.nodes)
        self.n = len(self.ids)
        self.full = (1 << self.n) - 1
        self.contiguous = self.ids == list(range(self.n))
        self._memo: dict[int, int] = {}

    def compact(self, word: int) -> int:
        if self.contiguous:
            return word & self.full
        found = self._memo.get(word)
        if found is None:
            found = 0
            for position, node in enumerate(self.ids):
                if word >> node & 1:
                    found |= 1 << position
            self._memo[word] = found
        return found

    def compact_all(self, words: Iterable[int]) -> set[int]:
        """:meth:`compact` of many words (on a contiguous machine, one AND each, inline)."""
        if self.contiguous:
            return {w & self.full for w in words}
        return {self.compact(w) for w in words}

    def expand(self, compact: int) -> int:
        if self.contiguous:
            return compact
        word = 0
        for position, node in enumerate(self.ids):
            if compact >> position & 1:
                word |= 1 << node
        return word

    def mask(self, compact: int) -> NumaMask:
        return NumaMask._trusted(self.expand(compact))

    def hint_mask(self, hint: TopologyHint) -> int:
        """A hint's compact mask: the whole machine for a hint without an affinity."""
        return self.full if hint.numa_affinity is None else self.compact(hint.numa_affinity.bits)


# --- sets of reachable masks -------------------------------------------------------------------


@attrs.frozen
class _Sorted:
    words: Words  # distinct compact masks, ascending


@attrs.frozen
class _Indicator:
    present: Counts  # 1 where the compact mask is reachable, over all 2**n masks


def _size(reach: _Reach) -> int:
    if isinstance(reach, set):
        return len(reach)
    if isinstance(reach, _Sorted):
        return len(reach.words)
    return int(np.count_nonzero(reach.present))


def as_words(reach: _Reach) -> Words:
    if isinstance(reach, set):
        return np.array(sorted(reach), dtype=np.uint64)
    if isinstance(reach, _Sorted):
        return reach.words
    return np.flatnonzero(reach.present).astype(np.uint64)


def _superset_sum(values: Counts, n: int, sign: int) -> None:
    """In place: every entry plus (``sign`` 1) or minus (-1) the entries of its supersets, one
    bit at a time (the zeta transform over supersets, or its inverse, Mobius)."""
    for bit in range(n):
        view = values.reshape(-1, 2, 1 << bit)
        if sign > 0:
            view[:, 0, :] += view[:, 1, :]
        else:
            view[:, 0, :] -= view[:, 1, :]


def _transform_step(present: Counts, hints: Words, n: int) -> _Indicator:
    """FAST-4: ``{s & m}`` over all pairs, as counts: the number of pairs whose AND is ``x`` is
    the Mobius inverse of the product of the two superset sums.  Products wrap in 64 bits
    when n > 21; the final counts are below 2**(2n) < 2**63 here, so they come out exact."""
    left = present.copy()
    _superset_sum(left, n, 1)
    right = np.zeros(1 << n, dtype=np.int64)
    right[hints.astype(np.intp)] = 1
    _superset_sum(right, n, 1)
    left *= right
    _superset_sum(left, n, -1)
    return _Indicator((left != 0).astype(np.int64))


def _sorted_step(words: Words, hints: Words, n: int, tuning: Tuning, big: bool) -> _Sorted:
    """FAST-4: ``{s & m}`` by chunks of the outer AND, kept sorted and distinct."""
    chunk = max(1, (1 << 22) // max(1, len(hints)))
    result: Words = np.zeros(0, dtype=np.uint64)
    for start in range(0, len(words), chunk):
        part = np.bitwise_and.outer(words[start:start + chunk], hints).ravel()
        result = _distinct_words(np.concatenate((result, part)))
        if big and len(result) > tuning.max_distinct:
            raise _too_large(n, f"more than {tuning.max_distinct} distinct partial affinities")
    return _Sorted(result)


def _too_large(n: int, what: str) -> MergeTooLargeError:
    return MergeTooLargeError(
        f"the fast merge on {n} NUMA nodes met {what} (FAST-6: above {DEFAULT_TUNING.zeta_nodes}"
        " NUMA nodes the fold is bounded; kubelet's own providers cannot state such lists)",
        where="providers")


def reachable(lists: Sequence[frozenset[int] | Words], n: int, tuning: Tuning = DEFAULT_TUNING,
              ) -> tuple[_Reach, list[_Reach]]:
    """FAST-3/FAST-4: every mask ``full & m1 & ... & mk`` with ``mi`` from list ``i`` (an
    empty list makes none), and the partial sets before each list (for a witness)."""
    full = (1 << n) - 1
    reach: _Reach = {full}
    before: list[_Reach] = []
    transform_cost = 3 * n * (1 << n)
    for listed in lists:
        before.append(reach)
        work = _size(reach) * len(listed)
        big = n > tuning.zeta_nodes
        if isinstance(reach, _Indicator):
            reach = _transform_step(reach.present, _array(listed), n)
        elif isinstance(reach, set) and work <= tuning.small_work:
            masks = listed.tolist() if isinstance(listed, np.ndarray) else listed
            # the machine ANDed with compact masks leaves them as they are
            reach = set(masks) if reach == {full} else {s & m for s in reach for m in masks}
        elif not big and work > tuning.zeta_factor * transform_cost:
            present = np.zeros(1 << n, dtype=np.int64)
            present[as_words(reach).astype(np.intp)] = 1
            reach = _transform_step(present, _array(listed), n)
        else:
            if big and work > tuning.max_work:
                raise _too_large(n, f"a fold step of {work} ANDs (bound {tuning.max_work})")
            reach = _sorted_step(as_words(reach), _array(listed), n, tuning, big)
    return reach, before


def _array(listed: Iterable[int] | Words) -> Words:
    if isinstance(listed, np.ndarray):
        return listed
    return np.fromiter(listed, dtype=np.uint64)


def _distinct_words(words: Words) -> Words:
    """The distinct words, ascending: by an indicator when they are all small (as the words of
    a machine of up to 24 nodes are), else by sorting."""
    if len(words) and int(words.max()) < 1 << 24:
        present = np.zeros(int(words.max()) + 1, dtype=np.bool_)
        present[words.astype(np.intp)] = True
        return np.flatnonzero(present).astype(np.uint64)
    return np.unique(words)


# --- ranking (FAST-5) --------------------------------------------------------------------------


def _popcount(words: Words) -> Counts:
    return np.bitwise_count(words).astype(np.int64)


class _Ranker:
    """FAST-5: the best of a set of non-empty compact masks in one release's order."""

    def __init__(self, space: Space, numa: NumaInfo, closest: bool, tuning: Tuning) -> None:
        self.space, self.numa, self.closest, self.tuning = space, numa, closest, tuning

    def counts(self, reach: _Reach) -> set[int]:
        if isinstance(reach, set):
            return {m.bit_count() for m in reach} - {0}
        counts = _popcount(as_words(reach))
        return set(np.flatnonzero(np.bincount(counts)).tolist()) - {0} if len(counts) else set()

    def best_of_count(self, reach: _Reach, count: int) -> int:
        """MERGE-6 / MERGE-9 among masks of ``count`` nodes: the lower average distance with
        prefer-closest (as kubelet's float, ties falling through), then the smaller word."""
        if isinstance(reach, set):
            same = [m for m in reach if m.bit_count() == count]
        else:
            words = as_words(reach)
            chosen = words[_popcount(words) == count]
            if len(chosen) > self.tuning.small_select:
                return self._best_array(chosen, count)
            same = [int(w) for w in chosen]
        if not self.closest:
            return min(same)
        average = self.numa.average_distance
        return min(same, key=lambda m: (average(self.space.mask(m)), m))

    def _best_array(self, words: Words, count: int) -> int:
        if not self.closest:
            return int(words.min())
        averages = self._averages(words, count)
        if averages is None:
            average = self.numa.average_distance
            return min((int(w) for w in words), key=lambda m: (average(self.space.mask(m)), m))
        return int(words[np.lexsort((words, averages))[0]])

    def _averages(self, words: Words, count: int) -> npt.NDArray[np.float64] | None:
        """MERGE-12 for many masks at once, bit for bit as kubelet's sequential float sum, when
        every partial sum is an integer a double holds exactly (below 2**53); else ``None``."""
        ids = self.space.ids
        rows = [self.numa.distance_row(i) for i in ids]
        matrix = [[row[j] if row is not None and j < len(row) else 0 for j in ids]
                  for row in rows]
        largest = max((max(r) for r in matrix), default=0)
        if largest * count * count >= 1 << 53:
            return None
        distances = np.array(matrix, dtype=np.int64)
        n = self.space.n
        bits = ((words[:, None] >> np.arange(n, dtype=np.uint64)) & np.uint64(1)).astype(np.int64)
        totals = ((bits @ distances) * bits).sum(axis=1)
        averages: npt.NDArray[np.float64] = totals.astype(np.float64) / float(count * count)
        return averages


# --- the merge ---------------------------------------------------------------------------------


def _choose_count(counts: set[int], target: int | None) -> int:
    """FAST-5: the node count the winner has.  ``target`` None: the fewest (MERGE-6, MERGE-7);
    else MERGE-8 around the target: exactly it, else the most below it, else the fewest above.

    pre: len(counts) > 0 and all(c > 0 for c in counts)
    post: __return__ in counts
    post: target is not None or __return__ == min(counts)
    post: target is None or target not in counts or __return__ == target
    post: target is None or target in counts or __return__ < target or min(counts) > target
    post: target is None or __return__ >= max([c for c in counts if c <= target], default=0)
    """
    if target is None or target in counts:
        return target if target is not None else min(counts)
    below = [c for c in counts if c < target]
    return max(below) if below else min(counts)


class Listed(NamedTuple):
    """What the fast merge needs of one hint list, read in one pass: its distinct affinity
    words (as given, before any AND), which of them are preferred, and whether it has a hint
    without an affinity (preferred or not).  A named tuple: one is made for every list of
    every merge, and a tuple is made in half the time of a frozen attrs class."""

    words: frozenset[int]
    preferred: frozenset[int]
    free: bool
    preferred_free: bool
    fewest: int | None  # the fewest nodes of an affinity in the list (None: no affinity)
    #: FAST-8: ``words`` and ``preferred`` as ascending arrays, when the list came as arrays
    arrays: tuple[Words, Words] | None = None

    @classmethod
    def of(cls, hints: Sequence[TopologyHint]) -> Listed:
        if isinstance(hints, HintArray):
            return cls._of_arrays(hints)
        words: set[int] = set()
        preferred: set[int] = set()
        free = preferred_free = False
        for hint in hints:  # one pass: lists of a few hints are the common case
            mask = hint.numa_affinity
            if mask is None:
                free = True
                preferred_free = preferred_free or hint.preferred
            else:
                words.add(mask.bits)
                if hint.preferred:
                    preferred.add(mask.bits)
        return cls(frozenset(words), frozenset(preferred), free, preferred_free,
                   min(map(int.bit_count, words)) if words else None)

    @classmethod
    def _of_arrays(cls, hints: HintArray) -> Listed:
        """FAST-8: the same reading of a list held as arrays, without a Python object per
        hint (the sets are made from the distinct words only)."""
        named = ~hints.free
        words = _distinct_words(hints.words[named])
        preferred = _distinct_words(hints.words[named & hints.preferred])
        return cls(frozenset(words.tolist()), frozenset(preferred.tolist()),
                   bool(hints.free.any()), bool((hints.free & hints.preferred).any()),
                   int(_popcount(words).min()) if len(words) else None,
                   (words, preferred))

    def compact(self, space: Space, *, preferred: bool) -> frozenset[int] | Words:
        """FAST-3: the list's distinct masks on the machine, the whole machine for a hint
        without an affinity (as an array of distinct masks, ascending, when the list came
        as arrays, FAST-8)."""
        words, free = ((self.preferred, self.preferred_free) if preferred
                       else (self.words, self.free))
        if self.arrays is not None and space.contiguous:
            compact = self.arrays[1 if preferred else 0] & np.uint64(space.full)
            if free:
                compact = np.append(compact, np.uint64(space.full))
            return _distinct_words(compact)
        found = space.compact_all(words)
        if free:
            found.add(space.full)
        return frozenset(found)


def _target(listed: Sequence[Listed]) -> int:
    """MERGE-8's target, as :func:`numaspec.topology.merge.target_count` computes it: the narrowest
    affinity of a list has the fewest nodes of that list, so the target is the largest of
    the lists' fewest counts (0 without any affinity)."""
    return max((item.fewest for item in listed if item.fewest is not None), default=0)


def _preferred_words(listed: Sequence[Listed], space: Space) -> set[int]:
    """FAST-2 (1.24+): the compact affinities of the preferred permutations, empty ones
    included.  A permutation is preferred iff all its hints are and all its affinities are one
    word ``M`` (compared before the AND): so ``M`` is held preferred by every list that has no
    preferred hint without an affinity; with only such hints the affinity is the machine."""
    required: set[int] | None = None  # the words every list without a free hint holds
    named: set[int] = set()
    for item in listed:
        named |= item.preferred
        if not item.preferred_free:
            required = (set(item.preferred) if required is None
                        else required & item.preferred)
    found = space.compact_all(named if required is None else required)
    if required is None:
        found.add(space.full)  # every list can take its free hint
    return found


def _distinct(reach: _Reach) -> int:
    """How many non-empty masks ``reach`` holds."""
    if isinstance(reach, set):
        return len(reach - {0})
    if isinstance(reach, _Sorted):
        return int(np.count_nonzero(reach.words))
    return int(np.count_nonzero(reach.present[1:]))


def _regime(reach: _Reach) -> str:
    return ("sets" if isinstance(reach, set) else "sorted" if isinstance(reach, _Sorted)
            else "transform")


def fast_merge(
    lists: Sequence[Sequence[TopologyHint]],
    numa: NumaInfo,
    version: KubeletVersion,
    mode: str,
    options: PolicyOptions,
    *,
    tuning: Tuning = DEFAULT_TUNING,
    witness: bool = False,
) -> FastMerge:
    """FAST-1..FAST-6: what :func:`numaspec.topology.merge.best_hint` returns for the same
    arguments, with how it was found; ``witness``: also one permutation that merges to the
    winner."""
    space = Space(numa)
    default = numa.default_affinity()
    permutations = math.prod(len(hints) for hints in lists)
    if permutations == 0:
        return FastMerge(TopologyHint(default, False), "MERGE-10", 0, 0, "none",
                         () if witness else None)
    modern = version.ranks_non_preferred_by_target_count
    closest = modern and options.prefer_closest_numa_nodes and mode != "single-numa-node"
    ranker = _Ranker(space, numa, closest, tuning)
    mask_rule = "MERGE-9" if closest else "MERGE-6"
    listed = [Listed.of(hints) for hints in lists]

    # FAST-2: a preferred candidate, when there is one, beats every other (MERGE-5).
    before: list[_Reach] = []
    if version.merge_requires_equal_masks:
        preferred: _Reach = _preferred_words(listed, space)
        regime = "preferred"
    else:
        preferred, before = reachable(
            [item.compact(space, preferred=True) for item in listed], space.n, tuning)
        regime = _regime(preferred)
    counts = ranker.counts(preferred)
    if counts:
        best = ranker.best_of_count(preferred, min(counts))
        distinct = _distinct(preferred)
        hint = TopologyHint(space.mask(best), True)
        found = None
        if witness:
            found = (_preferred_witness(lists, space, best) if regime == "preferred"
                     else _witness([[h for h in hints if h.preferred] for hints in lists],
                                   space, before, best))
        return FastMerge(hint, mask_rule if distinct > 1 else "MERGE-4", permutations,
                         distinct, regime, found)

    # FAST-3/FAST-4: every other candidate is a reachable non-empty AND.
    reach, before = reachable([item.compact(space, preferred=False) for item in listed],
                              space.n, tuning)
    counts = ranker.counts(reach)
    distinct = _distinct(reach)
    if modern:
        if not counts:  # MERGE-10
            return FastMerge(TopologyHint(default, False), "MERGE-10", permutations, 0,
                             _regime(reach), () if witness else None)
        best = ranker.best_of_count(reach, _choose_count(counts, _target(listed)))
        rule = "MERGE-8"
    else:
        # MERGE-7: the walk starts from the machine, not preferred; anything narrower wins.
        fewest = min(counts, default=space.n)
        best = space.full if fewest >= space.n else ranker.best_of_count(reach, fewest)
        rule = "MERGE-7"
    found = None
    if witness:
        # Up to 1.23 the machine is where the walk starts: it may be no candidate at all.
        # (a candidate equal to it is not narrower, so the start is what stands).
        starting = not modern and best == space.full
        found = () if starting else _witness(lists, space, before, best)
    return FastMerge(TopologyHint(space.mask(best), False), rule, permutations, distinct,
                     _regime(reach), found)


def fast_best_hint(lists: Sequence[Sequence[TopologyHint]], numa: NumaInfo,
                   version: KubeletVersion, mode: str, options: PolicyOptions, *,
                   tuning: Tuning = DEFAULT_TUNING) -> TopologyHint:
    """:func:`fast_merge`'s hint alone: a drop-in for :func:`numaspec.topology.merge.best_hint`."""
    return fast_merge(lists, numa, version, mode, options, tuning=tuning).hint


# --- a witness permutation (for the explain trace) ---------------------------------------------

#: Pairs a witness search may test at one list before it gives up (the trace then says so).
WITNESS_WORK = 1 << 24


def _preferred_witness(lists: Sequence[Sequence[TopologyHint]], space: Space,
                       best: int) -> tuple[TopologyHint, ...] | None:
    """FAST-2's permutation: one word ``M`` held by every list, or a free hint."""
    words = {h.numa_affinity.bits for hints in lists for h in hints
             if h.preferred and h.numa_affinity is not None and
             space.compact(h.numa_affinity.bits) == best}
    for word in [*sorted(words), -1]:
        chosen = []
        for hints in lists:
            pick = next((h for h in hints if h.preferred and h.numa_affinity is not None
                         and h.numa_affinity.bits == word), None) or next(
                (h for h in hints if h.preferred and h.numa_affinity is None), None)
            if pick is None:
                break
            chosen.append(pick)
        else:
            return tuple(chosen)
    return None


def _witness(lists: Sequence[Sequence[TopologyHint]], space: Space, before: list[_Reach],
             best: int) -> tuple[TopologyHint, ...] | None:
    """One hint per list whose AND is ``best``, walking back through the partial sets:
    at list ``i``, a hint ``m`` and a partial ``s`` before it with ``s & m == best_i``."""
    chosen: list[TopologyHint] = []
    target = best
    for index in reversed(range(len(lists))):
        hints = [h for h in lists[index] if space.hint_mask(h) & target == target]
        partial = as_words(before[index])
        partial = partial[(partial & np.uint64(target)) == np.uint64(target)]
        if len(hints) * len(partial) > WITNESS_WORK:
            return None
        for hint in hints:
            extra = np.uint64(space.hint_mask(hint) & ~target & space.full)
            fits = partial[(partial & extra) == 0]
            if len(fits):
                chosen.append(hint)
                target = int(fits[0])
                break
        else:
            return None
    return tuple(reversed(chosen))
