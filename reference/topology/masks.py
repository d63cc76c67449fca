"""NUMA affinity masks: sets of NUMA node ids 0..63 (spec chapter ``masks.md``).

kubelet keeps an affinity in one unsigned 64-bit word, bit *i* standing for NUMA node *i*
(``pkg/kubelet/cm/topologymanager/bitmask/bitmask.go``).  Two consequences shape this module:

* only ids 0..63 exist (MASK-1);
* "narrower" and "less than" are questions about that word as an unsigned integer, so the
  tie-break between two masks of the same size is numeric (MASK-2): ``{1, 2}`` (6) is narrower
  than ``{0, 3}`` (9) although ``{0, 3}`` holds the lowest node.

Masks are plain values: frozen, hashable, ordered by nothing implicit (use the named
predicates, which say which of kubelet's orders they mean).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import combinations

import attrs

from numaspec.errors import InvalidNumaIdError, LimitExceededError
from numaspec.limits import MAX_HINT_SUBSETS

__all__ = ["MAX_NUMA_ID", "NumaMask", "iterate_masks"]

#: The largest NUMA node id a mask can hold (MASK-1).
MAX_NUMA_ID = 63

_WORD = (1 << (MAX_NUMA_ID + 1)) - 1


def _check_bits(_instance: object, _attribute: object, value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= _WORD:
        raise InvalidNumaIdError(f"a mask is a 64-bit unsigned word, got {value!r}")


@attrs.frozen(repr=False)
class NumaMask:
    """A set of NUMA node ids in 0..63, stored as kubelet stores it: one 64-bit word.

    MASK-1: ids outside 0..63 are not representable; :meth:`of` rejects them.
    MASK-4: two masks are equal iff their words are equal, bits of nodes that are not on the
    machine included.
    """

    bits: int = attrs.field(validator=_check_bits)

    @classmethod
    def of(cls, nodes: Iterable[int], *, where: str = "") -> NumaMask:
        """The mask holding exactly ``nodes`` (duplicates are harmless, as in kubelet).

        MASK-1: a node id that is not an integer in 0..63 raises :class:`InvalidNumaIdError`.

        raises: InvalidNumaIdError
        post: __return__.bits >= 0
        post: all(__return__.is_set(n) for n in nodes)
        """
        word = 0
        for node in nodes:
            if isinstance(node, bool) or not isinstance(node, int) or not 0 <= node <= MAX_NUMA_ID:
                raise InvalidNumaIdError(
                    f"NUMA node id must be an integer in 0..{MAX_NUMA_ID}, got {node!r}",
                    where=where,
                )
            word |= 1 << node
        return cls._trusted(word)

    @classmethod
    def _trusted(cls, word: int) -> NumaMask:
        """A mask of a word already known to be valid, without running the validator again
        (masks are made by the hundred thousand in a merge)."""
        mask = object.__new__(cls)
        object.__setattr__(mask, "bits", word)
        return mask

    @classmethod
    def empty(cls) -> NumaMask:
        return cls._trusted(0)

    @property
    def nodes(self) -> tuple[int, ...]:
        """The node ids in the mask, ascending."""
        ids = []
        bits = self.bits
        while bits:
            low = bits & -bits
            ids.append(low.bit_length() - 1)
            bits ^= low
        return tuple(ids)

    def count(self) -> int:
        """How many nodes the mask holds.

        post: 0 <= __return__ <= 64
        """
        return self.bits.bit_count()

    def is_empty(self) -> bool:
        return self.bits == 0

    def is_set(self, node: int) -> bool:
        """Whether ``node`` is in the mask; ids outside 0..63 are simply never set."""
        return 0 <= node <= MAX_NUMA_ID and bool(self.bits >> node & 1)

    def __and__(self, other: NumaMask) -> NumaMask:
        return NumaMask._trusted(self.bits & other.bits)

    def __or__(self, other: NumaMask) -> NumaMask:
        return NumaMask._trusted(self.bits | other.bits)

    def is_less_than(self, other: NumaMask) -> bool:
        """kubelet's ``IsLessThan``: plain unsigned comparison of the two words."""
        return self.bits < other.bits

    def is_narrower_than(self, other: NumaMask) -> bool:
        """MASK-2: fewer nodes is narrower; with as many nodes, the numerically smaller word is.

        Strict: a mask is never narrower than itself.

        post: not (__return__ and other.is_narrower_than(self))
        post: __return__ or self == other or other.is_narrower_than(self)
        """
        mine, theirs = self.count(), other.count()
        if mine != theirs:
            return mine < theirs
        return self.bits < other.bits

    def __str__(self) -> str:
        """As the wire formats write a mask: the list of its node ids."""
        return "[" + ",".join(str(n) for n in self.nodes) + "]"

    def __repr__(self) -> str:
        return f"NumaMask.of({list(self.nodes)!r})"


def iterate_masks(nodes: Sequence[int]) -> Iterator[NumaMask]:
    """MASK-3: every non-empty subset of ``nodes``, in the order kubelet's providers see them.

    Sizes ascending; within one size, combinations in the order of positions in ``nodes``
    (so ``[2, 0]`` yields ``{2}``, ``{0}``, ``{0, 2}``).  The order matters for providers'
    hint lists, never for the merged result (MERGE-11).

    NWIRE-5: more than :data:`~numaspec.limits.MAX_HINT_SUBSETS` subsets (more than 12 nodes)
    are refused with :class:`~numaspec.errors.LimitExceededError` before the first one.
    """
    if (1 << len(nodes)) - 1 > MAX_HINT_SUBSETS:
        raise LimitExceededError(
            f"{len(nodes)} NUMA nodes make {(1 << len(nodes)) - 1} subsets for a hint provider "
            f"to walk; numaspec walks at most {MAX_HINT_SUBSETS} (NUMA nodes: at most "
            f"{MAX_HINT_SUBSETS.bit_length()})")
    for size in range(1, len(nodes) + 1):
        for combo in combinations(nodes, size):
            yield NumaMask.of(combo)
