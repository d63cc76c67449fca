"""DRA-3: CEL device selectors, evaluated with ``cel-expr-python`` (the CEL project's own
Python runtime over its C++ implementation), over the chapter's subset of the ``device``
variable Kubernetes declares.

``device.driver`` is the driver's name; ``device.attributes`` maps a domain to the device's
attributes in it (an attribute listed without a domain is in the driver's); a domain the
device has nothing in reads as an empty map, and a missing attribute in a present map is a
runtime error.  Left out of the subset (refused, DRA-0): ``device.capacity`` (Kubernetes
quantities), version-typed attributes read by an expression (Kubernetes semver values), and
Kubernetes' CEL library extensions: cel-expr-python does not have them and refuses to compile
them, which is reported as not modelled.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from cel_expr_python import cel

from numaspec.dra.objects import LIST_KINDS, Device
from numaspec.errors import NotModelledError

__all__ = ["SelectorError", "device_matches"]

_ENV = cel.NewEnv(variables={"device": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)})
_MISSING_KEY = re.compile(r'Key not found in map ?: ?"?([^"]*)"?')


class SelectorError(Exception):
    """A CEL runtime error, in cel-go's words where the chapter states them (DRA-3)."""


@lru_cache(maxsize=256)
def _compiled(expression: str) -> Any:
    if "capacity" in expression or "semver" in expression:
        raise NotModelledError("CEL over device.capacity or semver values is outside the "
                               "chapter's subset (DRA-0)", where=expression)
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
            # DRA-18: a list-typed attribute is a CEL list, whatever the features
            attributes.setdefault(domain or driver, {})[ident] = (
                list(value) if kind in LIST_KINDS else value)
    # DRA-20: the device's own flag, whatever the features (cel/compile.go reads it so)
    return {"driver": driver, "attributes": attributes,
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


def _refuse_versions(expression: str, device: Device) -> None:
    """Refuse an expression that reads a version attribute (DRA-0)."""
    for name, (kind, _value) in device.attributes.items():
        if kind in ("version", "versions") and name.rpartition("/")[2] in expression:
            raise NotModelledError(f"CEL over the version attribute {name!r} is outside the "
                                   "chapter's subset (DRA-0)", where=expression)


def device_matches(expression: str, device: Device, driver: str,
                   release_minor: int, *, lists: bool = False) -> bool:
    """DRA-3: whether one selector accepts the device.  Raises :class:`SelectorError` with
    cel-go's message for a runtime error (from 1.37 with Kubernetes' hint on a missing key).
    DRA-18: at 1.36 without ``lists`` (the CEL feature of list-typed attributes) a device with
    a list-typed attribute cannot be read at all: ``attribute NAME: unsupported attribute
    value``."""
    program = _compiled(expression)
    _refuse_versions(expression, device)
    _refuse_twice_named(expression, device, driver, release_minor)
    if release_minor == 36 and not lists:
        for name, (kind, _value) in device.attributes.items():
            if kind in LIST_KINDS:
                raise SelectorError(f"attribute {name}: unsupported attribute value")
    activation = _activation(device, driver)
    # A domain the device has nothing in reads as an empty map (Kubernetes' map with a
    # default): every domain the expression names is given one.
    for domain in re.findall(r'attributes\[\s*"([^"]*)"\s*\]', expression):
        activation["attributes"].setdefault(domain, {})
    value = program.eval(data={"device": activation})
    if value.type() == cel.Type.ERROR:
        text = str(value.value())
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
