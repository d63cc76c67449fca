"""Kubernetes resource quantities, as the API server and kubelet read them (spec chapter
``pods.md``, QTY rules).

Source: ``k8s.io/apimachinery/pkg/api/resource/quantity.go`` (``ParseQuantity``,
``Quantity.Value``, ``Quantity.MilliValue``).  A quantity is kept here as an exact rational
number; the integer views round *up*, as kubelet's do.
"""

from __future__ import annotations

import math
from fractions import Fraction

from numaspec.errors import InvalidQuantityError, LimitExceededError
from numaspec.limits import MAX_QUANTITY_CHARS

__all__ = [
    "BINARY_SUFFIXES",
    "DECIMAL_SUFFIXES",
    "exponent_suffix",
    "milli_value",
    "parse_quantity",
    "scan_quantity",
    "value",
]

#: QTY-1: the binary suffixes and their powers of two.
BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
#: QTY-1: the decimal suffixes and their powers of ten.
DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15,
                    "E": 18}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_INT64 = 1 << 63
_INT32 = 1 << 31

#: kubelet's own error texts (apimachinery's ErrFormatWrong, ErrSuffix and ErrNumeric).
_FORMAT = ("quantities must match the regular expression "
           "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
_SUFFIX = "unable to parse quantity's suffix"
_NUMERIC = "unable to parse numeric part of quantity"


def scan_quantity(text: str) -> tuple[int, str, str, str] | None:
    """QTY-1: split a quantity into (sign, integer digits, fraction digits, suffix), reading
    it the way apimachinery's scanner does, or ``None`` where it reports a format error.

    Not the regular expression the error message quotes: the number may be empty (``"Gi"``,
    ``"."``, ``"-"`` are all zero), at most one point is read, then a run of suffix letters,
    then an optional sign and digits, and nothing after them.
    """
    if not text:
        return None
    sign, pos = 1, 0
    if text[0] in "+-":
        sign, pos = (-1 if text[0] == "-" else 1), 1
    start = pos
    while pos < len(text) and text[pos] in _DIGITS:
        pos += 1
    whole = text[start:pos]
    fraction = ""
    if pos < len(text) and text[pos] == ".":
        pos += 1
        start = pos
        while pos < len(text) and text[pos] in _DIGITS:
            pos += 1
        fraction = text[start:pos]
    suffix_start = pos
    while pos < len(text) and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < len(text) and text[pos] in "+-":
        pos += 1
    while pos < len(text) and text[pos] in _DIGITS:
        pos += 1
    if pos != len(text):
        return None
    return sign, whole, fraction, text[suffix_start:]


def _short(text: str) -> str:
    """The quantity as an error quotes it: whole when short, else its head and length."""
    return repr(text) if len(text) <= 40 else f"{text[:32]!r}... ({len(text)} characters)"


def exponent_suffix(suffix: str) -> int | None:
    """The power of ten of an ``e``/``E`` exponent suffix, as Go reads it (a 64-bit integer,
    then truncated to 32 bits), or ``None`` if it is not one."""
    if len(suffix) < 2 or suffix[0] not in "eE":
        return None
    digits = suffix[1:]
    body = digits[1:] if digits[0] in "+-" else digits
    if not body or not all(c in _DIGITS for c in body):
        return None
    if len(body.lstrip("0")) > 19:
        return None  # not a 64-bit integer: Go's strconv refuses it
    parsed = int(digits)
    if not -_INT64 <= parsed < _INT64:
        return None
    return (parsed + (1 << 31)) % (1 << 32) - (1 << 31)


def _go_scale_wraps(whole: str, fraction: str, power: int, minor: int) -> bool:
    """QTY-4: whether apimachinery's integer fast path takes the number with its power of ten
    minus the fraction's digits wrapped around 32 bits (``scale -= int32(len(denom))``): then
    Go holds the digits at a power of ten near +2^31 (``1.5e-2147483648`` is
    15 x 10^2147483647), at every release."""
    digits = len(whole.lstrip("0") or "0") + len(fraction)
    return digits <= (19 if minor >= 38 else 18) and power - len(fraction) < -_INT32


def parse_quantity(text: object, *, where: str = "", minor: int = 37) -> Fraction:
    """QTY-1: the exact value of a quantity string such as ``"2"``, ``"500m"``, ``"1Gi"``, as
    kubelet 1.``minor`` reads it.

    Raises :class:`InvalidQuantityError` (with kubelet's wording) for what Kubernetes refuses.
    QTY-2: negative quantities parse; whether they are allowed is the caller's rule.
    QTY-4: a magnitude of 2**63 or more is refused (numaspec's limit; kubelet's handling of
    such quantities differs from manager to manager), and so is a number Go holds at a power
    of ten wrapped around 32 bits (:func:`_go_scale_wraps`).  From 1.38 (apimachinery v0.38)
    an exponent of -2^31 (after Go's truncation to 32 bits) that reaches the decimal parser
    is "unable to parse quantity's suffix".
    """
    if not isinstance(text, str):
        raise InvalidQuantityError(f"a quantity is a string such as \"500m\" or \"1Gi\", got "
                                   f"{type(text).__name__}", where=where)
    if len(text) > MAX_QUANTITY_CHARS:
        raise LimitExceededError(f"a quantity of {len(text)} characters ({_short(text)}): "
                                 f"numaspec reads quantities of at most {MAX_QUANTITY_CHARS}",
                                 where=where)
    scanned = scan_quantity(text)
    if scanned is None:
        raise InvalidQuantityError(f"{_short(text)}: {_FORMAT}", where=where,
                                   kubelet_message=_FORMAT)
    sign, whole, fraction, suffix = scanned
    if suffix in DECIMAL_SUFFIXES:
        base, power = 10, DECIMAL_SUFFIXES[suffix]
    elif suffix in BINARY_SUFFIXES:
        base, power = 2, BINARY_SUFFIXES[suffix]
    elif (exponent := exponent_suffix(suffix)) is not None:
        base, power = 10, exponent
    else:
        raise InvalidQuantityError(f"{_short(text)}: {_SUFFIX}", where=where,
                                   kubelet_message=_SUFFIX)
    if not whole and not fraction and ((base == 2 and power >= 50) or (base == 10 and power < -9)):
        # A number without a single digit is zero, except where apimachinery leaves its int64
        # fast path (Pi and Ei, or below a nano) and its decimal parser finds nothing to read.
        raise InvalidQuantityError(f"{_short(text)}: {_NUMERIC}", where=where,
                                   kubelet_message=_NUMERIC)
    if base == 10 and suffix not in DECIMAL_SUFFIXES:
        if _go_scale_wraps(whole, fraction, power, minor):
            if (whole + fraction).strip("0"):
                raise InvalidQuantityError(
                    f"{_short(text)}: the value does not fit a 64-bit integer (apimachinery "
                    "holds it at a power of ten wrapped around 32 bits)", where=where)
            return Fraction(0)
        if minor >= 38 and power == -_INT32:
            raise InvalidQuantityError(f"{_short(text)}: {_SUFFIX}", where=where,
                                       kubelet_message=_SUFFIX)
    whole, fraction = whole.lstrip("0"), fraction.rstrip("0")
    if not whole and not fraction:
        return Fraction(0)
    # NWIRE-5: no more digits are converted than the value can use.  A whole part whose
    # leading digit stands at 10**19 or above is past 2**63 already; fraction digits beyond
    # the 60th only decide whether the value is above its truncation, which a sticky 61st
    # digit keeps (every rounding kubelet does is at a nano or coarser).
    top = len(whole) - 1 + (power if base == 10 else 0) if whole else -1
    if (whole and top >= 19) or (base == 10 and power > 40):
        raise InvalidQuantityError(f"{_short(text)}: the value does not fit a 64-bit integer",
                                   where=where)
    if len(fraction) > 60:
        fraction = fraction[:60] + ("1" if fraction[60:].strip("0") else "")
    mantissa = Fraction(int(whole or "0")) + (
        Fraction(int(fraction), 10 ** len(fraction)) if fraction else 0)
    if base == 10 and power < -100:
        # far below a nano: only the rounding up to one unit remains observable
        return sign * Fraction(1, 10 ** 40)
    if mantissa * Fraction(base) ** power >= _INT64:
        raise InvalidQuantityError(f"{_short(text)}: the value does not fit a 64-bit integer",
                                   where=where)
    return sign * mantissa * Fraction(base) ** power


def _away_from_zero(amount: Fraction) -> int:
    magnitude = math.ceil(abs(amount))
    return -magnitude if amount < 0 else magnitude


def value(quantity: Fraction) -> int:
    """QTY-3: the integer value, rounded away from zero (``Quantity.Value``)."""
    return _away_from_zero(quantity)


def milli_value(quantity: Fraction) -> int:
    """QTY-3: thousandths, rounded away from zero (``Quantity.MilliValue``): millicores."""
    return _away_from_zero(quantity * 1000)
