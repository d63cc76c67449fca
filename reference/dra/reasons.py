"""Why the allocator gave each device, or why nothing fits (spec chapter ``dra.md``, DRA-15):
read from the case and the answer, in the terms of DRA-2 to DRA-7.

For a device given to a request, the devices the search walked past before it (DRA-7: pools
in the allocator's order, DRA-2; slices and devices in order) are each given the first reason
that holds: allocated before the search, taken earlier in this search, in a pool that gives
no devices, refused by a selector of the class or the request (DRA-3), or breaking one of the
claim's ``matchAttribute`` constraints against the value the claim's devices share (DRA-6);
a device for which none holds fitted, and was given back because the rest could not be
completed with it.  For an unschedulable answer: a request that has fewer usable devices than
it asks for, else a claim whose constraints no set of its devices keeps, else claims that
compete for the same devices.  These are explanations of the answer, not a trace of the
search: the answer itself is the allocator's (DRA-9).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from fractions import Fraction

from attrs import frozen

from numaspec.dra.allocator import (
    Allocation,
    Features,
    Picked,
    Share,
    allocate,
    untolerated_taint,
)
from numaspec.dra.capacity import Consumed, Shortfall, assess, fits, keyed
from numaspec.dra.constraints import (
    ConstraintState,
    DistinctAttribute,
    MatchAttribute,
    UnsupportedValue,
    constraint_state,
    lookup_attribute,
)
from numaspec.dra.objects import (
    AttributeValue,
    Claim,
    Device,
    DeviceClass,
    Request,
    Taint,
)
from numaspec.dra.pools import Pool, consumption, counters_left, over
from numaspec.dra.selectors import SelectorError, device_matches
from numaspec.node.fit import format_quantity

__all__ = ["Node", "Passed", "PickWhy", "why_picked", "why_unschedulable"]

#: How many passed-over devices a pick lists before it counts the rest.
SHOWN = 6


@frozen
class Passed:
    """A device the search walked past, and why."""

    device: str
    reason: str


@frozen
class Node:
    """What the reasons read: the node's pools in the order the allocator searches them
    (DRA-2, DRA-8), its classes and the devices in use, the release and the features."""

    pools: tuple[Pool, ...]
    classes: Mapping[str, DeviceClass]
    allocated: frozenset[str]
    minor: int
    features: Features
    #: DRA-20: the allocated shares
    shares: tuple[Share, ...] = ()


@frozen
class PickWhy:
    """DRA-15: one device of a claim's result, and the devices walked past before it."""

    claim: str
    pick: Picked
    passed: tuple[Passed, ...]
    more: int  # passed-over devices not listed (past SHOWN)
    shares: tuple[str, ...]  # the constraints it keeps: "ATTRIBUTE = VALUE"
    other_class: int  # devices passed over because the request's class refuses them


def _walk(pools: Sequence[Pool]) -> Iterator[tuple[Pool, str, Device]]:
    for pool in pools:
        for slice_ in pool.slices:
            for device in slice_.devices:
                yield pool, slice_.driver, device


def _value(value: AttributeValue | None) -> str:
    if value is None:
        return "none"
    if isinstance(value[1], tuple):  # DRA-18: a list-typed attribute
        return "[" + ", ".join(_scalar(v) for v in value[1]) + "]"
    return _scalar(value[1])


def _scalar(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _request(claim: Claim, name: str) -> Request | None:
    base, _, sub = name.partition("/")
    for request in claim.requests:
        if request.name == base:
            if not sub:
                return request
            return next((s for s in request.subrequests if s.name == sub), None)
    return None


#: The reason of a device the request's class does not take: counted, not listed.
_OTHER_CLASS = "its class does not take it"


def _selector_reason(node: Node, request: Request, device: Device, driver: str,
                     claim: Claim) -> str | None:
    """DRA-3: why a selector refuses the device (:data:`_OTHER_CLASS` for the class's
    selectors), or None."""
    device_class = node.classes.get(request.class_name)
    owners = ((f"class {request.class_name}", device_class.selectors if device_class else ()),
              (f"claim {claim.key}", request.selectors))
    for owner, selectors in owners:
        for i, expression in enumerate(selectors):
            try:
                if not device_matches(expression, device, driver, node.minor,
                                      lists=node.features.list_type_attributes):
                    if owner.startswith("class "):
                        return _OTHER_CLASS
                    return f"{owner}'s selector #{i} is false for it ({expression})"
            except SelectorError as exc:
                return f"{owner}'s selector #{i} fails on it: {exc}"
    return None


def _states(claim: Claim, picks: Sequence[Picked], node: Node,
            devices: Mapping[str, tuple[str, Device]]) -> list[ConstraintState]:
    """DRA-6, DRA-18: the claim's constraints as the allocator holds them once ``picks`` are
    taken (its own constraint state, so a reason never judges a constraint otherwise)."""
    states = [constraint_state(c, node.features.list_type_attributes, node.minor)
              for c in claim.constraints]
    for pick in picks:
        base, _, sub = pick.request.partition("/")
        driver, device = devices[pick.id]
        for state in states:
            state.add(base, sub, device, driver)
    return states


def why_picked(node: Node, claims: Sequence[Claim], allocation: Allocation) -> list[PickWhy]:
    """DRA-15: for every device of an allocated answer, the devices walked past before it
    (in the answer's order: claims in order, each claim's devices as taken)."""
    pools = node.pools
    walk = list(_walk(pools))
    devices = {f"{driver}/{pool.name}/{device.name}": (driver, device)
               for pool, driver, device in walk}
    taken_at: dict[str, tuple[int, str]] = {}
    order = [(ci, pick) for ci, picks in enumerate(allocation.claims) for pick in picks]
    for index, (ci, pick) in enumerate(order):
        taken_at.setdefault(pick.id, (index, f"{claims[ci].key} {pick.request}"))
    whys = []
    for index, (ci, pick) in enumerate(order):
        claim = claims[ci]
        request = _request(claim, pick.request)
        base, _, sub = pick.request.partition("/")
        shares = tuple(f"{state.attribute} = {_value(state.shared_value())}"
                       for state in _states(claim, allocation.claims[ci], node, devices)
                       if isinstance(state, MatchAttribute) and state.applies(base, sub))
        passed: list[Passed] = []
        other_class = 0
        # DRA-6: what the constraints held when this device was taken: the values of the
        # claim's devices taken before it
        before = allocation.claims[ci][:allocation.claims[ci].index(pick)]
        at = _Pick(claim, pick, request, tuple(_states(claim, before, node, devices)), index,
                   tuple(p for _, p in order[:index]))
        for walked in walk:
            pool, driver, device = walked
            device_id = f"{driver}/{pool.name}/{device.name}"
            if device_id == pick.id:
                break
            reason = _passed_reason(node, at, taken_at, walked)
            if reason is _OTHER_CLASS:
                other_class += 1
            elif reason is not None:
                passed.append(Passed(device_id, reason))
        for pool in pools:
            if pool.incomplete or pool.invalid:
                state = "incomplete" if pool.incomplete else "invalid"
                passed.insert(0, Passed(pool.id, f"the pool is {state} and gives no devices"))
        whys.append(PickWhy(claim.key, pick, tuple(passed[:SHOWN]),
                            max(0, len(passed) - SHOWN), shares, other_class))
    return whys


@frozen
class _Pick:
    """One pick being explained: its claim, request, the constraints' values and its place
    among every pick of the answer."""

    claim: Claim
    pick: Picked
    request: Request | None
    states: tuple[ConstraintState, ...]
    index: int
    #: the picks of the answer before this one
    earlier: tuple[Picked, ...] = ()


def _passed_reason(node: Node, at: _Pick, taken_at: dict[str, tuple[int, str]],
                   walked: tuple[Pool, str, Device]) -> str | None:
    """The first reason that holds for walking past a device to ``at.pick`` (None: it is
    one of the same request's own devices, taken earlier)."""
    claim, pick, request, index = at.claim, at.pick, at.request, at.index
    pool, driver, device = walked
    device_id = f"{driver}/{pool.name}/{device.name}"
    refused = None if request is None else _selector_reason(node, request, device, driver,
                                                            claim)
    if refused is _OTHER_CLASS:
        return refused
    admin = request is not None and bool(request.admin_access)
    if device_id in node.allocated and not admin:
        return "allocated already"
    shared = node.features.consumable and device.multiple
    taken = taken_at.get(device_id)
    if taken is not None and taken[0] < index:
        if taken[1] == f"{claim.key} {pick.request}":
            return None
        if not shared and (not admin or taken[1].startswith(f"{claim.key} ")):
            return f"taken for {taken[1]}"
    if (node.minor >= 38 and not shared and not admin
            and _held(node, at.earlier, device_id, driver) is not None):
        return ("it has shares and does not allow multiple allocations, which from 1.38 "
                "keeps it out (DRA-20)")
    if refused is not None:
        return refused
    if node.features.consumable and request is not None:
        held = _held(node, at.earlier, device_id, driver) or []
        room = _shortfall(request.capacity, device, driver, node.minor, held)
        if room is not None:
            return f"{room} (DRA-20)"
    short = _counters_short(node, at, taken_at, pool, device)
    if short is not None:
        return short
    taint = _untolerated(node, device, request)
    if taint is not None:
        return (f"its taint {taint.key}={taint.value}:{taint.effect} is not tolerated by the "
                "request (DRA-16)")
    open_attributes = []
    base, _, sub = pick.request.partition("/")
    for state in at.states:
        if not state.applies(base, sub):
            continue
        kind = "matchAttribute" if isinstance(state, MatchAttribute) else "distinctAttribute"
        own = lookup_attribute(device, driver, state.attribute)
        if own is None:
            return f"it has no {state.attribute} ({kind})"
        try:
            fits = state.fits(base, sub, device, driver)
        except UnsupportedValue:
            return (f"its {state.attribute} is a list, which {kind} cannot compare "
                    "without list-typed attributes (DRA-18)")
        if isinstance(state, DistinctAttribute):
            if not fits:
                return (f"its {state.attribute} is {_value(own)}, which a device of the claim "
                        "taken before has (distinctAttribute, DRA-21)")
        elif not state.count:
            open_attributes.append(f"{state.attribute} {_value(own)}")
        elif not fits:
            return (f"its {state.attribute} is {_value(own)}, the claim's devices taken "
                    f"before share {_value(state.shared_value())}")
    with_it = f" (with its {', '.join(open_attributes)})" if open_attributes else ""
    return f"it fits, but the claims could not be completed with it{with_it}"


def _held(node: Node, earlier: Sequence[Picked], device_id: str, driver: str
          ) -> list[Consumed] | None:
    """DRA-20: what the device's shares consume, allocated and taken in ``earlier`` (None:
    it has none)."""
    held: list[Consumed] | None = None
    for shared_id, consumed in node.shares:
        if shared_id == device_id:
            held = held or []
            if consumed is not None:
                held.append(keyed(consumed.items(), driver, node.minor))
    for pick in earlier:
        if pick.id == device_id and pick.shared:
            held = held or []
            held.append(keyed(pick.consumed or (), driver, node.minor))
    return held


def _counters_short(node: Node, at: _Pick, taken_at: dict[str, tuple[int, str]], pool: Pool,
                    device: Device) -> str | None:
    """DRA-19: why the device's counters keep it out, beside what is allocated and what the
    answer took before ``at`` (None: they do not)."""
    if not device.consumes:
        return None
    if not node.features.partitionable:
        return "it consumes counters, which the allocator reads only with PartitionableDevices"\
               " (DRA-19)"
    taken = [other for s in pool.slices for other in s.devices
             if (t := taken_at.get(f"{pool.id}/{other.name}")) is not None and t[0] < at.index]
    short = over(counters_left(pool, node.allocated), consumption([*taken, device]))
    if not short:
        return None
    return (f"its pool's counters {', '.join(short)} have no room for it beside what is "
            "allocated and taken before it (DRA-19)")


def _untolerated(node: Node, device: Device, request: Request | None) -> Taint | None:
    """DRA-16: the first taint of the device that counts and that the request does not
    tolerate."""
    if request is None or not node.features.device_taints:
        return None
    return untolerated_taint(device, request, minor=node.minor)


def why_unschedulable(node: Node, claims: Sequence[Claim]) -> list[str]:
    """DRA-15: why nothing fits: a request short of usable devices, a claim whose constraints
    cannot hold, or claims competing for the same devices (first that holds, per claim)."""
    pools = node.pools
    usable = [(pool, driver, device) for pool, driver, device in _walk(pools)
              if not pool.incomplete and not pool.invalid]
    reasons = []
    for claim in claims:
        short = []
        for request in claim.requests:
            options = request.subrequests or (request,)
            counts = []
            for option in options:
                matched = [(f"{driver}/{pool.name}/{device.name}", driver, device)
                           for pool, driver, device in usable
                           if _selector_reason(node, option, device, driver, claim) is None]
                matching = [d for d, _, _ in matched]
                # DRA-20: a device without room for the capacity asked, beside its allocated
                # shares, is no more free than one in use
                free = [d for d, driver, device in matched if d not in node.allocated and (
                    not node.features.consumable or fits(
                        option.capacity, device, driver, node.minor,
                        _held(node, (), d, driver) or []) is not None)]
                room = (" with room for the capacity it asks (DRA-20)"
                        if node.features.consumable and option.capacity else "")
                need = len(matching) if option.mode == "All" else option.count
                if option.mode == "All" and len(free) < len(matching):
                    counts.append(f"{option.name}: asks for all {len(matching)} devices its "
                                  f"selectors match, {len(matching) - len(free)} of them in use"
                                  f"{' or without room (DRA-20)' if room else ''}")
                elif len(free) < need or need == 0:
                    counts.append(f"{option.name}: asks for {need} device(s) of class "
                                  f"{option.class_name}; {len(matching)} on the node match, "
                                  f"{len(free)} free{room}")
                else:
                    counts = []
                    break
            if counts:
                short.append(f"request {'; '.join(counts)}")
        if short:
            reasons.append(f"claim {claim.key}: " + "; ".join(short))
            continue
        alone = allocate((claim,), pools, node.classes, node.allocated,
                         features=node.features, minor=node.minor, shares=node.shares)
        if alone.outcome == "unschedulable" and claim.constraints:
            match = [c.match_attribute for c in claim.constraints if c.match_attribute]
            distinct = [c.distinct_attribute for c in claim.constraints
                        if c.distinct_attribute]
            kept = [f"shares {', '.join(match)} (matchAttribute)"] if match else []
            kept += [f"differs in {', '.join(distinct)} (distinctAttribute, DRA-21)"
                     ] if distinct else []
            reasons.append(f"claim {claim.key}: enough devices match each request, but no set "
                           f"of them {' and '.join(kept)}")
    if not reasons and len(claims) > 1:
        reasons.append("each claim fits on its own, but not together: they need the same "
                       "devices")
    consumers = [f"{driver}/{pool.name}/{device.name}" for pool, driver, device in usable
                 if device.consumes]
    if consumers and not node.features.partitionable:
        reasons.append(f"{len(consumers)} device(s) consume counters ({consumers[0]}, ...), "
                       "which the allocator reads only with PartitionableDevices (gate "
                       "DRAPartitionableDevices): it never gives them (DRA-19)")
    if any(pool.invalid for pool in pools):
        reasons.append("the node has invalid pools (a device name listed twice, or counters "
                       "that a device consumes and its pool does not have), which give no "
                       "devices")
    if any(pool.incomplete for pool in pools):
        reasons.append("the node has incomplete pools (not every slice published), which give "
                       "no devices")
    if consumers and node.features.partitionable:
        return reasons or ["no assignment of the node's devices keeps every request and "
                           "constraint within the counters their pools share (DRA-19)"]
    return reasons or ["no assignment of the node's devices keeps every request and constraint"]


def _shortfall(requests: Mapping[str, Fraction] | None, device: Device, driver: str,
               minor: int, held: Iterable[Consumed]) -> str | None:
    """DRA-20: why :func:`assess` passes the device over, in words (None: it does not)."""
    found = assess(requests, device, driver, minor, held)
    if not isinstance(found, Shortfall):
        return None
    if found.missing:
        spelled = (" (until 1.38 a name matches only as the slice writes it)"
                   if minor < 38 and "/" in found.name else "")
        return f"it has no capacity {found.name}{spelled}"
    if found.refused:
        asked = _amount(found.asked) if found.asked is not None else "none"
        return (f"its {found.name} policy does not allow {_amount(found.amount)} (asked "
                f"{asked})")
    return (f"its {found.name} has {_amount(found.value - found.used)} of "
            f"{_amount(found.value)} left beside its shares; the request consumes "
            f"{_amount(found.amount)}")


def _amount(value: Fraction) -> str:
    return format_quantity(value, binary=value.denominator == 1 and value >= 1024
                           and value % 1024 == 0)
