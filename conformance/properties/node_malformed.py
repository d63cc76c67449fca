"""Node sessions with malformed requests in them (issue 33: the suite's reach).

The node model refuses what no real node could send it, and what kubelet itself refuses
before it admits anything: a machine listing a NUMA node, a CPU or a device twice, a core
without threads, a distance row too short to index; a quantity apimachinery cannot read; a
reserved cpuset that is not one; a pod asking for a resource nothing serves, or for a device
without its limit.  Random sessions are well formed by construction, so none of those
refusals was ever drawn.  P-NODE-MALFORMED draws a well-formed session and puts broken
copies of its requests in front of them (:data:`FAULTS`: each knows the error kind NWIRE-3
gives for it and where that error points): the create broken every way that applies to it,
each admission broken one way, the pods' faults in turn.  It judges that

* each broken request is refused with its kind, pointing there (NWIRE-3), and
* every other answer is the one the session gets without them (NODE-6: errors change
  nothing), as every session is judged (:func:`check_answers`: the reference's answers, and
  the invariants).

Error kinds and where they point are numaspec's line format, so only an implementation that
claims the format is judged (PROTO-7).  Kubelet answers some of these requests otherwise
(it starts on a NUMA node id above 63 and panics later, findings 5 and 14): the vectors of
those findings say so for each release.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import attrs
from hypothesis import example, given, note
from hypothesis import strategies as st

from numaspec.conformance.cases.vectors import stored_case
from numaspec.conformance.implementations.claims import NodeClaims, claims_of
from numaspec.conformance.properties.node_sessions import (
    NodeSessionImplementation,
    check_answers,
    fitted,
    node_sessions,
    session_versions,
)
from numaspec.conformance.properties.registry import register
from numaspec.limits import MAX_CPU_ID, MAX_QUANTITY_CHARS

__all__ = ["FAULTS", "MALFORMED_EXAMPLE", "Break", "Fault", "malformed_sessions"]

Step = dict[str, Any]

#: Quantities apimachinery's scanner cannot read (QTY-1): no digits, two points, an unknown
#: or misplaced suffix, a sign twice, a space, an exponent with no digits or past int64.
#: (Not "Gi" or ".": apimachinery reads a number without digits as zero.)
BAD_QUANTITIES = ("", "1.5.5", "1Gb", "1 Gi", "+-1", "0x10", "1e", "1e+", "1E-", "1E3Gi",
                  "1iB", "--1", "1e99999999999999999999", "1e9223372036854775808", "1Ki0")
#: Reserved cpusets kubelet's cpuset parser refuses (NODE-2).
BAD_CPUSETS = ("0-", "3-1", "a", "1-2-3", "-1", "1,,2", "0-1-")
#: Reserved cpusets past the CPU ids numaspec reads (NWIRE-5).
HUGE_CPUSETS = (str(MAX_CPU_ID + 1), f"0-{MAX_CPU_ID + 7}", "99999999999999999999")
#: Memory that is a quantity but not a whole, non-negative number of bytes.
NOT_BYTES = ("1.5", "-1Gi", "100m", "-1")
#: A quantity given as a JSON number, not a string.
NUMBERS = (0, 1 << 30, 1 << 40)


@attrs.frozen
class Fault:
    """One way to break a request: the operation it breaks, the error kind NWIRE-3 gives, and
    the edit (in place, on a copy of the step), which answers where the error must point (a
    prefix of its ``where``), or None where the session gives it nothing to break."""

    name: str
    op: str
    kind: str
    edit: Callable[[st.DrawFn, Step], str | None]
    #: It may give a machine devices it had none of: drawn only where the Device Manager is
    #: claimed (PROTO-7).
    devices: bool = False
    #: The bad values it puts in: in front of a create, one broken copy per value, so that
    #: every example tries each; in front of an admission, one drawn.  The edit reads the
    #: copy's value with :func:`_value`.
    values: tuple[Any, ...] = ()


def _value(step: Step) -> Any:
    """The bad value the session chose for this broken copy (:attr:`Fault.values`)."""
    return step["_context"]["value"]


_NODES = "node.machine.numaNodes"


def _machine(step: Step) -> dict[str, Any]:
    machine: dict[str, Any] = step["node"]["machine"]
    return machine


def _config(step: Step) -> dict[str, Any]:
    config: dict[str, Any] = step["node"].setdefault("config", {})
    return config


def _nodes(step: Step) -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = _machine(step)["numaNodes"]
    return nodes


def _node(draw: st.DrawFn, step: Step) -> tuple[int, dict[str, Any]]:
    index = draw(st.integers(0, len(_nodes(step)) - 1))
    return index, _nodes(step)[index]


def _duplicate_id(draw: st.DrawFn, step: Step) -> str | None:
    nodes = _nodes(step)
    if len(nodes) < 2:
        return None
    first, second = draw(st.permutations(range(len(nodes))))[:2]
    nodes[second]["id"] = nodes[first]["id"]
    return f"{_NODES}[{max(first, second)}].id"  # the later entry repeats the id


def _id_out_of_range(draw: st.DrawFn, step: Step) -> str | None:
    index, node = _node(draw, step)
    node["id"] = draw(st.integers(64, 1 << 20))
    return f"{_NODES}[{index}].id"


def _unknown_hugepage_size(draw: st.DrawFn, step: Step) -> str | None:
    size = draw(st.sampled_from(["hugepages-4Ki", "hugepages-16Gi", "hugepages-1Mi"]))
    for node in _nodes(step):
        node.setdefault("hugepages", {})[size] = 0
    return f"{_NODES}[0].hugepages"


def _uneven_hugepage_sizes(draw: st.DrawFn, step: Step) -> str | None:
    nodes = [n for n in _nodes(step) if n.get("hugepages")]
    if len(_nodes(step)) < 2 or not nodes:
        return None
    node = draw(st.sampled_from(nodes))
    del node["hugepages"][draw(st.sampled_from(sorted(node["hugepages"])))]
    return _NODES


def _negative_pages(draw: st.DrawFn, step: Step) -> str | None:
    index, node = _node(draw, step)
    node.setdefault("hugepages", {"hugepages-2Mi": 0, "hugepages-1Gi": 0})
    size = draw(st.sampled_from(sorted(node["hugepages"])))
    node["hugepages"][size] = -draw(st.integers(1, 512))
    return f"{_NODES}[{index}].hugepages.{size}"


def _threadless_core(draw: st.DrawFn, step: Step) -> str | None:
    cores = [(i, j) for i, n in enumerate(_nodes(step)) for j in range(len(n.get("cores", [])))]
    index, core = draw(st.sampled_from(cores))
    _nodes(step)[index]["cores"][core]["threads"] = []
    return f"{_NODES}[{index}].cores[{core}].threads"


def _cpu_twice(draw: st.DrawFn, step: Step) -> str | None:
    index, node = _node(draw, step)
    # A CPU listed at or before this node, so that the new core is the second listing.
    earlier = [t for n in _nodes(step)[:index + 1] for c in n.get("cores", [])
               for t in c["threads"]]
    if not earlier:
        return None
    cores = node.setdefault("cores", [])
    cores.append({"socket": cores[0]["socket"] if cores else 0,
                  "threads": [draw(st.sampled_from(earlier))]})
    return f"{_NODES}[{index}].cores[{len(cores) - 1}].threads"


def _cpu_too_large(draw: st.DrawFn, step: Step) -> str | None:
    index, node = _node(draw, step)
    cores = node.setdefault("cores", [])
    cores.append({"socket": 0, "threads": [draw(st.integers(MAX_CPU_ID + 1, 1 << 40))]})
    return f"{_NODES}[{index}].cores[{len(cores) - 1}].threads[0]"


def _no_cpu(_draw: st.DrawFn, step: Step) -> str | None:
    for node in _nodes(step):
        node["cores"] = []
    return _NODES


def _memory(draw: st.DrawFn, step: Step) -> str | None:
    index, node = _node(draw, step)
    node["memory"] = _value(step)
    return f"{_NODES}[{index}].memory"


def _with_distances(step: Step) -> list[int]:
    return [i for i, n in enumerate(_nodes(step)) if n.get("distances")]


def _distance_row_short(draw: st.DrawFn, step: Step) -> str | None:
    """OPT-6: only prefer-closest-numa-nodes reads the rows, and needs them long enough."""
    listed = _with_distances(step)
    options = _config(step).get("topologyManagerPolicyOptions", {})
    if len(listed) < 2 or len(listed) != len(_nodes(step)) or \
            options.get("prefer-closest-numa-nodes") != "true":
        return None
    highest = max(n["id"] for n in _nodes(step))
    index = draw(st.sampled_from(listed))
    node = _nodes(step)[index]
    node["distances"] = node["distances"][:draw(st.integers(1, highest))]
    return f"{_NODES}[{index}].distances"


def _distance(value: st.SearchStrategy[int]) -> Callable[[st.DrawFn, Step], str | None]:
    def edit(draw: st.DrawFn, step: Step) -> str | None:
        listed = _with_distances(step)
        if not listed:
            return None
        index = draw(st.sampled_from(listed))
        row = _nodes(step)[index]["distances"]
        column = draw(st.integers(0, len(row) - 1))
        row[column] = draw(value)
        return f"{_NODES}[{index}].distances[{column}]"
    return edit


def _devices(step: Step) -> dict[str, list[dict[str, Any]]]:
    devices: dict[str, list[dict[str, Any]]] = _machine(step).setdefault("devices", {})
    return devices


def _device_twice(draw: st.DrawFn, step: Step) -> str | None:
    devices = _devices(step)
    listed = [r for r, found in devices.items() if found]
    if not listed:
        devices["example.com/twice"] = [{"id": "d0"}, {"id": "d0"}]
        return "node.machine.devices.example.com/twice"
    resource = draw(st.sampled_from(listed))
    found = devices[resource]
    found.append({**draw(st.sampled_from(found)), "healthy": draw(st.booleans())})
    return f"node.machine.devices.{resource}"


def _device_on_absent_node(draw: st.DrawFn, step: Step) -> str | None:
    devices = _devices(step)
    absent = max(n["id"] for n in _nodes(step)) + draw(st.integers(1, 8))
    resource = draw(st.sampled_from(sorted(devices) or ["example.com/nic"]))
    found = devices.setdefault(resource, [])
    found.append({"id": "absent-node-device", "numa": [absent]})
    return f"node.machine.devices.{resource}[{len(found) - 1}].numa"


def _device_resource_name(draw: st.DrawFn, step: Step) -> str | None:
    name = draw(st.sampled_from(["gpu", "kubernetes.io/gpu", "example.com/", "Example.com/gpu",
                                 "example.com/-gpu"]))
    _devices(step)[name] = [{"id": "d0"}]
    return f"node.machine.devices.{name}"


def _plugin_without_devices(_draw: st.DrawFn, step: Step) -> str | None:
    resource = "example.com/unlisted"
    _devices(step).pop(resource, None)
    _machine(step).setdefault("devicePlugins", {})[resource] = {"preferredAllocation": []}
    return f"node.machine.devicePlugins.{resource}"


def _plugin_id_twice(draw: st.DrawFn, step: Step) -> str | None:
    listed = [r for r, found in _devices(step).items() if found]
    if not listed:
        return None
    resource = draw(st.sampled_from(listed))
    device = draw(st.sampled_from(_devices(step)[resource]))["id"]
    _machine(step).setdefault("devicePlugins", {})[resource] = {
        "preferredAllocation": [device, device]}
    return f"node.machine.devicePlugins.{resource}.preferredAllocation"


def _reserved_cpus(_draw: st.DrawFn, step: Step) -> str | None:
    _config(step)["reservedSystemCPUs"] = _value(step)
    return "node.config.reservedSystemCPUs"


def _reservation(draw: st.DrawFn, step: Step) -> str | None:
    field = draw(st.sampled_from(["kubeReserved", "systemReserved"]))
    resource = draw(st.sampled_from(["cpu", "memory"]))
    _config(step).setdefault(field, {})[resource] = _value(step)
    return f"node.config.{field}.{resource}"


def _eviction_percentage(draw: st.DrawFn, step: Step) -> str | None:
    _config(step).setdefault("evictionHard", {})["memory.available"] = \
        f"{draw(st.integers(1, 50))}%"
    return "node.config.evictionHard.memory.available"


def _reserved_memory_not_bytes(draw: st.DrawFn, step: Step) -> str | None:
    config = _config(step)
    entries = config.get("reservedMemory") or []
    listed = [i for i, e in enumerate(entries) if "memory" in e.get("limits", {})]
    if config.get("memoryManagerPolicy") != "Static" or not listed:
        return None
    index = draw(st.sampled_from(listed))
    entries[index]["limits"]["memory"] = draw(st.sampled_from(["256.5", "-256Mi", "100m"]))
    return f"node.config.reservedMemory[{index}].limits.memory"


def _no_memory_reserved(_draw: st.DrawFn, step: Step) -> str | None:
    """MEM-2: a static Memory Manager with no memory reserved anywhere (no systemReserved or
    kubeReserved memory, an evictionHard without memory.available): kubelet refuses."""
    config = _config(step)
    if config.get("memoryManagerPolicy") != "Static":
        return None
    for field in ("systemReserved", "kubeReserved"):
        config.get(field, {}).pop("memory", None)
    config["evictionHard"] = {"nodefs.available": "10%"}
    config.pop("reservedMemory", None)
    return "node.config.reservedMemory"


def _reserved_memory_entry(twice: bool) -> Callable[[st.DrawFn, Step], str | None]:
    """MEM-2 (1): an entry given twice, or a limit of a type the Memory Manager has not."""
    def edit(draw: st.DrawFn, step: Step) -> str | None:
        entries = _config(step).get("reservedMemory") or []
        if not entries:
            return None
        index = draw(st.integers(0, len(entries) - 1))
        if twice:
            entries.append(copy.deepcopy(entries[index]))
        else:
            entries[index].setdefault("limits", {})[draw(st.sampled_from(
                ["cpu", "pods", "ephemeral-storage"]))] = "1"
        return "node.config.reservedMemory"
    return edit


#: Option values Go's strconv refuses, some with what Go quotes as escapes in its message.
#: (The last ones mix every kind of character Go's %q escapes its own way: a named escape, a
#: control character, a non-printable one inside and outside the Basic Multilingual Plane.)
BAD_OPTION_VALUES = ("yes", "1.0", "", "tr\u00e9\x01ue", "\x7f", "\u2028", "\U0001f600",
                     "\t\x01\u2028\U000e0001\u00e9", "true\U000e0001\x7f\n")


#: Values of the integer option Go's strconv.Atoi refuses.
BAD_INTEGERS = ("99999999999999999999", "x1", "", "+-3", "8.0")
#: Each bad option value with the kind of option it is bad for.
OPTION_VALUES = (*(("bool", v) for v in BAD_OPTION_VALUES),
                 *(("int", v) for v in BAD_INTEGERS))
_OPTIONS = {"bool": ("prefer-closest-numa-nodes", 32), "int": ("max-allowable-numa-nodes", 35)}


def _option_value(_draw: st.DrawFn, step: Step) -> str | None:
    """A Topology Manager option given a value of the wrong type: the option the session set,
    or, where it set none, one GA at this release (no gate to set beside it, OPT-2)."""
    config = _config(step)
    kind, value = _value(step)
    name, since = _OPTIONS[kind]
    options = config.get("topologyManagerPolicyOptions") or {}
    minor = int(str(step["node"]["kubeletVersion"]).split(".")[1])
    claimed = step["_context"]["policy_options"]
    if name not in options:
        if options or minor < since or (claimed is not None and name not in claimed) or \
                config.get("topologyManagerPolicy", "none") == "none":
            return None
        options = config["topologyManagerPolicyOptions"] = {}
    options[name] = value
    return f"node.config.topologyManagerPolicyOptions.{name}"


def _container(draw: st.DrawFn, step: Step) -> tuple[str, dict[str, Any]]:
    """One of the pod's containers, and its path."""
    pod = step["pod"]
    listed: list[tuple[str, dict[str, Any]]] = [
        (f"pod.{part}[{i}]", c) for part in ("initContainers", "containers")
        for i, c in enumerate(pod.get(part, []))]
    chosen: tuple[str, dict[str, Any]] = draw(st.sampled_from(listed))
    return chosen


def _request(draw: st.DrawFn, step: Step) -> str | None:
    where, container = _container(draw, step)
    part = draw(st.sampled_from(["requests", "limits"]))
    name = draw(st.sampled_from(["cpu", "memory"]))
    container.setdefault("resources", {}).setdefault(part, {})[name] = _value(step)
    return f"{where}.resources.{part}.{name}"


def _requests_not_an_object(draw: st.DrawFn, step: Step) -> str | None:
    where, container = _container(draw, step)
    part = draw(st.sampled_from(["requests", "limits"]))
    container.setdefault("resources", {})[part] = draw(st.sampled_from(["1", [], 2]))
    return f"{where}.resources.{part}"


def _unknown_resource(draw: st.DrawFn, step: Step) -> str | None:
    where, container = _container(draw, step)
    served = set(step["_context"]["devices"])
    name = draw(st.sampled_from([n for n in ("example.com/unserved", "hugepages-16Gi",
                                             "hugepages-4Ki", "nvidia.com/gpu")
                                 if n not in served]))
    resources = container.setdefault("resources", {})
    for part in ("requests", "limits"):
        resources.setdefault(part, {})[name] = "1"
    return f"{where}.resources"


def _served_device(draw: st.DrawFn, step: Step
                   ) -> tuple[str, dict[str, Any], str] | None:
    """A container's path and resources, and a device resource the node serves (None where
    it serves none)."""
    served = sorted(step["_context"]["devices"])
    if not served:
        return None
    where, container = _container(draw, step)
    resources: dict[str, Any] = container.setdefault("resources", {})
    return where, resources, draw(st.sampled_from(served))


def _device_without_limit(draw: st.DrawFn, step: Step) -> str | None:
    found = _served_device(draw, step)
    if found is None:
        return None
    where, resources, resource = found
    resources.setdefault("requests", {})[resource] = "1"
    resources.setdefault("limits", {}).pop(resource, None)
    if draw(st.booleans()):
        resources["limits"][resource] = "2"  # a limit, but not the request
    return f"{where}.resources"


def _device_fraction(draw: st.DrawFn, step: Step) -> str | None:
    found = _served_device(draw, step)
    if found is None:
        return None
    where, resources, resource = found
    amount = draw(st.sampled_from(["500m", "1500m", "0.5"]))
    for part in ("requests", "limits"):
        resources.setdefault(part, {})[resource] = amount
    return f"{where}.resources"


def _pod_level(step: Step) -> bool:
    """Whether the node reads pod-level resources (PodLevelResources, beta from 1.34)."""
    context = step["_context"]
    return bool(context["minor"] >= 34 and context["gates"].get("PodLevelResources", True))


def _pod_level_name(draw: st.DrawFn, step: Step) -> str | None:
    if not _pod_level(step):
        return None
    name = draw(st.sampled_from(["example.com/gpu", "ephemeral-storage", "pods"]))
    step["pod"]["resources"] = {"requests": {name: "1"}}
    return f"pod.resources.requests.{name}"


def _pod_level_above_limit(draw: st.DrawFn, step: Step) -> str | None:
    if not _pod_level(step):
        return None
    name = draw(st.sampled_from(["cpu", "memory"]))
    limit = draw(st.integers(1, 64))
    unit = "" if name == "cpu" else "Gi"
    step["pod"]["resources"] = {"requests": {name: f"{limit + draw(st.integers(1, 8))}{unit}"},
                                "limits": {name: f"{limit}{unit}"}}
    return f"pod.resources.requests.{name}"


def _container_name_twice(draw: st.DrawFn, step: Step) -> str | None:
    _, container = _container(draw, step)
    twin = copy.deepcopy(container)
    twin.pop("restartPolicy", None)
    step["pod"]["containers"].append(twin)
    return "pod."


#: The faults, each with the error kind it gets.
FAULTS: tuple[Fault, ...] = (
    Fault("NUMA node listed twice", "create", "invalid-numa-id", _duplicate_id),
    Fault("NUMA node id above 63", "create", "invalid-numa-id", _id_out_of_range),
    Fault("unknown hugepage size", "create", "invalid-field", _unknown_hugepage_size),
    Fault("hugepage sizes differ between NUMA nodes", "create", "invalid-field",
          _uneven_hugepage_sizes),
    Fault("negative page count", "create", "invalid-field", _negative_pages),
    Fault("core without threads", "create", "invalid-field", _threadless_core),
    Fault("CPU listed twice", "create", "invalid-field", _cpu_twice),
    Fault("CPU id past the bound", "create", "limit-exceeded", _cpu_too_large),
    Fault("no CPU at all", "create", "invalid-field", _no_cpu),
    Fault("memory not a quantity", "create", "invalid-quantity", _memory,
          values=BAD_QUANTITIES),
    Fault("memory not whole bytes", "create", "invalid-field", _memory, values=NOT_BYTES),
    Fault("memory a number, not a string", "create", "invalid-quantity", _memory,
          values=NUMBERS),
    Fault("memory quantity too long", "create", "limit-exceeded", _memory,
          values=("1" * (MAX_QUANTITY_CHARS + 1),)),
    Fault("distance row too short", "create", "invalid-numa-distances", _distance_row_short),
    Fault("distance past 64 bits", "create", "invalid-numa-distances",
          # Past a uint64 but within the 20 digits a request line may carry (WIRE-5).
          _distance(st.integers(1 << 64, 10**20 - 1))),
    Fault("negative distance", "create", "invalid-field", _distance(st.integers(-100, -1))),
    Fault("device listed twice", "create", "invalid-field", _device_twice, devices=True),
    Fault("device on a NUMA node the machine lacks", "create", "invalid-numa-id",
          _device_on_absent_node, devices=True),
    Fault("device resource not an extended resource", "create", "invalid-field",
          _device_resource_name, devices=True),
    Fault("device plugin without devices", "create", "invalid-field", _plugin_without_devices,
          devices=True),
    Fault("device plugin preferring a device twice", "create", "invalid-field",
          _plugin_id_twice),
    Fault("reserved cpuset not a cpuset", "create", "invalid-field", _reserved_cpus,
          values=BAD_CPUSETS),
    Fault("reserved cpuset past the bound", "create", "limit-exceeded", _reserved_cpus,
          values=HUGE_CPUSETS),
    # NODE-3: kubelet refuses to start, as it refuses --kube-reserved and --system-reserved.
    Fault("reservation not a quantity", "create", "node-startup", _reservation,
          values=BAD_QUANTITIES),
    Fault("negative reservation", "create", "node-startup", _reservation,
          values=("-1m", "-500m", "-1Mi")),
    Fault("percentage eviction threshold", "create", "not-modelled", _eviction_percentage),
    Fault("reserved memory not whole bytes", "create", "invalid-field",
          _reserved_memory_not_bytes),
    Fault("no memory reserved for the Memory Manager", "create", "node-startup",
          _no_memory_reserved),
    Fault("reserved memory given twice for a NUMA node", "create", "node-startup",
          _reserved_memory_entry(twice=True)),
    Fault("reserved memory of a type that is not memory", "create", "node-startup",
          _reserved_memory_entry(twice=False)),
    Fault("policy option value not its type", "create", "invalid-policy-option-value",
          _option_value, values=OPTION_VALUES),
    Fault("request not a quantity", "admit", "invalid-quantity", _request,
          values=BAD_QUANTITIES),
    Fault("request a number, not a string", "admit", "invalid-field", _request,
          values=NUMBERS),
    Fault("pod-level resource other than cpu, memory and hugepages", "admit",
          "invalid-field", _pod_level_name),
    Fault("pod-level request above its limit", "admit", "invalid-field",
          _pod_level_above_limit),
    Fault("requests not an object", "admit", "invalid-field", _requests_not_an_object),
    Fault("resource nothing serves", "admit", "unknown-resource", _unknown_resource),
    Fault("device without a limit equal to its request", "admit", "invalid-field",
          _device_without_limit),
    Fault("device count not whole", "admit", "invalid-field", _device_fraction),
    Fault("container name twice", "admit", "invalid-field", _container_name_twice),
)


def _taken(steps: list[Step]) -> set[int]:
    """The steps the reference answers without an error (a pod with a negative request is
    refused already, and breaking it again would say nothing of the fault)."""
    from numaspec.errors import NumaspecError
    from numaspec.protocols.node_protocol import NodeSession

    session = NodeSession()
    taken = set()
    for index, step in enumerate(steps):
        try:
            session.handle(step)
        except NumaspecError:
            continue
        taken.add(index)
    return taken


#: A broken request in a session: its index, its fault, and where its error must point.
Break = tuple[int, Fault, str]


@st.composite
def malformed_sessions(draw: st.DrawFn, claims: NodeClaims | None,
                       versions: tuple[str, ...]) -> tuple[list[Step], list[Break]]:
    """A well-formed session with broken copies of its requests put in front of them: in
    front of the create, one copy per fault that applies to it (the order drawn); in front of
    each admission the reference takes, one copy with the next fault of the pods' that
    applies (the pods' faults taken in turn, in a drawn order).  Each example so breaks the
    machine and the configuration every way this session allows, and a pod per admission."""
    steps: list[Step] = draw(node_sessions(claims, versions))
    node = steps[0]["node"]
    # What a pod's faults need to know of the node (kept on the broken copy while it is made).
    context = {"devices": sorted(node["machine"].get("devices", {})),
               "minor": int(str(node["kubeletVersion"]).split(".")[1]),
               "gates": dict(node.get("config", {}).get("featureGates", {})),
               "policy_options": None if claims is None or claims.policy_options is None
               else sorted(claims.policy_options)}
    taken = _taken(steps)
    devices_claimed = claims is None or claims.managers is None or "device" in claims.managers
    faults = [f for f in draw(st.permutations(FAULTS)) if devices_claimed or not f.devices]
    pods = [f for f in faults if f.op == "admit"]
    session: list[Step] = []
    breaks: list[Break] = []
    turn = 0
    for index, step in enumerate(steps):
        op = step.get("op")
        if index in taken and op in ("create", "admit"):
            if op == "create":
                # Every fault, and each of its values, in turn.
                candidates = [(f, v) for f in faults if f.op == "create"
                              for v in f.values or (None,)]
            else:  # the value drawn once the fault is tried
                candidates = [(f, None) for f in pods[turn:] + pods[:turn]]
            for fault, chosen in candidates:
                value = draw(st.sampled_from(fault.values)) if chosen is None and \
                    fault.values else chosen
                broken = copy.deepcopy(step)
                broken["_context"] = {**context, "value": value}
                where = fault.edit(draw, broken)
                del broken["_context"]
                if where is None:
                    continue
                breaks.append((len(session), fault, where))
                session.append(broken)
                if op == "admit":
                    turn = (pods.index(fault) + 1) % len(pods)
                    break
        session.append(step)
    if not breaks:
        # Only where the reference refuses the create itself: the machine is read first, so
        # a broken memory quantity is still what the create is refused for.
        fault = next(f for f in FAULTS if f.name == "memory not a quantity")
        broken = {**copy.deepcopy(steps[0]), "_context": {"value": fault.values[0]}}
        where = str(fault.edit(draw, broken))
        del broken["_context"]
        return [broken, *steps], [(0, fault, where)]
    return session, breaks


#: The counterexample P-NODE-MALFORMED found in numaspec and numaspec fixed (NUMA nodes listed
#: out of id order: the error pointed at the entry's place in id order), run first at every
#: run: the vector of that name, its fault, and where the error must point.
MALFORMED_EXAMPLE = ("nwire-3-where-names-the-listed-entry", "core without threads",
                     "node.machine.numaNodes[1].cores[0].threads")


@register("P-NODE-MALFORMED", rules=["NWIRE-3", "NODE-1", "NODE-4", "NODE-6"],
          level="equivalence", requires="node_session", since=29, op="node", format=True)
@given(data=st.data())
@example(data=None)  # MALFORMED_EXAMPLE
def malformed_requests_refused(impl: NodeSessionImplementation,
                               data: st.DataObject | None) -> None:
    """Sessions with malformed requests: each is refused with the kind NWIRE-3 gives, pointing
    at what is wrong, and every other answer is the one the session gets without them."""
    if data is None:
        vector, name, where = MALFORMED_EXAMPLE
        steps = fitted(stored_case(vector, session_versions(impl))["steps"],
                       claims_of(impl).node)
        breaks = [(0, next(f for f in FAULTS if f.name == name), where)]
    else:
        steps, breaks = data.draw(
            malformed_sessions(claims_of(impl).node, session_versions(impl)), label="session")
    note("broken: " + "; ".join(f"step {i}: {f.name}, expected {f.kind} at {w}..."
                                for i, f, w in breaks))
    note("numaspec node <<'EOF'\n" + "\n".join(json.dumps(s, separators=(",", ":"))
                                               for s in steps) + "\nEOF")
    result = impl.node_session({"steps": steps})
    assert isinstance(result, dict) and isinstance(result.get("answers"), list) and len(
        result["answers"]) == len(steps), f"not a session result: {json.dumps(result)[:300]}"
    answers = result["answers"]
    for index, fault, where in breaks:
        error = answers[index].get("error") if isinstance(answers[index], dict) else None
        assert isinstance(error, dict), (
            f"{fault.name}: step {index} is answered {json.dumps(answers[index])[:300]}, not "
            f"refused as {fault.kind}")
        assert error.get("kind") == fault.kind and str(error.get("where", "")).startswith(
            where), (f"{fault.name} (step {index}): refused as {error.get('kind')!r} at "
                     f"{error.get('where')!r}, not {fault.kind!r} at {where!r}...")
    broken = {index for index, _, _ in breaks}
    problem = check_answers([s for i, s in enumerate(steps) if i not in broken],
                            [a for i, a in enumerate(answers) if i not in broken], op="node")
    assert problem is None, f"after the refused requests: {problem}"
