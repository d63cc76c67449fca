"""A deliberately wrong contract, to show that the CrossHair check can fail at all."""

from __future__ import annotations


def narrower_by_lowest_node(a: int, b: int) -> bool:
    """'Narrower' read from kubelet's comment instead of its code: the mask holding the lower
    node wins a tie.  Its contract claims it agrees with the numeric rule (MASK-2) on
    two-node masks, which {0,3} versus {1,2} disproves.

    pre: 0 < a < 16 and 0 < b < 16 and a != b
    pre: a in (3, 5, 6, 9, 10, 12) and b in (3, 5, 6, 9, 10, 12)
    post: __return__ == (a < b)
    """
    lowest_a = (a & -a)
    lowest_b = (b & -b)
    return lowest_a < lowest_b if lowest_a != lowest_b else a < b
