"""Where a generated case's choices come from: Hypothesis's draws (for properties, which
shrink) or a seeded :class:`random.Random` (for ``numaspec differential``, where case ``i`` of a
seed is always the same case).  The random ``allocate`` and ``cpus`` cases are each one
generator over :class:`Choices`."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol, TypeVar

from hypothesis import strategies as st

__all__ = ["Choices", "HypothesisChoices", "SeededChoices"]

T = TypeVar("T")


class Choices(Protocol):
    """Where a generated case's choices come from."""

    def integer(self, low: int, high: int) -> int: ...

    def choice(self, items: Sequence[T]) -> T: ...

    def permutation(self, items: list[T]) -> list[T]: ...

    def subset(self, items: Sequence[T], most: int) -> list[T]: ...


class HypothesisChoices:
    """Choices drawn by Hypothesis (they shrink)."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def choice(self, items: Sequence[T]) -> T:
        return self.draw(st.sampled_from(items))

    def permutation(self, items: list[T]) -> list[T]:
        return self.draw(st.permutations(items))

    def subset(self, items: Sequence[T], most: int) -> list[T]:
        if not items:
            return []
        return self.draw(st.lists(st.sampled_from(items), max_size=most, unique=True))


class SeededChoices:
    """Choices drawn from a seeded generator (case i of a seed is always the same)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def choice(self, items: Sequence[T]) -> T:
        return items[self.rng.randrange(len(items))]

    def permutation(self, items: list[T]) -> list[T]:
        out = list(items)
        self.rng.shuffle(out)
        return out

    def subset(self, items: Sequence[T], most: int) -> list[T]:
        unique = list(dict.fromkeys(items))
        return self.rng.sample(unique, self.rng.randint(0, min(most, len(unique))))
