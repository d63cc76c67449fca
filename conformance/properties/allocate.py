"""The structured allocator's properties (spec chapter ``dra.md``): random nodes of
ResourceSlices, DeviceClasses and ResourceClaims, and what every answer must be.

* **P-ALLOCATE** (equivalence): the implementation's answer is the reference's, up to the
  order of the node's pools (DRA-2 to DRA-10).
* **P-ALLOCATE-SOUND** (invariant, judged without the reference's search): every device an
  allocated answer gives exists on the node in a complete, valid pool, was free, is given
  once, meets its class's and its request's selectors, and the claim's ``matchAttribute``
  constraints hold over what was given; each request got the number of devices its mode
  asks for (DRA-3, DRA-4, DRA-6; from 1.36, finding 36).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from hypothesis import event, given, note, reject
from hypothesis import strategies as st

from numaspec.conformance.cases.allocations import allocation_differences
from numaspec.conformance.cases.divergences import known
from numaspec.conformance.properties.registry import register

__all__ = ["AllocateImplementation", "allocate_cases", "soundness_problems"]

DRIVERS = ("gpu.example.com", "nic.example.com", "cpu.example.com")
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"
#: The attributes random devices carry (each may be missing): what constraints match on.
ATTRIBUTES = ("numa", PCIE_ROOT, "model")


class AllocateImplementation(Protocol):
    name: str

    def allocate(self, case: Any) -> Any: ...


@st.composite
def _device(draw: st.DrawFn, name: str) -> dict[str, Any]:
    attributes: dict[str, Any] = {}
    if draw(st.integers(0, 9)) < 9:
        attributes["numa"] = {"int": draw(st.integers(0, 1))}
    if draw(st.integers(0, 5)) < 5:
        attributes[PCIE_ROOT] = {"string": draw(st.sampled_from(["pci0000:00",
                                                                  "pci0000:80"]))}
    if draw(st.booleans()):
        attributes["model"] = {"string": draw(st.sampled_from(["a", "b"]))}
    return {"name": name, "attributes": attributes}


@st.composite
def _slices(draw: st.DrawFn, drivers: list[str]) -> list[dict[str, Any]]:
    out = []
    for driver in drivers:
        short = driver.split(".")[0]
        for pool in range(draw(st.integers(1, 2))):
            count = draw(st.integers(1, 2))
            devices = 0
            for index in range(count):
                names = []
                for _ in range(draw(st.integers(1, 4))):
                    names.append(f"{short}-{devices}")
                    devices += 1
                if names and draw(st.integers(0, 19)) == 19:
                    names.append(names[0])  # DRA-2: an invalid pool
                spec: dict[str, Any] = {
                    "driver": driver,
                    "pool": {"name": f"pool-{pool}", "generation": 1,
                             "resourceSliceCount": count},
                    "devices": [draw(_device(n)) for n in names]}
                target = draw(st.integers(0, 19))
                if target == 19:
                    spec["nodeName"] = "node-b"  # DRA-2: another node's: an incomplete pool
                elif target == 18:
                    spec["allNodes"] = True
                elif target == 17:
                    spec["nodeSelector"] = {"nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "zone", "operator": "In", "values": ["a"]}]}]}
                else:
                    spec["nodeName"] = "node-a"
                out.append({"metadata": {"name": f"{short}-{pool}-{index}"}, "spec": spec})
            if draw(st.integers(0, 9)) == 9:
                # DRA-2: an older generation's leftover, dropped
                out.append({"metadata": {"name": f"{short}-{pool}-old"}, "spec": {
                    "driver": driver, "nodeName": "node-a",
                    "pool": {"name": f"pool-{pool}", "generation": 0, "resourceSliceCount": 1},
                    "devices": [{"name": f"{short}-old", "attributes": {}}]}})
    return draw(st.permutations(out))


def _selector(driver: str, draw: st.DrawFn) -> list[dict[str, Any]]:
    choice = draw(st.integers(0, 7))
    if choice == 7:
        # DRA-3: unguarded: a runtime error on a device without the attribute
        expression = f'device.attributes["{driver}"].model == "a"'
    elif choice == 6:
        expression = f'has(device.attributes["{driver}"].numa) && ' \
                     f'device.attributes["{driver}"].numa == 0'
    else:
        return []
    return [{"cel": {"expression": expression}}]


@st.composite
def _claim(draw: st.DrawFn, index: int, classes: list[str]) -> dict[str, Any]:
    requests: list[dict[str, Any]] = []
    names = []
    for r in range(draw(st.integers(1, 3))):
        name = f"r{r}"
        names.append(name)

        def exact(draw: st.DrawFn = draw) -> dict[str, Any]:
            class_name = draw(st.sampled_from([*classes, "missing"])
                              if draw(st.integers(0, 29)) == 29 else st.sampled_from(classes))
            driver = next((d for d in DRIVERS if d.startswith(class_name)), DRIVERS[0])
            body: dict[str, Any] = {"deviceClassName": class_name}
            if draw(st.integers(0, 7)) == 7:
                body["allocationMode"] = "All"
            else:
                body["count"] = draw(st.integers(1, 2))
            selectors = _selector(driver, draw)
            if selectors:
                body["selectors"] = selectors
            return body

        if draw(st.integers(0, 4)) == 4:
            subs = [{"name": f"s{s}", **exact()} for s in range(draw(st.integers(1, 3)))]
            names.extend(f"{name}/{s['name']}" for s in subs)
            requests.append({"name": name, "firstAvailable": subs})
        else:
            requests.append({"name": name, "exactly": exact()})
    constraints = []
    for _ in range(draw(st.integers(0, 2))):
        attribute = draw(st.sampled_from([PCIE_ROOT, PCIE_ROOT, "numa", "model"]))
        qualified = attribute if "/" in attribute else f"{draw(st.sampled_from(DRIVERS))}/" \
                                                      f"{attribute}"
        scope = draw(st.lists(st.sampled_from(names), max_size=2, unique=True))
        constraint: dict[str, Any] = {"matchAttribute": qualified}
        if scope:
            constraint["requests"] = scope
        constraints.append(constraint)
    devices: dict[str, Any] = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {"metadata": {"name": f"claim-{index}", "namespace": "default"},
            "spec": {"devices": devices}}


@st.composite
def allocate_cases(draw: st.DrawFn, releases: tuple[str, ...]) -> dict[str, Any]:
    """A random node and claims for the ``allocate`` operation (DRA-10)."""
    drivers = draw(st.lists(st.sampled_from(DRIVERS), min_size=1, max_size=3, unique=True))
    slices = draw(_slices(drivers))
    classes = [d.split(".")[0] for d in drivers]
    device_ids = [f"{s['spec']['driver']}/{s['spec']['pool']['name']}/{d['name']}"
                  for s in slices for d in s["spec"]["devices"]]
    allocated = draw(st.lists(st.sampled_from(device_ids), max_size=3, unique=True)
                     if device_ids else st.just([]))
    claims = [draw(_claim(i, classes)) for i in range(draw(st.integers(1, 2)))]
    features = [] if draw(st.integers(0, 9)) == 9 else ["PrioritizedList"]
    return {"release": draw(st.sampled_from(releases)), "features": features,
            "node": {"name": "node-a", "labels": {"zone": "a"}},
            "slices": slices,
            "classes": [{"metadata": {"name": c}, "spec": {"selectors": [
                {"cel": {"expression": f'device.driver == "{d}"'}}]}}
                for c, d in zip(classes, drivers, strict=True)],
            "allocated": allocated, "claims": claims}


def _releases(impl: object) -> tuple[str, ...]:
    from numaspec.protocols.allocate_protocol import ALLOCATE_RELEASES

    declared = tuple(getattr(impl, "allocate_versions", ()) or ())
    return tuple(r for r in ALLOCATE_RELEASES if r in declared) or ALLOCATE_RELEASES


@register("P-ALLOCATE", rules=["DRA-1", "DRA-2", "DRA-3", "DRA-4", "DRA-5", "DRA-6", "DRA-7",
                               "DRA-8", "DRA-9", "DRA-10"],
          level="equivalence", requires="allocate", since=33, op="allocate")
@given(data=st.data())
def allocation_matches_reference(impl: AllocateImplementation, data: st.DataObject) -> None:
    """The allocator's answer is the reference's, up to the order of the node's pools."""
    from numaspec.protocols.adapter_protocol import reference_result

    case = data.draw(allocate_cases(_releases(impl)))
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
    from numaspec.dra.allocator import lookup_attribute
    from numaspec.dra.pools import gather_pools, pool_ids
    from numaspec.dra.selectors import SelectorError, device_matches
    from numaspec.protocols.allocate_protocol import decode_allocate_case

    if not isinstance(answer, dict) or answer.get("outcome") != "allocated":
        return []
    decoded = decode_allocate_case(case)
    pools = gather_pools(decoded.slices, decoded.node, pool_ids(decoded.slices, decoded.node))
    devices = {f"{p.driver}/{p.name}/{d.name}": (p.driver, d) for p in pools
               if not p.incomplete and not p.invalid for s in p.slices for d in s.devices}
    minor = decoded.minor
    problems = []
    taken: set[str] = set()
    claims = answer.get("claims", [])
    if len(claims) != len(decoded.claims):
        return [f"{len(claims)} results for {len(decoded.claims)} claims"]
    for claim, result in zip(decoded.claims, claims, strict=True):
        picks = result.get("devices", [])
        by_request: dict[str, list[tuple[str, Any]]] = {}
        for pick in picks:
            device_id = f"{pick['driver']}/{pick['pool']}/{pick['device']}"
            if device_id not in devices:
                problems.append(f"{claim.key}: {device_id} is not a usable device of the node")
                continue
            if device_id in taken or device_id in decoded.allocated:
                problems.append(f"{claim.key}: {device_id} was not free")
            taken.add(device_id)
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
            for device_id, (driver, device) in got:
                for expression in (device_class.selectors if device_class else ()) + \
                        req.selectors:
                    try:
                        ok = device_matches(expression, device, driver, minor)
                    except SelectorError:
                        ok = False
                    if not ok:
                        problems.append(f"{claim.key}: {device_id} fails {expression!r}")
        for constraint in claim.constraints:
            values = set()
            for request_name, got in by_request.items():
                base = request_name.split("/")[0]
                if constraint.requests and base not in constraint.requests and \
                        request_name not in constraint.requests:
                    continue
                for _device_id, (driver, device) in got:
                    value = lookup_attribute(device, driver, constraint.match_attribute)
                    values.add(json.dumps(value))
            if len(values) > 1 or "null" in values:
                problems.append(f"{claim.key}: matchAttribute {constraint.match_attribute} "
                                f"does not hold: {sorted(values)}")
    return problems


@register("P-ALLOCATE-SOUND", rules=["DRA-3", "DRA-4", "DRA-6"], level="invariant",
          requires="allocate", since=36, op="allocate")
@given(data=st.data())
def allocation_is_sound(impl: AllocateImplementation, data: st.DataObject) -> None:
    """Every device an allocation gives exists, was free, meets its selectors and keeps the
    claim's constraints, and each request gets as many as it asks for."""
    # Until 1.35 an All subrequest can leave devices of two alternatives in one result
    # (DRA-4, finding 35): soundness is the allocator's from 1.36.
    releases = tuple(r for r in _releases(impl) if int(r.split(".")[1]) >= 36)
    if not releases:
        return
    case = data.draw(allocate_cases(releases))
    note(f"case: {json.dumps(case, separators=(',', ':'))}")
    actual = impl.allocate(case)
    note(f"answer: {json.dumps(actual, separators=(',', ':'))}")
    problems = soundness_problems(case, actual)
    assert not problems, problems[0]
