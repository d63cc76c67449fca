"""The permutation merge and best-hint selection (spec chapter ``merge.md``).

This is the *definitional* merge: it walks the whole cross product of the providers' hint
lists, one permutation at a time, and folds a best hint exactly as kubelet does.  Its cost is
the product of the list lengths; it is the meaning of the spec, not a fast algorithm.

Sources, in ``pkg/kubelet/cm/topologymanager/policy.go``:
``mergePermutation`` (both forms), ``mergeFilteredHints`` (up to 1.23),
``compareHints`` (1.24-1.25) and ``HintMerger`` (1.26+), and ``numa_info.go`` for MERGE-9.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from numaspec.topology.hints import TopologyHint, permutations
from numaspec.topology.masks import NumaMask
from numaspec.topology.numa import NumaInfo, narrowest
from numaspec.topology.options import PolicyOptions
from numaspec.topology.versions import KubeletVersion

__all__ = ["Chooser", "Keep", "MergeMode", "best_hint", "merge_permutation", "merged_score",
           "target_count"]

#: An observer of the walk (the explain trace): called with each candidate that becomes the
#: best so far, the permutation it came from and the rule that made it the best; and once
#: with ``None`` after the walk, with the number of candidates walked and of empty ones.
Keep = Callable[[TopologyHint | None, Sequence[TopologyHint], str, int, int], None]

# The (internal) name a merge runs under; only single-numa-node changes how masks compare.
MergeMode = Literal["best-effort", "restricted", "single-numa-node"]


def merge_permutation(
    default: NumaMask, permutation: Sequence[TopologyHint], version: KubeletVersion
) -> TopologyHint:
    """Merge one permutation (one hint per list) into one candidate hint.

    MERGE-1: the candidate's affinity is the machine mask ANDed with every non-``None``
    affinity; a hint without an affinity constrains nothing.
    MERGE-2 (up to 1.23): the candidate is preferred iff every hint is preferred.
    MERGE-3 (1.24+): ... and, in addition, every non-``None`` affinity is the same mask
    (compared as full 64-bit words, before the AND).

    post: __return__.numa_affinity is not None
    post: __return__.numa_affinity.bits & ~default.bits == 0
    post: all(h.preferred for h in permutation) or not __return__.preferred
    post: _inside_every(__return__, permutation)
    """
    merged = default
    preferred = True
    first: NumaMask | None = None
    for hint in permutation:
        if not hint.preferred:
            preferred = False
        mask = hint.numa_affinity
        if mask is None:
            continue
        merged = merged & mask
        if first is None:
            first = mask
        elif version.merge_requires_equal_masks and mask != first:
            preferred = False
    if version.has_hint_scores:
        return TopologyHint(merged, preferred, merged_score(permutation))
    return TopologyHint(merged, preferred)


def merged_score(permutation: Sequence[TopologyHint]) -> int:
    """MERGE-13 (1.38+): the mean of the positive scores of the permutation's hints that have
    an affinity, rounded toward zero; 0 when there are none (a score of 0 is no signal and is
    not averaged in, nor is the score of a hint without an affinity).

    post: __return__ >= 0
    """
    total = count = 0
    for hint in permutation:
        if hint.numa_affinity is not None and hint.score > 0:
            total += hint.score
            count += 1
    return total // count if count else 0


def target_count(lists: Sequence[Sequence[TopologyHint]]) -> int:
    """MERGE-8's target: over every list, the node count of its narrowest hint that has an
    affinity (preferred or not); the largest of those counts; 0 when no list has one.

    kubelet names it ``bestNonPreferredAffinityCount``: the fewest NUMA nodes the widest
    resource needs, hence the width a non-preferred placement should aim for.

    post: 0 <= __return__ <= 64
    post: __return__ == 0 or __return__ in _affinity_counts(lists)
    """
    target = 0
    for hints in lists:
        narrow: NumaMask | None = None
        for hint in hints:
            mask = hint.numa_affinity
            if mask is not None and (narrow is None or mask.is_narrower_than(narrow)):
                narrow = mask
        if narrow is not None:
            target = max(target, narrow.count())
    return target


def _inside_every(merged: TopologyHint, permutation: Sequence[TopologyHint]) -> bool:
    """Contract helper: ``merged`` lies inside every affinity of the permutation (MERGE-1)."""
    mask = merged.numa_affinity
    return mask is not None and all(
        mask & h.numa_affinity == mask for h in permutation if h.numa_affinity is not None)


def _affinity_counts(lists: Sequence[Sequence[TopologyHint]]) -> set[int]:
    """Contract helper: the node counts of every affinity in ``lists``."""
    return {h.numa_affinity.count() for hints in lists for h in hints
            if h.numa_affinity is not None}


class Chooser:
    """The comparison of two candidates with the same preference (MERGE-6, MERGE-9)."""

    def __init__(self, numa: NumaInfo, mode: MergeMode, options: PolicyOptions) -> None:
        # MERGE-9: prefer-closest never applies under single-numa-node.
        self._closest = options.prefer_closest_numa_nodes and mode != "single-numa-node"
        self._numa = numa

    @property
    def closest(self) -> bool:
        """MERGE-9 applies: prefer-closest-numa-nodes, and not single-numa-node."""
        return self._closest

    @property
    def rule(self) -> str:
        """The rule that compares two candidates' masks: MERGE-9 with prefer-closest."""
        return "MERGE-9" if self._closest else "MERGE-6"

    def masks(self, current: TopologyHint, candidate: TopologyHint) -> TopologyHint:
        cur, cand = current.numa_affinity, candidate.numa_affinity
        assert cur is not None and cand is not None
        if cur == cand:
            return current
        best = self._numa.closest(cur, cand) if self._closest else narrowest(cur, cand)
        return current if best == cur else candidate


def _better_non_preferred(
    current: TopologyHint, candidate: TopologyHint, target: int, choose: Chooser
) -> TopologyHint:
    """MERGE-8: rank two non-preferred candidates around the target count T.

    Best is a candidate with exactly T nodes; then those with fewer than T nodes, more nodes
    being better; then those with more than T nodes, fewer nodes being better.  Candidates of
    the same count are compared as masks (MERGE-6 / MERGE-9).
    """
    assert current.numa_affinity is not None and candidate.numa_affinity is not None
    have, offer = current.numa_affinity.count(), candidate.numa_affinity.count()
    if have > target:
        return choose.masks(current, candidate)
    if have == target:
        return choose.masks(current, candidate) if offer == target else current
    # have < target
    if offer > target:
        return current
    if offer == target:
        return candidate
    if offer != have:
        return candidate if offer > have else current
    return choose.masks(current, candidate)


def _same(a: TopologyHint, b: TopologyHint) -> bool:
    return a.numa_affinity == b.numa_affinity and a.preferred == b.preferred


def _ranked(a: TopologyHint, b: TopologyHint, modern: bool, choose: Chooser | None,
            target: int) -> tuple[TopologyHint, str]:
    """EXPLAIN-2: the better of two distinct non-empty candidates, and the rule that ranks it
    above the other: MERGE-5 (preferred over not), MERGE-6 (the narrower of two preferred),
    MERGE-7 (the narrower of two non-preferred, up to 1.23), MERGE-8 (the target-width
    ranking, from 1.24), MERGE-9 (the closer of two of one width under
    prefer-closest-numa-nodes)."""
    if a.preferred != b.preferred:
        return (a if a.preferred else b), "MERGE-5"
    mask_a, mask_b = a.numa_affinity, b.numa_affinity
    assert mask_a is not None and mask_b is not None
    if not modern or choose is None:
        winner = b if mask_b.is_narrower_than(mask_a) else a
        return winner, "MERGE-6" if a.preferred else "MERGE-7"
    tie = mask_a.count() == mask_b.count()
    if a.preferred:
        return choose.masks(a, b), "MERGE-9" if tie and choose.closest else "MERGE-6"
    return (_better_non_preferred(a, b, target, choose),
            "MERGE-9" if tie and choose.closest else "MERGE-8")


class _Podium:
    """EXPLAIN-2: the best candidate and the runner-up (the best of the rest), kept only for a
    trace, so that the rule that ranks the winner above the runner-up can be named."""

    def __init__(self, modern: bool, choose: Chooser | None, target: int) -> None:
        self._modern, self._choose, self._target = modern, choose, target
        self.best: TopologyHint | None = None
        self.second: TopologyHint | None = None

    def _better(self, a: TopologyHint, b: TopologyHint) -> TopologyHint:
        return _ranked(a, b, self._modern, self._choose, self._target)[0]

    def see(self, candidate: TopologyHint) -> None:
        if self.best is None:
            self.best = candidate
        elif _same(candidate, self.best):
            return
        elif self._better(self.best, candidate) is candidate:
            self.best, self.second = candidate, self.best
        elif self.second is None or (not _same(candidate, self.second) and
                                     self._better(self.second, candidate) is candidate):
            self.second = candidate

    def rule(self, empty: int) -> str:
        """The rule that decided: the one ranking the winner above the runner-up; with a
        single distinct candidate, MERGE-4 when others were discarded as empty, else MERGE-1
        (the only candidate); MERGE-10 when there is none."""
        if self.best is None:
            return "MERGE-10"
        if self.second is None:
            return "MERGE-4" if empty else "MERGE-1"
        return _ranked(self.best, self.second, self._modern, self._choose, self._target)[1]


def best_hint(
    lists: Sequence[Sequence[TopologyHint]],
    numa: NumaInfo,
    version: KubeletVersion,
    mode: MergeMode,
    options: PolicyOptions,
    *,
    keep: Keep | None = None,
) -> TopologyHint:
    """Merge every permutation of ``lists`` and keep the best candidate (``keep``, when given,
    sees every change of the best, for the explain trace).

    MERGE-4: a candidate with an empty affinity is never kept.
    MERGE-5: a preferred candidate beats any non-preferred one.
    MERGE-6: of two preferred candidates the narrower is kept (MERGE-9 with prefer-closest).
    MERGE-7 (up to 1.23): of two non-preferred candidates the narrower is kept.
    MERGE-8 (1.24+): non-preferred candidates are ranked around the target count.
    MERGE-10: when nothing is kept, the result is the machine mask, not preferred.
    MERGE-14 (1.38+): of candidates equal in affinity and preference the first is kept, so
    the winner's score is the first permutation's that merges to it.
    """
    default = numa.default_affinity()
    if not version.ranks_non_preferred_by_target_count:
        return _best_hint_pre_124(lists, default, version, keep)
    choose = Chooser(numa, mode, options)
    target = target_count(lists)
    best: TopologyHint | None = None
    podium = None if keep is None else _Podium(True, choose, target)
    walked = empty = 0
    for permutation in permutations(lists):
        walked += 1
        candidate = merge_permutation(default, permutation, version)
        assert candidate.numa_affinity is not None
        if candidate.numa_affinity.is_empty():
            empty += 1
            continue
        if podium is not None:
            podium.see(candidate)
        before = best
        if best is None:
            best, rule = candidate, "MERGE-4"
        elif candidate.preferred and not best.preferred:
            best, rule = candidate, "MERGE-5"
        elif best.preferred and not candidate.preferred:
            continue
        elif best.preferred:
            best, rule = choose.masks(best, candidate), choose.rule
        else:
            best, rule = _better_non_preferred(best, candidate, target, choose), "MERGE-8"
        if keep is not None and best is not before:
            keep(best, permutation, rule, walked, empty)
    if keep is not None and podium is not None:
        keep(None, (), podium.rule(empty), walked, empty)
    return best if best is not None else TopologyHint(default, False)


def _best_hint_pre_124(
    lists: Sequence[Sequence[TopologyHint]], default: NumaMask, version: KubeletVersion,
    keep: Keep | None = None,
) -> TopologyHint:
    """MERGE-5, MERGE-6, MERGE-7 as ``mergeFilteredHints`` did up to 1.23: start from the
    machine mask, not preferred, and replace it by anything preferred-er or narrower."""
    best = TopologyHint(default, False)
    podium = None if keep is None else _Podium(False, None, 0)
    walked = empty = 0
    for permutation in permutations(lists):
        walked += 1
        candidate = merge_permutation(default, permutation, version)
        mask, best_mask = candidate.numa_affinity, best.numa_affinity
        assert mask is not None and best_mask is not None
        if mask.is_empty():
            empty += 1
            continue
        if podium is not None:
            podium.see(candidate)
        if candidate.preferred != best.preferred:
            if candidate.preferred:
                best = candidate
                if keep is not None:
                    keep(best, permutation, "MERGE-5", walked, empty)
            continue
        if mask.is_narrower_than(best_mask):
            best = candidate
            if keep is not None:
                keep(best, permutation, "MERGE-6" if best.preferred else "MERGE-7", walked,
                     empty)
    if keep is not None and podium is not None:
        # the walk starts from the machine, not preferred: when nothing replaced it, MERGE-10
        kept = podium.best is not None and not (_same(podium.best, best) and best.numa_affinity
                                                == default and not best.preferred)
        keep(None, (), podium.rule(empty) if kept else "MERGE-10", walked, empty)
    return best
