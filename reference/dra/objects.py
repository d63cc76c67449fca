"""The DRA objects the allocator reads, decoded from their ``resource.k8s.io/v1`` JSON (spec
chapter ``dra.md``, DRA-1, DRA-3, DRA-4, DRA-5; shared counters DRA-19, consumable capacity
DRA-20, distinctAttribute DRA-21).

Only the fields that decide which devices are picked on one node are read.  A field that
would change the pick but that the chapter leaves out (per-device node selection, binding
conditions, compatibility groups) is refused with
:class:`~numaspec.errors.NotModelledError` naming it, never silently dropped; a field that does
not change the pick (a class's or claim's opaque ``config``, labels, annotations) is ignored.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from attrs import frozen

from numaspec.errors import InvalidFieldError, NotModelledError
from numaspec.node.quantity import parse_quantity
from numaspec.strict_json import expect, type_name

__all__ = [
    "AttributeValue",
    "MAX_CAPACITY",
    "Capacity",
    "CapacityRange",
    "Claim",
    "Constraint",
    "CounterSet",
    "Device",
    "DeviceClass",
    "LIST_KINDS",
    "NodeInfo",
    "Request",
    "RequestPolicy",
    "Slice",
    "TAINT_EFFECTS",
    "Taint",
    "Toleration",
    "capacity_amounts",
    "capacity_quantity",
    "decode_class",
    "decode_claim",
    "decode_node",
    "decode_slice",
]

#: DRA-1: an attribute's value, as ``(type, value)``: ``("int", 3)``, ``("bool", True)``,
#: ``("string", "0000:00:01.0")`` or ``("version", "1.2.3")``.
AttributeValue = tuple[str, Any]

_ATTRIBUTE_TYPES = {"int": int, "bool": bool, "string": str, "version": str}
#: DRA-18: the list-typed attribute kinds (from 1.36), and the scalar kind of their values.
LIST_KINDS = {"ints": "int", "bools": "bool", "strings": "string", "versions": "version"}
#: Fields of a device, a slice, a request or a claim that change which devices are picked and
#: that the chapter leaves out (DRA-0), with the reason a refusal gives.
_LEFT_OUT = {
    "perDeviceNodeSelection": "partitionable devices (per-device node selection)",
    "bindingConditions": "binding conditions",
    "bindingFailureConditions": "binding conditions",
    "compatibilityGroups": "compatibility groups",
    "derivedAttributes": "derived attributes",
    "partitionTypeAttribute": "partitionable devices (partition types)",
    "skipNodeOperations": "optional node operations",
    "nodeAllocatableResourceMappings": "node allocatable resources",
    "nodeAllocatableResources": "node allocatable resources",
    "bindsToNode": "binding conditions",
}

_OBJECT = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})
_EXACT = frozenset({"deviceClassName", "selectors", "allocationMode", "count", "adminAccess",
                    "tolerations", "capacity", "derivedAttributes"})
#: The fields of each object the allocator reads, as resource.k8s.io/v1 has them in any
#: release from 1.34 to 1.38 (k8s.io/api ``resource/v1/types.go``).  A field none of them has
#: is a typo, refused as the API server's strict decoding (and ``kubectl --validate=strict``)
#: refuses it, naming it: read leniently it would be dropped and change the answer.
_FIELDS: dict[str, frozenset[str]] = {
    "ResourceSlice": _OBJECT,
    "ResourceSliceSpec": frozenset({"driver", "pool", "nodeName", "nodeSelector", "allNodes",
                                    "devices", "perDeviceNodeSelection", "sharedCounters",
                                    "partitionTypeAttribute", "skipNodeOperations"}),
    "ResourcePool": frozenset({"name", "generation", "resourceSliceCount"}),
    "Device": frozenset({"name", "attributes", "capacity", "consumesCounters", "nodeName",
                         "nodeSelector", "allNodes", "taints", "bindsToNode",
                         "bindingConditions", "bindingFailureConditions",
                         "allowMultipleAllocations", "nodeAllocatableResourceMappings",
                         "nodeAllocatableResources"}),
    "DeviceAttribute": frozenset({"int", "bool", "string", "version", "ints", "bools",
                                  "strings", "versions"}),
    "DeviceCapacity": frozenset({"value", "requestPolicy"}),
    "CapacityRequestPolicy": frozenset({"default", "validValues", "validRange"}),
    "CapacityRequestPolicyRange": frozenset({"min", "max", "step"}),
    "CapacityRequirements": frozenset({"requests"}),
    "DeviceClass": _OBJECT,
    "DeviceClassSpec": frozenset({"selectors", "config", "extendedResourceName"}),
    "DeviceSelector": frozenset({"cel"}),
    "CELDeviceSelector": frozenset({"expression"}),
    "ResourceClaim": _OBJECT,
    "ResourceClaimSpec": frozenset({"devices"}),
    "DeviceClaim": frozenset({"requests", "constraints", "config"}),
    "DeviceRequest": frozenset({"name", "exactly", "firstAvailable"}),
    "ExactDeviceRequest": _EXACT,
    "DeviceSubRequest": (_EXACT - {"adminAccess"}) | {"name"},
    "DeviceConstraint": frozenset({"requests", "matchAttribute", "distinctAttribute"}),
    "DeviceTaint": frozenset({"key", "value", "effect", "timeAdded"}),
    "DeviceToleration": frozenset({"key", "operator", "value", "effect", "tolerationSeconds"}),
    "CounterSet": frozenset({"name", "counters"}),
    "Counter": frozenset({"value"}),
    "DeviceCounterConsumption": frozenset({"counterSet", "counters", "compatibilityGroups"}),
}

#: DRA-19: the API server's limits on counters (``resource/v1/types.go`` from 1.35):
#: counter sets per slice, counters per set or per consumption, consumptions per device.
MAX_COUNTER_SETS = 8
MAX_COUNTERS = 32
MAX_CONSUMPTIONS = 2
#: DRA-20: the API server's limit on a policy's ``validValues``
#: (``CapacityRequestPolicyDiscreteMaxOptions``).
MAX_VALID_VALUES = 10
#: DRA-20: the largest capacity quantity numaspec models: the allocator's integer and
#: milli-value arithmetic (``Value()``, ``MilliValue()`` in int64) is exact below it, and
#: what it does past int64 differs from release to release.
MAX_CAPACITY = Fraction(10**15)
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")

#: DRA-16: the taint effects the API takes (``None`` from 1.35; the allocator ignores it
#: where it looks at effects at all).
TAINT_EFFECTS = ("NoSchedule", "NoExecute", "None")


def _known(body: dict[str, Any], kind: str, where: str) -> None:
    """A field ``kind`` has in no release is refused, naming it (see :data:`_FIELDS`)."""
    fields = _FIELDS[kind]
    for key in body:
        if key not in fields:
            raise InvalidFieldError(f"unknown field {key!r}: a {kind} has "
                                    f"{', '.join(sorted(fields))}", where=f"{where}.{key}")


def _refuse_left_out(body: dict[str, Any], where: str) -> None:
    for key, value in body.items():
        if key in _LEFT_OUT and value not in (None, False, [], {}):
            raise NotModelledError(f"{_LEFT_OUT[key]} is outside the chapter's scope (DRA-0)",
                                   where=f"{where}.{key}")


def _obj(value: object, where: str) -> dict[str, Any]:
    expect(value, dict, "an object", where)
    assert isinstance(value, dict)
    return value


def _str(body: dict[str, Any], key: str, where: str, *, default: str | None = None) -> str:
    if key not in body or body[key] is None:
        if default is not None:
            return default
        raise InvalidFieldError("required", where=f"{where}.{key}")
    value = body[key]
    expect(value, str, "a string", f"{where}.{key}")
    if not value and default is None:
        raise InvalidFieldError("must not be empty", where=f"{where}.{key}")
    assert isinstance(value, str)
    return value


def _int(body: dict[str, Any], key: str, where: str, default: int) -> int:
    value = body.get(key, default)
    if value is None:
        return default
    expect(value, int, "an integer", f"{where}.{key}")
    assert isinstance(value, int)
    return value


def _list(body: dict[str, Any], key: str, where: str) -> list[Any]:
    value = body.get(key) or []
    expect(value, list, "an array", f"{where}.{key}")
    assert isinstance(value, list)
    return value


@frozen
class NodeInfo:
    """The node the allocation is for: its name and labels (DRA-2)."""

    name: str
    labels: dict[str, str]


def decode_node(value: object, where: str = "node") -> NodeInfo:
    body = _obj(value, where)
    labels = body.get("labels") or {}
    expect(labels, dict, "an object of strings", f"{where}.labels")
    for key, item in labels.items():
        expect(item, str, "a string", f"{where}.labels.{key}")
    return NodeInfo(_str(body, "name", where), dict(labels))


@frozen
class Taint:
    """DRA-16: a device's taint."""

    key: str
    value: str
    effect: str


@frozen
class Toleration:
    """DRA-16: a request's toleration (``operator`` ``Equal`` or ``Exists``)."""

    key: str
    operator: str
    value: str
    effect: str


@frozen
class Device:
    """DRA-1: one device of a slice: its name and attributes, keyed by qualified name as the
    slice spells them (``numa`` or ``gpu.example.com/numa``)."""

    name: str
    attributes: dict[str, AttributeValue]
    capacity: dict[str, Capacity]
    taints: tuple[Taint, ...] = ()
    #: DRA-19: the counters the device consumes, per counter set, in the order listed
    consumes: tuple[CounterSet, ...] = ()
    #: DRA-20: ``allowMultipleAllocations`` (the device may be shared out)
    multiple: bool = False


@frozen
class CapacityRange:
    """DRA-20: a ``validRange`` request policy: at least ``min``, at most ``max``, in steps
    of ``step`` from ``min``."""

    min: Fraction
    max: Fraction | None = None
    step: Fraction | None = None


@frozen
class RequestPolicy:
    """DRA-20: how a share's request for a capacity is rounded (``validValues`` or
    ``validRange``) and what it consumes when it asks for none (``default``)."""

    default: Fraction | None = None
    valid_values: tuple[Fraction, ...] | None = None
    valid_range: CapacityRange | None = None


@frozen
class Capacity:
    """DRA-20: one capacity of a device: its amount and, on a device that can be shared, its
    request policy."""

    value: Fraction
    policy: RequestPolicy | None = None


@frozen
class CounterSet:
    """DRA-19: a counter set of a slice (``sharedCounters``), or what a device consumes from
    one (``consumesCounters``: ``name`` is the set's): counter name to exact amount."""

    name: str
    counters: tuple[tuple[str, Fraction], ...]


@frozen
class Slice:
    """DRA-1: a ResourceSlice: which node it is for, its pool and the pool's generation and
    slice count, and its devices in the order they are listed."""

    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str | None
    all_nodes: bool
    node_selector: list[list[dict[str, Any]]] | None
    devices: tuple[Device, ...]
    #: DRA-19: the slice's counter sets (from 1.35 a slice has these or devices, not both)
    counter_sets: tuple[CounterSet, ...] = ()


#: DRA-1: the longest string or version value an attribute may hold
#: (``DeviceAttributeMaxValueLength``).
MAX_VALUE_LENGTH = 64
_NUMBER = r"(?:0|[1-9][0-9]*)"
_PRE = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_BUILD = r"[0-9A-Za-z-]+"
#: DRA-1: a semantic version as semver.org 2.0.0 writes it (what the API server takes).
SEMVER = re.compile(rf"{_NUMBER}\.{_NUMBER}\.{_NUMBER}(?:-{_PRE}(?:\.{_PRE})*)?"
                    rf"(?:\+{_BUILD}(?:\.{_BUILD})*)?")


def _check_text_value(item: object, kind: str, where: str) -> None:
    """DRA-1: a string or version value (``kind``: the value's scalar kind) the API server
    would refuse is refused, naming it: longer than :data:`MAX_VALUE_LENGTH` bytes, or a
    version that is not semver 2.0.0."""
    if not isinstance(item, str):
        return  # an int or a bool: nothing to check
    if kind == "version" and not SEMVER.fullmatch(item):
        raise InvalidFieldError(f"{item!r} is not a semantic version (semver.org 2.0.0, "
                                "as the API server requires)", where=where)
    if len(item.encode()) > MAX_VALUE_LENGTH:
        raise InvalidFieldError(f"longer than {MAX_VALUE_LENGTH} bytes "
                                f"({len(item.encode())})", where=where)


def _attribute(value: object, where: str) -> AttributeValue:
    body = _obj(value, where)
    _refuse_left_out(body, where)
    _known(body, "DeviceAttribute", where)
    _refuse_left_out(body, where)
    kinds = [k for k in body if body[k] is not None]
    if len(kinds) != 1 or (kinds[0] not in _ATTRIBUTE_TYPES and kinds[0] not in LIST_KINDS):
        raise InvalidFieldError("exactly one of int, bool, string, version, ints, bools, "
                                "strings, versions", where=where)
    kind = kinds[0]
    if kind in LIST_KINDS:
        # DRA-18: a list-typed attribute (from 1.36), kept as a tuple of its values
        element = _ATTRIBUTE_TYPES[LIST_KINDS[kind]]
        items = body[kind]
        expect(items, list, "an array", f"{where}.{kind}")
        assert isinstance(items, list)
        if not items:
            raise InvalidFieldError("must not be empty", where=f"{where}.{kind}")
        for i, item in enumerate(items):
            expect(item, element, f"a {type_name(element())}", f"{where}.{kind}[{i}]")
            _check_text_value(item, LIST_KINDS[kind], f"{where}.{kind}[{i}]")
        return kind, tuple(items)
    expect(body[kind], _ATTRIBUTE_TYPES[kind], f"a {type_name(_ATTRIBUTE_TYPES[kind]())}",
           f"{where}.{kind}")
    _check_text_value(body[kind], kind, f"{where}.{kind}")
    return kind, body[kind]


def _device(value: object, where: str) -> Device:
    body = _obj(value, where)
    if "basic" in body:
        raise InvalidFieldError("resource.k8s.io/v1 devices carry attributes directly, not "
                                "under 'basic' (v1beta1)", where=f"{where}.basic")
    _known(body, "Device", where)
    _refuse_left_out(body, where)
    attributes = body.get("attributes") or {}
    expect(attributes, dict, "an object", f"{where}.attributes")
    capacity = body.get("capacity") or {}
    expect(capacity, dict, "an object", f"{where}.capacity")
    multiple = body.get("allowMultipleAllocations")
    if multiple is not None:
        expect(multiple, bool, "a boolean", f"{where}.allowMultipleAllocations")
    caps = {key: _capacity(cap, f"{where}.capacity.{key}", bool(multiple))
            for key, cap in capacity.items()}
    taints = []
    for i, item in enumerate(_list(body, "taints", where)):
        twhere = f"{where}.taints[{i}]"
        tbody = _obj(item, twhere)
        _known(tbody, "DeviceTaint", twhere)
        effect = _str(tbody, "effect", twhere)
        if effect not in TAINT_EFFECTS:
            raise InvalidFieldError(f"unknown taint effect {effect!r} (known: "
                                    f"{', '.join(TAINT_EFFECTS)})", where=f"{twhere}.effect")
        taints.append(Taint(_str(tbody, "key", twhere), _str(tbody, "value", twhere,
                                                            default=""), effect))
    consumes = tuple(_counter_set(item, f"{where}.consumesCounters[{i}]",
                                  "DeviceCounterConsumption", "counterSet")
                     for i, item in enumerate(_list(body, "consumesCounters", where)))
    if len(consumes) > MAX_CONSUMPTIONS:
        raise InvalidFieldError(f"at most {MAX_CONSUMPTIONS} counter consumptions per device "
                                f"({len(consumes)})", where=f"{where}.consumesCounters")
    return Device(_str(body, "name", where),
                  {key: _attribute(attr, f"{where}.attributes.{key}")
                   for key, attr in attributes.items()}, caps, tuple(taints), consumes,
                  bool(multiple))


def capacity_quantity(value: object, where: str) -> Fraction:
    """DRA-20: a capacity quantity (an amount, a policy's bound, a request or what a share
    consumes): a typed error where the API refuses it, a ``not-modelled`` one where it is
    outside what numaspec models (negative, finer than a milli-unit, above
    :data:`MAX_CAPACITY`: the releases' arithmetic differs there)."""
    expect(value, str, "a quantity such as \"4\" or \"40Gi\"", where)
    amount = parse_quantity(value, where=where)
    if amount < 0:
        raise NotModelledError(f"a negative capacity quantity ({value}) is outside the "
                               "chapter's scope (DRA-20)", where=where)
    if (amount * 1000).denominator != 1:
        raise NotModelledError(f"a capacity quantity finer than a milli-unit ({value}) is "
                               "outside the chapter's scope (DRA-20)", where=where)
    if amount > MAX_CAPACITY:
        raise NotModelledError(f"a capacity quantity above 10^15 ({value}) is outside the "
                               "chapter's scope (DRA-20)", where=where)
    return amount


def _capacity(value: object, where: str, multiple: bool) -> Capacity:
    """DRA-20: a device capacity and its request policy, checked as the API server checks
    them (``validateRequestPolicy``)."""
    body = _obj(value, where)
    _known(body, "DeviceCapacity", where)
    amount = capacity_quantity(body.get("value"), f"{where}.value")
    if body.get("requestPolicy") is None:
        return Capacity(amount)
    pwhere = f"{where}.requestPolicy"
    if not multiple:
        raise InvalidFieldError("forbidden: allowMultipleAllocations must be true",
                                where=pwhere)
    policy = _obj(body["requestPolicy"], pwhere)
    _known(policy, "CapacityRequestPolicy", pwhere)
    default = (capacity_quantity(policy["default"], f"{pwhere}.default")
               if policy.get("default") is not None else None)
    values = _list(policy, "validValues", pwhere) or None
    span = policy.get("validRange")
    if values is not None and span is not None:
        raise InvalidFieldError("exactly one of validValues, validRange", where=pwhere)
    if (values is not None or span is not None) and default is None:
        raise InvalidFieldError("required when validValues or validRange is set",
                                where=f"{pwhere}.default")
    if values is not None:
        valid = tuple(capacity_quantity(v, f"{pwhere}.validValues[{i}]")
                      for i, v in enumerate(values))
        if len(valid) > MAX_VALID_VALUES:
            raise InvalidFieldError(f"at most {MAX_VALID_VALUES} values ({len(valid)})",
                                    where=f"{pwhere}.validValues")
        for i in range(1, len(valid)):
            if valid[i] <= valid[i - 1]:
                raise InvalidFieldError("values must be sorted in ascending order, without "
                                        "duplicates", where=f"{pwhere}.validValues[{i}]")
        if valid[-1] > amount:
            raise InvalidFieldError("option is larger than capacity value",
                                    where=f"{pwhere}.validValues[{len(valid) - 1}]")
        if default not in valid:
            raise InvalidFieldError("must be one of validValues", where=f"{pwhere}.default")
        return Capacity(amount, RequestPolicy(default, valid))
    if span is not None:
        rwhere = f"{pwhere}.validRange"
        rbody = _obj(span, rwhere)
        _known(rbody, "CapacityRequestPolicyRange", rwhere)
        if rbody.get("min") is None:
            raise InvalidFieldError("required", where=f"{rwhere}.min")
        bounds = {key: capacity_quantity(rbody[key], f"{rwhere}.{key}")
                  for key in ("min", "max", "step") if rbody.get(key) is not None}
        for key, bound in bounds.items():
            if bound.denominator != 1:
                # whole bounds: the releases' integer and milli-value paths agree there
                raise NotModelledError(f"a fractional validRange bound ({rbody[key]}) is "
                                       "outside the chapter's scope (DRA-20)",
                                       where=f"{rwhere}.{key}")
        low, high, step = bounds["min"], bounds.get("max"), bounds.get("step")
        assert default is not None
        checks = [(low > amount, "min", "must be less than or equal to capacity value"),
                  (default < low, "default", "must be greater than or equal to min"),
                  (high is not None and high < low, "max", "must be greater than or equal "
                   "to min"),
                  (high is not None and high > amount, "max", "must be less than or equal "
                   "to capacity value"),
                  (high is not None and default > high, "default", "must be less than or "
                   "equal to max"),
                  (step is not None and step <= 0, "step", "must be greater than zero")]
        for failed, key, message in checks:
            if failed:
                raise InvalidFieldError(message,
                                        where=f"{rwhere if key != 'default' else pwhere}."
                                              f"{key}")
        if step is not None:
            if low + step > amount:
                raise InvalidFieldError("min plus step must be less than or equal to "
                                        "capacity value", where=f"{rwhere}.step")
            aligned: tuple[tuple[str, Fraction | None], ...] = (("default", default),
                                                                ("max", high))
            for key, edge in aligned:
                if edge is not None and (edge - low) % step:
                    raise InvalidFieldError("must be min plus a multiple of step",
                                            where=f"{rwhere if key == 'max' else pwhere}."
                                                  f"{key}")
        return Capacity(amount, RequestPolicy(default, None, CapacityRange(low, high, step)))
    return Capacity(amount, RequestPolicy(default))


def _counter_name(value: str, where: str) -> None:
    if len(value) > 63 or not _LABEL.fullmatch(value):
        raise InvalidFieldError(f"{value!r} is not a DNS label (lower-case letters, digits and "
                                "'-', at most 63)", where=where)


def _counter_set(value: object, where: str, kind: str, key: str) -> CounterSet:
    """DRA-19: a ``sharedCounters`` entry (``kind`` CounterSet, named by ``name``) or a
    ``consumesCounters`` one (DeviceCounterConsumption, by ``counterSet``)."""
    body = _obj(value, where)
    _known(body, kind, where)
    _refuse_left_out(body, where)
    name = _str(body, key, where)
    _counter_name(name, f"{where}.{key}")
    counters = body.get("counters") or {}
    expect(counters, dict, "an object", f"{where}.counters")
    if not counters:
        raise InvalidFieldError("required", where=f"{where}.counters")
    if len(counters) > MAX_COUNTERS:
        raise InvalidFieldError(f"at most {MAX_COUNTERS} counters ({len(counters)})",
                                where=f"{where}.counters")
    out = []
    for counter, item in counters.items():
        cwhere = f"{where}.counters.{counter}"
        _counter_name(counter, cwhere)
        cbody = _obj(item, cwhere)
        _known(cbody, "Counter", cwhere)
        expect(cbody.get("value"), str, "a quantity such as \"4\" or \"40Gi\"",
               f"{cwhere}.value")
        out.append((counter, parse_quantity(cbody["value"], where=f"{cwhere}.value")))
    return CounterSet(name, tuple(out))


def _node_selector(value: object, where: str) -> list[list[dict[str, Any]]]:
    body = _obj(value, where)
    terms = []
    for t, term in enumerate(_list(body, "nodeSelectorTerms", where)):
        twhere = f"{where}.nodeSelectorTerms[{t}]"
        tbody = _obj(term, twhere)
        if tbody.get("matchFields"):
            raise NotModelledError("matchFields in a slice's node selector",
                                   where=f"{twhere}.matchFields")
        exprs = []
        for e, expr in enumerate(_list(tbody, "matchExpressions", twhere)):
            ewhere = f"{twhere}.matchExpressions[{e}]"
            ebody = _obj(expr, ewhere)
            op = _str(ebody, "operator", ewhere)
            if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
                raise NotModelledError(f"node selector operator {op!r}",
                                       where=f"{ewhere}.operator")
            values = _list(ebody, "values", ewhere)
            for v, item in enumerate(values):
                expect(item, str, "a string", f"{ewhere}.values[{v}]")
            exprs.append({"key": _str(ebody, "key", ewhere), "operator": op,
                          "values": list(values)})
        terms.append(exprs)
    return terms


def decode_slice(value: object, where: str) -> Slice:
    """DRA-1: one ResourceSlice (``{"metadata": {"name"}, "spec": {...}}``)."""
    body = _obj(value, where)
    _known(body, "ResourceSlice", where)
    meta = _obj(body.get("metadata") or {}, f"{where}.metadata")
    spec = _obj(body.get("spec"), f"{where}.spec")
    swhere = f"{where}.spec"
    _known(spec, "ResourceSliceSpec", swhere)
    _refuse_left_out(spec, swhere)
    pool = _obj(spec.get("pool"), f"{swhere}.pool")
    _known(pool, "ResourcePool", f"{swhere}.pool")
    node_name = spec.get("nodeName")
    if node_name is not None:
        expect(node_name, str, "a string", f"{swhere}.nodeName")
    all_nodes = spec.get("allNodes") or False
    expect(all_nodes, bool, "a boolean", f"{swhere}.allNodes")
    selector = (_node_selector(spec["nodeSelector"], f"{swhere}.nodeSelector")
                if spec.get("nodeSelector") is not None else None)
    chosen = sum(1 for x in (node_name, all_nodes or None, selector) if x)
    if chosen != 1:
        raise InvalidFieldError("exactly one of nodeName, nodeSelector, allNodes",
                                where=swhere)
    count = _int(pool, "resourceSliceCount", f"{swhere}.pool", 0)
    if count < 1:
        raise InvalidFieldError("must be at least 1", where=f"{swhere}.pool.resourceSliceCount")
    counter_sets = tuple(_counter_set(item, f"{swhere}.sharedCounters[{i}]", "CounterSet",
                                      "name")
                         for i, item in enumerate(_list(spec, "sharedCounters", swhere)))
    if len(counter_sets) > MAX_COUNTER_SETS:
        raise InvalidFieldError(f"at most {MAX_COUNTER_SETS} counter sets per slice "
                                f"({len(counter_sets)})", where=f"{swhere}.sharedCounters")
    names = [c.name for c in counter_sets]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise InvalidFieldError(f"counter set {name!r} listed twice",
                                    where=f"{swhere}.sharedCounters[{i}].name")
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        # DRA-19: the API server refuses both (from 1.35)
        raise InvalidFieldError("only one of sharedCounters or devices is allowed",
                                where=swhere)
    driver = _str(spec, "driver", swhere)
    devices = tuple(_device(d, f"{swhere}.devices[{i}]")
                    for i, d in enumerate(_list(spec, "devices", swhere)))
    for i, device in enumerate(devices):
        for key in device.capacity:
            if "/" not in key and f"{driver}/{key}" in device.capacity:
                # DRA-20: 1.36 and 1.37 read two capacities, 1.38 one (the qualified)
                raise NotModelledError(f"a capacity named both {key!r} and "
                                       f"'{driver}/{key}' is outside the chapter's scope "
                                       "(DRA-20)",
                                       where=f"{swhere}.devices[{i}].capacity.{key}")
    return Slice(
        name=_str(meta, "name", f"{where}.metadata"), driver=driver,
        pool=_str(pool, "name", f"{swhere}.pool"),
        generation=_int(pool, "generation", f"{swhere}.pool", 0), slice_count=count,
        node_name=node_name or None, all_nodes=bool(all_nodes), node_selector=selector,
        devices=devices, counter_sets=counter_sets)


def _selectors(body: dict[str, Any], where: str) -> tuple[str, ...]:
    out = []
    for i, sel in enumerate(_list(body, "selectors", where)):
        swhere = f"{where}.selectors[{i}]"
        sbody = _obj(sel, swhere)
        _known(sbody, "DeviceSelector", swhere)
        cel = _obj(sbody.get("cel"), f"{swhere}.cel")
        _known(cel, "CELDeviceSelector", f"{swhere}.cel")
        out.append(_str(cel, "expression", f"{swhere}.cel"))
    return tuple(out)


@frozen
class DeviceClass:
    """DRA-3: a DeviceClass: its name and the CEL selectors every device it gives must meet."""

    name: str
    selectors: tuple[str, ...]


def decode_class(value: object, where: str) -> DeviceClass:
    body = _obj(value, where)
    _known(body, "DeviceClass", where)
    meta = _obj(body.get("metadata"), f"{where}.metadata")
    spec = _obj(body.get("spec") or {}, f"{where}.spec")
    _known(spec, "DeviceClassSpec", f"{where}.spec")
    _refuse_left_out(spec, f"{where}.spec")
    return DeviceClass(_str(meta, "name", f"{where}.metadata"),
                       _selectors(spec, f"{where}.spec"))


@frozen
class Request:
    """DRA-4: one request (or one ``firstAvailable`` subrequest): its class, its own selectors,
    and how many devices: ``ExactCount`` with ``count`` or ``All``; its tolerations (DRA-16);
    ``admin_access`` as set (None: not set; DRA-17); ``capacity``: the capacity it asks of
    each device, by name as written (None: no ``capacity`` field; DRA-20)."""

    name: str
    class_name: str
    selectors: tuple[str, ...]
    mode: str
    count: int
    subrequests: tuple[Request, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    admin_access: bool | None = None
    capacity: dict[str, Fraction] | None = None


@frozen
class Constraint:
    """DRA-6: ``matchAttribute`` over the requests it names (all of the claim's when empty);
    DRA-21: or ``distinctAttribute`` (``match_attribute`` None).  With both set the allocator
    reads ``matchAttribute`` alone, and so does this."""

    requests: tuple[str, ...]
    match_attribute: str | None
    distinct_attribute: str | None = None


@frozen
class Claim:
    """DRA-4: a ResourceClaim: ``namespace/name`` (how the allocator names it in errors), its
    requests in order, and its constraints."""

    name: str
    namespace: str
    requests: tuple[Request, ...]
    constraints: tuple[Constraint, ...]

    @property
    def key(self) -> str:
        """The claim as klog.KObj prints it."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


def _exact(body: dict[str, Any], name: str, where: str, kind: str) -> Request:
    _known(body, kind, where)
    _refuse_left_out(body, where)
    capacity = _capacity_requests(body, where)
    mode = body.get("allocationMode") or "ExactCount"
    expect(mode, str, "a string", f"{where}.allocationMode")
    if mode not in ("ExactCount", "All"):
        raise InvalidFieldError(f"unknown allocation mode {mode!r}",
                                where=f"{where}.allocationMode")
    count = _int(body, "count", where, 1 if mode == "ExactCount" else 0)
    if mode == "ExactCount" and count < 1:
        raise InvalidFieldError("must be at least 1", where=f"{where}.count")
    admin = body.get("adminAccess")
    if admin is not None:
        expect(admin, bool, "a boolean", f"{where}.adminAccess")
    return Request(name, _str(body, "deviceClassName", where), _selectors(body, where),
                   mode, count, tolerations=_tolerations(body, where), admin_access=admin,
                   capacity=capacity)


def _capacity_requests(body: dict[str, Any], where: str) -> dict[str, Fraction] | None:
    """DRA-20: a request's ``capacity.requests`` (None: no ``capacity`` field, which is not
    the same as an empty one where the feature is off)."""
    if body.get("capacity") is None:
        return None
    cwhere = f"{where}.capacity"
    cbody = _obj(body["capacity"], cwhere)
    _known(cbody, "CapacityRequirements", cwhere)
    requests = cbody.get("requests") or {}
    expect(requests, dict, "an object", f"{cwhere}.requests")
    # from 1.38 a name with and without the domain is one capacity of the device's driver:
    # an error whose words (and, beside a missing capacity, whether it is one) follow Go's
    # map order
    return capacity_amounts(requests, f"{cwhere}.requests", "requested")


def capacity_amounts(amounts: dict[str, Any], where: str, what: str) -> dict[str, Fraction]:
    """DRA-20: capacity amounts by name (a request's or a share's), each a
    :func:`capacity_quantity`; one capacity named both with and without a domain is refused
    (``what``: the verb the refusal uses, "requested" or "consumed")."""
    out = {name: capacity_quantity(amount, f"{where}.{name}") for name, amount in amounts.items()}
    bare = {name.rpartition("/")[2] for name in out if "/" in name}
    for name in out:
        if "/" not in name and name in bare:
            raise NotModelledError(f"capacity {name!r} {what} both with and without a domain "
                                   "is outside the chapter's scope (DRA-20)",
                                   where=f"{where}.{name}")
    return out


def _tolerations(body: dict[str, Any], where: str) -> tuple[Toleration, ...]:
    """DRA-16: a request's tolerations, an operator left out read as ``Equal`` (the API's
    default)."""
    out = []
    for i, item in enumerate(_list(body, "tolerations", where)):
        twhere = f"{where}.tolerations[{i}]"
        tbody = _obj(item, twhere)
        _known(tbody, "DeviceToleration", twhere)
        operator = _str(tbody, "operator", twhere, default="Equal")
        if operator not in ("Equal", "Exists"):
            raise InvalidFieldError(f"unknown operator {operator!r} (known: Equal, Exists)",
                                    where=f"{twhere}.operator")
        effect = _str(tbody, "effect", twhere, default="")
        if effect and effect not in TAINT_EFFECTS:
            raise InvalidFieldError(f"unknown taint effect {effect!r} (known: "
                                    f"{', '.join(TAINT_EFFECTS)})", where=f"{twhere}.effect")
        seconds = tbody.get("tolerationSeconds")
        if seconds is not None:
            expect(seconds, int, "an integer", f"{twhere}.tolerationSeconds")
        out.append(Toleration(_str(tbody, "key", twhere, default=""), operator,
                              _str(tbody, "value", twhere, default=""), effect))
    return tuple(out)


def _request(value: object, where: str) -> Request:
    body = _obj(value, where)
    _known(body, "DeviceRequest", where)
    name = _str(body, "name", where)
    sub = _list(body, "firstAvailable", where)
    if "exactly" in body and sub:
        raise InvalidFieldError("exactly one of exactly, firstAvailable", where=where)
    if sub:
        subs = []
        for i, item in enumerate(sub):
            iwhere = f"{where}.firstAvailable[{i}]"
            ibody = _obj(item, iwhere)
            subs.append(_exact(ibody, _str(ibody, "name", iwhere), iwhere,
                               "DeviceSubRequest"))
        return Request(name, "", (), "FirstAvailable", 0, tuple(subs))
    if "exactly" not in body:
        raise InvalidFieldError("exactly one of exactly, firstAvailable", where=where)
    return _exact(_obj(body["exactly"], f"{where}.exactly"), name, f"{where}.exactly",
                  "ExactDeviceRequest")


def decode_claim(value: object, where: str) -> Claim:
    """DRA-4: one ResourceClaim (``{"metadata": {...}, "spec": {"devices": {...}}}``)."""
    body = _obj(value, where)
    _known(body, "ResourceClaim", where)
    meta = _obj(body.get("metadata"), f"{where}.metadata")
    spec = _obj(body.get("spec") or {}, f"{where}.spec")
    _known(spec, "ResourceClaimSpec", f"{where}.spec")
    devices = _obj(spec.get("devices") or {}, f"{where}.spec.devices")
    dwhere = f"{where}.spec.devices"
    _known(devices, "DeviceClaim", dwhere)
    requests = tuple(_request(r, f"{dwhere}.requests[{i}]")
                     for i, r in enumerate(_list(devices, "requests", dwhere)))
    constraints = []
    for i, c in enumerate(_list(devices, "constraints", dwhere)):
        cwhere = f"{dwhere}.constraints[{i}]"
        cbody = _obj(c, cwhere)
        _known(cbody, "DeviceConstraint", cwhere)
        _refuse_left_out(cbody, cwhere)
        names = _list(cbody, "requests", cwhere)
        for j, item in enumerate(names):
            expect(item, str, "a string", f"{cwhere}.requests[{j}]")
        match = cbody.get("matchAttribute")
        distinct = cbody.get("distinctAttribute")
        if match is None and distinct is None:
            raise InvalidFieldError("exactly one of matchAttribute, distinctAttribute is "
                                    "required", where=cwhere)
        constraints.append(Constraint(
            tuple(names), _str(cbody, "matchAttribute", cwhere) if match is not None else None,
            _str(cbody, "distinctAttribute", cwhere) if match is None else None))
    namespace = meta.get("namespace") or ""
    expect(namespace, str, "a string", f"{where}.metadata.namespace")
    return Claim(_str(meta, "name", f"{where}.metadata"), namespace, requests,
                 tuple(constraints))
