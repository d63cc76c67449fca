"""The quantity strings of the agreement table (QTY-1, QTY-4): a deterministic list, the input
of ``adapters/kubelet/quantity`` (which parses each with apimachinery's ``ParseQuantity``) and
of ``tests/node/test_quantity_table.py`` (which checks that the committed table holds exactly these
strings, and numaspec's parser against every entry).

Edge cases of every suffix, signs, decimal points, exponents (also those Go truncates to 32
bits), empty and garbage strings, whitespace and numbers too large for 64 bits.  Excluded on
purpose: exponents whose 32-bit truncation is far from zero (``1e2147483647``,
``1e-2147483649``), on which apimachinery computes, for minutes, with numbers of billions of
digits (findings.md), and strings longer than numaspec reads (``MAX_QUANTITY_CHARS``).

``python tools/numaspec_tools/quantity_strings.py`` prints them, one JSON string per line.
"""

from __future__ import annotations

import json
import random
import sys

__all__ = ["quantity_strings"]

_SIGNS = ("", "+", "-")
_WHOLES = ("", "0", "1", "01", "10", "1024", "123456789", "9223372036854775807",
           "9223372036854775808", "12345678901234567890123")
_FRACTIONS = ("", ".", ".5", ".000000001", ".0000000005", ".123456789012")
_SUFFIXES = (
    # decimal SI and binary SI
    "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
    # exponents
    "e0", "e3", "E3", "e+3", "e-3", "e9", "e-9", "e-10", "e18", "e19", "e-18", "e-0", "E-12",
    "e40", "e-40",
    # not suffixes, or not valid ones
    "K", "mi", "ki", "KI", "Xi", "i", "e", "E", "ee3", "e3k", "ku", "Mm", "x", " ",
)
_GARBAGE = (
    "", " ", "  ", "\t", "\n", " 1", "1 ", "1 Gi", "1\t", "1\n", "\u00a01", "\uff11", "\u0663",
    "0x10", "0b1", "0o7", "1_000", "1,000", "1/2", "NaN", "nan", "Inf", "-Inf", "infinity",
    "1.5.5", "1..5", "..", "...", ".", "-", "+", "+-1", "-+1", "--1", "++1", "1-", "1+", "-.",
    "+.", ".-", "e", "E", "e3", "e-9", "e-10", ".e-10", "+e-10", "-e-10", "Gi", "-Gi", ".Gi",
    "Pi", "-Pi", "+Ei", "Ei", "m", "-m", "n", "u3", "iM", "1e1.5", "1e3.0", "1e+-3", "1e--3",
    "1e+", "1e-", "1E+", "1Mi3", "1Mi-3", "1Ki+3", "1k3", "1k-3", "1m+3", "1n-1", "1e3e3",
    "1Gib", "1GB", "1gb", "1g", "1gi", "1mb", "1b", "1B", "2 ", "true", "null", "[]", "{}",
    "'1'", '"1"', "1;", "1%", "50%", "$1", "¼", "1\x00", "\x001",
    "1e4294967296", "1e4294967295", "1e4294967297", "1e-4294967296", "1e-4294967295",
    "1e8589934592", "1e9223372036854775807", "1e-9223372036854775808",
    "1e9223372036854775808", "1e-9223372036854775809", "1e18446744073709551616",
    "1e00000000000000000000003", "1e-00000000000000000000009", "1e000", "1e-000",
)


def _systematic() -> list[str]:
    out = []
    for sign in _SIGNS:
        for whole in _WHOLES if sign != "+" else ("", "1"):
            for fraction in _FRACTIONS:
                for suffix in _SUFFIXES:
                    out.append(f"{sign}{whole}{fraction}{suffix}")
    return out


def _around_limits() -> list[str]:
    """Numbers near 2**63 and near a nano, in every unit that reaches them."""
    out = []
    limit = 1 << 63
    for delta in (-2, -1, 0, 1):
        n = limit + delta
        out += [str(n), f"-{n}", f"{n}m", f"{n}n", f"{n / 1000:.3f}k"]
    for shift, suffix in ((10, "Ki"), (20, "Mi"), (30, "Gi"), (40, "Ti"), (50, "Pi"),
                          (60, "Ei")):
        top = limit >> shift
        out += [f"{top - 1}{suffix}", f"{top}{suffix}", f"{top + 1}{suffix}",
                f"{top - 1}.5{suffix}", f"-{top}{suffix}", f"{top}.0{suffix}"]
    for power, suffix in ((3, "k"), (6, "M"), (9, "G"), (12, "T"), (15, "P"), (18, "E")):
        top = limit // 10**power
        out += [f"{top}{suffix}", f"{top + 1}{suffix}", f"{top}.9{suffix}"]
    for digits in (9, 10, 11, 12, 18, 19, 20, 30, 60, 61, 100):
        out += [f"0.{'0' * (digits - 1)}1", f"0.{'0' * (digits - 1)}5", f"-0.{'0' * digits}1",
                f"{'9' * digits}", f"1{'0' * digits}m", f"0.{'9' * digits}"]
    for exponent in range(-45, 46):
        out += [f"1e{exponent}", f"9.5e{exponent}", f"-3E{exponent}"]
    return out


def _random(count: int) -> list[str]:
    """Strings from the quantity alphabet and a few strangers, from a fixed seed."""
    rng = random.Random(20240530)
    alphabet = "0123456789" * 3 + ".+-" * 2 + "eEinumkKMGTP" + "xI _"
    out = []
    for _ in range(count):
        length = rng.randint(1, 12)
        out.append("".join(rng.choice(alphabet) for _ in range(length)))
    return out


def _safe(text: str) -> bool:
    """False for exponents whose 32-bit truncation is large: apimachinery computes with
    numbers of that many digits, for minutes."""
    position = max(text.rfind("e"), text.rfind("E"))
    if position < 0:
        return True
    tail = text[position + 1:]
    body = tail[1:] if tail[:1] in ("+", "-") else tail
    if not body or not body.isascii() or not body.isdigit():
        return True
    number = int(tail)
    if not -(1 << 63) <= number < (1 << 63):
        return True  # Go's strconv refuses it: a suffix error, cheap
    truncated = (number + (1 << 31)) % (1 << 32) - (1 << 31)
    return abs(truncated) <= 400


def quantity_strings() -> list[str]:
    """The table's strings, in a fixed order, each once."""
    seen: dict[str, None] = {}
    for text in (*_GARBAGE, *_systematic(), *_around_limits(), *_random(900)):
        if _safe(text) and len(text) <= 4096:
            seen.setdefault(text, None)
    return list(seen)


if __name__ == "__main__":
    for item in quantity_strings():
        sys.stdout.write(json.dumps(item) + "\n")
