"""JSON as numaspec reads it, strictly (spec chapter ``merge-protocol.md``, WIRE-3, WIRE-5).

Every line protocol (``numaspec merge``, ``node``, ``serve``) and the affinity annotations read
JSON the same way: one value per line, UTF-8, no repeated key in an object, no ``NaN`` or
``Infinity``, integers of at most ``MAX_INT_DIGITS`` digits and numbers a double holds; a value
of the wrong type is ``invalid-field`` naming where it is.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import msgspec

from numaspec.errors import InvalidFieldError, LimitExceededError, MalformedJSONError
from numaspec.limits import MAX_INT_DIGITS, MAX_LINE_BYTES

__all__ = [
    "as_array",
    "as_object",
    "as_string",
    "bool_map",
    "bounded_int",
    "decode_json_line",
    "expect",
    "finite_float",
    "long_integer_in",
    "string_map",
    "type_name",
]


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise InvalidFieldError(f"key {key!r} appears twice in one object")
            seen.add(key)
    return result


def _reject_constant(name: str) -> Any:
    raise InvalidFieldError(f"{name} is not a JSON number")


def bounded_int(text: str) -> int:
    """WIRE-5: an integer literal of at most MAX_INT_DIGITS digits (checked before it is
    converted: Python refuses to convert more than 4,300 digits, and a long one is slow)."""
    digits = len(text) - (text[0] == "-")
    if digits > MAX_INT_DIGITS:
        raise LimitExceededError(f"an integer of {digits} digits ({text[:12]}...): numaspec "
                                 f"reads integers of at most {MAX_INT_DIGITS} digits")
    return int(text)


def finite_float(text: str) -> float:
    """WIRE-5: a number that overflows a double (``1e999``) is refused, as Go's decoder
    refuses it, rather than read as infinity."""
    if len(text) > MAX_LINE_BYTES:  # pragma: no cover - bounded by the line already
        raise LimitExceededError("a number longer than a request line")
    value = float(text)
    if not math.isfinite(value):
        raise InvalidFieldError(f"the number {text[:24]} is out of range")
    return value


#: A run of more digits than an integer may have (WIRE-5): only a line holding one needs each
#: integer literal checked as it is read.
_LONG_DIGITS = re.compile(rf"[0-9]{{{MAX_INT_DIGITS + 1}}}")
_LONG_DIGIT_BYTES = re.compile(_LONG_DIGITS.pattern.encode())


def long_integer_in(line: str | bytes) -> bool:
    """WIRE-5: whether ``line`` holds a run of more digits than an integer may have (then
    each integer literal of it is checked as it is read; otherwise none can be too long)."""
    pattern = _LONG_DIGIT_BYTES if isinstance(line, bytes) else _LONG_DIGITS
    return pattern.search(line) is not None  # type: ignore[arg-type]


def decode_json_line(line: str | bytes) -> Any:
    """Parse one line of JSON; anything else raises :class:`MalformedJSONError`."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            msg = f"the line is not UTF-8: {exc.reason} at byte {exc.start}"
            raise MalformedJSONError(msg) from None
    if not line.strip():
        raise MalformedJSONError("the line is empty")
    long = long_integer_in(line)
    if not long:
        found = _parsed_whole(line)
        if found is not _DECLINED:
            return found
    try:
        if not long:  # no integer can be too long: parse them in C
            return json.loads(line, object_pairs_hook=_no_duplicate_keys,
                              parse_constant=_reject_constant, parse_float=finite_float)
        return json.loads(line, object_pairs_hook=_no_duplicate_keys,
                          parse_constant=_reject_constant, parse_int=bounded_int,
                          parse_float=finite_float)
    except json.JSONDecodeError as exc:
        raise MalformedJSONError(
            f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise MalformedJSONError("JSON nested too deeply") from None


_DECLINED = object()


def _parsed_whole(line: str) -> Any:
    """WIRE-7: ``line`` parsed by msgspec, when the standard reading would give the same
    value: msgspec refuses what WIRE-3 refuses (``NaN``, ``1e999``, bad UTF-8, trailing
    data) except a repeated key, and every key is followed by a colon, so a value with as
    many keys as the line has colons has none repeated (a colon inside a string declines the
    line too).  ``_DECLINED`` otherwise: the standard reading says what is wrong."""
    try:
        value = msgspec.json.decode(line)
    except (msgspec.MsgspecError, RecursionError):
        return _DECLINED
    keys, stack = 0, [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            keys += len(item)
            stack.extend(child for child in item.values() if type(child) in (dict, list))
        elif type(item) is list:
            stack.extend(child for child in item if type(child) in (dict, list))
    return value if keys == line.count(":") else _DECLINED


def type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def expect(value: object, kind: type | tuple[type, ...], what: str, where: str) -> None:
    ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in (
        kind if isinstance(kind, tuple) else (kind,)))
    if not ok:
        raise InvalidFieldError(f"expected {what}, got {type_name(value)}", where=where)


def as_object(value: object, where: str) -> dict[str, Any]:
    """``value`` if it is a JSON object, else the typed error naming ``where``."""
    expect(value, dict, "an object", where)
    assert isinstance(value, dict)
    return value


def as_array(value: object, where: str) -> list[Any]:
    """``value`` if it is a JSON array, else the typed error naming ``where``."""
    expect(value, list, "an array", where)
    assert isinstance(value, list)
    return value


def as_string(value: object, where: str) -> str:
    """``value`` if it is a string, else the typed error naming ``where``."""
    expect(value, str, "a string", where)
    assert isinstance(value, str)
    return value


def bool_map(value: object, where: str, what: str = "true or false",
             container: str = "an object of gate name to boolean") -> dict[str, bool]:
    """An object of booleans (feature gates), or the typed error naming the entry."""
    expect(value, dict, container, where)
    assert isinstance(value, dict)
    for key, item in value.items():
        expect(item, bool, what, f"{where}.{key}")
    return dict(value)


def string_map(value: object, where: str,
                what: str = "a string (kubelet takes option values as strings)"
                ) -> dict[str, str]:
    expect(value, dict, "an object of strings", where)
    assert isinstance(value, dict)
    for key, item in value.items():
        expect(item, str, what, f"{where}.{key}")
    return dict(value)
