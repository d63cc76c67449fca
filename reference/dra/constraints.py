"""DRA-6, DRA-18, DRA-21: a claim's constraints as the allocator keeps them during its search:
``matchAttribute`` (every device taken shares the attribute's value) and ``distinctAttribute``
(every device's value differs).

Upstream: ``structured/internal/*/constraint.go`` (``matchAttributeConstraint``,
``distinctAttributeConstraint``), ``lookupAttribute`` in the allocators.
"""

from __future__ import annotations

from attrs import define, evolve, field

from numaspec.dra.objects import LIST_KINDS, AttributeValue, Constraint, Device

__all__ = [
    "ConstraintState",
    "DistinctAttribute",
    "MatchAttribute",
    "UnsupportedValue",
    "constraint_state",
    "lookup_attribute",
]


class UnsupportedValue(Exception):
    """DRA-18: from 1.38, a ``matchAttribute`` over a device whose value it cannot compare (a
    list, without ``ListTypeAttributes``) stops the allocation with an error."""

    def __init__(self, attribute: str) -> None:
        super().__init__(attribute)
        self.attribute = attribute


def _comparable(value: AttributeValue, minor: int) -> AttributeValue:
    """DRA-6, DRA-18: a value as the release's ``matchAttribute`` compares it: from 1.38 a
    version (alone or in a list) without its build metadata (``+...``), as semantic versions
    are equal whatever their build; before, versions compare as strings."""
    kind, raw = value
    if minor < 38 or kind not in ("version", "versions"):
        return value
    if kind == "version":
        assert isinstance(raw, str)
        return kind, raw.partition("+")[0]
    assert isinstance(raw, tuple)
    return kind, tuple(str(v).partition("+")[0] for v in raw)


@define
class MatchAttribute:
    """DRA-6, DRA-18: one ``matchAttribute`` constraint's state: the first device's value,
    or, with ``ListTypeAttributes`` (``lists``), the intersection of the values so far, one
    per device taken (a stack, so that giving a device back restores the one before)."""

    requests: frozenset[str]
    attribute: str
    lists: bool = False
    #: DRA-18: giving a device back restores the intersection (1.37); at 1.36 it stays as
    #: narrowed until the constraint is empty again (finding 54)
    restores: bool = True
    #: the release's minor: from 1.38 versions compare without build metadata and, without
    #: ``lists``, a list-typed value is an error (:class:`UnsupportedValue`)
    minor: int = 37
    value: AttributeValue | None = None
    count: int = 0
    shared: list[tuple[str, frozenset[object]]] = field(factory=list)

    def applies(self, base: str, sub: str) -> bool:
        if not self.requests:
            return True
        return base in self.requests or (bool(sub) and f"{base}/{sub}" in self.requests)

    def fits(self, base: str, sub: str, device: Device, driver: str) -> bool:
        """Whether the device would keep the constraint (asked of a copy: at 1.36 giving a
        device back would not undo what taking it narrowed)."""
        return evolve(self, shared=list(self.shared)).add(base, sub, device, driver)

    def shared_value(self) -> AttributeValue | None:
        """DRA-6, DRA-18: what the devices taken share: the first one's value, or with
        list-typed attributes the intersection, as a list (None: no device yet)."""
        if not self.count:
            return None
        if not self.lists or self.count == 1:
            return self.value
        kind, values = self.shared[-1]
        return f"{kind}s", tuple(sorted(values, key=str))

    def add(self, base: str, sub: str, device: Device, driver: str) -> bool:
        """DRA-6, DRA-18: take the device into the constraint if it keeps it; raises
        :class:`UnsupportedValue` where the release stops instead (from 1.38)."""
        value = _read(self, base, sub, device, driver)
        if isinstance(value, bool):
            return value
        if self.lists:
            kind = LIST_KINDS.get(value[0], value[0])
            values = frozenset(value[1] if value[0] in LIST_KINDS else (value[1],))
            if self.count:
                held_kind, held = self.shared[-1]
                if held_kind != kind or not held & values:
                    return False
                values = held & values
            else:
                self.value = value  # shown as is while it is the only device
            if self.restores:
                self.shared.append((kind, values))
            else:
                self.shared[:] = [(kind, values)]
            self.count += 1
            return True
        if self.count == 0:
            # the first device is taken whatever its value, a list too
            self.value, self.count = value, 1
            return True
        if value[0] in LIST_KINDS or self.value is None or value != self.value:
            return False
        self.count += 1
        return True

    def remove(self, base: str, sub: str) -> None:
        if self.applies(base, sub):
            self.count -= 1
            if self.lists and self.restores:
                self.shared.pop()

    def state(self) -> object:
        """What the rest of the search depends on (the memo of DRA-7)."""
        return (self.value, self.count, tuple(self.shared))


@define
class DistinctAttribute:
    """DRA-21: one ``distinctAttribute`` constraint's state: the values of the devices taken,
    each unlike every other (of the same kind; with ``ListTypeAttributes`` (``lists``) each
    device's values disjoint from every other's).

    From 1.37 the values are a stack, one per device.  At 1.36 (``by_request``) the
    allocator keeps one value per request name, the last device's, and a count: a device is
    compared with those values only, and giving one back forgets its request's value while
    the count stays above zero (so the next device may be compared with nothing) (finding 58).
    """

    requests: frozenset[str]
    attribute: str
    lists: bool = False
    by_request: bool = False
    minor: int = 37
    values: list[tuple[str, AttributeValue]] = field(factory=list)
    count: int = 0

    def applies(self, base: str, sub: str) -> bool:
        if not self.requests:
            return True
        return base in self.requests or (bool(sub) and f"{base}/{sub}" in self.requests)

    def fits(self, base: str, sub: str, device: Device, driver: str) -> bool:
        """Whether the device would keep the constraint (asked of a copy)."""
        return evolve(self, values=list(self.values)).add(base, sub, device, driver)

    def _clashes(self, value: AttributeValue) -> bool:
        if self.lists:
            kind = LIST_KINDS.get(value[0], value[0])
            mine = frozenset(value[1] if value[0] in LIST_KINDS else (value[1],))
            for _name, (other_kind, other) in self.values:
                theirs = frozenset(other if other_kind in LIST_KINDS else (other,))
                if LIST_KINDS.get(other_kind, other_kind) == kind and mine & theirs:
                    return True
            return False
        if value[0] in LIST_KINDS:
            # a list without ListTypeAttributes: a value of no known kind, unlike nothing
            return bool(self.values)
        return any(other == value for _name, other in self.values)

    def add(self, base: str, sub: str, device: Device, driver: str) -> bool:
        """DRA-21: take the device into the constraint if its value is unlike every other;
        raises :class:`UnsupportedValue` where the release stops instead (from 1.38, a list
        without ``lists``)."""
        value = _read(self, base, sub, device, driver)
        if isinstance(value, bool):
            return value
        if self.by_request:
            if self.count and self._clashes(value):
                return False
            self.values = [item for item in self.values if item[0] != base] + [(base, value)]
            self.count += 1
            return True
        if self._clashes(value):
            return False
        self.values.append((base, value))
        self.count += 1
        return True

    def remove(self, base: str, sub: str) -> None:
        if not self.applies(base, sub):
            return
        self.count -= 1
        if self.by_request:
            self.values = [item for item in self.values if item[0] != base]
        else:
            self.values.pop()

    def shared_value(self) -> AttributeValue | None:
        """No value is shared: the devices' values differ."""
        return None

    def state(self) -> object:
        """What the rest of the search depends on (the memo of DRA-7)."""
        return (tuple(self.values), self.count)


#: DRA-6, DRA-21: a claim constraint's state during the search.
ConstraintState = MatchAttribute | DistinctAttribute


def _read(state: ConstraintState, base: str, sub: str, device: Device,
          driver: str) -> AttributeValue | bool:
    """DRA-6, DRA-21: the device's value as the constraint compares it; True: the constraint
    does not cover the request; False: the device has no such attribute.  Raises
    :class:`UnsupportedValue` from 1.38 for a list without ``lists`` (DRA-18)."""
    if not state.applies(base, sub):
        return True
    found = lookup_attribute(device, driver, state.attribute)
    if found is None:
        return False
    if state.minor >= 38 and not state.lists and found[0] in LIST_KINDS:
        raise UnsupportedValue(state.attribute)
    return _comparable(found, state.minor)


def constraint_state(constraint: Constraint, lists: bool, minor: int) -> ConstraintState:
    """DRA-6, DRA-18, DRA-21: a constraint's state before any device is taken, as the
    release's allocator keeps it; ``lists``: the ``ListTypeAttributes`` feature."""
    if constraint.match_attribute is None:
        assert constraint.distinct_attribute is not None
        return DistinctAttribute(frozenset(constraint.requests), constraint.distinct_attribute,
                                 lists, by_request=minor <= 36,
                                 minor=minor)
    return MatchAttribute(frozenset(constraint.requests), constraint.match_attribute,
                          lists, restores=minor >= 37, minor=minor)


def lookup_attribute(device: Device, driver: str, name: str) -> AttributeValue | None:
    """DRA-6: a device's attribute by fully qualified name; an attribute listed without a
    domain is found under its driver's domain."""
    if name in device.attributes:
        return device.attributes[name]
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)
