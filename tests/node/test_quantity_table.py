"""QTY-1, QTY-4 (and NODE-9's formats): numaspec's quantity parser against apimachinery
v0.30.14's ``resource.ParseQuantity`` on every string of a committed table.

``tests/fixtures/quantity/parse-v0.30.14.json`` is what ``adapters/kubelet/quantity`` wrote for
the strings ``tools/numaspec_tools/quantity_strings.py`` generates (its README says how to
regenerate it): per
string, the exact value (``AsDec().String()``), the canonical ``String()`` and the format, or the
error text.  apimachinery rounds a parsed value up (away from zero) to a nano and caps a binary
one at 2**63 - 1; numaspec keeps the exact value (its integer views round the same way, QTY-3)
and refuses magnitudes of 2**63 or more (QTY-4).
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

from numaspec.errors import InvalidQuantityError
from numaspec.node.go_quantity import go_parse
from numaspec.node.quantity import parse_quantity
from numaspec_tools import FIXTURES
from numaspec_tools.quantity_strings import quantity_strings

TABLE = FIXTURES / "quantity" / "parse-v0.30.14.json"
_INT64 = 1 << 63


def _entries() -> list[dict[str, Any]]:
    loaded = json.loads(TABLE.read_text(encoding="utf-8"))
    assert loaded["apimachinery"] == "v0.30.14"
    entries: list[dict[str, Any]] = loaded["entries"]
    return entries


def _nano_up(amount: Fraction) -> Fraction:
    """apimachinery's rounding of a parsed value: up, away from zero, to a nano."""
    nanos = math.ceil(abs(amount) * 10**9)
    return Fraction(nanos if amount >= 0 else -nanos, 10**9)


def _long_whole_part_below_int64(text: str, go_value: Fraction) -> bool:
    """The finding (reported, not fixed here): numaspec refuses any number whose whole part has
    more than 20 digits, even where a suffix brings the value below 2**63
    (``100000000000000000000m`` is 10**17), which QTY-4 does not say."""
    digits = text.lstrip("+-").split(".")[0]
    digits = "".join(c for c in digits if c.isdigit())
    return len(digits.lstrip("0")) > 20 and abs(go_value) < _INT64 - 1


def _disagreement(entry: dict[str, Any]) -> str | None:
    text = entry["in"]
    try:
        ours: Fraction | None = parse_quantity(text)
        refusal: InvalidQuantityError | None = None
    except InvalidQuantityError as exc:
        ours, refusal = None, exc
    if "error" in entry:
        if refusal is None:
            return f"{text!r}: apimachinery refuses ({entry['error']}), numaspec reads {ours}"
        if refusal.kubelet_message != entry["error"]:
            return (f"{text!r}: apimachinery says {entry['error']!r}, numaspec "
                    f"{refusal.kubelet_message!r}")
        return None
    theirs = Fraction(Decimal(entry["value"]))
    if refusal is not None:
        # QTY-4: numaspec's own refusal, only where apimachinery's value is 2**63 or more
        # (a binary one capped at 2**63 - 1).
        if "64-bit" in refusal.message and abs(theirs) >= _INT64 - 1:
            return None
        return f"{text!r}: apimachinery reads {entry['value']}, numaspec refuses: {refusal}"
    assert ours is not None
    if _nano_up(ours) != theirs:
        return f"{text!r}: apimachinery reads {entry['value']}, numaspec {ours}"
    if go_parse(text).format != entry["format"]:  # NODE-9: the format Go keeps
        return f"{text!r}: apimachinery's format {entry['format']}, numaspec's {go_parse(text)}"
    return None


def test_the_table_holds_the_generated_strings() -> None:
    """The committed table was made from exactly the generator's strings (QTY-1)."""
    strings = quantity_strings()
    assert len(strings) >= 6236
    assert len(set(strings)) == len(strings)
    assert [e["in"] for e in _entries()] == strings


def test_numaspec_agrees_with_apimachinery_on_every_entry() -> None:
    """QTY-1 (values and kubelet's error texts), QTY-4 (numaspec's refusals at 2**63)."""
    found = []
    for entry in _entries():
        problem = _disagreement(entry)
        if problem is None:
            continue
        found.append(problem)
    assert found == [], f"{len(found)} disagreements, e.g. {found[:5]}"


def test_the_table_has_every_kind_of_answer() -> None:
    """QTY-1: each of apimachinery's three errors, and all three formats, occur."""
    errors = {e["error"][:20] for e in _entries() if "error" in e}
    assert len(errors) == 3
    assert {e["format"] for e in _entries() if "format" in e} == {
        "DecimalSI", "BinarySI", "DecimalExponent"}


def test_long_whole_parts_below_int64_are_read() -> None:
    """QTY-4, a fixed finding (spec/conformance/findings.md): numaspec refused every whole part of
    more than 20 digits, even when the suffix brought the value below 2**63
    (``100000000000000000000m`` is 10**17); apimachinery reads the 85 such entries."""
    found = [entry for entry in _entries() if "value" in entry and
             _long_whole_part_below_int64(entry["in"], Fraction(Decimal(entry["value"])))]
    assert len(found) >= 85  # 85 of them were refused before the fix
    assert [_disagreement(entry) for entry in found] == [None] * len(found)
