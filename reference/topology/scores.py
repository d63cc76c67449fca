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

from numaspec.topology.fast_merge import Listed, Space, as_words, reachable
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
    chosen: list[int] = []
    partial = space.full
    for index in range(count):
        rest = as_words(before[count - index - 1])  # the ANDs of lists index+1 .. count-1
        rest = rest[(rest & wanted) == wanted]
        for position, mask in enumerate(masks[index]):
            here = partial & mask
            if here & best != best:
                continue
            if np.any((rest & np.uint64(here)) == wanted):
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
    orders to try."""
    orders = math.prod(math.factorial(len(p or {})) for p in providers)
    if orders > MAX_ORDERS:
        return None
    found: set[int] = set()
    each = [itertools.permutations(list((p or {}).items())) for p in providers]
    for choice in itertools.product(*each):
        reordered = [dict(items) if providers[i] else providers[i]
                     for i, items in enumerate(choice)]
        lists = flatten_provider_hints(reordered)
        if filtered is not None:
            lists = filtered(lists)
        found.add(winner_score(lists, numa, winner))
    return frozenset(found)
