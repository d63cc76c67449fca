"""Deliberately wrong fast merges: the equivalence property (FAST-1) must reject every one.

Each is the reference's fast merge with one step replaced the way a hurried optimisation
might get it wrong; ``FAST_MUTANTS`` maps a name to a function of
:func:`numaspec.topology.fast_merge.fast_best_hint`'s shape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from unittest import mock

from numaspec.topology import fast_merge as fm
from numaspec.topology.hints import TopologyHint

__all__ = ["FAST_MUTANTS"]


def _patched(name: str, replacement: Any) -> Callable[..., TopologyHint]:
    def merge(*args: Any, **kwargs: Any) -> TopologyHint:
        with mock.patch.object(fm, name, replacement):
            return fm.fast_best_hint(*args, **kwargs)
    return merge


def _preferred_any_masks(listed: Sequence[Any], space: Any) -> Any:
    """From 1.24 too, read the preferred candidates as every AND of preferred hints (the
    1.23 rule): misses MERGE-3's equal-masks condition."""
    reach, _ = fm.reachable([item.compact(space, preferred=True) for item in listed],
                            space.n)
    return reach


def _fewest_below(counts: set[int], target: int | None) -> int:
    """MERGE-8 read as 'the fewest nodes below the target' instead of the most."""
    if target is None or target in counts:
        return target if target is not None else min(counts)
    return min(counts)


def _smallest_target(listed: Sequence[Any]) -> int:
    """The target as the narrowest list's width instead of the widest one's."""
    return min((min(w.bit_count() for w in item.words) for item in listed if item.words),
               default=0)


def _no_free_hints(self: Any, space: Any, *, preferred: bool) -> frozenset[int]:
    """A hint without an affinity dropped from its list instead of standing for the machine."""
    words = self.preferred if preferred else self.words
    return frozenset(space.compact_all(words))


FAST_MUTANTS: dict[str, Callable[..., TopologyHint]] = {
    "preferred_any_masks": _patched("_preferred_words", _preferred_any_masks),
    "fewest_below_target": _patched("_choose_count", _fewest_below),
    "smallest_target": _patched("_target", _smallest_target),
}


def _with_listed_compact(*args: Any, **kwargs: Any) -> TopologyHint:
    with mock.patch.object(fm.Listed, "compact", _no_free_hints):
        return fm.fast_best_hint(*args, **kwargs)


FAST_MUTANTS["no_free_hints"] = _with_listed_compact
