"""Hint scores, from kubelet 1.38 (spec chapter ``merge.md``, MERGE-13 and MERGE-14).

A merged hint carries the mean of its parts' scores (MERGE-13, :func:`merged_score`).  The
merge keeps the first of candidates equal in affinity and preference, so the winner's score
is the one of the *first* permutation, in walking order, that merges to the winner (MERGE-14).
The definitional walk gets it for free; the fast merge, which never walks, finds that
permutation here: greedily, list by list, taking the first hint from which the winner can
still be reached.

The walking order is not fixed: kubelet visits a provider's resources in Go's random map
order.  The winner does not depend on it (MERGE-11) but its score can, when a provider has
several resources; :func:`possible_scores` gives every score some order yields.

Sources: ``aggregateHintScores``, ``mergePermutation``, ``HintMerger.compare`` and
``filterProvidersHints`` in ``pkg/kubelet/cm/topologymanager/policy.go`` (kubernetes 1.38).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np

from numaspec.topology.fast_merge import (
    DEFAULT_TUNING,
    Listed,
    Space,
    Words,
    as_words,
    reachable,
)
from numaspec.topology.hints import (
    HintArray,
    ProviderHints,
    TopologyHint,
    flatten_provider_hints,
)
from numaspec.topology.merge import merged_score
from numaspec.topology.numa import NumaInfo

__all__ = ["MAX_ORDERS", "first_permutation", "has_scores", "int64", "possible_scores",
           "utilization_score", "winner_score"]

#: MERGE-14: the most orders of the providers' resources :func:`possible_scores` tries; past
#: it the scores are not enumerated (an answer then states the listed order's score only,
#: and says so).
MAX_ORDERS = 720


def int64(value: int) -> int:
    """``value`` as Go's int64 holds it (two's complement, wrapping)."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


def utilization_score(allocatable: int, assigned: int) -> int:
    """HINT-5: the score a provider gives a hint (kubelet 1.38's ``UtilizationScore``, which
    CPU-22, MEM-12 and DEV-12 apply): 0 when nothing is allocatable, else the assigned share as
    a whole percentage, at least 1.  In Go's int64, as kubelet computes it: ``assigned * 100``
    wraps past 2^63 and the division truncates toward zero, so a negative share scores 1.

    post: __return__ >= 0
    """
    allocatable, share = int64(allocatable), int64(int64(assigned) * 100)
    if allocatable <= 0:
        return 0
    quotient = abs(share) // allocatable
    return max(1, quotient if share >= 0 else -quotient)


def has_scores(lists: Sequence[Sequence[TopologyHint]]) -> bool:
    """HINT-5: whether any hint has a score (without one every merged score is 0)."""
    for hints in lists:
        if isinstance(hints, HintArray):
            if hints.scores is not None:
                return True
        elif any(hint.score for hint in hints):
            return True
    return False


def _masks(hints: Sequence[TopologyHint], space: Space) -> list[int]:
    if isinstance(hints, HintArray):
        compact = hints.words & np.uint64(space.full)
        if not space.contiguous:
            return [space.hint_mask(h) for h in hints]
        compact[hints.free] = np.uint64(space.full)
        return [int(w) for w in compact.tolist()]
    return [space.hint_mask(h) for h in hints]


def _first_preferred(lists: Sequence[Sequence[TopologyHint]], space: Space, best: int
                     ) -> tuple[int, ...] | None:
    """MERGE-3, MERGE-14: the first permutation, by index, that merges to ``best`` preferred:
    every hint preferred and every affinity one word ``M`` (before the AND) whose part on the
    machine is ``best``; or, when ``best`` is the machine, every hint preferred without one."""
    options: set[int | None] = {
        h.numa_affinity.bits for hints in lists for h in hints
        if h.preferred and h.numa_affinity is not None
        and space.compact(h.numa_affinity.bits) == best}
    if best == space.full:
        options.add(None)
    found: list[tuple[int, ...]] = []
    for word in options:
        firsts: list[int] = []
        named: list[int | None] = []
        for hints in lists:
            allowed = [i for i, h in enumerate(hints) if h.preferred and (
                h.numa_affinity is None or (word is not None and h.numa_affinity.bits == word))]
            if not allowed:
                break
            firsts.append(allowed[0])
            named.append(next((i for i in allowed if hints[i].numa_affinity is not None), None))
        else:
            if word is not None and all(hints[i].numa_affinity is None
                                        for hints, i in zip(lists, firsts, strict=True)):
                # every first choice is free: the word must come in, as late as it can
                last = max(k for k, i in enumerate(named) if i is not None)
                chosen = named[last]
                assert chosen is not None
                firsts[last] = chosen
            found.append(tuple(firsts))
    return min(found, default=None)


def _first_any(lists: Sequence[Sequence[TopologyHint]], space: Space, best: int
               ) -> tuple[int, ...] | None:
    """MERGE-14: the first permutation, by index, whose AND on the machine is ``best``: list
    by list, the first hint after which some choice from the remaining lists still reaches
    ``best`` (the remaining lists' reachable ANDs, FAST-3, computed from the end)."""
    count = len(lists)
    masks = [_masks(hints, space) for hints in lists]
    backwards = [Listed.of(hints).compact(space, preferred=False) for hints in reversed(lists)]
    _, before = reachable(backwards, space.n)
    wanted = np.uint64(best)
    rests: dict[int, Words] = {}

    def ends(index: int, here: int) -> bool:
        rest = rests.get(index)
        if rest is None:  # the ANDs of lists index+1 .. count-1 that hold best
            rest = as_words(before[count - index - 1])
            rest = rests[index] = rest[(rest & wanted) == wanted]
        return bool(np.any((rest & np.uint64(here)) == wanted))

    return _greedy(masks, best, space.full, ends)


def _greedy(masks: Sequence[Sequence[int]], best: int, full: int,
            ends: Callable[[int, int], bool]) -> tuple[int, ...] | None:
    """MERGE-14: list by list, the first hint whose partial AND ``here`` still holds ``best``
    and, as ``ends(index, here)`` says, can still end at ``best`` with the lists after it;
    ``None`` where a list has none."""
    chosen = []
    partial = full
    for index, listed in enumerate(masks):
        for position, mask in enumerate(listed):
            here = partial & mask
            if here & best == best and ends(index, here):
                chosen.append(position)
                partial = here
                break
        else:
            return None
    return tuple(chosen)


def first_permutation(lists: Sequence[Sequence[TopologyHint]], numa: NumaInfo,
                      winner: TopologyHint) -> tuple[TopologyHint, ...] | None:
    """MERGE-14 (1.24+ merge rules): the first permutation of ``lists`` that merges to
    ``winner`` (its affinity and preference), or ``None`` when none does (MERGE-10's
    machine, which no permutation gave)."""
    space = Space(numa)
    mask = winner.numa_affinity
    if mask is None:
        return None
    best = space.compact(mask.bits)
    index = (_first_preferred(lists, space, best) if winner.preferred
             else _first_any(lists, space, best))
    if index is None:
        return None
    return tuple(hints[i] for hints, i in zip(lists, index, strict=True))


def winner_score(lists: Sequence[Sequence[TopologyHint]], numa: NumaInfo,
                 winner: TopologyHint) -> int:
    """MERGE-13, MERGE-14: the score kubelet's merged hint carries for ``winner``, walking
    ``lists`` in their order."""
    if not has_scores(lists):
        return 0
    first = first_permutation(lists, numa, winner)
    return 0 if first is None else merged_score(first)


def possible_scores(providers: Sequence[ProviderHints], numa: NumaInfo, winner: TopologyHint,
                    *, filtered: Callable[[list[Sequence[TopologyHint]]],
                                          list[Sequence[TopologyHint]]] | None = None
                    ) -> frozenset[int] | None:
    """MERGE-14: every score the winner may carry over the orders in which kubelet may walk
    each provider's resources (Go map order), the lists passed through ``filtered`` (POLICY-4's
    filter, under single-numa-node); ``None`` when there are more than :data:`MAX_ORDERS`
    orders to try.

    Each order is :func:`winner_score` of the lists in that order.  What does not depend on
    the order is done once: the flattening and the filter (both act list by list, so they
    commute with reordering a provider's lists), whether any hint has a score, the machine's
    masks; orders that only swap equal lists are tried once; and the ANDs reachable from the
    lists after each one (:class:`_Suffixes`) are shared by the orders that end alike."""
    orders = math.prod(math.factorial(len(p or {})) for p in providers)
    if orders > MAX_ORDERS:
        return None
    blocks = [flatten_provider_hints([provider]) for provider in providers]
    if filtered is not None:
        blocks = [filtered(block) for block in blocks]
    lists = [hints for block in blocks for hints in block]
    mask = winner.numa_affinity
    if not has_scores(lists) or mask is None:
        return frozenset({0})
    labels: dict[object, int] = {}
    by_label: list[Sequence[TopologyHint]] = []  # each label's list
    labelled: list[list[int]] = []
    for block in blocks:
        row = []
        for hints in block:
            # equal lists share a label (a list held as arrays is its own)
            key = id(hints) if isinstance(hints, HintArray) else ("hints", tuple(hints))
            if key not in labels:
                labels[key] = len(by_label)
                by_label.append(hints)
            row.append(labels[key])
        labelled.append(row)
    space = Space(numa)
    best = space.compact(mask.bits)
    suffixes = None if winner.preferred else _Suffixes(by_label, space, best)
    found: set[int] = set()
    for choice in itertools.product(*(set(itertools.permutations(row)) for row in labelled)):
        order = tuple(label for part in choice for label in part)
        ordered = [by_label[label] for label in order]
        if suffixes is None:
            index = _first_preferred(ordered, space, best)
        else:
            index = suffixes.first(order)
            if index is _TOO_MANY:
                index = _first_any(ordered, space, best)
        found.add(0 if index is None else merged_score(
            [hints[i] for hints, i in zip(ordered, index, strict=True)]))
    return frozenset(found)


#: :meth:`_Suffixes.first` gives up: a fold step would be larger than the fast merge folds on
#: Python sets (:attr:`~numaspec.topology.fast_merge.Tuning.small_work`).
_TOO_MANY = (-1,)


class _Suffixes:
    """MERGE-14's :func:`_first_any` for many orders of the same labelled lists: the ANDs
    reachable from the lists after each position (FAST-3) are kept by the labels that
    follow, so orders ending alike share them.  On Python sets, as the fast merge's small
    fold steps (FAST-4); a larger step gives up (``_TOO_MANY``) and the caller takes the
    general :func:`_first_any`.

    A partial AND ``here`` (holding ``best``) can still end at ``best`` iff some reachable
    AND ``r`` of what follows (holding ``best`` too) has nothing of ``here`` outside
    ``best``: so each suffix keeps those ANDs' parts outside ``best``, and its answers by
    ``here``'s part outside ``best``."""

    def __init__(self, lists: Sequence[Sequence[TopologyHint]], space: Space, best: int
                 ) -> None:
        self.masks = [_masks(hints, space) for hints in lists]
        self.distinct = [set(masks) for masks in self.masks]
        self.full, self.best = space.full, best
        self.reach: dict[tuple[int, ...], set[int] | None] = {(): {space.full}}
        self.ends: dict[tuple[int, ...], tuple[list[int], dict[int, bool]] | None] = {}

    def _reach(self, labels: tuple[int, ...]) -> set[int] | None:
        """Every AND of one mask from each of ``labels``' lists with the machine; ``None``
        past the small work."""
        if labels in self.reach:
            return self.reach[labels]
        rest = self._reach(labels[1:])
        found: set[int] | None = None
        masks = self.distinct[labels[0]]
        if rest is not None and len(rest) * len(masks) <= DEFAULT_TUNING.small_work:
            found = {r & m for r in rest for m in masks}
        self.reach[labels] = found
        return found

    def _ends(self, labels: tuple[int, ...]) -> tuple[list[int], dict[int, bool]] | None:
        """The parts outside ``best`` of the reachable ANDs of ``labels`` that hold ``best``,
        and the answers given so far (``None`` past the small work)."""
        if labels not in self.ends:
            reach = self._reach(labels)
            best = self.best
            self.ends[labels] = None if reach is None else (
                list({r & ~best for r in reach if r & best == best}), {})
        return self.ends[labels]

    def first(self, order: tuple[int, ...]) -> tuple[int, ...] | None:
        """:func:`_first_any` of the lists in ``order`` (or ``_TOO_MANY``)."""
        after = [self._ends(order[index + 1:]) for index in range(len(order))]
        if None in after:
            return _TOO_MANY
        best = self.best

        def ends(index: int, here: int) -> bool:
            found = after[index]
            assert found is not None
            outside, answered = found
            extra = here & ~best
            fits = answered.get(extra)
            if fits is None:
                fits = answered[extra] = any(not part & extra for part in outside)
            return fits

        return _greedy([self.masks[label] for label in order], best, self.full, ends)
