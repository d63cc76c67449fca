"""NODE-9: quantities as kubelet's Go holds and prints them (numaspec.node.go_quantity).  The
table is what ``fmt.Printf("%v", q)`` printed for quantities parsed and summed with
k8s.io/apimachinery v0.26.15 (finding 17); ``None`` marks an inf.Dec amount, printed as a
heap address."""

from __future__ import annotations

import pytest

from numaspec.node.go_quantity import GoQuantity, go_add, go_parse, go_sub, go_text

ZERO = GoQuantity(format="DecimalSI")


@pytest.mark.parametrize(("text", "summed"), [
    ("100", "{{100 0} {<nil>}  DecimalSI}"),
    ("1500m", "{{1500 -3} {<nil>}  DecimalSI}"),
    ("1.5", "{{15 -1} {<nil>}  DecimalSI}"),
    ("2k", "{{2 3} {<nil>}  DecimalSI}"),
    ("100M", "{{100 6} {<nil>}  DecimalSI}"),
    ("4Gi", "{{4294967296 0} {<nil>}  BinarySI}"),
    ("0.1", "{{1 -1} {<nil>}  DecimalSI}"),
    ("100Mi", "{{104857600 0} {<nil>}  BinarySI}"),
    ("1e3", "{{1 3} {<nil>}  DecimalExponent}"),
    ("1", "{{1 0} {<nil>}  DecimalSI}"),
    ("0", "{{0 0} {<nil>}  DecimalSI}"),
    ("500m", "{{500 -3} {<nil>}  DecimalSI}"),
    ("0.0001", "{{1 -4} {<nil>}  DecimalSI}"),
    ("1.5Gi", None), ("0.3Gi", None), ("2.5Mi", None), ("9223372036854775807", None),
])
def test_a_parsed_quantity_added_to_zero_prints_as_go_prints_it(text: str, summed: str | None
                                                                  ) -> None:
    assert go_text(go_add(ZERO, go_parse(text))) == summed


def test_sums_and_differences() -> None:
    one_and_a_half = go_add(go_add(ZERO, go_parse("1")), go_parse("500m"))
    assert go_text(one_and_a_half) == "{{1500 -3} {<nil>}  DecimalSI}"
    assert go_text(go_add(go_add(ZERO, go_parse("1Gi")), go_parse("100Mi"))) == \
        "{{1178599424 0} {<nil>}  BinarySI}"
    assert go_text(go_add(go_add(ZERO, go_parse("1G")), go_parse("100Mi"))) == \
        "{{1104857600 0} {<nil>}  DecimalSI}"
    capacity = GoQuantity(2000, -3, "DecimalSI")
    assert go_text(go_sub(capacity, one_and_a_half)) == "{{500 -3} {<nil>}  DecimalSI}"


def test_the_zero_quantity_takes_the_next_format() -> None:
    """A missing map entry is Go's zero quantity, whose format is empty; the first non-zero
    addend sets the sum's format."""
    missing = GoQuantity()
    total = go_add(go_add(ZERO, missing), go_parse("2Gi"))
    assert total.format == "BinarySI"
    assert go_add(total, go_parse("1k")).format == "BinarySI"


def test_overflow_leaves_the_integer_form() -> None:
    big = go_parse("9000000000000000000")
    assert go_text(go_add(go_add(ZERO, big), big)) is None
