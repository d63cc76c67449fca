"""The ``allocate`` operation (spec chapter ``dra.md``, DRA-10): a node's ResourceSlices,
DeviceClasses, allocated devices and ResourceClaims in, the structured allocator's answer out.

A case::

    {"release": "1.37", "features": ["PrioritizedList"],
     "node": {"name": "node-a", "labels": {...}},
     "slices": [ResourceSlice, ...], "classes": [DeviceClass, ...],
     "allocated": ["driver/pool/device", ...], "claims": [ResourceClaim, ...]}

The objects are their ``resource.k8s.io/v1`` JSON.  The answer is ``{"outcome":
"allocated", "claims": [{"devices": [{"request", "driver", "pool", "device"}, ...]}, ...]}``,
``{"outcome": "unschedulable"}`` (with a ``message`` when invalid pools were seen) or
``{"outcome": "error", "message": ...}``.  Upstream searches a node's pools in no defined order
(DRA-2): :func:`allocate_answers` gives the answer under each order, and an implementation's
answer is right when it is one of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from attrs import frozen

from numaspec.dra.allocator import Allocation, Features, allocate
from numaspec.dra.objects import (
    Claim,
    DeviceClass,
    NodeInfo,
    Slice,
    decode_claim,
    decode_class,
    decode_node,
    decode_slice,
)
from numaspec.dra.pools import gather_pools, pool_ids
from numaspec.errors import InvalidFieldError, LimitExceededError, UnsupportedVersionError
from numaspec.strict_json import expect

__all__ = [
    "ALLOCATE_RELEASES",
    "FEATURES",
    "AllocateCase",
    "allocate_answers",
    "allocate_once",
    "decode_allocate_case",
    "encode_allocation",
    "reference_allocate",
]

#: DRA-8: the releases whose allocator the reference models (module minor = Kubernetes minor).
ALLOCATE_RELEASES = ("1.33", "1.34", "1.35", "1.36", "1.37")
_COMMON = frozenset({"AdminAccess", "DeviceTaints", "PartitionableDevices", "PrioritizedList"})
#: DRA-8: the allocator's feature names per release (the fields of its ``Features`` struct).
#: Only PrioritizedList changes a pick within the chapter's scope; a case may enable the
#: others, which change picks only for inputs DRA-0 leaves out.
FEATURES: dict[int, frozenset[str]] = {
    33: _COMMON,
    34: _COMMON | {"ConsumableCapacity", "DeviceBinding", "DeviceStatus"},
    35: _COMMON | {"ConsumableCapacity", "DeviceBindingAndStatus"},
    36: _COMMON | {"ConsumableCapacity", "DeviceBindingAndStatus", "ListTypeAttributes"},
    37: _COMMON | {"ConsumableCapacity", "DeviceBindingAndStatus", "ListTypeAttributes",
                   "CompatibilityGroups", "DerivedAttributes", "FractionalCapacityRange",
                   "OptionalNodeOperations"},
}
#: Past this many pools, the orders an answer is judged under are not all tried.
MAX_POOL_ORDERS = 720


@frozen
class AllocateCase:
    """A decoded ``allocate`` case."""

    minor: int
    features: frozenset[str]
    node: NodeInfo
    slices: tuple[Slice, ...]
    classes: dict[str, DeviceClass]
    allocated: frozenset[str]
    claims: tuple[Claim, ...]


def _list(body: dict[str, Any], key: str) -> list[Any]:
    value = body.get(key, [])
    expect(value, list, "an array", key)
    assert isinstance(value, list)
    return value


def decode_allocate_case(case: object) -> AllocateCase:
    """DRA-10: a case, or a typed error naming the field."""
    expect(case, dict, "an object", "case")
    assert isinstance(case, dict)
    known = {"release", "features", "node", "slices", "classes", "allocated", "claims"}
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
    slices = tuple(decode_slice(s, f"slices[{i}]") for i, s in enumerate(_list(case,
                                                                                 "slices")))
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
    claims = tuple(decode_claim(c, f"claims[{i}]") for i, c in enumerate(_list(case,
                                                                               "claims")))
    return AllocateCase(minor, frozenset(features), decode_node(case.get("node")), slices,
                        classes, frozenset(allocated), claims)


def _answer(case: AllocateCase, order: list[tuple[str, str]] | None,
            slices_by_name: bool = False) -> Allocation:
    pools = gather_pools(case.slices, case.node, order, minor=case.minor,
                         slices_by_name=slices_by_name)
    return allocate(case.claims, pools, case.classes, case.allocated,
                    features=Features(prioritized_list="PrioritizedList" in case.features),
                    minor=case.minor)


def allocate_answers(case: AllocateCase, variant: str = "stable") -> Iterator[Allocation]:
    """DRA-2, DRA-8: the answers the variant may give: the stable one under each order of
    the node's pools (first-listed order first); the incubating and experimental ones from
    1.36 search pools sorted by driver and name, and a pool's slices by name."""
    if variant in ("incubating", "experimental") and case.minor >= 36:
        yield _answer(case, sorted(pool_ids(case.slices, case.node)), slices_by_name=True)
        return
    ids = pool_ids(case.slices, case.node)
    for count, order in enumerate(itertools.permutations(ids)):
        if count >= MAX_POOL_ORDERS:
            raise LimitExceededError(f"more than {MAX_POOL_ORDERS} orders of the node's "
                                     f"{len(ids)} pools", where="slices")
        yield _answer(case, list(order))


def encode_allocation(answer: Allocation) -> dict[str, Any]:
    """DRA-10: an answer as the protocol writes it."""
    if answer.outcome == "allocated":
        return {"outcome": "allocated", "claims": [
            {"devices": [{"request": p.request, "driver": p.driver, "pool": p.pool,
                          "device": p.device} for p in picks]} for picks in answer.claims]}
    body: dict[str, Any] = {"outcome": answer.outcome}
    if answer.message:
        body["message"] = answer.message
    return body


def allocate_once(case: AllocateCase) -> Allocation:
    """DRA-10: the reference's allocation, the node's pools in first-listed order."""
    return _answer(case, None)


def reference_allocate(case: object) -> dict[str, Any]:
    """DRA-10: the reference's answer, its pools in first-listed order."""
    return encode_allocation(allocate_once(decode_allocate_case(case)))
