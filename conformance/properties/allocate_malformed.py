"""Malformed ``allocate`` cases (issue 55: the DRA wing's reach).

The DRA objects are read as the API server and the chapter read them: a field no
``resource.k8s.io/v1`` release has, a value the API server's validation refuses, a request
policy that does not fit its capacity, a node selector or a CEL expression the chapter leaves
out.  Random cases are well formed by construction, so none of those refusals was ever
drawn.  P-ALLOCATE-MALFORMED takes a well-formed node (:func:`well_formed`: a shareable GPU
with attributes of every kind, a class and a claim) and breaks it one way at a time
(:data:`FAULTS`, each knowing the error kind DRA-0 gives for it and where that error points).
Its explicit example tries every fault; its random examples one fault at a release the
implementation models.  It judges that each broken case is refused with its kind, pointing
there.

Error kinds and where they point are numaspec's line format, so only an implementation that
claims the format is judged (PROTO-7): a real allocator reads objects the API server already
validated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
from hypothesis import example, given, note
from hypothesis import strategies as st

from numaspec.conformance.properties.allocate import AllocateImplementation, allocate_releases
from numaspec.conformance.properties.registry import register

__all__ = ["COST_THRESHOLDS", "FAULTS", "AllocateFault", "cost_threshold", "nested_loops",
           "well_formed"]

Case = dict[str, Any]

#: The releases a fault applies at unless it says otherwise: those with every feature the
#: well-formed node uses.
LATEST = ("1.37", "1.38")


def well_formed(release: str) -> Case:
    """A node every fault breaks one way: one slice with one shareable GPU (an int, a string
    and a version attribute, a memory capacity), a class selecting its driver, and a claim
    asking for one device."""
    return {
        "release": release,
        "features": ["PrioritizedList", "DeviceTaints", "ConsumableCapacity",
                     "PartitionableDevices", "AdminAccess", "ListTypeAttributes"],
        "node": {"name": "n1", "labels": {"zone": "a"}},
        "slices": [{"metadata": {"name": "s"}, "spec": {
            "driver": "gpu.example.com", "nodeName": "n1",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "g0", "attributes": {
                "idx": {"int": 0}, "model": {"string": "a"}, "fw": {"version": "1.0.0"}},
                "capacity": {"memory": {"value": "16Gi"}}}]}}],
        "classes": [{"metadata": {"name": "gpu"}, "spec": {"selectors": [
            {"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}],
        "allocated": [],
        "claims": [{"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {
            "requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "count": 1}}]}}}]}


@attrs.frozen
class AllocateFault:
    """One way to break the well-formed node: ``edit`` changes it in place; the reference
    refuses the result as ``kind``, with ``where`` starting as given."""

    name: str
    kind: str
    where: str
    edit: Callable[[Case], object]
    releases: tuple[str, ...] = LATEST


def _slice(case: Case) -> dict[str, Any]:
    spec: dict[str, Any] = case["slices"][0]["spec"]
    return spec


def _device(case: Case) -> dict[str, Any]:
    device: dict[str, Any] = _slice(case)["devices"][0]
    return device


def _request(case: Case) -> dict[str, Any]:
    request: dict[str, Any] = case["claims"][0]["spec"]["devices"]["requests"][0]
    return request


def _exactly(case: Case) -> dict[str, Any]:
    exactly: dict[str, Any] = _request(case)["exactly"]
    return exactly


def _attribute(name: str, value: dict[str, Any]) -> Callable[[Case], object]:
    return lambda case: _device(case)["attributes"].update({name: value})


def _capacity(value: str) -> Callable[[Case], object]:
    return lambda case: _device(case)["capacity"]["memory"].update(value=value)


def _policy(policy: dict[str, Any]) -> Callable[[Case], object]:
    """The memory capacity's request policy, on a device that allows multiple allocations."""
    def edit(case: Case) -> None:
        _device(case)["allowMultipleAllocations"] = True
        _device(case)["capacity"]["memory"]["requestPolicy"] = policy
    return edit


def _node_selector(term: dict[str, Any]) -> Callable[[Case], object]:
    def edit(case: Case) -> None:
        del _slice(case)["nodeName"]
        _slice(case)["nodeSelector"] = {"nodeSelectorTerms": [term]}
    return edit


def _selector(expression: str) -> Callable[[Case], object]:
    return lambda case: _exactly(case).update(selectors=[{"cel": {"expression": expression}}])


def nested_loops(depth: int, width: int) -> str:
    """``depth`` nested ``all`` loops over a list literal of ``width`` numbers."""
    literal = "[" + ",".join(str(i) for i in range(width)) + "]"
    body = 'device.attributes["gpu.example.com"].idx >= 0'
    for name in reversed("abcd"[:depth]):
        body = f"{literal}.all({name}, {name} >= 0 && {body})"
    return body


def _numbers(width: int) -> str:
    return "[" + ",".join(str(i % 10) for i in range(width)) + "]"


def _pads(count: int) -> str:
    return " && true" * count


_LONG = '"' + "x" * 998 + '"'
#: DRA-3: selectors over the well-formed device whose cost bound is the limit's, within two
#: (``cost_threshold``): each term of the bound (a loop's steps and body, ``in`` over a list,
#: string comparisons and concatenation, ``matches``) sized to come near the limit, then
#: ``&& true`` added at the top until one more would pass it.  The vectors
#: ``dra-cel-cost-just-under-*`` are answered, by numaspec and every pinned allocator; one
#: more ``&& true`` is refused (:data:`FAULTS`).  A change to the bound moves one or the other.
COST_THRESHOLDS: dict[str, tuple[Callable[[int, int], str], int, int]] = {
    "loop-body": (lambda n, p: f"{_numbers(1000)}.all(a, a >= 0{_pads(n)}){_pads(p)}",
                  490, 495),
    "in-list": (lambda n, p: f"{_numbers(560)}.all(a, a in {_numbers(560)}{_pads(n)})"
                             f"{_pads(p)}", 38, 424),
    "string-compare": (lambda n, p: f'{_numbers(n)}.all(a, ({_LONG} + "") == {_LONG} && '
                                    f"{_LONG} == {_LONG}){_pads(p)}", 1601, 170),
    "matches": (lambda n, p: f'{_numbers(n)}.all(a, "{"x" * 198}".matches("x+")){_pads(p)}',
                934, 237),
}


def cost_threshold(name: str, *, over: bool) -> str:
    """DRA-3: the selector of :data:`COST_THRESHOLDS` ``name`` at the limit, or one past it."""
    template, size, pads = COST_THRESHOLDS[name]
    return template(size, pads + over)


def _counters(*sets: dict[str, Any]) -> Callable[[Case], object]:
    return lambda case: _slice(case).update(sharedCounters=list(sets))


def _toleration(**toleration: Any) -> Callable[[Case], object]:
    return lambda case: _exactly(case).update(tolerations=[{"key": "k", **toleration}])


_DEVICE = "slices[0].spec.devices[0]"
_POLICY = f"{_DEVICE}.capacity.memory.requestPolicy"
_EXACTLY = "claims[0].spec.devices.requests[0].exactly"
_COUNTERS = {"m": {"value": "1"}}

#: DRA-0, DRA-1, DRA-3, DRA-8, DRA-16, DRA-19, DRA-20: one fault per refusal of the objects'
#: decoder, the selectors' subset and the variant's choice (not an unknown variant's name: the
#: protocol's schema refuses that before any implementation sees it, PROTO-6).
FAULTS: tuple[AllocateFault, ...] = (
    AllocateFault("unknown device field", "invalid-field", f"{_DEVICE}.colour",
                  lambda case: _device(case).update(colour="red")),
    AllocateFault("binding conditions", "not-modelled", f"{_DEVICE}.bindsToNode",
                  lambda case: _device(case).update(bindsToNode=True)),
    AllocateFault("empty driver", "invalid-field", "slices[0].spec.driver",
                  lambda case: _slice(case).update(driver="")),
    AllocateFault("version not semver", "invalid-field", f"{_DEVICE}.attributes.fw.version",
                  _attribute("fw", {"version": "1.0"})),
    AllocateFault("string past 64 bytes", "invalid-field",
                  f"{_DEVICE}.attributes.model.string", _attribute("model", {"string": "x" * 65})),
    AllocateFault("attribute of two kinds", "invalid-field", f"{_DEVICE}.attributes.idx",
                  _attribute("idx", {"int": 0, "string": "a"})),
    AllocateFault("empty list attribute", "invalid-field", f"{_DEVICE}.attributes.nums.ints",
                  _attribute("nums", {"ints": []})),
    AllocateFault("v1beta1 basic device", "invalid-field", f"{_DEVICE}.basic",
                  lambda case: _device(case).update(basic={})),
    AllocateFault("unknown taint effect", "invalid-field", f"{_DEVICE}.taints[0].effect",
                  lambda case: _device(case).update(
                      taints=[{"key": "k", "effect": "Sometimes"}])),
    AllocateFault("too many counter consumptions", "invalid-field",
                  f"{_DEVICE}.consumesCounters",
                  lambda case: _device(case).update(consumesCounters=[
                      {"counterSet": f"cs{i}", "counters": _COUNTERS} for i in range(3)])),
    AllocateFault("negative capacity", "not-modelled", f"{_DEVICE}.capacity.memory.value",
                  _capacity("-1Gi")),
    AllocateFault("capacity finer than a milli-unit", "not-modelled",
                  f"{_DEVICE}.capacity.memory.value", _capacity("1u")),
    AllocateFault("capacity above 10^15", "not-modelled", f"{_DEVICE}.capacity.memory.value",
                  _capacity("2E")),
    AllocateFault("capacity named with and without its domain", "not-modelled",
                  f"{_DEVICE}.capacity.memory",
                  lambda case: _device(case)["capacity"].update(
                      {"gpu.example.com/memory": {"value": "1Gi"}})),
    AllocateFault("request policy on a device not shared", "invalid-field", _POLICY,
                  lambda case: _device(case)["capacity"]["memory"].update(
                      requestPolicy={"default": "1Gi"})),
    AllocateFault("valid values and a valid range", "invalid-field", _POLICY,
                  _policy({"default": "1Gi", "validValues": ["1Gi"],
                           "validRange": {"min": "1Gi"}})),
    AllocateFault("valid values without a default", "invalid-field", f"{_POLICY}.default",
                  _policy({"validValues": ["1Gi"]})),
    AllocateFault("valid values out of order", "invalid-field", f"{_POLICY}.validValues[1]",
                  _policy({"default": "1Gi", "validValues": ["2Gi", "1Gi"]})),
    AllocateFault("a valid value above the capacity", "invalid-field",
                  f"{_POLICY}.validValues[1]",
                  _policy({"default": "1Gi", "validValues": ["1Gi", "32Gi"]})),
    AllocateFault("a default that is no valid value", "invalid-field", f"{_POLICY}.default",
                  _policy({"default": "3Gi", "validValues": ["1Gi", "2Gi"]})),
    AllocateFault("a valid range without min", "invalid-field", f"{_POLICY}.validRange.min",
                  _policy({"default": "1Gi", "validRange": {"max": "2Gi"}})),
    AllocateFault("a fractional valid range", "not-modelled", f"{_POLICY}.validRange.min",
                  _policy({"default": "1500m", "validRange": {"min": "1500m"}})),
    AllocateFault("min plus step past the capacity", "invalid-field",
                  f"{_POLICY}.validRange.step",
                  _policy({"default": "1Gi", "validRange": {"min": "1Gi", "step": "16Gi"}})),
    AllocateFault("max off the step", "invalid-field", f"{_POLICY}.validRange.max",
                  _policy({"default": "1Gi", "validRange": {
                      "min": "1Gi", "max": "2500Mi", "step": "1Gi"}})),
    AllocateFault("counter set name not a DNS label", "invalid-field",
                  "slices[0].spec.sharedCounters[0].name",
                  _counters({"name": "Bad_Name", "counters": _COUNTERS})),
    AllocateFault("counter set without counters", "invalid-field",
                  "slices[0].spec.sharedCounters[0].counters",
                  _counters({"name": "cs", "counters": {}})),
    AllocateFault("counter set listed twice", "invalid-field",
                  "slices[0].spec.sharedCounters[1].name",
                  _counters({"name": "cs", "counters": _COUNTERS},
                            {"name": "cs", "counters": _COUNTERS})),
    AllocateFault("node selector on fields", "not-modelled",
                  "slices[0].spec.nodeSelector.nodeSelectorTerms[0].matchFields",
                  _node_selector({"matchFields": [
                      {"key": "metadata.name", "operator": "In", "values": ["n1"]}]})),
    AllocateFault("node selector operator Gt", "not-modelled",
                  "slices[0].spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0]"
                  ".operator",
                  _node_selector({"matchExpressions": [
                      {"key": "zone", "operator": "Gt", "values": ["1"]}]})),
    AllocateFault("nodeName and allNodes", "invalid-field", "slices[0].spec",
                  lambda case: _slice(case).update(allNodes=True)),
    AllocateFault("a pool of no slices", "invalid-field",
                  "slices[0].spec.pool.resourceSliceCount",
                  lambda case: _slice(case)["pool"].update(resourceSliceCount=0)),
    AllocateFault("unknown allocation mode", "invalid-field", f"{_EXACTLY}.allocationMode",
                  lambda case: _exactly(case).update(allocationMode="Some")),
    AllocateFault("a count of zero", "invalid-field", f"{_EXACTLY}.count",
                  lambda case: _exactly(case).update(count=0)),
    AllocateFault("a capacity asked with and without its domain", "not-modelled",
                  f"{_EXACTLY}.capacity.requests.memory",
                  lambda case: _exactly(case).update(capacity={"requests": {
                      "memory": "1Gi", "gpu.example.com/memory": "1Gi"}})),
    AllocateFault("unknown toleration operator", "invalid-field",
                  f"{_EXACTLY}.tolerations[0].operator", _toleration(operator="Like")),
    AllocateFault("unknown toleration effect", "invalid-field",
                  f"{_EXACTLY}.tolerations[0].effect",
                  _toleration(operator="Exists", effect="Sometimes")),
    AllocateFault("toleration seconds as a string", "invalid-field",
                  f"{_EXACTLY}.tolerations[0].tolerationSeconds",
                  _toleration(operator="Exists", effect="NoExecute", tolerationSeconds="10")),
    AllocateFault("exactly and firstAvailable", "invalid-field",
                  "claims[0].spec.devices.requests[0]",
                  lambda case: _request(case).update(
                      firstAvailable=[{"name": "a", "deviceClassName": "gpu"}])),
    AllocateFault("neither exactly nor firstAvailable", "invalid-field",
                  "claims[0].spec.devices.requests[0]",
                  lambda case: _request(case).pop("exactly")),
    AllocateFault("a constraint of neither kind", "invalid-field",
                  "claims[0].spec.devices.constraints[0]",
                  lambda case: case["claims"][0]["spec"]["devices"].update(
                      constraints=[{"requests": ["r"]}])),
    AllocateFault("CEL that does not compile", "not-modelled", "device.driver ==",
                  _selector("device.driver ==")),
    AllocateFault("a quantity function left out", "not-modelled", "device.capacity",
                  _selector('device.capacity["gpu.example.com"].memory.sign() > 0')),
    AllocateFault("CEL that is not a boolean", "not-modelled", "1", _selector("1")),
    AllocateFault("more than ten valid values", "invalid-field", f"{_POLICY}.validValues",
                  _policy({"default": "1Gi", "validValues": [f"{i}Gi" for i in range(1, 12)]})),
    AllocateFault("a valid range's min above the capacity", "invalid-field",
                  f"{_POLICY}.validRange.min",
                  _policy({"default": "32Gi", "validRange": {"min": "32Gi"}})),
    AllocateFault("more than 32 counters in a set", "invalid-field",
                  "slices[0].spec.sharedCounters[0].counters",
                  _counters({"name": "cs", "counters": {
                      f"c{i}": {"value": "1"} for i in range(33)}})),
    AllocateFault("more than eight counter sets", "invalid-field",
                  "slices[0].spec.sharedCounters",
                  _counters(*({"name": f"cs{i}", "counters": _COUNTERS} for i in range(9)))),
    AllocateFault("counter sets beside devices", "invalid-field", "slices[0].spec",
                  _counters({"name": "cs", "counters": _COUNTERS})),
    AllocateFault("a selector past CEL's cost limit", "not-modelled", "[0,",
                  _selector(nested_loops(3, 50))),
    AllocateFault("a selector past CEL in Python's loop budget", "not-modelled", "[0,",
                  _selector(nested_loops(2, 100))),
    *(AllocateFault(f"a selector just past the cost bound ({name})", "not-modelled", "[",
                    _selector(cost_threshold(name, over=True)))
      for name in COST_THRESHOLDS),
    AllocateFault("an attribute named twice, read before 1.38", "not-modelled",
                  'device.attributes["gpu.example.com"].idx',
                  lambda case: (_device(case)["attributes"].update(
                      {"gpu.example.com/idx": {"int": 1}}),
                      _selector('device.attributes["gpu.example.com"].idx == 1')(case)),
                  ("1.37",)),
    AllocateFault("a version compared with a string", "not-modelled",
                  'device.attributes["gpu.example.com"].fw',
                  _selector('device.attributes["gpu.example.com"].fw == "1.0.0"')),
    *(AllocateFault(f"{call} given a number", "not-modelled", call.split("(")[0],
                    _selector(f"{call} == {call}"))
      for call in ("quantity(1)", "isQuantity(1)", "semver(1)", "isSemver(1)")),
    AllocateFault("compareTo across kinds", "not-modelled", "semver",
                  _selector('semver("1.0.0").compareTo(quantity("1")) == 0')),
    AllocateFault("major() of a quantity", "not-modelled", "quantity",
                  _selector('quantity("1").major() == 1')),
    AllocateFault("a variant forced at 1.33", "invalid-field", "variant",
                  lambda case: case.update(variant="stable", features=[]), ("1.33",)),
    AllocateFault("a variant forced at 1.34", "invalid-field", "variant",
                  lambda case: case.update(variant="stable", features=[]), ("1.34",)),
    AllocateFault("a variant without the features", "invalid-field", "variant",
                  lambda case: case.update(variant="stable"), ("1.36",)),
)

#: P-ALLOCATE-MALFORMED's explicit example: every fault at the first of its releases.
EVERY_FAULT = None


def _check(impl: AllocateImplementation, fault: AllocateFault, release: str) -> None:
    case = well_formed(release)
    fault.edit(case)
    answer = impl.allocate(case)
    error = answer.get("error") if isinstance(answer, dict) else None
    assert isinstance(error, dict), (
        f"{fault.name} at {release}: answered {str(answer)[:300]}, not refused as "
        f"{fault.kind}")
    assert error.get("kind") == fault.kind and str(error.get("where", "")).startswith(
        fault.where), (f"{fault.name} at {release}: refused as {error.get('kind')!r} at "
                       f"{error.get('where')!r}, not {fault.kind!r} at {fault.where!r}...")


@register("P-ALLOCATE-MALFORMED", rules=["DRA-0", "DRA-1", "DRA-3", "DRA-8", "DRA-16",
                                         "DRA-19", "DRA-20"],
          level="equivalence", requires="allocate", since=33, op="allocate", format=True)
@given(fault=st.sampled_from(FAULTS), data=st.data())
@example(fault=EVERY_FAULT, data=None)
def malformed_cases_refused(impl: AllocateImplementation, fault: AllocateFault | None,
                            data: st.DataObject | None) -> None:
    """Malformed allocate cases: each is refused with the kind DRA-0 gives, pointing at what
    is wrong."""
    modelled = allocate_releases(impl)
    if fault is None or data is None:
        for each in FAULTS:
            if at := [r for r in each.releases if r in modelled]:
                _check(impl, each, at[0])
        return
    if not (at := [r for r in fault.releases if r in modelled]):
        return
    release = data.draw(st.sampled_from(at), label="release")
    note(f"{fault.name} at {release}")
    _check(impl, fault, release)
