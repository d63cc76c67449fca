"""A resource quantity as kubelet's Go code holds it, for the texts that print one with ``%v``
(spec chapter ``admission.md``, NODE-9).

apimachinery's ``Quantity`` keeps a small amount as an integer and a power of ten (its
``int64Amount``), a cached string, and a format name; only a pointer to it has a ``String``
method.  Kubelet's node-allocatable check formats the quantity *values* of a resource list, so
Go prints the struct's fields, e.g. ``{{100 0} {<nil>}  DecimalSI}`` for a reservation of 100
CPUs, and that text, not ``100``, is what kubelet reports.  This module tracks that integer,
power and format through kubelet's parsing, additions and subtractions.  An amount that leaves
the integer form (a fractional binary quantity such as ``1.5Gi``, too many digits, an overflow)
is held as an arbitrary-precision decimal, which Go prints as a heap address: that text differs
from run to run, and :func:`go_text` gives ``None`` for it.

Upstream: ``k8s.io/apimachinery/pkg/api/resource/quantity.go`` (``ParseQuantity``, ``Add``,
``Sub``) and ``amount.go`` (``int64Amount.Add``).
"""

from __future__ import annotations

from fractions import Fraction

import attrs

from numaspec.node.quantity import (
    BINARY_SUFFIXES,
    DECIMAL_SUFFIXES,
    exponent_suffix,
    parse_quantity,
    scan_quantity,
)

__all__ = ["GoQuantity", "go_add", "go_as_int64", "go_parse", "go_sub", "go_text"]

_MIN, _MAX = -(1 << 63), (1 << 63) - 1
#: apimachinery's limit on the decimal digits its integer fast path reads.
_MAX_DIGITS = 18
_NANO = -9


@attrs.frozen
class GoQuantity:
    """``value`` times 10^``scale`` in ``format`` ("DecimalSI", "BinarySI", "DecimalExponent", or
    "" for the zero value of the type); ``decimal`` when Go holds it as an inf.Dec instead.
    ``exact`` is the amount itself."""

    value: int = 0
    scale: int = 0
    format: str = ""
    decimal: bool = False
    exact: Fraction = Fraction(0)


def _fits(n: int) -> bool:
    return _MIN <= n <= _MAX


def go_parse(text: str) -> GoQuantity:
    """NODE-9: the quantity ``ParseQuantity`` builds from ``text`` (which must parse: see
    :func:`numaspec.node.quantity.parse_quantity`)."""
    exact = parse_quantity(text)
    if text == "0":
        return GoQuantity(format="DecimalSI")
    scanned = scan_quantity(text)
    assert scanned is not None  # parse_quantity accepted it
    sign, whole, fraction, suffix = scanned
    num = whole.lstrip("0") or "0"
    if suffix in DECIMAL_SUFFIXES:
        fmt, exponent = "DecimalSI", DECIMAL_SUFFIXES[suffix]
    elif suffix in BINARY_SUFFIXES:
        fmt, exponent = "BinarySI", BINARY_SUFFIXES[suffix]
    else:
        power = exponent_suffix(suffix)
        assert power is not None
        fmt, exponent = "DecimalExponent", power
    if fmt == "BinarySI":
        scale, mantissa = 0, 1 << exponent
        precision = (15 - len(num) - int(exponent * 3 / 10) - 1) if not fraction else -1
    else:
        scale, mantissa = exponent, 1
        precision = _MAX_DIGITS - (len(num) + len(fraction))
    if precision >= 0:
        scale -= len(fraction)
        if scale >= _NANO:
            shifted = int(num + fraction)
            if _fits(shifted) and _fits(shifted * mantissa):
                return GoQuantity(sign * shifted * mantissa, scale, fmt, exact=exact)
    if fmt == "BinarySI" and 0 < abs(exact) < 1:
        fmt = "DecimalSI"
    return GoQuantity(format=fmt, decimal=True, exact=exact)


def go_as_int64(q: GoQuantity) -> int | None:
    """MEM-2: ``q.AsInt64()``: the amount as an int64, or None where Go cannot say it so
    cheaply: a quantity held as a decimal (``0.25Gi``), one at a negative power of ten even
    where the amount is whole (``268435456000m``), one whose integer overflows."""
    if q.decimal or q.scale < 0:
        return None
    amount = q.value * 10**q.scale
    return amount if _fits(amount) else None


def _int_add(a: GoQuantity, b: GoQuantity) -> tuple[int, int] | None:
    """``int64Amount.Add``: the sum at the smaller power of ten, or None on overflow."""
    if b.value == 0:
        return a.value, a.scale
    if a.value == 0:
        return b.value, b.scale
    scale = min(a.scale, b.scale)
    left = a.value * 10 ** (a.scale - scale)
    right = b.value * 10 ** (b.scale - scale)
    if not (_fits(left) and _fits(right) and _fits(left + right)):
        return None
    return left + right, scale


def go_add(a: GoQuantity, b: GoQuantity) -> GoQuantity:
    """``a.Add(b)``: a quantity that is still zero takes the format of what is added to it."""
    if not a.decimal and not b.decimal:
        fmt = b.format if a.value == 0 else a.format
        summed = _int_add(a, b)
        if summed is not None:
            return GoQuantity(summed[0], summed[1], fmt, exact=a.exact + b.exact)
        return GoQuantity(format=fmt, decimal=True, exact=a.exact + b.exact)
    fmt = b.format if a.exact == 0 else a.format
    return GoQuantity(format=fmt, decimal=True, exact=a.exact + b.exact)


def go_sub(a: GoQuantity, b: GoQuantity) -> GoQuantity:
    """``a.Sub(b)``."""
    fmt = b.format if a.exact == 0 else a.format
    negated = attrs.evolve(b, value=-b.value, exact=-b.exact)
    if not a.decimal and not b.decimal:
        summed = _int_add(a, negated)
        if summed is not None:
            return GoQuantity(summed[0], summed[1], fmt, exact=a.exact - b.exact)
    return GoQuantity(format=fmt, decimal=True, exact=a.exact - b.exact)


def go_text(q: GoQuantity) -> str | None:
    """What ``fmt`` prints for the quantity value with ``%v``; None where Go prints a pointer
    (an inf.Dec amount), which differs from run to run."""
    if q.decimal:
        return None
    return f"{{{{{q.value} {q.scale}}} {{<nil>}}  {q.format}}}"
