"""Go's ``strconv`` and ``fmt``, as far as kubelet's option values and messages use them (spec
chapter ``options.md``, OPT-3, OPT-4; the CPU Manager's options, CPU-14), and the orders Go's
``range`` can take over a map (OPS-2).

kubelet reads a policy option's value with ``strconv.ParseBool`` or ``strconv.Atoi`` and quotes
values in its messages with ``%q`` (``strconv.Quote``); a map in a message is printed with
``%v``.  numaspec states the texts as Go prints them, so its messages can be compared with
kubelet's word for word (RUN-11).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import TypeVar

__all__ = ["GoSyntaxError", "go_atoi", "go_map", "go_map_order_count", "go_map_orders",
           "go_parse_bool", "go_quote"]

_K = TypeVar("_K")

#: Entries a Go map holds in its first bucket (one group of a Swiss table from Go 1.24).
GO_MAP_SMALL = 8

_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_GO_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def go_quote(text: str) -> str:
    """Go's ``strconv.Quote`` for the strings options can hold (printable text as is)."""
    named = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
             "\v": "\\v", "\\": "\\\\", '"': '\\"'}
    out = []
    for ch in text:
        if ch in named:
            out.append(named[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


class GoSyntaxError(ValueError):
    """A value Go's ``strconv`` refuses; the message is Go's own."""


def go_parse_bool(text: str) -> bool:
    """OPT-3: Go's ``strconv.ParseBool``; raises ``ValueError`` with Go's message."""
    if text in _GO_TRUE:
        return True
    if text in _GO_FALSE:
        return False
    raise GoSyntaxError(f"strconv.ParseBool: parsing {go_quote(text)}: invalid syntax")


def go_atoi(text: str) -> int:
    """OPT-4: Go's ``strconv.Atoi`` on a 64-bit platform; raises ``ValueError`` with Go's
    message.  An optional sign, then decimal digits only (no spaces, no underscores)."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not all("0" <= c <= "9" for c in digits):
        raise GoSyntaxError(f"strconv.Atoi: parsing {go_quote(text)}: invalid syntax")
    significant = digits.lstrip("0")  # Go reads leading zeros, however many, as zeros
    # WIRE-5: a number past 19 digits is out of int64's range: it is not converted (Python
    # refuses to convert more than 4,300 digits, and a long one is slow).
    value = 0 if len(significant) > 19 else int(significant or "0")
    value *= -1 if text[:1] == "-" else 1
    if len(significant) > 19 or not _INT64_MIN <= value <= _INT64_MAX:
        raise GoSyntaxError(f"strconv.Atoi: parsing {go_quote(text)}: value out of range")
    return value


def go_map(raw: Mapping[str, str]) -> str:
    """Go's ``%v`` of a ``map[string]string``: keys sorted, ``map[k:v k:v]``."""
    return "map[" + " ".join(f"{k}:{raw[k]}" for k in sorted(raw)) + "]"


def go_map_orders(keys: Sequence[_K], size: int) -> Iterator[tuple[_K, ...]]:
    """OPS-2: the orders in which ``range`` can visit ``keys`` (in the order they were put in)
    of a map of ``size`` entries, the others' places left out.  Up to eight entries a map is
    one bucket (before Go 1.24) or one group (from 1.24), filled in the order the keys were
    put in, and each ``range`` starts at a random slot and wraps around, so the orders are the
    rotations of that order.  A bigger map places its keys by a hash with a seed of its own,
    so any order is taken as possible.  The first order given is ``keys`` as they are."""
    if size <= GO_MAP_SMALL:
        return (tuple(keys[i:]) + tuple(keys[:i]) for i in range(max(len(keys), 1)))
    return itertools.permutations(keys)


def go_map_order_count(keys: int, size: int) -> int:
    """How many orders :func:`go_map_orders` gives for ``keys`` keys of a map of ``size``."""
    return max(keys, 1) if size <= GO_MAP_SMALL else math.factorial(keys)
