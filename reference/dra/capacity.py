"""DRA-20: consumable capacity, from 1.36: what a share of a device consumes, and whether it
fits beside the device's other shares.

With the allocator's ``ConsumableCapacity`` feature, every device a request could take is
checked against its capacities: a request that names a capacity the device lacks passes the
device over; each of the device's capacities is consumed by the amount the request asks,
rounded up by the capacity's request policy, or, where it asks none, by the policy's default
or else the whole capacity; an amount the policy does not allow (past ``validRange.max``,
above every ``validValues``) passes the device over, and so does a sum past the capacity,
counting what allocated shares and shares taken in this allocation consume.  Only a device
that allows multiple allocations records what it consumed (a share); others are only
filtered.

How names are matched depends on the release: 1.36 and 1.37 compare names as written (a
request's ``gpu.example.com/memory`` does not name a slice's ``memory``); from 1.38 a name
without a domain is in the device's driver's, on both sides.

Upstream: ``structured/internal/{incubating,experimental,stable}/consumable_capacity.go``
(``CmpRequestOverCapacity`` / ``cmpRequestOverCapacity``, ``calculateConsumedCapacity``,
``roundUpRange``, ``roundUpValidValues``, ``violatesPolicy``,
``GetConsumedCapacityFromRequest``, ``capacityNameForStatus`` from 1.38).  The amounts this
models (whole ``validRange`` bounds, nothing finer than a milli-unit, nothing past 10^15,
:func:`numaspec.dra.objects.capacity_quantity`) are where the releases' integer and
milli-value arithmetic are exact and agree, so exact fractions stand for both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from math import ceil

from attrs import frozen

from numaspec.dra.objects import Capacity, Device

__all__ = ["Consumed", "Shortfall", "assess", "capacity_key", "consumed_amount", "fits",
           "for_status", "keyed", "total", "violates"]

#: DRA-20: capacity consumed, by name as the release keys it (:func:`capacity_key`).
Consumed = dict[str, Fraction]


def capacity_key(name: str, driver: str, minor: int) -> str:
    """DRA-20: the name a release matches a capacity by: as written until 1.37; from 1.38
    fully qualified, a name without a domain in the driver's."""
    if minor < 38 or "/" in name:
        return name
    return f"{driver}/{name}"


def consumed_amount(requested: Fraction | None, capacity: Capacity) -> Fraction:
    """DRA-20: what a share consumes of one capacity: the request rounded up by the policy
    (below ``min``: ``min``; with a ``step``: the next ``min + k*step``; with ``validValues``:
    the first value at least the request, else the request); no request: the policy's default,
    else the whole capacity."""
    policy = capacity.policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return capacity.value
    if policy is None:
        return requested
    if policy.valid_range is not None:
        span = policy.valid_range
        if requested < span.min:
            return span.min
        if span.step is None:
            return requested
        return span.min + ceil((requested - span.min) / span.step) * span.step
    if policy.valid_values is not None:
        return next((v for v in policy.valid_values if requested <= v), requested)
    return requested


def violates(amount: Fraction, capacity: Capacity) -> bool:
    """DRA-20: whether the policy refuses the amount: past ``validRange.max`` or off its
    steps, or none of ``validValues`` (the default is always allowed)."""
    policy = capacity.policy
    if policy is None or (policy.default is not None and amount == policy.default):
        return False
    if policy.valid_range is not None:
        span = policy.valid_range
        if span.max is not None and amount > span.max:
            return True
        return span.step is not None and (amount - span.min) % span.step != 0
    if policy.valid_values is not None:
        return amount not in policy.valid_values
    return False


@frozen
class Shortfall:
    """DRA-20: why a device is passed over: it lacks the capacity ``name`` the request asks
    (``missing``, the name as the request writes it), or the capacity ``name`` (as the slice
    writes it) would consume ``amount``, which its policy refuses (``refused``; ``asked``: the
    request's ask, None: none) or which beside what its shares use (``used``) is past its
    ``value``."""

    name: str
    missing: bool = False
    refused: bool = False
    amount: Fraction = Fraction(0)
    asked: Fraction | None = None
    used: Fraction = Fraction(0)
    value: Fraction = Fraction(0)


def assess(requests: Mapping[str, Fraction] | None, device: Device, driver: str, minor: int,
           held: Iterable[Consumed]) -> Consumed | Shortfall:
    """DRA-20: what the request would consume of each of the device's capacities, by
    :func:`capacity_key`, or the first reason the device is passed over: it lacks a capacity
    the request names, the policy refuses an amount, or an amount with what ``held``
    (allocated shares, shares taken in this allocation) consumes is past the capacity."""
    capacities = {capacity_key(name, driver, minor): (name, cap)
                  for name, cap in device.capacity.items()}
    asked: Consumed = {}
    for name, amount in (requests or {}).items():
        key = capacity_key(name, driver, minor)
        if key not in capacities:
            return Shortfall(name, missing=True)
        asked[key] = amount
    consumed = {key: consumed_amount(asked.get(key), cap)
                for key, (_name, cap) in capacities.items()}
    before = total(held)
    for key, (name, cap) in capacities.items():
        amount = consumed[key]
        if violates(amount, cap):
            return Shortfall(name, refused=True, amount=amount, asked=asked.get(key))
        used = before.get(key, Fraction(0))
        if used + amount > cap.value:
            return Shortfall(name, amount=amount, used=used, value=cap.value)
    return consumed


def fits(requests: Mapping[str, Fraction] | None, device: Device, driver: str, minor: int,
         held: Iterable[Consumed]) -> Consumed | None:
    """DRA-20: :func:`assess`'s consumption, or None when the device is passed over."""
    found = assess(requests, device, driver, minor, held)
    return None if isinstance(found, Shortfall) else found


def keyed(amounts: Iterable[tuple[str, Fraction]], driver: str, minor: int) -> Consumed:
    """DRA-20: amounts named as a result or a request writes them, by :func:`capacity_key`."""
    return {capacity_key(name, driver, minor): amount for name, amount in amounts}


def total(held: Iterable[Consumed]) -> Consumed:
    """DRA-20: what shares consume together, per capacity."""
    out: Consumed = {}
    for consumed in held:
        for key, amount in consumed.items():
            out[key] = out.get(key, Fraction(0)) + amount
    return out


def for_status(consumed: Consumed, device: Device, driver: str,
               minor: int) -> dict[str, Fraction]:
    """DRA-20: a share's consumed capacity as its result records it: every capacity of the
    device, named as the slice names it (1.38's ``capacityNameForStatus`` keeps the slice's
    spelling too)."""
    return {name: consumed[capacity_key(name, driver, minor)] for name in device.capacity}

