"""QTY-1..QTY-4: Kubernetes quantities.  The expected values below were observed from
apimachinery's own ParseQuantity / Value / MilliValue (v0.30.14) on these inputs."""

from __future__ import annotations

import contextlib
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaspec.errors import InvalidQuantityError
from numaspec.node.quantity import milli_value, parse_quantity, value

FORMAT = "quantities must match the regular expression"
SUFFIX = "unable to parse quantity's suffix"
NUMERIC = "unable to parse numeric part of quantity"

OBSERVED = [  # text, Value(), MilliValue()
    ("0", 0, 0), ("2", 2, 2000), ("500m", 1, 500), ("1.5", 2, 1500), (".5", 1, 500),
    ("5.", 5, 5000), ("1e3", 1000, 1000000), ("1E3", 1000, 1000000), ("1e-3", 1, 1),
    ("200Mi", 209715200, 209715200000), ("1Gi", 1073741824, 1073741824000),
    ("1k", 1000, 1000000), ("1M", 1000000, 1000000000), ("1E", 10**18, None),
    ("1n", 1, 1), ("1u", 1, 1), ("-500m", -1, -500), ("-0.5m", -1, -1), ("-.5", -1, -500),
    (".", 0, 0), ("-", 0, 0), ("+", 0, 0), ("Gi", 0, 0), (".Gi", 0, 0), ("Ti", 0, 0),
    ("0Ei", 0, 0), ("1.e-10", 1, 1), ("1e-11", 1, 1), ("e-9", 0, 0), ("1.Ki", 1024, 1024000),
    ("5.Gi", 5368709120, 5368709120000), ("1.Pi", 1125899906842624, 1125899906842624000),
    ("1234567890123456789", 1234567890123456789, None), ("3.999m", 1, 4),
]

REFUSED = [  # text, kubelet's message
    ("", FORMAT), ("1.5.5", FORMAT), ("1..5", FORMAT), (" 1", FORMAT), ("1 ", FORMAT),
    ("0x10", FORMAT), ("1_000", FORMAT), ("1e1.5", FORMAT), ("1Mi3", SUFFIX),
    ("1Xi", FORMAT), ("1ki", SUFFIX), ("1KI", FORMAT), ("1e", SUFFIX), ("1ee3", SUFFIX),
    ("1e3k", FORMAT), ("u3", SUFFIX), ("iM", SUFFIX), ("+Ei", NUMERIC), ("Pi", NUMERIC),
    ("-Pi", NUMERIC), ("e-10", NUMERIC), (".e-10", NUMERIC), ("+e-10", NUMERIC),
]


@pytest.mark.parametrize(("text", "whole", "milli"), OBSERVED)
def test_values_as_apimachinery_gives_them(text: str, whole: int, milli: int | None) -> None:
    quantity = parse_quantity(text)  # QTY-1
    assert value(quantity) == whole  # QTY-3
    if milli is not None:
        assert milli_value(quantity) == milli


@pytest.mark.parametrize(("text", "message"), REFUSED)
def test_refusals_as_apimachinery_gives_them(text: str, message: str) -> None:
    with pytest.raises(InvalidQuantityError) as info:
        parse_quantity(text, where="requests.cpu")  # QTY-1
    assert info.value.kind == "invalid-quantity"
    assert info.value.where == "requests.cpu"
    assert (info.value.kubelet_message or "").startswith(message)


def test_negatives_parse() -> None:  # QTY-2
    assert parse_quantity("-1Gi") == -(2**30)


@pytest.mark.parametrize("text", ["8Ei", "9223372036854775808", "1e40", "1e300"])
def test_beyond_int64_is_refused(text: str) -> None:  # QTY-4
    with pytest.raises(InvalidQuantityError, match="64-bit"):
        parse_quantity(text)


def test_non_strings_are_refused() -> None:  # QTY-1
    with pytest.raises(InvalidQuantityError):
        parse_quantity(2)


@given(st.integers(0, 10**9), st.sampled_from(["", "m", "k", "Ki", "Mi", "Gi"]))
def test_integers_with_suffixes(number: int, suffix: str) -> None:  # QTY-1, QTY-3
    scale: dict[str, Fraction] = {"": Fraction(1), "m": Fraction(1, 1000), "k": Fraction(1000),
                                  "Ki": Fraction(1024), "Mi": Fraction(2**20),
                                  "Gi": Fraction(2**30)}
    assert parse_quantity(f"{number}{suffix}") == number * scale[suffix]


@given(st.text(alphabet="0123456789.+-eEinumkKMGTPx ", max_size=8))
def test_never_anything_but_a_value_or_a_typed_error(text: str) -> None:  # QTY-1
    with contextlib.suppress(InvalidQuantityError):
        parse_quantity(text)
