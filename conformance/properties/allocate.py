"""The structured allocator's properties (spec chapter ``dra.md``): random nodes of
ResourceSlices, DeviceClasses and ResourceClaims, and what every answer must be.

* **P-ALLOCATE** (equivalence): the implementation's answer is the reference's, up to the
  order of the node's pools (DRA-2 to DRA-10).
* **P-ALLOCATE-SOUND** (invariant, judged without the reference's search): every device an
  allocated answer gives exists on the node in a complete, valid pool, was free (with admin
  access: not given twice in its claim), is given once, carries no taint its request does
  not tolerate, meets its class's and its request's selectors, and the claim's
  ``matchAttribute`` constraints hold over what was given; each request got the number of
  devices its mode asks for (DRA-3, DRA-4, DRA-6, DRA-16, DRA-17; from 1.36, finding 36).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from hypothesis import event, example, given, note, reject
from hypothesis import strategies as st

from numaspec.conformance.cases.allocations import allocation_differences
from numaspec.conformance.cases.divergences import known
from numaspec.conformance.cases.vectors import stored_case
from numaspec.conformance.properties.allocate_cases import allocate_cases
from numaspec.conformance.properties.registry import register

__all__ = ["AllocateImplementation", "allocate_releases", "soundness_problems"]

class AllocateImplementation(Protocol):
    name: str

    def allocate(self, case: Any) -> Any: ...


#: P-ALLOCATE's fixed example: the counterexample of finding 36 the differential found at
#: 1.33 (the vector of that name).
FIXED_EXAMPLE = "dra-1-33-failed-all-branch-cut-back"


def _features(impl: object) -> tuple[str, ...] | None:
    """DRA-10: the allocator features the implementation models (None: all, when it does
    not say): a case enables only those."""
    declared = getattr(impl, "allocate_features", None)
    return None if declared is None else tuple(declared)


def allocate_releases(impl: object) -> tuple[str, ...]:
    from numaspec.protocols.allocate_protocol import ALLOCATE_RELEASES

    declared = tuple(getattr(impl, "allocate_versions", ()) or ())
    return tuple(r for r in ALLOCATE_RELEASES if r in declared) or ALLOCATE_RELEASES


@register("P-ALLOCATE", rules=["DRA-1", "DRA-2", "DRA-3", "DRA-4", "DRA-5", "DRA-6", "DRA-7",
                               "DRA-8", "DRA-9", "DRA-10", "DRA-16", "DRA-17",
                               "DRA-18", "DRA-19", "DRA-20", "DRA-21", "DRA-22"],
          level="equivalence", requires="allocate", since=33, op="allocate")
@given(data=st.data())
@example(data=None)  # FIXED_EXAMPLE: 1.33's failed All branch, cut back with r0's device
def allocation_matches_reference(impl: AllocateImplementation,
                                 data: st.DataObject | None) -> None:
    """The allocator's answer is the reference's, up to the order of the node's pools."""
    from numaspec.protocols.adapter_protocol import reference_result

    if data is None:
        if "1.33" not in allocate_releases(impl):
            return
        case = stored_case(FIXED_EXAMPLE, ("1.33",))
    else:
        case = data.draw(allocate_cases(allocate_releases(impl), _features(impl)))
    expected = reference_result("allocate", case)
    if "error" in expected:
        event("refused by the reference")
        return
    note(f"case: {json.dumps(case, separators=(',', ':'))}")
    note(f"reference: {json.dumps(expected, separators=(',', ':'))}")
    actual = impl.allocate(case)
    event(f"outcome: {expected['outcome']}")
    differences = allocation_differences(case, expected, actual)
    if differences and known("allocate", case, expected, actual) is not None:
        reject()
    assert not differences, differences[0]


def soundness_problems(case: dict[str, Any], answer: Any) -> list[str]:
    """DRA-3 to DRA-6, judged from the case alone: what is wrong with an allocated answer."""
    from numaspec.dra.allocator import untolerated_taint
    from numaspec.dra.constraints import lookup_attribute
    from numaspec.dra.selectors import SelectorError, device_matches
    from numaspec.protocols.allocate_protocol import decode_allocate_case, searched_pools

    if not isinstance(answer, dict) or answer.get("outcome") != "allocated":
        return []
    decoded = decode_allocate_case(case)
    partitionable = "PartitionableDevices" in decoded.features
    # the pools as the answering variant gathers them (their order does not matter here)
    pools = searched_pools(decoded)
    devices = {f"{p.driver}/{p.name}/{d.name}": (p.driver, d) for p in pools
               if not p.incomplete and not p.invalid for s in p.slices for d in s.devices}
    minor = decoded.minor
    problems = _counter_problems(pools, answer, decoded.allocated, partitionable)
    taken: set[str] = set()
    claims = answer.get("claims", [])
    if len(claims) != len(decoded.claims):
        return [f"{len(claims)} results for {len(decoded.claims)} claims"]
    consumable = "ConsumableCapacity" in decoded.features
    problems += _capacity_problems(decoded, devices, answer)
    for claim, result in zip(decoded.claims, claims, strict=True):
        picks = result.get("devices", [])
        claim_taken: set[str] = set()
        claim_shares: set[tuple[str, str]] = set()
        by_request: dict[str, list[tuple[str, Any]]] = {}
        for pick in picks:
            device_id = f"{pick['driver']}/{pick['pool']}/{pick['device']}"
            if device_id not in devices:
                problems.append(f"{claim.key}: {device_id} is not a usable device of the node")
                continue
            multiple = consumable and devices[device_id][1].multiple
            if bool(pick.get("shared")) != multiple:
                given = "as" if pick.get("shared") else "not as"
                problems.append(f"{claim.key}: {device_id} given {given} a share")
            if multiple:
                # DRA-20: shares of one device go to any request, never twice to one
                if (pick["request"], device_id) in claim_shares:
                    problems.append(f"{claim.key}: {device_id} shared twice with "
                                    f"{pick['request']}")
                claim_shares.add((pick["request"], device_id))
                if device_id in decoded.allocated and pick.get("adminAccess") is not True:
                    # DRA-17: but admin access takes a device in use
                    problems.append(f"{claim.key}: {device_id} was not free")
            elif pick.get("adminAccess") is True:
                # DRA-17: admin access takes a device in use, not one its own claim took
                if device_id in claim_taken:
                    problems.append(f"{claim.key}: {device_id} given twice in the claim")
            elif device_id in taken or device_id in decoded.allocated:
                problems.append(f"{claim.key}: {device_id} was not free")
            taken.add(device_id)
            claim_taken.add(device_id)
            by_request.setdefault(pick["request"], []).append((device_id, devices[device_id]))
        for request in claim.requests:
            options = ([(f"{request.name}/{s.name}", s) for s in request.subrequests]
                       or [(request.name, request)])
            chosen = [(n, r) for n, r in options if n in by_request]
            if len(chosen) != 1:
                problems.append(f"{claim.key}: request {request.name} got devices for "
                                f"{len(chosen)} of its alternatives")
                continue
            name, req = chosen[0]
            got = by_request[name]
            if req.mode == "ExactCount" and len(got) != req.count:
                problems.append(f"{claim.key}: {name} asks for {req.count}, got {len(got)}")
            device_class = decoded.classes.get(req.class_name)
            for device_id, (_driver, device) in got:
                taint = (untolerated_taint(device, req, minor=minor)
                         if "DeviceTaints" in decoded.features else None)
                if taint is not None:
                    problems.append(f"{claim.key}: {device_id} has the taint {taint.key}:"
                                    f"{taint.effect}, which {name} does not tolerate")
            for device_id, (driver, device) in got:
                for expression in (device_class.selectors if device_class else ()) + \
                        req.selectors:
                    try:
                        ok = device_matches(expression, device, driver, minor,
                                            lists="ListTypeAttributes" in decoded.features)
                    except SelectorError:
                        ok = False
                    if not ok:
                        problems.append(f"{claim.key}: {device_id} fails {expression!r}")
        for constraint in claim.constraints:
            attribute = constraint.match_attribute or constraint.distinct_attribute
            assert attribute is not None
            found = []
            for request_name, got in by_request.items():
                base = request_name.split("/")[0]
                if constraint.requests and base not in constraint.requests and \
                        request_name not in constraint.requests:
                    continue
                for _device_id, (driver, device) in got:
                    found.append(lookup_attribute(device, driver, attribute))
            lists = "ListTypeAttributes" in decoded.features
            if constraint.match_attribute is None:
                # DRA-21: 1.36 compares a device with each request's last only (finding 58)
                if not _distinct(found, lists, strict=minor >= 37):
                    problems.append(f"{claim.key}: distinctAttribute {attribute} does not "
                                    f"hold: {[json.dumps(v) for v in found]}")
            elif not _shared(found, lists):
                problems.append(f"{claim.key}: matchAttribute {attribute} "
                                f"does not hold: {sorted({json.dumps(v) for v in found})}")
    return problems


def _counter_problems(pools: Any, answer: dict[str, Any], allocated: frozenset[str],
                      partitionable: bool) -> list[str]:
    """DRA-19: no counter of a pool the answer takes counters from is consumed past what
    its sets hold, less what allocated devices consume; none taken without the feature."""
    from numaspec.dra.pools import consumption, counters_left, over

    problems = []
    picked = [f"{p['driver']}/{p['pool']}/{p['device']}" for result in answer.get("claims", [])
              for p in result.get("devices", [])]
    for pool in pools:
        devices = {f"{pool.id}/{d.name}": d for s in pool.slices for d in s.devices}
        consumers = [devices[i] for i in picked if i in devices and devices[i].consumes]
        if not consumers:
            continue
        if not partitionable:
            problems.append(f"{consumers[0].name} consumes counters, and the feature is off")
            continue
        past = over(counters_left(pool, allocated), consumption(consumers))
        if past:
            problems.append(f"pool {pool.id}: counters {', '.join(past)} consumed past what "
                            "they hold")
    return problems


def _distinct(values: list[Any], lists: bool, strict: bool) -> bool:
    """DRA-21: whether the devices' values keep a ``distinctAttribute``: each device has it
    and (``strict``) no two values of one kind are equal (with list-typed attributes, no two
    share a value)."""
    from numaspec.dra.objects import LIST_KINDS

    if any(v is None for v in values):
        return False
    if not strict:
        return True
    seen: set[tuple[str, str]] = set()
    for kind, raw in values:
        if not lists and kind in LIST_KINDS:
            continue  # compared with nothing before it, or it was refused
        scalar = LIST_KINDS.get(kind, kind)
        items = {(scalar, json.dumps(item)) for item in (raw if kind in LIST_KINDS else (raw,))}
        if items & seen:
            return False
        seen |= items
    return True


def _capacity_problems(decoded: Any, devices: dict[str, Any], answer: dict[str, Any]
                       ) -> list[str]:
    """DRA-20: with ConsumableCapacity, every device given has each capacity its request
    names, no share consumes less than it asks or what the policy refuses, and no capacity of
    a shared device is consumed past its value, with the allocated shares."""
    from fractions import Fraction

    from numaspec.dra.capacity import capacity_key, keyed, violates

    if "ConsumableCapacity" not in decoded.features:
        return []
    problems = []
    minor = decoded.minor
    used: dict[tuple[str, str], Fraction] = {}
    for device_id, consumed in decoded.shares:
        driver = device_id.partition("/")[0]
        for key, share in keyed((consumed or {}).items(), driver, minor).items():
            used[(device_id, key)] = used.get((device_id, key), Fraction(0)) + share
    requests = {}
    for claim in decoded.claims:
        for request in claim.requests:
            requests[(claim.key, request.name)] = request
            for sub in request.subrequests:
                requests[(claim.key, f"{request.name}/{sub.name}")] = sub
    for claim, result in zip(decoded.claims, answer.get("claims", []), strict=False):
        for pick in result.get("devices", []):
            device_id = f"{pick['driver']}/{pick['pool']}/{pick['device']}"
            if device_id not in devices:
                continue
            driver, device = devices[device_id]
            capacities = {capacity_key(n, driver, minor): (n, c)
                          for n, c in device.capacity.items()}
            request = requests.get((claim.key, pick["request"]))
            asked = keyed(((request.capacity or {}) if request else {}).items(), driver, minor)
            missing = sorted(set(asked) - set(capacities))
            if missing:
                problems.append(f"{claim.key}: {device_id} has no capacity {missing[0]}")
                continue
            recorded = keyed(((n, Fraction(v)) for n, v in
                              (pick.get("consumedCapacity") or {}).items()), driver, minor)
            if not pick.get("shared"):
                continue
            for key, (name, cap) in capacities.items():
                amount = recorded.get(key)
                if amount is None:
                    problems.append(f"{claim.key}: the share of {device_id} records no {name}")
                    continue
                if amount < asked.get(key, 0) or violates(amount, cap):
                    problems.append(f"{claim.key}: the share of {device_id} consumes {amount} "
                                    f"of {name}, which its request or policy does not allow")
                used[(device_id, key)] = used.get((device_id, key), Fraction(0)) + amount
                if used[(device_id, key)] > cap.value:
                    problems.append(f"{device_id}: {name} consumed past its value")
    return problems


def _shared(values: list[Any], lists: bool) -> bool:
    """DRA-6, DRA-18: whether the devices' values keep a ``matchAttribute``: one value (a
    lone device's may be a list); with list-typed attributes on, values of one kind whose
    intersection is not empty."""
    from numaspec.dra.objects import LIST_KINDS

    if any(v is None for v in values):
        return False
    if not lists:
        return len(values) <= 1 or (len({json.dumps(v) for v in values}) == 1
                                    and values[0][0] not in LIST_KINDS)
    kinds = {LIST_KINDS.get(v[0], v[0]) for v in values}
    sets = [set(v[1]) if v[0] in LIST_KINDS else {v[1]} for v in values]
    return len(kinds) <= 1 and (not sets or bool(set.intersection(*sets)))


@register("P-ALLOCATE-SOUND", rules=["DRA-3", "DRA-4", "DRA-6", "DRA-16", "DRA-17",
                                     "DRA-18", "DRA-19", "DRA-20", "DRA-21"],
          level="invariant",
          requires="allocate", since=36, op="allocate")
@given(data=st.data())
def allocation_is_sound(impl: AllocateImplementation, data: st.DataObject) -> None:
    """Every device an allocation gives exists, was free, meets its selectors and keeps the
    claim's constraints, and each request gets as many as it asks for."""
    # Until 1.35 an All subrequest can leave devices of two alternatives in one result
    # (DRA-4, finding 35): soundness is the allocator's from 1.36.
    releases = tuple(r for r in allocate_releases(impl) if int(r.split(".")[1]) >= 36)
    if not releases:
        return
    case = data.draw(allocate_cases(releases, _features(impl)))
    note(f"case: {json.dumps(case, separators=(',', ':'))}")
    actual = impl.allocate(case)
    note(f"answer: {json.dumps(actual, separators=(',', ':'))}")
    problems = soundness_problems(case, actual)
    assert not problems, problems[0]
