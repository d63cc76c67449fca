"""Topology hints and the shape in which providers hand them over (spec chapter ``hints.md``).

Source: ``TopologyHint`` in ``pkg/kubelet/cm/topologymanager/topology_manager.go`` and
``filterProvidersHints`` / ``iterateAllProviderTopologyHints`` in ``policy.go``.

A kubelet-shaped request on 16 NUMA nodes carries a quarter of a million hints; as objects
they cost more than the merge itself.  :class:`HintArray` holds one list as three arrays,
one entry per hint in the list's order (duplicates kept, HINT-2): the affinity as kubelet's
64-bit word, whether the affinity is absent (``null``, no constraint, which is not the empty
word), and whether the hint is preferred.  It is a read-only ``Sequence[TopologyHint]``, so
every reader of hint lists (the definitional walk, the trace, the encoders) sees the same
hints; the fast merge and single-numa-node's filter read the arrays directly (FAST-8).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import TypeAlias, overload

import attrs
import numpy as np
import numpy.typing as npt

from numaspec.topology.masks import NumaMask

__all__ = [
    "NO_POSSIBLE_PLACEMENT",
    "HintArray",
    "NO_PREFERENCE",
    "ProviderHints",
    "TopologyHint",
    "flatten_provider_hints",
    "permutations",
]


@attrs.frozen
class TopologyHint:
    """HINT-1: a NUMA affinity (or none at all) and whether it is a preferred placement.

    ``numa_affinity is None`` ("nil" in kubelet) means *no constraint*; it is not the same as
    an empty mask, which means *no node at all* and can never be satisfied.

    HINT-5 (1.38+): ``score``, the share of what is allocatable on the hint's nodes that is
    already in use, as a percentage (0: no signal).  It never decides a merge; the merged
    hint carries the mean of its parts' scores (MERGE-13).  Before 1.38 it is always 0.
    """

    numa_affinity: NumaMask | None
    preferred: bool
    score: int = 0

    def __repr__(self) -> str:
        mask = "None" if self.numa_affinity is None else repr(self.numa_affinity)
        scored = f", score={self.score}" if self.score else ""
        return f"TopologyHint({mask}, {self.preferred}{scored})"

    def __str__(self) -> str:
        """As the merge protocol writes a hint (WIRE-1): what failure messages show (a score
        only when there is one)."""
        mask = "null" if self.numa_affinity is None else str(self.numa_affinity)
        scored = f',"score":{self.score}' if self.score else ""
        return (f'{{"numa_affinity":{mask},"preferred":{"true" if self.preferred else "false"}'
                f'{scored}}}')


Words: TypeAlias = npt.NDArray[np.uint64]
Flags: TypeAlias = npt.NDArray[np.bool_]


def _frozen(array: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
    array.flags.writeable = False
    return array


class HintArray(Sequence[TopologyHint]):
    """HINT-1 for a whole list: hint *i* is ``TopologyHint(None if free[i] else
    NumaMask(words[i]), preferred[i], scores[i])`` (``words[i]`` is 0 where ``free[i]``;
    ``scores`` is ``None`` when every score is 0, HINT-5)."""

    __slots__ = ("free", "preferred", "scores", "words")

    def __init__(self, words: Words, free: Flags, preferred: Flags,
                 scores: npt.NDArray[np.int64] | None = None) -> None:
        if not (words.shape == free.shape == preferred.shape and words.ndim == 1):
            raise ValueError("a hint array's three arrays are one-dimensional, of one length")
        if scores is not None and scores.shape != words.shape:
            raise ValueError("a hint array's scores are one per hint")
        self.scores: npt.NDArray[np.int64] | None = (
            None if scores is None or not scores.any()
            else _frozen(scores.astype(np.int64, copy=False)))  # type: ignore[assignment]
        self.words: Words = _frozen(words.astype(np.uint64, copy=False))  # type: ignore[assignment]
        self.free: Flags = _frozen(free.astype(np.bool_, copy=False))  # type: ignore[assignment]
        self.preferred: Flags = _frozen(  # type: ignore[assignment]
            preferred.astype(np.bool_, copy=False))

    @classmethod
    def of(cls, hints: Sequence[TopologyHint]) -> HintArray:
        """The arrays of hints given as objects."""
        return cls(np.array([0 if h.numa_affinity is None else h.numa_affinity.bits
                             for h in hints], dtype=np.uint64),
                   np.array([h.numa_affinity is None for h in hints], dtype=np.bool_),
                   np.array([h.preferred for h in hints], dtype=np.bool_),
                   np.array([h.score for h in hints], dtype=np.int64))

    def __len__(self) -> int:
        return len(self.words)

    def _hint(self, index: int) -> TopologyHint:
        mask = None if self.free[index] else NumaMask._trusted(int(self.words[index]))
        score = 0 if self.scores is None else int(self.scores[index])
        return TopologyHint(mask, bool(self.preferred[index]), score)

    @overload
    def __getitem__(self, index: int) -> TopologyHint: ...

    @overload
    def __getitem__(self, index: slice) -> HintArray: ...

    def __getitem__(self, index: int | slice) -> TopologyHint | HintArray:
        if isinstance(index, slice):
            return HintArray(self.words[index], self.free[index], self.preferred[index],
                             None if self.scores is None else self.scores[index])
        return self._hint(range(len(self))[index])

    def __iter__(self) -> Iterator[TopologyHint]:
        words, free, preferred = self.words.tolist(), self.free.tolist(), self.preferred.tolist()
        scores = [0] * len(words) if self.scores is None else self.scores.tolist()
        for word, none, wanted, score in zip(words, free, preferred, scores, strict=True):
            yield TopologyHint(None if none else NumaMask._trusted(word), wanted, score)

    def filtered(self, keep: Flags) -> HintArray:
        """The hints where ``keep`` holds, in order."""
        return HintArray(self.words[keep], self.free[keep], self.preferred[keep],
                         None if self.scores is None else self.scores[keep])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, HintArray):
            return (np.array_equal(self.words, other.words)
                    and np.array_equal(self.free, other.free)
                    and np.array_equal(self.preferred, other.preferred)
                    and np.array_equal(self.scored(), other.scored()))
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other,
                                                                          strict=True))
        return NotImplemented

    def scored(self) -> npt.NDArray[np.int64]:
        """HINT-5: the scores, zeros when there are none."""
        return (np.zeros(len(self.words), dtype=np.int64) if self.scores is None
                else self.scores)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"HintArray({list(self)!r})"


#: HINT-2/HINT-3: what a provider without an opinion contributes.
NO_PREFERENCE = TopologyHint(None, True)
#: HINT-3: what a resource that cannot be placed anywhere contributes.
NO_POSSIBLE_PLACEMENT = TopologyHint(None, False)

#: One provider's answer: resource name → hints.  ``None`` for the map (a provider that
#: returned no map) and ``{}`` are the same; for a resource, ``None`` and ``[]`` differ (HINT-3).
ProviderHints = Mapping[str, Sequence[TopologyHint] | None] | None


def flatten_provider_hints(
    providers: Sequence[ProviderHints],
) -> list[Sequence[TopologyHint]]:
    """HINT-2, HINT-3: one list of hints per (provider, resource), providers in order.

    * a provider with no map or an empty map contributes one list ``[NO_PREFERENCE]``;
    * a resource mapped to ``None`` contributes ``[NO_PREFERENCE]``;
    * a resource mapped to an empty list contributes ``[NO_POSSIBLE_PLACEMENT]``;
    * any other list is taken as it is: same order, duplicates kept.

    kubelet walks a provider's resources in Go's random map order; here they are walked in the
    mapping's own order, which is one of the orders kubelet may use.  The merged result does
    not depend on it (MERGE-11).
    """
    flat: list[Sequence[TopologyHint]] = []
    for provider in providers:
        if not provider:
            flat.append((NO_PREFERENCE,))
            continue
        for hints in provider.values():
            if hints is None:
                flat.append((NO_PREFERENCE,))
            elif len(hints) == 0:
                flat.append((NO_POSSIBLE_PLACEMENT,))
            else:
                flat.append(hints if isinstance(hints, HintArray) else tuple(hints))
    return flat


def permutations(lists: Sequence[Sequence[TopologyHint]]) -> Iterator[tuple[TopologyHint, ...]]:
    """HINT-4: every way of taking one hint from each list, first list outermost.

    No lists at all gives exactly one, empty, permutation; any empty list gives none.
    """
    return itertools.product(*lists)
