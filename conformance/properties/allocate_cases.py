"""Random ``allocate`` cases (spec chapter ``dra.md``, DRA-10): a node of one to three
drivers' ResourceSlices (pools of one or two slices, now and then an invalid, incomplete or
superseded one), a DeviceClass per driver, some devices already allocated, and one or two
claims of exact-count, ``All`` and ``firstAvailable`` requests with selectors and
``matchAttribute`` constraints over NUMA, PCIe-root, model and firmware-version attributes
(and selectors over capacities and versions, DRA-22);
the allocator features of the prioritized list alone, of a scheduler with the release's
default gates, or none, and now and then a forced variant (DRA-8); taints, tolerations and
admin access (DRA-16, DRA-17); from 1.36 list-typed PCIe roots (DRA-18), partitionable
pools whose devices consume shared counters (DRA-19), devices with capacities that may be
shared out under request policies, requests that ask for capacity, allocated shares
(DRA-20) and ``distinctAttribute`` constraints (DRA-21).

One generator, two sources of choices: Hypothesis's (:func:`allocate_cases`, for the
properties, which shrink) and a seeded :class:`random.Random` (:func:`random_allocate_case_at`,
for ``numaspec differential --shape allocate``, where case ``i`` of a seed is always the same
case).  Rare inputs are drawn when a choice is at the top of its range, so that Hypothesis,
which shrinks towards the bottom, shrinks them away.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

from hypothesis import strategies as st

from numaspec.conformance.properties.choices import Choices, HypothesisChoices, SeededChoices
from numaspec.conformance.properties.random_cases import without
from numaspec.dra.variants import (
    FEATURES,
    VARIANTS,
    choose_variant,
    scheduler_features,
    supported,
)

__all__ = ["DRIVERS", "PCIE_ROOT", "Choices", "allocate_cases", "build_case",
           "draw_allocate_case", "random_allocate_case_at", "smaller_allocate_cases"]

DRIVERS = ("gpu.example.com", "nic.example.com", "cpu.example.com")
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"


#: DRA-16: the taint key the cases use, and the effects a release's API takes.
TAINT_KEY = "example.com/maintenance"


def _effects(minor: int) -> list[str]:
    return ["NoSchedule", "NoExecute", *(["None"] if minor >= 35 else [])]


def _device(c: Choices, name: str, minor: int) -> dict[str, Any]:
    attributes: dict[str, Any] = {}
    if c.integer(0, 9) < 9:
        attributes["numa"] = {"int": c.integer(0, 1)}
    if c.integer(0, 5) < 5:
        if minor >= 36 and c.integer(0, 3) == 3:
            # DRA-18: the list form (dra-driver-cpu publishes pcieRoot so)
            attributes[PCIE_ROOT] = {"strings": c.choice([["pci0000:00"], ["pci0000:80"],
                                                          ["pci0000:00", "pci0000:80"]])}
        else:
            attributes[PCIE_ROOT] = {"string": c.choice(["pci0000:00", "pci0000:80"])}
    if c.integer(0, 1):
        attributes["model"] = {"string": c.choice(["a", "b"])}
    if c.integer(0, 3) == 3:
        # DRA-6: a version; from 1.38 equal whatever its build metadata
        attributes["firmware"] = {"version": c.choice(["1.0.0", "1.0.0+b1", "1.0.0+b2",
                                                       "1.1.0-rc.1"])}
    device: dict[str, Any] = {"name": name, "attributes": attributes}
    if minor >= 36 and c.integer(0, 1):
        device.update(_capacities(c))
    if c.integer(0, 7) == 7:  # DRA-16: one device in eight is tainted
        device["taints"] = [{"key": TAINT_KEY, "value": c.choice(["a", "b"]),
                             "effect": c.choice(_effects(minor))}]
    return device


def _capacities(c: Choices) -> dict[str, Any]:
    """DRA-20: a device's capacities (memory, now and then bandwidth), and, on two in three,
    ``allowMultipleAllocations`` with now and then a request policy on memory."""
    memory: dict[str, Any] = {"value": c.choice(["8Gi", "16Gi", "16Gi", "12Gi"])}
    capacity = {"memory": memory}
    if c.integer(0, 2) == 2:
        capacity["bandwidth"] = {"value": c.choice(["100", "40"])}
    out: dict[str, Any] = {"capacity": capacity}
    if c.integer(0, 2):
        out["allowMultipleAllocations"] = True
        policy = c.integer(0, 5)
        if policy == 4:
            top, step = c.choice([("8Gi", "1Gi"), ("7Gi", "2Gi"), ("", "2Gi"), ("8Gi", ""),
                                  ("", "")])
            memory["requestPolicy"] = {"default": "1Gi", "validRange": {
                "min": "1Gi", **({"max": top} if top else {}),
                **({"step": step} if step else {})}}
        elif policy == 5:
            memory["requestPolicy"] = {"default": c.choice(["1Gi", "4Gi"]),
                                       "validValues": ["1Gi", "4Gi", "8Gi"]}
    return out


#: DRA-20: what a request may ask of a device's capacities.
_ASKS: tuple[dict[str, str], ...] = (
    {"memory": "4Gi"}, {"memory": "1500Mi"}, {"memory": "8Gi"}, {"memory": "1Gi"},
    {"memory": "2Gi", "bandwidth": "30"}, {"bandwidth": "50"}, {"memory": "20Gi"}, {})


#: DRA-19: what a partition may consume of its pool's ``set-0`` (memory of 4Gi, 2 slots).
_CONSUMPTIONS = ({"memory": "4Gi", "slots": "2"}, {"memory": "2Gi", "slots": "1"},
                 {"memory": "2048Mi", "slots": "1"}, {"memory": "1Gi"}, {"memory": "1500Mi"},
                 {"slots": "1"})


def _consumes(c: Choices) -> list[dict[str, Any]]:
    """DRA-19: what one device of a partitionable pool consumes: one of :data:`_CONSUMPTIONS`,
    now and then of a second set too, or (at the top of the range) of a set or a counter the
    pool does not have (an invalid pool)."""
    pick = c.integer(0, 29)
    counters = c.choice(list(_CONSUMPTIONS))
    amounts: dict[str, Any] = {k: {"value": v} for k, v in counters.items()}
    if pick == 28:
        amounts["cores"] = {"value": "1"}
    uses: list[dict[str, Any]] = [{"counterSet": "set-9" if pick == 29 else "set-0",
                                   "counters": amounts}]
    if pick >= 22:
        uses.append({"counterSet": "set-1", "counters": {"links": {"value": "1"}}})
    return uses


def _counter_slices(c: Choices, driver: str, short: str, pool: int,
                    count: int) -> list[dict[str, Any]]:
    """DRA-19: a pool's slice of counter sets: ``set-0`` (memory, slots), now and then
    ``set-1`` (links), now and then for another node or all; once in a while a second slice
    with another ``set-0`` (an invalid pool).  ``count``: the pool's slices without these."""
    sets = [{"name": "set-0", "counters": {
        "memory": {"value": c.choice(["4Gi", "4Gi", "3Gi", "4096Mi"])},
        "slots": {"value": c.choice(["2", "2", "1", "3"])}}}]
    if c.integer(0, 1):
        sets.append({"name": "set-1", "counters": {"links": {"value": c.choice(["1", "1", "2"])}}})
    extra = [[{"name": "set-0", "counters": {"slots": {"value": "1"}}}]] if c.integer(
        0, 29) == 29 else []
    out = []
    for index, held in enumerate([sets, *extra]):
        target = c.integer(0, 5)
        where: dict[str, Any] = ({"nodeName": "node-b"} if target == 5 else
                                 {"allNodes": True} if target == 4 else {"nodeName": "node-a"})
        out.append({"metadata": {"name": f"{short}-{pool}-counters-{index}"}, "spec": {
            "driver": driver, **where,
            "pool": {"name": f"pool-{pool}", "generation": 1,
                     "resourceSliceCount": count + 1 + len(extra)},
            "sharedCounters": held}})
    return out


def _slices(c: Choices, drivers: Sequence[str], minor: int) -> list[dict[str, Any]]:
    out = []
    for driver in drivers:
        short = driver.split(".")[0]
        for pool in range(c.integer(1, 2)):
            count = c.integer(1, 2)
            # DRA-19: from 1.36 one pool in four is partitionable: one more slice, of counters
            partitioned = minor >= 36 and c.integer(0, 3) == 3
            counter_slices = _counter_slices(c, driver, short, pool, count) if partitioned \
                else []
            out.extend(counter_slices)
            devices = 0
            for index in range(count):
                names = []
                for _ in range(c.integer(1, 4)):
                    names.append(f"{short}-{devices}")
                    devices += 1
                if c.integer(0, 49) == 49:
                    names.append(names[0])  # DRA-2: an invalid pool
                made = [_device(c, n, minor) for n in names]
                for device in made:
                    if partitioned and c.integer(0, 4) < 4:
                        device["consumesCounters"] = _consumes(c)
                spec: dict[str, Any] = {
                    "driver": driver,
                    "pool": {"name": f"pool-{pool}", "generation": 1,
                             "resourceSliceCount": count + len(counter_slices)},
                    "devices": made}
                target = c.integer(0, 29)
                if target == 29:
                    spec["nodeName"] = "node-b"  # DRA-2: another node's: an incomplete pool
                elif target == 28:
                    spec["allNodes"] = True
                elif target == 27:
                    spec["nodeSelector"] = {"nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "zone", "operator": "In", "values": ["a"]}]}]}
                else:
                    spec["nodeName"] = "node-a"
                out.append({"metadata": {"name": f"{short}-{pool}-{index}"}, "spec": spec})
            if c.integer(0, 9) == 9:
                # DRA-2: an older generation's leftover, dropped
                out.append({"metadata": {"name": f"{short}-{pool}-old"}, "spec": {
                    "driver": driver, "nodeName": "node-a",
                    "pool": {"name": f"pool-{pool}", "generation": 0, "resourceSliceCount": 1},
                    "devices": [{"name": f"{short}-old", "attributes": {}}]}})
    return c.permutation(out)


def _selector(c: Choices, driver: str) -> list[dict[str, Any]]:
    choice = c.integer(0, 18)
    if choice == 18:
        # DRA-22: a capacity, unguarded (a runtime error on a device without it)
        expression = f'device.capacity["{driver}"].memory.isLessThan(quantity("12Gi"))'
    elif choice == 17:
        expression = (f'has(device.capacity["{driver}"].memory) && '
                      f'device.capacity["{driver}"].memory.compareTo(quantity("10Gi")) >= 0')
    elif choice == 16:
        # DRA-22: a version by semver precedence (1.0.0+b1 is 1.0.0; 1.1.0-rc.1 above both)
        expression = (f'has(device.attributes["{driver}"].firmware) && '
                      f'device.attributes["{driver}"].firmware.isGreaterThan(semver("1.0.0"))')
    elif choice == 15:
        # DRA-3: unguarded: a runtime error on a device without the attribute
        expression = f'device.attributes["{driver}"].model == "a"'
    elif choice >= 13:
        expression = (f'has(device.attributes["{driver}"].numa) && '
                      f'device.attributes["{driver}"].numa == 0')
    else:
        return []
    return [{"cel": {"expression": expression}}]


def _tolerations(c: Choices, minor: int) -> list[dict[str, Any]]:
    """DRA-16: one request in five tolerates something: the cases' taint by key and value,
    by key alone, or any taint, with or without an effect."""
    if c.integer(0, 4) < 4:
        return []
    toleration: dict[str, Any] = {"key": TAINT_KEY}
    pick = c.integer(0, 2)
    if pick == 0:
        toleration["value"] = c.choice(["a", "b"])  # operator Equal, by default
    elif pick == 1:
        toleration["operator"] = "Exists"
    else:
        toleration = {"operator": "Exists"}
    if c.integer(0, 1):
        toleration["effect"] = c.choice(_effects(minor))
    return [toleration]


def _exact(c: Choices, classes: Sequence[str], minor: int, admin: bool,
           consumable: bool = False) -> dict[str, Any]:
    class_name = c.choice([*classes, "missing"]) if c.integer(0, 29) == 29 else c.choice(
        classes)
    driver = next((d for d in DRIVERS if d.startswith(class_name)), DRIVERS[0])
    body: dict[str, Any] = {"deviceClassName": class_name}
    if c.integer(0, 7) == 7:
        body["allocationMode"] = "All"
    else:
        body["count"] = c.integer(1, 2)
    selectors = _selector(c, driver)
    if selectors:
        body["selectors"] = selectors
    tolerations = _tolerations(c, minor)
    if tolerations:
        body["tolerations"] = tolerations
    if minor >= 36 and c.integer(0, 2 if consumable else 29) == (2 if consumable else 29):
        # DRA-20: capacity asked (one request in three where the feature is on, now and then
        # where it is off), now and then under the driver's domain, or an empty ask
        asks = dict(c.choice(list(_ASKS)))
        if asks and c.integer(0, 5) == 5:
            name = next(iter(asks))
            asks[f"{driver}/{name}"] = asks.pop(name)
        body["capacity"] = {"requests": asks}
    # DRA-17: admin access where the feature is on (one request in six), now and then where
    # it is off (the allocator's error)
    if (admin and c.integer(0, 5) == 5) or c.integer(0, 49) == 49:
        body["adminAccess"] = c.integer(0, 9) < 9
    return body


def _claim(c: Choices, index: int, classes: Sequence[str], minor: int,
           admin: bool, *, consumable: bool = False, distinct: bool = False) -> dict[str, Any]:
    requests: list[dict[str, Any]] = []
    names = []
    for r in range(c.integer(1, 3)):
        name = f"r{r}"
        names.append(name)
        if c.integer(0, 4) == 4:
            subs = []
            for s in range(c.integer(1, 3)):
                sub = {"name": f"s{s}", **_exact(c, classes, minor, False, consumable)}
                sub.pop("adminAccess", None)  # a subrequest has no admin access
                subs.append(sub)
            names.extend(f"{name}/{s['name']}" for s in subs)
            requests.append({"name": name, "firstAvailable": subs})
        else:
            requests.append({"name": name, "exactly": _exact(c, classes, minor, admin,
                                                              consumable)})
    constraints = []
    for _ in range(c.integer(0, 2)):
        attribute = c.choice([PCIE_ROOT, PCIE_ROOT, "numa", "model", "firmware"])
        drivers = [d for d in DRIVERS if d.split(".")[0] in classes]
        qualified = attribute if "/" in attribute else f"{c.choice(drivers)}/{attribute}"
        scope = c.subset(names, 2)
        # DRA-21: from 1.36 one constraint in three keeps values apart (now and then where the
        # variant has no such constraint: its error)
        top = 2 if distinct else 29
        kind = "distinctAttribute" if minor >= 36 and c.integer(0, top) == top else \
            "matchAttribute"
        constraint: dict[str, Any] = {kind: qualified}
        if scope:
            constraint["requests"] = scope
        constraints.append(constraint)
    devices: dict[str, Any] = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {"metadata": {"name": f"claim-{index}", "namespace": "default"},
            "spec": {"devices": devices}}


def _features(c: Choices, minor: int, allowed: frozenset[str]) -> list[str]:
    """DRA-8: none (one case in ten), every feature (one in ten), the prioritized list
    alone, or what a scheduler with the release's default gates enables (two in ten, from
    1.36 five), within ``allowed``."""
    pick = c.integer(0, 9)
    if pick == 9:
        return []
    if pick == 8:
        return sorted(allowed)
    # from 1.36 (DRA-20) as many cases again take the defaults, whose ConsumableCapacity
    # answers shares
    chosen = scheduler_features(minor) if pick >= (6 if minor < 36 else 3) else \
        frozenset({"PrioritizedList"})
    return sorted(chosen & allowed)


def _variant(c: Choices, minor: int, enabled: Sequence[str]) -> str | None:
    """DRA-8: from 1.35, one case in four forces a variant that supports its features."""
    if minor < 35 or c.integer(0, 3) < 3:
        return None
    return c.choice([v for v in VARIANTS if set(enabled) <= supported(minor, v)])


def build_case(c: Choices, releases: Sequence[str],
               features: Sequence[str] | None = None) -> dict[str, Any]:
    """A random ``allocate`` case for one of ``releases``; ``features``: the allocator
    features it may enable (None: any)."""
    release = c.choice(list(releases))
    minor = int(release.split(".")[1])
    allowed = FEATURES[minor] if features is None else FEATURES[minor] & set(features)
    enabled = _features(c, minor, allowed)
    forced = _variant(c, minor, enabled)
    drivers = c.subset(DRIVERS, 3) or [c.choice(DRIVERS)]
    slices = _slices(c, drivers, minor)
    classes = [d.split(".")[0] for d in drivers]
    device_ids = [f"{s['spec']['driver']}/{s['spec']['pool']['name']}/{d['name']}"
                  for s in slices for d in s["spec"].get("devices", [])]
    allocated = c.subset(device_ids, 3)
    variant = choose_variant(minor, frozenset(enabled), forced)
    claims = [_claim(c, i, classes, minor, "AdminAccess" in enabled,
                     consumable="ConsumableCapacity" in enabled,
                     distinct=variant != "stable" or minor >= 38)
              for i in range(c.integer(1, 2))]
    shares = _shares(c, slices) if minor >= 36 else []
    return {"release": release, "features": enabled,
            **({"variant": forced} if forced is not None else {}),
            **({"allocatedShares": shares} if shares else {}),
            "node": {"name": "node-a", "labels": {"zone": "a"}},
            "slices": slices,
            "classes": [{"metadata": {"name": k}, "spec": {"selectors": [
                {"cel": {"expression": f'device.driver == "{d}"'}}]}}
                for k, d in zip(classes, drivers, strict=True)],
            "allocated": allocated, "claims": claims}


def _shares(c: Choices, slices: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """DRA-20: allocated shares, mostly of devices that allow multiple allocations (now and
    then of one that does not), each consuming some memory or nothing recorded."""
    shareable = [(s["spec"]["driver"], f"{s['spec']['driver']}/{s['spec']['pool']['name']}/"
                  f"{d['name']}") for s in slices for d in s["spec"].get("devices", [])
                 if d.get("capacity")]
    out: list[dict[str, Any]] = []
    for driver, device in c.subset(shareable, 2):
        share: dict[str, Any] = {"device": device}
        amount = c.integer(0, 3)
        if amount:
            name = "memory" if c.integer(0, 5) < 5 else f"{driver}/memory"
            share["consumedCapacity"] = {name: ["", "4Gi", "8Gi", "12Gi"][amount]}
        out.append(share)
    return out


@st.composite
def allocate_cases(draw: st.DrawFn, releases: tuple[str, ...],
                   features: tuple[str, ...] | None = None) -> dict[str, Any]:
    """A random ``allocate`` case, Hypothesis's way (it shrinks)."""
    return build_case(HypothesisChoices(draw), releases, features)


def random_allocate_case_at(seed: int, index: int, releases: Sequence[str],
                            features: Sequence[str] | None = None) -> dict[str, Any]:
    """Case ``index`` of ``seed``: the same case however a campaign is cut into pieces."""
    return build_case(SeededChoices(random.Random(f"allocate:{seed}:{index}")), releases, features)


def draw_allocate_case(shape: object, seed: int, index: int, releases: Sequence[str],
                       features: Sequence[str] | None) -> dict[str, Any]:
    """The ``allocate`` shape's case ``index`` of ``seed``, enabling only ``features`` (None:
    any) (``numaspec differential --shape allocate``; the judge's ``Draw``)."""
    del shape
    return random_allocate_case_at(seed, index, releases, features)


def smaller_allocate_cases(case: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every ``allocate`` case one step smaller than ``case``: a claim, slice, allocated
    device, constraint, request, subrequest, device or attribute less (the differential's
    shrink steps)."""
    for key in ("claims", "slices", "allocated", "allocatedShares"):
        items = case.get(key) or []
        for i in range(len(items)):
            if key != "claims" or len(items) > 1:
                yield {**case, key: without(items, i)}
    for c, claim in enumerate(case.get("claims") or []):
        devices = claim["spec"]["devices"]

        def with_devices(new: dict[str, Any], c: int = c, claim: Any = claim
                         ) -> dict[str, Any]:
            edited = {**claim, "spec": {**claim["spec"], "devices": new}}
            return {**case, "claims": [*case["claims"][:c], edited, *case["claims"][c + 1:]]}

        constraints = devices.get("constraints") or []
        for i in range(len(constraints)):
            yield with_devices({**devices, "constraints": without(constraints, i)})
        requests = devices["requests"]
        for i, request in enumerate(requests):
            if len(requests) > 1:
                yield with_devices({**devices, "requests": without(requests, i)})
            exact = request.get("exactly") or {}
            for key in ("tolerations", "adminAccess", "capacity"):
                if key in exact:
                    plain = {**request, "exactly": {k: v for k, v in exact.items()
                                                    if k != key}}
                    yield with_devices({**devices, "requests": [*requests[:i], plain,
                                                                *requests[i + 1:]]})
            subs = request.get("firstAvailable") or []
            for j in range(len(subs) if len(subs) > 1 else 0):
                fewer = {**request, "firstAvailable": without(subs, j)}
                yield with_devices({**devices, "requests": [*requests[:i], fewer,
                                                            *requests[i + 1:]]})
    for s, slice_ in enumerate(case.get("slices") or []):
        spec = slice_["spec"]

        def with_spec(new: dict[str, Any], s: int = s, slice_: Any = slice_
                      ) -> dict[str, Any]:
            edited = {**slice_, "spec": new}
            return {**case, "slices": [*case["slices"][:s], edited, *case["slices"][s + 1:]]}

        devices = spec.get("devices") or []
        for i, device in enumerate(devices):
            yield with_spec({**spec, "devices": without(devices, i)})
            for key in ("taints", "consumesCounters", "allowMultipleAllocations", "capacity"):
                if device.get(key):
                    plain = {k: v for k, v in device.items() if k != key}
                    yield with_spec({**spec, "devices": [*devices[:i], plain,
                                                         *devices[i + 1:]]})
            for name in list(device.get("attributes") or {}):
                fewer = {**device, "attributes": {k: v for k, v in device["attributes"].items()
                                                  if k != name}}
                yield with_spec({**spec, "devices": [*devices[:i], fewer, *devices[i + 1:]]})
