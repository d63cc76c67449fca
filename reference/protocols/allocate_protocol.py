"""The ``allocate`` operation (spec chapter ``dra.md``, DRA-10): a node's ResourceSlices,
DeviceClasses, allocated devices and ResourceClaims in, the structured allocator's answer out.

A case::

    {"release": "1.37", "features": ["PrioritizedList"], "variant": "stable",
     "node": {"name": "node-a", "labels": {...}},
     "slices": [ResourceSlice, ...], "classes": [DeviceClass, ...],
     "allocated": ["driver/pool/device", ...],
     "allocatedShares": [{"device": "driver/pool/device", "consumedCapacity": {...}}, ...],
     "claims": [ResourceClaim, ...]}

The objects are their ``resource.k8s.io/v1`` JSON; ``features`` are the allocator's (the
fields of its ``Features``), ``variant`` (optional, from 1.35) forces one as
``EnableAllocators`` does, else the features choose it (DRA-8); ``allocatedShares`` (from 1.36)
are allocated shares of devices that allow multiple allocations, the results with a share ID
and no admin access, each with the capacity it consumes as its result records it (DRA-20).
The answer is ``{"outcome": "allocated", "claims": [{"devices": [{"request", "driver",
"pool", "device"}, ...]}, ...]}`` (a share with ``"shared": true`` and its
``consumedCapacity``, each amount an exact rational such as ``"2147483648"`` or ``"3/2"``),
``{"outcome": "unschedulable"}`` (with a ``message`` when invalid pools were seen) or
``{"outcome": "error", "message": ...}``, each with the ``variant`` that answered.  The stable
variant (and, until 1.35, every one) searches a node's pools in no defined order (DRA-2):
:func:`allocate_answers` gives the answer under each order, and an implementation's answer is
right when it is one of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

from attrs import frozen

from numaspec.dra.allocator import Allocation, Features, Picked, Share, allocate
from numaspec.dra.objects import (
    LIST_KINDS,
    Claim,
    DeviceClass,
    NodeInfo,
    Request,
    Slice,
    capacity_amounts,
    decode_claim,
    decode_class,
    decode_node,
    decode_slice,
)
from numaspec.dra.pools import Gathering, Pool, gather_pools, pool_ids
from numaspec.dra.variants import FEATURES, choose_variant, sorts_pools
from numaspec.errors import (
    InvalidFieldError,
    LimitExceededError,
    NotModelledError,
    UnsupportedVersionError,
)
from numaspec.strict_json import expect

__all__ = [
    "ALLOCATE_RELEASES",
    "AllocateCase",
    "allocate_answers",
    "allocate_once",
    "decode_allocate_case",
    "encode_allocation",
    "reference_allocate",
    "claims_scope",
    "decode_share",
    "decode_shares",
    "release_scope",
    "searched_pools",
]

#: DRA-8: the releases whose allocator the reference models (module minor = Kubernetes minor).
ALLOCATE_RELEASES = ("1.33", "1.34", "1.35", "1.36", "1.37", "1.38")
#: Past this many pools, the orders an answer is judged under are not all tried.
MAX_POOL_ORDERS = 720


@frozen
class AllocateCase:
    """A decoded ``allocate`` case; ``forced``: the variant the case forces, if any."""

    minor: int
    features: frozenset[str]
    node: NodeInfo
    slices: tuple[Slice, ...]
    classes: dict[str, DeviceClass]
    allocated: frozenset[str]
    claims: tuple[Claim, ...]
    forced: str | None = None
    #: DRA-20: the allocated shares
    shares: tuple[Share, ...] = ()

    @property
    def variant(self) -> str:
        """DRA-8: the allocator that answers the case."""
        return choose_variant(self.minor, self.features, self.forced)


def _list(body: dict[str, Any], key: str) -> list[Any]:
    value = body.get(key, [])
    expect(value, list, "an array", key)
    assert isinstance(value, list)
    return value


def release_scope(minor: int, slices: Sequence[Slice],
                  wheres: Sequence[str] | None = None) -> None:
    """DRA-18, DRA-19: what a release's slices cannot hold (list-typed attributes before
    1.36) and what numaspec does not model at the release (shared counters before 1.36), as a
    typed error naming the field; ``wheres``: where each slice is (default ``slices[i]``)."""
    if minor >= 36:
        return
    for i, slice_ in enumerate(slices):
        at = wheres[i] if wheres is not None else f"slices[{i}]"
        if slice_.counter_sets:
            raise NotModelledError(_COUNTERS, where=f"{at}.spec.sharedCounters")
        for j, device in enumerate(slice_.devices):
            if device.consumes:
                raise NotModelledError(_COUNTERS,
                                       where=f"{at}.spec.devices[{j}].consumesCounters")
            if device.multiple:
                raise NotModelledError(_CAPACITY, where=f"{at}.spec.devices[{j}]."
                                                        "allowMultipleAllocations")
            for name, (kind, _value) in device.attributes.items():
                if kind in LIST_KINDS:
                    raise InvalidFieldError(f"a list-typed attribute ({kind}) needs 1.36 or "
                                            "later",
                                            where=f"{at}.spec.devices[{j}].attributes.{name}")


def claims_scope(minor: int, claims: Sequence[Claim],
                 wheres: Sequence[str] | None = None) -> None:
    """DRA-20, DRA-21: what numaspec does not model in a release's claims (capacity requests
    and ``distinctAttribute`` before 1.36), as a typed error naming the field; ``wheres``:
    where each claim is (default ``claims[i]``)."""
    if minor >= 36:
        return
    for i, claim in enumerate(claims):
        at = f"{wheres[i] if wheres is not None else f'claims[{i}]'}.spec.devices"
        for j, constraint in enumerate(claim.constraints):
            if constraint.distinct_attribute is not None:
                raise NotModelledError("distinctAttribute before 1.36 is outside the "
                                       "chapter's scope (DRA-21)",
                                       where=f"{at}.constraints[{j}].distinctAttribute")
        for j, request in enumerate(claim.requests):
            subs: Sequence[tuple[str, Request]] = (
                [(f"firstAvailable[{k}]", sub) for k, sub in enumerate(request.subrequests)]
                or [("exactly", request)])
            for path, one in subs:
                if one.capacity is not None:
                    raise NotModelledError(_CAPACITY,
                                           where=f"{at}.requests[{j}].{path}.capacity")


def decode_shares(value: object, where: str = "allocatedShares") -> tuple[Share, ...]:
    """DRA-20: allocated shares (``[{"device": "driver/pool/device", "consumedCapacity":
    {...}}]``), or a typed error naming the field."""
    expect(value, list, "an array", where)
    assert isinstance(value, list)
    out = []
    for i, item in enumerate(value):
        at = f"{where}[{i}]"
        expect(item, dict, "an object with device and consumedCapacity", at)
        assert isinstance(item, dict)
        for key in item:
            if key not in ("device", "consumedCapacity"):
                raise InvalidFieldError("unknown field (known: consumedCapacity, device)",
                                        where=f"{at}.{key}")
        device = item.get("device")
        expect(device, str, "a device id driver/pool/device", f"{at}.device")
        assert isinstance(device, str)
        if device.count("/") < 2:
            raise InvalidFieldError(f"{device!r} is not driver/pool/device",
                                    where=f"{at}.device")
        out.append(decode_share(device, item.get("consumedCapacity"), at))
    return tuple(out)


def decode_share(device: str, consumed: object, where: str) -> Share:
    """DRA-20: one allocated share of ``device`` and what it consumes (``where``: the object
    holding ``consumedCapacity``); an empty ``consumedCapacity`` is none, as the API server
    drops it."""
    consumed = consumed or {}
    expect(consumed, dict, "an object of quantities", f"{where}.consumedCapacity")
    assert isinstance(consumed, dict)
    amounts = capacity_amounts(consumed, f"{where}.consumedCapacity", "consumed")
    return device, amounts or None


_CAPACITY = "consumable capacity before 1.36 is outside the chapter's scope (DRA-20)"

#: DRA-19: before 1.36 the API and the allocators read counters otherwise (1.33 and 1.34:
#: counter sets in the devices' own slice; 1.35: by pool name alone).
_COUNTERS = ("shared counters (partitionable devices) before 1.36 are outside the chapter's "
             "scope (DRA-19)")


def decode_allocate_case(case: object) -> AllocateCase:
    """DRA-10: a case, or a typed error naming the field."""
    expect(case, dict, "an object", "case")
    assert isinstance(case, dict)
    known = {"release", "features", "variant", "node", "slices", "classes", "allocated",
             "allocatedShares", "claims"}
    for key in case:
        if key not in known:
            raise InvalidFieldError(f"unknown field (known: {', '.join(sorted(known))})",
                                    where=key)
    release = case.get("release")
    expect(release, str, "a Kubernetes minor such as \"1.37\"", "release")
    if release not in ALLOCATE_RELEASES:
        raise UnsupportedVersionError(f"the allocator is modelled for "
                                      f"{', '.join(ALLOCATE_RELEASES)}, not {release!r}",
                                      where="release")
    assert isinstance(release, str)
    minor = int(release.split(".")[1])
    names = FEATURES[minor]
    features = _list(case, "features")
    for i, name in enumerate(features):
        expect(name, str, "a feature name", f"features[{i}]")
        if name not in names:
            raise InvalidFieldError(f"the {release} allocator has no feature {name!r} "
                                    f"(it has: {', '.join(sorted(names))})",
                                    where=f"features[{i}]")
    forced = case.get("variant")
    if forced is not None:
        expect(forced, str, "a variant: stable, incubating or experimental", "variant")
        assert isinstance(forced, str)
    choose_variant(minor, frozenset(features), forced)
    slices = tuple(decode_slice(s, f"slices[{i}]") for i, s in enumerate(_list(case,
                                                                                 "slices")))
    release_scope(minor, slices)
    classes: dict[str, DeviceClass] = {}
    for i, c in enumerate(_list(case, "classes")):
        device_class = decode_class(c, f"classes[{i}]")
        if device_class.name in classes:
            raise InvalidFieldError(f"class {device_class.name!r} listed twice",
                                    where=f"classes[{i}].metadata.name")
        classes[device_class.name] = device_class
    allocated = _list(case, "allocated")
    for i, item in enumerate(allocated):
        expect(item, str, "a device id driver/pool/device", f"allocated[{i}]")
    shares = decode_shares(case.get("allocatedShares") or [])
    if shares and minor <= 35:
        raise NotModelledError(_CAPACITY, where="allocatedShares")
    claims = tuple(decode_claim(c, f"claims[{i}]") for i, c in enumerate(_list(case,
                                                                               "claims")))
    claims_scope(minor, claims)
    return AllocateCase(minor, frozenset(features), decode_node(case.get("node")), slices,
                        classes, frozenset(allocated), claims, forced, shares)


def _answer(case: AllocateCase, pools: list[Pool], variant: str) -> Allocation:
    return allocate(case.claims, pools, case.classes, case.allocated,
                    features=Features.named(case.features), minor=case.minor,
                    variant=variant, shares=case.shares)


def _gathering(case: AllocateCase, variant: str) -> Gathering:
    return Gathering.of(case.minor, variant, "PartitionableDevices" in case.features)


def searched_pools(case: AllocateCase, variant: str | None = None) -> list[Pool]:
    """DRA-2, DRA-8: the node's pools in the order ``variant`` (default: the one that
    answers the case) searches them: by name where it sorts them, else as listed (one of the
    orders it may take)."""
    chosen = case.variant if variant is None else variant
    gathering = _gathering(case, chosen)
    if sorts_pools(case.minor, chosen):
        return gather_pools(case.slices, case.node,
                            sorted(pool_ids(case.slices, case.node, gathering)),
                            minor=case.minor, slices_by_name=True, gathering=gathering)
    return gather_pools(case.slices, case.node, minor=case.minor, gathering=gathering)


def allocate_answers(case: AllocateCase, variant: str | None = None) -> Iterator[Allocation]:
    """DRA-2, DRA-8: the answers ``variant`` (default: the one that answers the case) may
    give: under each order of the node's pools (first-listed order first), or, for the
    incubating and experimental variants from 1.36 and every variant from 1.38, the one under
    pools sorted by driver and name and a pool's slices by name."""
    chosen = case.variant if variant is None else variant
    if sorts_pools(case.minor, chosen):
        yield _answer(case, searched_pools(case, chosen), chosen)
        return
    gathering = _gathering(case, chosen)
    ids = pool_ids(case.slices, case.node, gathering)
    for count, order in enumerate(itertools.permutations(ids)):
        if count >= MAX_POOL_ORDERS:
            raise LimitExceededError(f"more than {MAX_POOL_ORDERS} orders of the node's "
                                     f"{len(ids)} pools", where="slices")
        yield _answer(case, gather_pools(case.slices, case.node, list(order),
                                         minor=case.minor, gathering=gathering), chosen)


def _pick(pick: Picked) -> dict[str, Any]:
    body: dict[str, Any] = {"request": pick.request, "driver": pick.driver, "pool": pick.pool,
                            "device": pick.device}
    if pick.admin_access:
        body["adminAccess"] = True  # DRA-17
    if pick.shared:
        body["shared"] = True  # DRA-20
    if pick.consumed is not None:
        body["consumedCapacity"] = {name: str(amount) for name, amount in pick.consumed}
    return body


def encode_allocation(answer: Allocation, variant: str | None = None) -> dict[str, Any]:
    """DRA-10: an answer as the protocol writes it (with ``variant`` when given)."""
    body: dict[str, Any] = {"outcome": answer.outcome}
    if answer.outcome == "allocated":
        body["claims"] = [{"devices": [_pick(p) for p in picks]} for picks in answer.claims]
    elif answer.message:
        body["message"] = answer.message
    if variant is not None:
        body["variant"] = variant
    return body


def allocate_once(case: AllocateCase) -> Allocation:
    """DRA-10: the reference's allocation by the variant that answers the case: pools and
    slices sorted by name where it sorts them, else the node's pools in first-listed order
    (one of the orders it may take, DRA-2)."""
    return next(allocate_answers(case))


def reference_allocate(case: object) -> dict[str, Any]:
    """DRA-10: the reference's answer (:func:`allocate_once`), naming the variant."""
    decoded = decode_allocate_case(case)
    return encode_allocation(allocate_once(decoded), decoded.variant)
