"""The preferred-first search best-effort and restricted make from 1.38 (spec chapter
``policies.md``, POLICY-7).

kubelet 1.38 (kubernetes#137701) tries ``HintMerger.mergePreferred`` before the full merge: a
depth-first walk over the preferred hints of each list that carries, as it goes, the first
affinity chosen and leaves a branch when a later affinity differs from it, or when that first
affinity has no node of the machine.  Each complete branch is merged (MERGE-1, MERGE-13) and
folded with the merge's own comparison.  This module states that search as kubelet makes it,
so that it can be checked against the merge (POLICY-7: the same answer, score included); the
reference itself answers with the fast merge, which never walks.
"""

from __future__ import annotations

from collections.abc import Sequence

from numaspec.topology.hints import TopologyHint
from numaspec.topology.masks import NumaMask
from numaspec.topology.merge import Chooser, MergeMode, merge_permutation
from numaspec.topology.numa import NumaInfo
from numaspec.topology.options import PolicyOptions
from numaspec.topology.versions import KubeletVersion

__all__ = ["preferred_first"]


def preferred_first(lists: Sequence[Sequence[TopologyHint]], numa: NumaInfo,
                    version: KubeletVersion, mode: MergeMode, options: PolicyOptions
                    ) -> TopologyHint | None:
    """POLICY-7: the best preferred candidate, found by walking only the preferred hints whose
    affinities agree; ``None`` when some list has no preferred hint or no such permutation
    merges to a non-empty mask (kubelet then runs the full merge)."""
    preferred = [[hint for hint in hints if hint.preferred] for hints in lists]
    if any(not hints for hints in preferred):
        return None
    default = numa.default_affinity()
    choose = Chooser(numa, mode, options)
    best: TopologyHint | None = None
    chosen: list[TopologyHint] = []

    def walk(depth: int, base: NumaMask | None) -> None:
        nonlocal best
        if depth == len(preferred):
            candidate = merge_permutation(default, chosen, version)
            assert candidate.numa_affinity is not None
            if candidate.numa_affinity.is_empty():
                return  # MERGE-4
            best = candidate if best is None else choose.masks(best, candidate)
            return
        for hint in preferred[depth]:
            mask, below = hint.numa_affinity, base
            if mask is not None:
                if below is None:
                    if (default & mask).is_empty():
                        continue  # a first affinity with no node of the machine
                    below = mask
                elif mask != below:
                    continue  # two affinities differ: nothing below is preferred
            chosen.append(hint)
            walk(depth + 1, below)
            chosen.pop()

    walk(0, None)
    return best
