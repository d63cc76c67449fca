"""MASK-1, MASK-2, MASK-3, MASK-4 on the reference's masks directly."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from numaspec import InvalidNumaIdError, NumaMask, iterate_masks

words = st.integers(0, 2**64 - 1).map(NumaMask)


@pytest.mark.parametrize("node", [-1, 64, 1000, "0", 1.0, True, None])
def test_out_of_range_ids_are_refused(node: object) -> None:  # MASK-1
    with pytest.raises(InvalidNumaIdError) as info:
        NumaMask.of([0, node], where="here")  # type: ignore[list-item]
    assert info.value.where == "here"
    assert info.value.kind == "invalid-numa-id"


def test_duplicates_are_harmless_and_nodes_ascend() -> None:  # MASK-1
    assert NumaMask.of([3, 0, 3]).nodes == (0, 3)
    assert NumaMask.of([]).is_empty()
    assert NumaMask.of([63]).bits == 1 << 63


def test_numeric_tie_break() -> None:  # MASK-2
    assert NumaMask.of([1, 2]).is_narrower_than(NumaMask.of([0, 3]))
    assert not NumaMask.of([0, 3]).is_narrower_than(NumaMask.of([1, 2]))
    assert NumaMask.of([5]).is_narrower_than(NumaMask.of([0, 1]))


@given(words, words)
@example(NumaMask.of([0, 3]), NumaMask.of([1, 2]))
def test_narrower_is_a_strict_total_order(a: NumaMask, b: NumaMask) -> None:  # MASK-2
    assert not (a.is_narrower_than(b) and b.is_narrower_than(a))
    assert a == b or a.is_narrower_than(b) or b.is_narrower_than(a)
    assert not a.is_narrower_than(a)


@given(words, words, words)
def test_narrower_is_transitive(a: NumaMask, b: NumaMask, c: NumaMask) -> None:  # MASK-2
    if a.is_narrower_than(b) and b.is_narrower_than(c):
        assert a.is_narrower_than(c)


def test_subset_order_follows_the_given_list() -> None:  # MASK-3
    assert [m.nodes for m in iterate_masks([2, 0])] == [(2,), (0,), (0, 2)]
    assert [m.nodes for m in iterate_masks([0, 1, 2])] == [
        (0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2)]
    assert list(iterate_masks([])) == []


def test_equality_counts_stray_bits() -> None:  # MASK-4
    assert NumaMask.of([0, 5]) != NumaMask.of([0])
    assert (NumaMask.of([0, 5]) & NumaMask.of([0, 1])) == NumaMask.of([0])


def test_words_are_validated() -> None:
    with pytest.raises(InvalidNumaIdError):
        NumaMask(2**64)
    with pytest.raises(InvalidNumaIdError):
        NumaMask(-1)
