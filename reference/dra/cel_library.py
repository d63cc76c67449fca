"""DRA-22: Kubernetes' CEL libraries for quantities and semantic versions, as a DRA selector
sees them: ``device.capacity`` and version-typed attributes, on ``cel-expr-python``.

``cel-expr-python`` carries no opaque values, so a quantity is a CEL map holding its exact
value (``{"__k8s.quantity": "3/2"}``) and a semantic version one holding the version without
its build metadata (``{"__k8s.semver": "1.2.3-rc.1"}``): CEL's ``==`` on two of them is then
Kubernetes' (numeric for quantities, build metadata ignored for versions).  The functions are
the libraries' (``quantity``, ``isQuantity``, ``semver``, ``isSemver``, ``compareTo``,
``isGreaterThan``, ``isLessThan``, ``major``, ``minor``, ``patch``), with the upstream words
for a value that does not parse.  Left out, each refused by name where an expression uses it:
``add``, ``sub``, ``isInteger``, ``asInteger``, ``asApproximateFloat`` and ``sign``, whose Go
answers depend on how a quantity is held rather than on its value, or are not what the
libraries' comments say (read in k8s.io/apiserver ``pkg/cel/library/quantity.go``).

Upstream: k8s.io/apiserver ``pkg/cel/library/quantity.go`` and ``semverlib.go``,
``pkg/cel/quantity.go`` and ``semver.go``; github.com/blang/semver/v4 ``Parse``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from cel_expr_python import cel

from numaspec.errors import InvalidQuantityError
from numaspec.node.quantity import parse_quantity

__all__ = ["FUNCTIONS", "LEFT_OUT", "MISTYPED", "RAISED", "LibraryError", "Mistyped",
           "is_quantity", "is_semver", "parse_semver", "quantity_value", "semver_value"]

_QUANTITY = "__k8s.quantity"
_SEMVER = "__k8s.semver"
#: DRA-22: the library functions the subset leaves out, and why.
LEFT_OUT = {
    "add": "its Go result is a pointer that == does not compare as a quantity",
    "sub": "its Go result is a pointer that == does not compare as a quantity",
    "isInteger": "its Go answer depends on how the quantity is held, not on its value",
    "asInteger": "its Go answer depends on how the quantity is held, not on its value",
    "asApproximateFloat": "its Go answer depends on how the quantity is held",
    "sign": "Go declares it a global function, not the member its comment shows",
}



class Mistyped(Exception):
    """A library function given values of kinds it does not take: in Go a compile error or
    ``no such overload``, which the subset does not judge (DRA-22)."""


#: The messages of the errors library functions raised during an evaluation (Go's words:
#: cel-expr-python puts a status code before them).
RAISED: list[str] = []


class LibraryError(ValueError):
    """An error a library function returns (a value that does not parse), in Go's words."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        RAISED.append(message)


#: Set during an evaluation when a library function met values of kinds it does not take
#: (CEL may absorb the error, ``|| true``; the caller refuses the answer all the same).
MISTYPED: list[str] = []


def quantity_value(amount: Fraction) -> dict[str, Any]:
    """DRA-22: a quantity as the subset carries it in CEL."""
    return {_QUANTITY: str(amount)}


def semver_value(text: str) -> dict[str, Any]:
    """DRA-22: a semantic version (valid, as the API server requires) as the subset carries
    it in CEL: without its build metadata, which Kubernetes' ``==`` and comparisons ignore."""
    return {_SEMVER: text.partition("+")[0]}


def is_quantity(value: object) -> bool:
    return isinstance(value, dict) and _QUANTITY in value


def is_semver(value: object) -> bool:
    return isinstance(value, dict) and _SEMVER in value


def _quantity(text: object) -> dict[str, Any]:
    if not isinstance(text, str):
        raise _mistyped(f"quantity({type(text).__name__})")
    try:
        return quantity_value(parse_quantity(text))
    except InvalidQuantityError as exc:
        # apimachinery's words, as the library wraps them
        raise LibraryError(exc.kubelet_message or exc.message) from None


def _is_quantity(text: object) -> bool:
    if not isinstance(text, str):
        raise _mistyped(f"isQuantity({type(text).__name__})")
    try:
        parse_quantity(text)
    except InvalidQuantityError:
        return False
    return True


# --- semantic versions (blang/semver v4 Parse) ----------------------------------------------

_ALNUM = re.compile(r"[0-9A-Za-z-]+")


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _number(text: str, what: str) -> int:
    if not text or not text.isascii() or not text.isdigit():
        raise ValueError(f"Invalid character(s) found in {what} number {_quoted(text)}")
    if len(text) > 1 and text[0] == "0":
        raise ValueError(f"{what.capitalize()} number must not contain leading zeroes "
                         f"{_quoted(text)}")
    if int(text) >= 1 << 64:
        raise ValueError(f'strconv.ParseUint: parsing {_quoted(text)}: value out of range')
    return int(text)


def parse_semver(text: str) -> tuple[int, int, int, tuple[int | str, ...]]:
    """blang/semver v4 ``Parse``: major, minor, patch and prerelease identifiers, or
    ValueError with its words."""
    if not text:
        raise ValueError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise ValueError("No Major.Minor.Patch elements found")
    major, minor = _number(parts[0], "major"), _number(parts[1], "minor")
    patch, _, build = parts[2].partition("+")
    patch, dash, pre = patch.partition("-")
    number = _number(patch, "patch")
    identifiers: list[int | str] = []
    for item in pre.split(".") if dash else ():
        if not item:
            raise ValueError("Prerelease is empty")
        if item.isascii() and item.isdigit():
            if len(item) > 1 and item[0] == "0":
                raise ValueError("Numeric PreRelease version must not contain leading zeroes "
                                 f"{_quoted(item)}")
            identifiers.append(_number(item, "prerelease"))
        elif _ALNUM.fullmatch(item):
            identifiers.append(item)
        else:
            raise ValueError(f"Invalid character(s) found in prerelease {_quoted(item)}")
    for item in build.split(".") if "+" in parts[2] else ():
        if not item:
            raise ValueError("Build meta data is empty")
        if not _ALNUM.fullmatch(item):
            raise ValueError(f"Invalid character(s) found in build meta data {_quoted(item)}")
    return major, minor, number, tuple(identifiers)


def _normalized(text: str) -> str:
    """The library's ``normalizeAndParse``: no leading ``v``, no leading zeros, ``.0``
    added up to three parts."""
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            stripped = part.lstrip("0")
            parts[i] = stripped if stripped and stripped[0].isdigit() else "0" + stripped
    if len(parts) < 3:
        if any(c in "+-" for c in parts[-1]):
            raise ValueError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def _semver(text: object, normalize: object = False) -> dict[str, Any]:
    if not isinstance(text, str) or not isinstance(normalize, bool):
        raise _mistyped("semver")
    try:
        if normalize:
            text = _normalized(text)
        parse_semver(text)
    except ValueError as exc:
        raise LibraryError(str(exc)) from None
    return semver_value(text)


def _is_semver(text: object, normalize: object = False) -> bool:
    if not isinstance(text, str) or not isinstance(normalize, bool):
        raise _mistyped("isSemver")
    try:
        parse_semver(_normalized(text) if normalize else text)
    except ValueError:
        return False
    return True


def _semver_key(value: dict[str, Any]) -> tuple[Any, ...]:
    major, minor, patch, pre = parse_semver(value[_SEMVER])
    # a version without prerelease sorts after every one with; numeric identifiers below
    # alphanumeric ones; a shorter list below a longer one it starts
    ranks = tuple((0, item, "") if isinstance(item, int) else (1, 0, item) for item in pre)
    return major, minor, patch, not pre, ranks


# --- comparisons, shared by quantities and versions -------------------------------------------


def _compare(left: object, right: object) -> int:
    if is_quantity(left) and is_quantity(right):
        assert isinstance(left, dict) and isinstance(right, dict)
        a, b = Fraction(left[_QUANTITY]), Fraction(right[_QUANTITY])
    elif is_semver(left) and is_semver(right):
        assert isinstance(left, dict) and isinstance(right, dict)
        a, b = _semver_key(left), _semver_key(right)  # type: ignore[assignment]
    else:
        raise _mistyped("a comparison of a quantity or version with another kind")
    return (a > b) - (a < b)


def _part(index: int) -> Callable[[object], int]:
    def part(value: object) -> int:
        if not is_semver(value):
            raise _mistyped("major/minor/patch")
        assert isinstance(value, dict)
        number = parse_semver(value[_SEMVER])[index]
        assert isinstance(number, int)
        if number >= 1 << 63:
            # Go converts the uint64 to a CEL int, wrapping
            raise _mistyped("major/minor/patch past int64")
        return number
    return part


def _mistyped(what: str) -> Mistyped:
    MISTYPED.append(what)
    return Mistyped(f"no such overload: {what}")


_DYN_MAP = cel.Type.Map(cel.Type.STRING, cel.Type.DYN)
#: The runtime types an overload is declared for: cel-expr-python dispatches on them, and a
#: call with any other kinds (Go: a compile error or no such overload) must reach the
#: function to be noticed (:data:`MISTYPED`).
_TYPES = (cel.Type.INT, cel.Type.UINT, cel.Type.DOUBLE, cel.Type.STRING, cel.Type.BOOL,
          cel.Type.BYTES, cel.Type.NULL, cel.Type.List(cel.Type.DYN), _DYN_MAP)


def _declare(name: str, result: Any, arity: int, impl: Callable[..., Any],
             member: bool = False) -> Any:
    """A function over every combination of :data:`_TYPES` (``arity`` values, the receiver
    first for a member), all served by ``impl``, which checks the kinds itself."""
    overloads = []
    combos: list[tuple[Any, ...]] = [()]
    for _ in range(arity):
        combos = [(*c, t) for c in combos for t in _TYPES]
    for i, params in enumerate(combos):
        overloads.append(cel.Overload(f"{name}_{arity}_{i}", result, list(params),
                                      is_member=member, impl=impl))
    return overloads


def _function(name: str, result: Any, impls: dict[int, Callable[..., Any]],
              member: bool = False) -> Any:
    return cel.FunctionDecl(name, [o for arity, impl in impls.items()
                                   for o in _declare(name, result, arity, impl, member)])


#: DRA-22: the library functions, for ``cel.NewEnv(functions=...)``.
FUNCTIONS = [
    _function("quantity", _DYN_MAP, {1: _quantity}),
    _function("isQuantity", cel.Type.BOOL, {1: _is_quantity}),
    _function("semver", _DYN_MAP, {1: _semver, 2: _semver}),
    _function("isSemver", cel.Type.BOOL, {1: _is_semver, 2: _is_semver}),
    _function("compareTo", cel.Type.INT, {2: _compare}, member=True),
    _function("isGreaterThan", cel.Type.BOOL, {2: lambda a, b: _compare(a, b) > 0},
              member=True),
    _function("isLessThan", cel.Type.BOOL, {2: lambda a, b: _compare(a, b) < 0},
              member=True),
    *(_function(name, cel.Type.INT, {1: _part(i)}, member=True)
      for i, name in enumerate(("major", "minor", "patch"))),
]
