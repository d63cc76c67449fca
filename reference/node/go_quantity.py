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

It also reads a quantity as an int64 the way each release's apimachinery does
(:func:`go_scaled_value`: ``ScaledValue``, ``AsScaledInt64``), which kubelet's
``parseResourceList`` uses to round a reserved cpu to millicores from 1.37
(:func:`go_reserved_cpu`, NODE-3): up to v0.37 (kubelet 1.37) an overflow wraps modulo 2^64
(or gives zero), from v0.38 (kubelet 1.38) it saturates and says so.

Versioned by the kubelet minor (``minor``): apimachinery v0.N ships with kubelet 1.N.  v0.38
reads 19 digits on the integer path (18 before), and its ``Quantity`` has one more field, so
``%v`` prints ``{{100 0} {<nil>} { 0} DecimalSI}`` where v0.37 printed
``{{100 0} {<nil>}  DecimalSI}``.

Upstream: ``k8s.io/apimachinery/pkg/api/resource/quantity.go`` (``ParseQuantity``, ``Add``,
``Sub``, ``ScaledValue``, ``AsScaledInt64``), ``amount.go`` (``int64Amount.Add``,
``int64Amount.AsScaledInt64``), ``math.go`` (``positiveScaleInt64``, ``negativeScaleInt64``),
``scale_int.go`` (``scaledValue``); ``cmd/kubelet/app/server.go`` (``parseResourceList``).
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

__all__ = ["GoQuantity", "go_add", "go_as_int64", "go_parse", "go_reserved_cpu",
           "go_scaled_value", "go_sub", "go_text"]

_MIN, _MAX = -(1 << 63), (1 << 63) - 1
_NANO = -9
_MICRO = -6
#: ``positiveScaleInt64``'s powers of ten multiplied in one step (they wrap on overflow up to
#: v0.37); any other power is a loop of x10 that gives zero on overflow.
_ONE_STEP = frozenset({1, 2, 3, 6, 9})
#: the minor that reads quantities with apimachinery v0.38's rules.
_V038 = 38


def _max_digits(minor: int) -> int:
    """apimachinery's ``maxInt64Factors``: the most decimal digits its integer fast path
    reads (18 up to v0.37, 19 from v0.38)."""
    return 19 if minor >= _V038 else 18


def _wrap(n: int) -> int:
    """``n`` as Go's int64 arithmetic leaves it: modulo 2^64, in [-2^63, 2^63)."""
    return (n - _MIN) % (1 << 64) + _MIN


def _go_quo(a: int, b: int) -> int:
    """Go's integer division: truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _go_rem(a: int, b: int) -> int:
    """Go's ``%``: the sign of the dividend."""
    return a - _go_quo(a, b) * b


def _away_from_zero(amount: Fraction) -> int:
    magnitude = -(-abs(amount.numerator) // amount.denominator)
    return -magnitude if amount < 0 else magnitude


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


def go_parse(text: str, *, minor: int = 37) -> GoQuantity:
    """NODE-9: the quantity kubelet 1.``minor``'s ``ParseQuantity`` builds from ``text``
    (which must parse: see :func:`numaspec.node.quantity.parse_quantity`).  From 1.38 the
    integer path reads up to 19 digits (``1000000000000000000`` is ``{1000000000000000000 0}``,
    a decimal before)."""
    exact = parse_quantity(text, minor=minor)
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
        precision = _max_digits(minor) - (len(num) + len(fraction))
    if precision >= 0:
        scale -= len(fraction)
        if scale >= _NANO:
            shifted = int(num + fraction)
            if _fits(shifted) and _fits(shifted * mantissa):
                return GoQuantity(sign * shifted * mantissa, scale, fmt, exact=exact)
            if minor >= _V038 and sign < 0 and shifted == -_MIN and mantissa == 1:
                # v0.38 reads the digits unsigned: -2^63 itself (``-9223372036854775808m``)
                # stays an integer.
                return GoQuantity(_MIN, scale, fmt, exact=exact)
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


def go_text(q: GoQuantity, *, minor: int = 37) -> str | None:
    """What kubelet 1.``minor`` prints for the quantity value with ``%v``; None where Go
    prints a pointer (an inf.Dec amount), which differs from run to run.

    The quantities kubelet prints this way (NODE-9's sums and capacities) have no cached
    string: up to 1.37 that field is an empty string (hence two spaces before the format),
    from 1.38 a struct of an empty string and a format code 0, ``{ 0}``."""
    if q.decimal:
        return None
    cached = "{ 0}" if minor >= _V038 else ""
    return f"{{{{{q.value} {q.scale}}} {{<nil>}} {cached} {q.format}}}"


def _positive_scale_v037(value: int, power: int) -> tuple[int, bool]:
    """v0.37's ``positiveScaleInt64``: ``value`` x 10^``power`` (power >= 0); on overflow the
    one-step powers (10, 100, 1000, 10^6, 10^9) give the product modulo 2^64, a loop of x10
    gives zero."""
    if power == 0 or value == 0:
        return value, True
    if power in _ONE_STEP:
        if value == 1:
            return 10**power, True
        if value == _MIN:
            return 0, False
        product = value * 10**power
        return _wrap(product), _fits(product)
    if power > 18:  # |value| >= 1: past 2^63 for certain (and 10**power may be huge)
        return 0, False
    product = value * 10**power
    return (product, True) if _fits(product) else (0, False)


def _scale_down(value: int, power: int) -> int:
    """``negativeScaleInt64``: ``value`` / 10^``power``, rounded away from zero."""
    if power > 19:  # below one unit: only the sign survives
        return (value > 0) - (value < 0)
    return _away_from_zero(Fraction(value, 10**power))


def _decimal_scaled_v037(q: GoQuantity, scale: int) -> tuple[int, bool]:
    """v0.37's ``scaledValue`` of an inf.Dec as ``ParseQuantity`` leaves it (rounded up to a
    nano, held at 9 digits after the point): Go's ``big.Int.Int64`` keeps the low 64 bits,
    and the fast path, taken for any coefficient below 2^63 - 1 (every negative one),
    truncates and then adds one, so a negative amount that is not whole comes out one above
    its truncation instead of away from zero."""
    unscaled = _away_from_zero(q.exact * 10**9)
    dif = 9 + scale  # inf.Dec scale 9 down to inf scale -scale
    true_value = _away_from_zero(q.exact / Fraction(10) ** scale)
    if dif == 0:
        return _wrap(unscaled), _fits(unscaled)
    divisor = 10**dif
    if unscaled < _MAX and dif < 19:
        low = _wrap(unscaled)
        result = _go_quo(low, divisor)
        if _go_rem(low, divisor) != 0:
            result = _wrap(result + 1)
        return result, _fits(true_value)
    quotient, remainder = divmod(unscaled, divisor)  # big.Int.DivMod: Euclidean
    result = _wrap(quotient)
    if remainder != 0:
        result = _wrap(result + 1)
    return result, _fits(true_value)


def go_scaled_value(q: GoQuantity, scale: int, *, minor: int = 37) -> tuple[int, bool]:
    """QTY-3: ``q`` in units of 10^``scale`` as an int64 (``scale`` 0: ``Value``, -3:
    ``MilliValue``, -6: ``ScaledValue(Micro)``), rounded away from zero, and whether it fit.
    ``q`` is a quantity as :func:`go_parse` builds it; ``scale`` is a nano or coarser.

    Up to 1.37 (``ScaledValue``, the int64 kept even on overflow): an integer amount
    multiplied by 10, 100, 1000, 10^6 or 10^9 wraps modulo 2^64, by another power it gives
    zero; a decimal keeps its low 64 bits (and a negative decimal rounds as
    :func:`_decimal_scaled_v037` says).  From 1.38 (``AsScaledInt64``): exact, and an amount
    past the int64 range saturates to -2^63 or 2^63 - 1 with ``False``."""
    if scale < _NANO:
        raise ValueError(f"a scale of 10^{scale} is below a nano")
    if minor >= _V038:
        exact = _away_from_zero(q.exact / Fraction(10) ** scale)
        if _fits(exact):
            return exact, True
        return (_MIN if exact < 0 else _MAX), False
    if q.decimal:
        return _decimal_scaled_v037(q, scale)
    if q.scale < scale:
        return _scale_down(q.value, scale - q.scale), True
    return _positive_scale_v037(q.value, q.scale - scale)


def go_reserved_cpu(q: GoQuantity, *, minor: int) -> GoQuantity:
    """NODE-3: a kubeReserved or systemReserved cpu quantity as kubelet 1.``minor``'s
    ``parseResourceList`` leaves it.

    Up to 1.36 as parsed.  1.37: ``SetMilli((ScaledValue(Micro) + 500) / 1000)``, in int64:
    the micro-value wraps past 2^63 (:func:`go_scaled_value`), so does the ``+ 500``, and the
    division truncates toward zero: ``10000000000000`` becomes -8446744073709551 millicores,
    ``20000000000000`` 1553255926290448, ``10T`` (whose micro-value overflows in the loop)
    zero.  From 1.38: to the nearest millicore (halves up) where the micro-value fits an
    int64 (``AsScaledInt64``), else the quantity as parsed."""
    if minor < 37:
        return q
    micro, fits = go_scaled_value(q, _MICRO, minor=minor)
    if minor >= _V038:
        if not fits:
            return q
        millis = _go_quo(micro, 1000) + (1 if _go_rem(micro, 1000) >= 500 else 0)
    else:
        millis = _go_quo(_wrap(micro + 500), 1000)
    return GoQuantity(millis, -3, q.format, exact=Fraction(millis, 1000))
