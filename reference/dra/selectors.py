"""DRA-3: CEL device selectors, evaluated with ``cel-expr-python`` (the CEL project's own
Python runtime over its C++ implementation), over the chapter's subset of the ``device``
variable Kubernetes declares.

``device.driver`` is the driver's name; ``device.attributes`` maps a domain to the device's
attributes in it (an attribute listed without a domain is in the driver's); a domain the
device has nothing in reads as an empty map, and a missing attribute in a present map is a
runtime error.  ``device.capacity`` (quantities) and version-typed attributes (semantic
versions) are read through Kubernetes' CEL libraries for them (DRA-22,
:mod:`numaspec.dra.cel_library`), with what the subset leaves out refused by name; other
Kubernetes CEL library extensions are not in cel-expr-python, which refuses to compile them,
reported as not modelled.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

from cel_expr_python import cel

from numaspec.dra.cel_library import (
    FUNCTIONS,
    LEFT_OUT,
    MISTYPED,
    RAISED,
    quantity_value,
    semver_value,
)
from numaspec.dra.objects import LIST_KINDS, Device
from numaspec.errors import NotModelledError

__all__ = ["COST_LIMIT", "SelectorError", "cost_bound", "device_matches"]

#: DRA-3: the runtime limit on one selector's CEL cost (``CELSelectorExpressionMaxCost``,
#: 1.33-1.38), past which cel-go stops: ``operation cancelled: actual cost limit exceeded``.
COST_LIMIT = 1_000_000
#: DRA-3: CEL's tokens (strings whole, two-character operators whole), as far as counting
#: them bounds the nodes of the expression's tree.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|==|!=|<=|>=|&&|\|\||\w+|\S')
_LOOPS = frozenset({"all", "exists", "exists_one", "map", "filter"})
#: Operations whose cost is a tenth of a string's length (cel-go's ``StringTraversalCostFactor``;
#: Kubernetes' library for quantities and versions).
_TRAVERSE = frozenset({"==", "!=", "<", "<=", ">", ">=", "+", "startsWith", "endsWith",
                       "quantity", "isQuantity", "semver", "isSemver"})
_QUADRATIC = frozenset({"matches", "contains"})
#: cel-go's cost of building a list or a map (``ListCreateBaseCost``, ``MapCreateBaseCost``).
_BUILD = {"[": 10, "{": 30}
#: A bound on one step of a macro's loop besides its body (the condition and the step's own
#: nodes).
_LOOP_STEP = 8

_ENV = cel.NewEnv(variables={"device": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)},
                  functions=FUNCTIONS)
_LEFT_OUT = re.compile(r"\.\s*(" + "|".join(n for n in LEFT_OUT if n != "sign")
                       + r")\s*\(|\bsign\s*\(")
#: cel-expr-python's status code before an error a library function raised.
_STATUS = re.compile(r"^[A-Z_]+: ")
_MISSING_KEY = re.compile(r'Key not found in map ?: ?"?([^"]*)"?')


class SelectorError(Exception):
    """A CEL runtime error, in cel-go's words where the chapter states them (DRA-3)."""


@lru_cache(maxsize=256)
def _compiled(expression: str) -> Any:
    left_out = _LEFT_OUT.search(expression)
    if left_out:
        name = left_out.group(1) or "sign"
        raise NotModelledError(f"the CEL quantity function {name} is outside the chapter's "
                               f"subset: {LEFT_OUT[name]} (DRA-22)", where=expression)
    try:
        return _ENV.compile(expression, disable_check=True)
    except Exception as exc:  # cel-expr-python raises plain exceptions on compile errors
        raise NotModelledError(f"CEL expression outside the chapter's subset: {exc}",
                               where=expression) from None


def _activation(device: Device, driver: str) -> dict[str, Any]:
    """The ``device`` variable.  DRA-3: an attribute the device lists both bare and under its
    driver's domain (``numa`` and ``DRIVER/numa``) is one CEL name; the qualified spelling's
    value is the one read (1.38; before, see :func:`_refuse_twice_named`)."""
    attributes: dict[str, dict[str, Any]] = {}
    for qualified in (False, True):
        for name, (kind, value) in device.attributes.items():
            domain, _, ident = name.rpartition("/")
            if bool(domain) != qualified:
                continue
            # DRA-18: a list-typed attribute is a CEL list, whatever the features; DRA-22: a
            # version a semantic version
            read: Any = value
            if kind == "version":
                read = semver_value(value)
            elif kind == "versions":
                read = [semver_value(v) for v in value]
            attributes.setdefault(domain or driver, {})[ident] = (
                list(read) if kind in LIST_KINDS else read)
    capacity: dict[str, dict[str, Any]] = {}
    for name, cap in device.capacity.items():
        # DRA-22: a capacity is a quantity, a bare name in the driver's domain (a device
        # naming one capacity both ways is refused as it is decoded, DRA-20)
        domain, _, ident = name.rpartition("/")
        capacity.setdefault(domain or driver, {})[ident] = quantity_value(cap.value)
    # DRA-20: the device's own flag, whatever the features (cel/compile.go reads it so)
    return {"driver": driver, "attributes": attributes, "capacity": capacity,
            "allowMultipleAllocations": device.multiple}


def _refuse_twice_named(expression: str, device: Device, driver: str,
                        release_minor: int) -> None:
    """DRA-3: until 1.37 an attribute listed both bare and under the driver's domain reads as
    whichever spelling Go's map order puts last (finding 56): an expression that may read
    one is refused, not answered as one of two possible answers."""
    if release_minor >= 38:
        return
    for name in device.attributes:
        domain, _, ident = name.rpartition("/")
        if domain == driver and ident in device.attributes and ident in expression:
            raise NotModelledError(
                f"device {device.name} lists attribute {ident!r} both bare and as {name!r}: "
                f"until 1.37 CEL reads either value, by Go's map order (finding 56)",
                where=expression)


#: DRA-22: where an operand of ``==``, ``!=`` or ``in`` ends.
_STOPS = ("&&", "||", "?", ":", ",")


def _operand(text: str, start: int, step: int) -> str:
    """The operand of an operator, read from ``start`` in direction ``step`` until a
    parenthesis or bracket it did not open, or a stop at its own depth."""
    depth, i = 0, start
    opening, closing = ("([", ")]") if step > 0 else (")]", "([")
    while 0 <= i < len(text):
        char = text[i]
        if char in opening:
            depth += 1
        elif char in closing:
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and any(text.startswith(stop, i if step > 0 else i - len(stop) + 1)
                                for stop in _STOPS):
            break
        i += step
    return text[start:i] if step > 0 else text[i + 1:start + 1]


#: DRA-22: library calls whose result is a number or a boolean, whatever they read.
_SCALAR_CALL = re.compile(r"(\.\s*(compareTo|major|minor|patch|isGreaterThan|isLessThan)"
                          r"|\b(isQuantity|isSemver))\s*\([^()]*(\([^()]*\)[^()]*)*\)\s*$")


def _kind(operand: str, versions: frozenset[str]) -> str:
    operand = operand.strip()
    if _SCALAR_CALL.search(operand) or re.search(r'capacity\s*(\[\s*"[^"]*"\s*\])?$',
                                                   operand):
        return "other"  # a number, a boolean, or a map of capacities
    if "capacity" in operand or "quantity(" in operand:
        return "quantity"
    if "semver(" in operand or any(re.search(rf'\.\s*{re.escape(v)}\b|\["{re.escape(v)}"\]',
                                             operand) for v in versions):
        return "version"
    return "other"


@lru_cache(maxsize=256)
def _refuse_mixed_equality(expression: str, versions: frozenset[str]) -> None:
    """DRA-22: ``==``, ``!=`` or ``in`` over a quantity or a version and a value of another
    kind: Go refuses it (a compile error, ``no such overload``, or for ``in`` over constant
    strings an internal error) where CEL in Python answers false; refused by name.
    ``versions``: the device's version-typed attribute names."""
    for match in re.finditer(r"==|!=|\bin\b", expression):
        left = _kind(_operand(expression, match.start() - 1, -1), versions)
        right = _kind(_operand(expression, match.end(), 1), versions)
        kinds = {left, right}
        if (match.group() == "in" and kinds != {"other"}) or (
                kinds & {"quantity", "version"} and len(kinds) > 1):
            raise NotModelledError(f"{match.group()!r} between a {left} and a {right} value is "
                                   "outside the chapter's subset: Go refuses what CEL in "
                                   "Python answers (DRA-22; compare with compareTo)",
                                   where=expression)


@lru_cache(maxsize=256)
def _shape(expression: str) -> tuple[tuple[tuple[int, int, int, int, int], ...], int, int,
                                      int]:
    """DRA-3: per number of macro loops around them, the expression's nodes' fixed cost (1
    a token, 10 a list built, 30 a map), its ``in``, its string traversals, its ``matches``
    and ``contains``, and the loops that open there; the longest list literal; the number
    of ``+``; the longest string literal."""
    tokens = _TOKEN.findall(expression)
    levels: list[list[int]] = []
    opened: list[list[Any]] = []  # per open bracket: [whether a macro's, bracket, commas]
    literal = 1
    for i, token in enumerate(tokens):
        depth = sum(1 for loop, _b, _c in opened if loop)
        while len(levels) <= depth:
            levels.append([0, 0, 0, 0, 0])
        level = levels[depth]
        level[0] += _BUILD.get(token, 1)
        level[1] += token == "in"
        level[2] += token in _TRAVERSE
        level[3] += token in _QUADRATIC
        if token in "([{":
            loop = token == "(" and i >= 2 and tokens[i - 1] in _LOOPS and tokens[i - 2] == "."
            level[4] += loop
            opened.append([loop, token, 0])
        elif token == "," and opened:
            opened[-1][2] += 1
        elif token in ")]}" and opened:
            _loop, bracket, commas = opened.pop()
            if bracket == "[":
                literal = max(literal, commas + 1)
    quoted = max([0, *(len(t) for t in tokens if t[:1] in "\"'")])
    return (tuple((b, n, t, q, lo) for b, n, t, q, lo in levels), literal,
            tokens.count("+"), quoted)


def cost_bound(expression: str, device: Device, driver: str) -> int:
    """DRA-3: an upper bound on cel-go's runtime cost of ``expression`` over ``device``.
    Each node of the tree (at most one per token) costs at most 1, 10 to build a list or 30
    a map, a list's length for ``in``, a tenth of a string's length for a comparison, a
    concatenation or reading a quantity or a version, and the product of two strings'
    lengths for ``matches`` or ``contains``; it is evaluated at most once per step of each
    macro loop around it, and a loop has at most as many steps as the widest list or map it
    can range over (a list literal, a list-typed attribute, a domain's attributes or
    capacities) plus one, each with a few nodes of its own.  A string or a list is at most
    one read whole (a literal, a name, an attribute, a number written out; the widest list)
    for each ``+`` and one more."""
    levels, literal, plus, quoted = _shape(expression)
    longest = max([20, len(driver), quoted,
                   *(len(name) for name in [*device.attributes, *device.capacity])])
    widest = max(literal, len(device.attributes), len(device.capacity), 4)
    for kind, value in device.attributes.values():
        if kind in LIST_KINDS:
            widest = max(widest, len(value))
            longest = max([longest, *(len(str(v)) for v in value)])
        else:
            longest = max(longest, len(str(value)))
    strings = longest * (1 + plus)
    traverse = math.ceil(strings / 10)
    search = math.ceil((1 + strings) / 10) * math.ceil(strings / 4)
    total = 0
    for depth, (fixed, ins, traversals, searches, loops) in enumerate(levels):
        steps = (widest + 1) ** depth
        total += steps * (fixed + ins * widest * (1 + plus) + traversals * traverse
                          + searches * search + loops * _LOOP_STEP * (widest + 1))
    return total


def device_matches(expression: str, device: Device, driver: str,
                   release_minor: int, *, lists: bool = False) -> bool:
    """DRA-3: whether one selector accepts the device.  Raises :class:`SelectorError` with
    cel-go's message for a runtime error (from 1.37 with Kubernetes' hint on a missing key).
    DRA-18: at 1.36 without ``lists`` (the CEL feature of list-typed attributes) a device with
    a list-typed attribute cannot be read at all: ``attribute NAME: unsupported attribute
    value``."""
    program = _compiled(expression)
    bound = cost_bound(expression, device, driver)
    if bound > COST_LIMIT:
        raise NotModelledError(
            f"on device {device.name} this selector's CEL cost may pass Kubernetes' runtime "
            f"limit of {COST_LIMIT:,} (numaspec bounds it by {bound:,}), where the allocator "
            "stops with 'operation cancelled: actual cost limit exceeded'; numaspec does not "
            "count CEL's cost exactly (DRA-3)", where=expression)
    _refuse_mixed_equality(expression, frozenset(
        name.rpartition("/")[2] for name, (kind, _v) in device.attributes.items()
        if kind in ("version", "versions")))
    _refuse_twice_named(expression, device, driver, release_minor)
    if release_minor == 36 and not lists:
        for name, (kind, _value) in device.attributes.items():
            if kind in LIST_KINDS:
                raise SelectorError(f"attribute {name}: unsupported attribute value")
    activation = _activation(device, driver)
    # A domain the device has nothing in reads as an empty map (Kubernetes' map with a
    # default): every domain the expression names is given one.
    for key, domain in re.findall(r'(attributes|capacity)\[\s*"([^"]*)"\s*\]', expression):
        activation[key].setdefault(domain, {})
    MISTYPED.clear()
    RAISED.clear()
    try:
        value = program.eval(data={"device": activation})
    except RuntimeError as exc:  # cel-expr-python's own budget: never reached under the bound
        raise NotModelledError(f"CEL in Python stopped: {exc} (DRA-3)",
                               where=expression) from None
    if MISTYPED:
        raise NotModelledError(f"a CEL library function given a value of a kind it does not "
                               f"take ({MISTYPED[0]}): Go refuses it where CEL in Python may "
                               "not (DRA-22)", where=expression)
    if value.type() == cel.Type.ERROR:
        text = str(value.value())
        bare = _STATUS.sub("", text)
        if bare in RAISED:
            text = bare  # a library function's error, in its Go words
        missing = _MISSING_KEY.search(text)
        if missing:
            message = f"no such key: {missing.group(1)}"
            if release_minor >= 37:
                message += (". consider using CEL optional chaining (.? followed by orValue()) "
                            "or guarding the check with has() for optional fields")
            raise SelectorError(message)
        raise SelectorError(text)
    result = value.value()
    if not isinstance(result, bool):
        raise NotModelledError("a selector that does not give a boolean (the API server's "
                               "type check refuses it)", where=expression)
    return result
