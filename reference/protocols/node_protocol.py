"""The node line protocol (spec chapter ``node-protocol.md``, NWIRE-*): JSON requests that
create a node, admit and remove pods, ask the hint providers and read the state, and their JSON
answers.

Decoding is strict: unknown fields, wrong types and bad values are typed errors naming the
field path.  The same format drives the Go node probe over real kubelet code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from numaspec.errors import InvalidFieldError, LimitExceededError, NumaspecError
from numaspec.limits import MAX_CONTAINERS, MAX_CPU_ID, MAX_DEVICES
from numaspec.node.admission import Decision, Node
from numaspec.node.fit import DEFAULT_MAX_PODS
from numaspec.node.machine import Core, Device, DevicePlugin, Machine, NumaNode, id_order
from numaspec.node.nodeconfig import NodeConfig, parse_cpuset
from numaspec.node.pods import Container, Pod, PodResources
from numaspec.node.quantity import parse_quantity
from numaspec.node.resize import ContainerResize, PodResourcesResize, resize
from numaspec.node.scheduling import NodeScheduler
from numaspec.node.trace import AdmissionTrace
from numaspec.protocols.merge_protocol import encode_error
from numaspec.strict_json import (
    as_array,
    as_string,
    bool_map,
    decode_json_line,
    expect,
    string_map,
)
from numaspec.topology.hints import TopologyHint
from numaspec.topology.versions import parse_version

__all__ = ["NodeSession", "decode_machine", "decode_node", "decode_pod", "encode_decision",
           "encode_hints"]


def _object(value: object, where: str, required: set[str], optional: set[str]
            ) -> dict[str, Any]:
    expect(value, dict, "an object", where)
    assert isinstance(value, dict)
    unknown = set(value) - required - optional
    if unknown:
        raise InvalidFieldError(f"unknown field {sorted(unknown)[0]!r} (known: "
                                f"{', '.join(sorted(required | optional))})", where=where)
    missing = required - set(value)
    if missing:
        raise InvalidFieldError(f"missing field {sorted(missing)[0]!r}", where=where)
    return value


def _int(value: object, where: str, *, minimum: int = 0, maximum: int | None = None) -> int:
    expect(value, int, "an integer", where)
    assert isinstance(value, int)
    if value < minimum:
        raise InvalidFieldError(f"must be at least {minimum}", where=where)
    if maximum is not None and value > maximum:
        raise LimitExceededError(f"{value} is above {maximum}, the most numaspec accepts",
                                 where=where)
    return value


_str = as_string
_list = as_array


def _str_map(value: object, where: str) -> dict[str, str]:
    return string_map(value, where, "a string")


def _bytes(value: object, where: str) -> int:
    quantity = parse_quantity(value, where=where)
    if quantity < 0 or quantity.denominator != 1:
        raise InvalidFieldError("memory is a whole, non-negative number of bytes", where=where)
    return int(quantity)


def decode_machine(value: object, where: str = "node.machine") -> Machine:
    body = _object(value, where, {"numaNodes"}, {"devices", "devicePlugins"})
    nodes = []
    for i, raw in enumerate(_list(body["numaNodes"], f"{where}.numaNodes")):
        w = f"{where}.numaNodes[{i}]"
        item = _object(raw, w, {"id", "memory"}, {"hugepages", "distances", "cores"})
        hugepages = {}
        if "hugepages" in item:
            expect(item["hugepages"], dict, "an object of page counts", f"{w}.hugepages")
            hugepages = {k: _int(v, f"{w}.hugepages.{k}")
                         for k, v in item["hugepages"].items()}
        distances = None
        if item.get("distances") is not None:
            distances = tuple(_int(d, f"{w}.distances[{j}]")
                              for j, d in enumerate(_list(item["distances"], f"{w}.distances")))
        cores = []
        for j, raw_core in enumerate(_list(item.get("cores", []), f"{w}.cores")):
            cw = f"{w}.cores[{j}]"
            core = _object(raw_core, cw, {"socket", "threads"}, {"id", "uncoreCache"})
            threads = tuple(_int(t, f"{cw}.threads[{k}]", maximum=MAX_CPU_ID)
                            for k, t in enumerate(_list(core["threads"], f"{cw}.threads")))
            # NWIRE-1, CPU-19: the core's uncore cache id, absent for none.
            uncore = (_int(core["uncoreCache"], f"{cw}.uncoreCache") if "uncoreCache" in core
                      else None)
            cores.append(Core(_int(core["socket"], f"{cw}.socket"), threads,
                              uncore_cache=uncore))
        nodes.append(NumaNode(_int(item["id"], f"{w}.id"), _bytes(item["memory"], f"{w}.memory"),
                              hugepages, distances, tuple(cores)))
    devices: dict[str, tuple[Device, ...]] = {}
    expect(body.get("devices", {}), dict, "an object of resource to devices", f"{where}.devices")
    for resource, raw_list in body.get("devices", {}).items():
        rw = f"{where}.devices.{resource}"
        if not _extended_resource(resource):
            raise InvalidFieldError(
                f"{resource!r} is not an extended resource name (domain/name outside "
                "kubernetes.io): kubelet accepts no device plugin for it", where=rw)
        found = []
        for i, raw in enumerate(_list(raw_list, rw)):
            item = _object(raw, f"{rw}[{i}]", {"id"}, {"numa", "healthy"})
            numa = tuple(_int(n, f"{rw}[{i}].numa[{k}]")
                         for k, n in enumerate(_list(item.get("numa", []), f"{rw}[{i}].numa")))
            healthy = item.get("healthy", True)
            expect(healthy, bool, "a boolean", f"{rw}[{i}].healthy")
            found.append(Device(_str(item["id"], f"{rw}[{i}].id"), numa, healthy))
        devices[resource] = tuple(found)
        listed = sum(len(d) for d in devices.values())
        if listed > MAX_DEVICES:
            raise LimitExceededError(f"{listed} devices: numaspec accepts at most {MAX_DEVICES} "
                                     "on a machine", where=rw)
    return Machine(tuple(nodes), devices, _device_plugins(body, where),
                   listed_at=id_order(nodes))


def _device_plugins(body: Mapping[str, Any], where: str) -> dict[str, DevicePlugin]:
    """NWIRE-1, DEV-10: ``devicePlugins``: per resource, the plugin's preferred allocation."""
    plugins: dict[str, DevicePlugin] = {}
    expect(body.get("devicePlugins", {}), dict, "an object of resource to plugin",
            f"{where}.devicePlugins")
    for resource, raw in body.get("devicePlugins", {}).items():
        pw = f"{where}.devicePlugins.{resource}"
        item = _object(raw, pw, {"preferredAllocation"}, {"offeredOnly"})
        preferred = tuple(_str(d, f"{pw}.preferredAllocation[{i}]") for i, d in enumerate(
            _list(item["preferredAllocation"], f"{pw}.preferredAllocation")))
        if len(preferred) > MAX_DEVICES:
            raise LimitExceededError(f"{len(preferred)} ids: numaspec accepts at most "
                                     f"{MAX_DEVICES}", where=f"{pw}.preferredAllocation")
        offered_only = item.get("offeredOnly", True)
        expect(offered_only, bool, "a boolean", f"{pw}.offeredOnly")
        plugins[resource] = DevicePlugin(preferred, offered_only)
    return plugins


_CONFIG_FIELDS = {
    "cpuManagerPolicy", "cpuManagerPolicyOptions", "reservedSystemCPUs", "kubeReserved",
    "systemReserved", "evictionHard", "memoryManagerPolicy", "reservedMemory",
    "topologyManagerPolicy", "topologyManagerScope", "topologyManagerPolicyOptions",
    "featureGates", "maxPods",
}


_QUALIFIED = re.compile(r"^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*"
                        r"/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def _extended_resource(name: str) -> bool:
    """NWIRE-1: what a device plugin may register (kubelet's IsExtendedResourceName): a
    ``domain/name`` outside ``kubernetes.io``, valid as a qualified name behind ``requests.``."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    prefix, _, short = f"requests.{name}".rpartition("/")
    return len(prefix) <= 253 and len(short) <= 63 and bool(_QUALIFIED.match(
        f"requests.{name}"))


def decode_node(value: object, *, affinity: bool = False) -> Node:
    """NWIRE-1: ``{"kubeletVersion", "machine", "config"}`` → a started :class:`Node`.

    ``affinity``: the node runs NUMA-level inter-pod affinity (AWIRE-1), and its config may
    name ``interPodAffinityLabels``."""
    try:
        return _decode_node(value, affinity)
    except NumaspecError as exc:
        # The node's own checks name fields relative to the node; on the wire they sit
        # under "node".
        if exc.where.startswith("node"):
            raise
        raise exc.relocated(f"node.{exc.where}" if exc.where else "node") from None


def _decode_node(value: object, affinity: bool) -> Node:
    body = _object(value, "node", {"kubeletVersion", "machine"}, {"config"})
    version = parse_version(body["kubeletVersion"], where="node.kubeletVersion")
    machine = decode_machine(body["machine"])
    raw = _object(body.get("config", {}), "node.config", set(),
                  _CONFIG_FIELDS | ({"interPodAffinityLabels"} if affinity else set()))
    w = "node.config"
    kept: frozenset[str] | None = None
    if affinity:
        keys = _list(raw.get("interPodAffinityLabels", []), f"{w}.interPodAffinityLabels")
        kept = frozenset(_str(k, f"{w}.interPodAffinityLabels[{i}]")
                         for i, k in enumerate(keys))
    reserved_memory = []
    for i, item in enumerate(_list(raw.get("reservedMemory", []), f"{w}.reservedMemory")):
        entry = _object(item, f"{w}.reservedMemory[{i}]", {"numaNode", "limits"}, set())
        reserved_memory.append((_int(entry["numaNode"], f"{w}.reservedMemory[{i}].numaNode"),
                                _str_map(entry["limits"], f"{w}.reservedMemory[{i}].limits")))
    eviction = raw.get("evictionHard")
    config = NodeConfig(
        kubelet_version=version,
        cpu_manager_policy=_str(raw.get("cpuManagerPolicy", "none"), f"{w}.cpuManagerPolicy"),
        cpu_manager_policy_options=_str_map(raw.get("cpuManagerPolicyOptions", {}),
                                            f"{w}.cpuManagerPolicyOptions"),
        reserved_system_cpus=parse_cpuset(_str(raw.get("reservedSystemCPUs", ""),
                                               f"{w}.reservedSystemCPUs"),
                                          where=f"{w}.reservedSystemCPUs"),
        kube_reserved=_str_map(raw.get("kubeReserved", {}), f"{w}.kubeReserved"),
        system_reserved=_str_map(raw.get("systemReserved", {}), f"{w}.systemReserved"),
        eviction_hard=None if eviction is None else _str_map(eviction, f"{w}.evictionHard"),
        memory_manager_policy=_str(raw.get("memoryManagerPolicy", "None"),
                                   f"{w}.memoryManagerPolicy"),
        reserved_memory=tuple(reserved_memory),
        topology_manager_policy=_str(raw.get("topologyManagerPolicy", "none"),
                                     f"{w}.topologyManagerPolicy"),
        topology_manager_scope=_str(raw.get("topologyManagerScope", "container"),
                                    f"{w}.topologyManagerScope"),
        topology_manager_policy_options=_str_map(raw.get("topologyManagerPolicyOptions", {}),
                                                 f"{w}.topologyManagerPolicyOptions"),
        feature_gates=bool_map(raw.get("featureGates", {}), f"{w}.featureGates", "a boolean",
                               "an object of booleans"),
        max_pods=_int(raw.get("maxPods", DEFAULT_MAX_PODS), f"{w}.maxPods",
                      minimum=-(1 << 31)),
        inter_pod_affinity_labels=kept,
    )
    return Node(machine, config)


def _requirements(value: object, where: str) -> tuple[dict[str, str], dict[str, str]]:
    """``{"requests", "limits"}``, each a map of resource names to quantity strings: a
    container's resources, a pod's own (NWIRE-2) and a resize's (NWIRE-6)."""
    body = _object(value, where, set(), {"requests", "limits"})
    return (_str_map(body.get("requests", {}), f"{where}.requests"),
            _str_map(body.get("limits", {}), f"{where}.limits"))


def _container(value: object, where: str, *, init: bool) -> Container:
    body = _object(value, where, {"name"}, {"resources", "restartPolicy"})
    requests, limits = _requirements(body.get("resources", {}), f"{where}.resources")
    restart = None
    if "restartPolicy" in body:
        restart = _str(body["restartPolicy"], f"{where}.restartPolicy")
        if not init or restart != "Always":
            raise InvalidFieldError("only an init container may have a restartPolicy, and only "
                                    "\"Always\"", where=f"{where}.restartPolicy")
    return Container.of(_str(body["name"], f"{where}.name"), requests=requests, limits=limits,
                        restart_policy=restart, where=f"{where}.resources")


def decode_pod(value: object) -> Pod:
    """NWIRE-2: a pod with its init and app containers."""
    body = _object(value, "pod", {"uid", "containers"},
                   {"name", "namespace", "initContainers", "labels", "annotations",
                    "resources"})
    uid = _str(body["uid"], "pod.uid")
    listed = len(_list(body["containers"], "pod.containers")) + len(
        _list(body.get("initContainers", []), "pod.initContainers"))
    if listed > MAX_CONTAINERS:
        raise LimitExceededError(f"{listed} containers: numaspec accepts at most "
                                 f"{MAX_CONTAINERS} in a pod", where="pod")
    containers = tuple(_container(c, f"pod.containers[{i}]", init=False)
                       for i, c in enumerate(_list(body["containers"], "pod.containers")))
    if not containers:
        raise InvalidFieldError("a pod needs at least one container", where="pod.containers")
    inits = tuple(_container(c, f"pod.initContainers[{i}]", init=True)
                  for i, c in enumerate(_list(body.get("initContainers", []),
                                              "pod.initContainers")))
    name = _str(body.get("name", uid), "pod.name")
    resources = None
    if "resources" in body:
        # NWIRE-2, QOS-4: pod-level requests and limits (spec.resources).
        requests, limits = _requirements(body["resources"], "pod.resources")
        resources = PodResources.of(requests=requests, limits=limits, where="pod.resources")
    return Pod(name, containers, inits, uid,
               labels=_str_map(body.get("labels", {}), "pod.labels"),
               annotations=_str_map(body.get("annotations", {}), "pod.annotations"),
               resources=resources)


def decode_resize(value: object) -> list[ContainerResize]:
    """NWIRE-6: ``[{"name", "resources": {"requests", "limits"}}]``, the containers a resize
    changes, each with its whole new resources."""
    listed = _list(value, "containers")
    if len(listed) > MAX_CONTAINERS:
        raise LimitExceededError(f"{len(listed)} containers: numaspec accepts at most "
                                 f"{MAX_CONTAINERS} in a pod", where="containers")
    found = []
    for i, raw in enumerate(listed):
        where = f"containers[{i}]"
        body = _object(raw, where, {"name", "resources"}, set())
        found.append(ContainerResize(_str(body["name"], f"{where}.name"),
                                     *_requirements(body["resources"], f"{where}.resources")))
    if not found:
        raise InvalidFieldError("a resize names at least one container", where="containers")
    return found


def encode_decision(decision: Decision) -> dict[str, Any]:
    return {"decision": {
        "admitted": decision.admitted,
        "reason": decision.reason,
        "message": decision.message,
        "containers": [c.as_json() for c in decision.containers],
    }}


def _hint_order(hint: TopologyHint) -> tuple[int, bool]:
    return (-1 if hint.numa_affinity is None else hint.numa_affinity.bits, hint.preferred)


def _hint_json(hint: TopologyHint, scores: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "numa": None if hint.numa_affinity is None else list(hint.numa_affinity.nodes),
        "preferred": hint.preferred}
    if scores:
        out["score"] = hint.score
    return out


def encode_hints(hints: Mapping[str, Sequence[TopologyHint] | None], *,
                 scores: bool = False) -> dict[str, Any]:
    """NWIRE-4: ``{"hints": {resource: [{"numa", "preferred"}, ...] | null}}``, each list in
    one canonical order (by the mask's word, then not preferred before preferred); the order
    is not part of the contract.  With ``scores`` (a 1.38+ node,
    :attr:`~numaspec.topology.versions.KubeletVersion.answers_hint_scores`) every hint also
    gives its ``score`` (HINT-5; 0 included); before 1.38 no hint has one."""
    return {"hints": {
        resource: None if listed is None else [
            _hint_json(h, scores) for h in sorted(listed, key=_hint_order)]
        for resource, listed in sorted(hints.items())}}


class NodeSession:
    """NWIRE-3: one line-protocol conversation: at most one node at a time.

    ``affinity``: the session's nodes run NUMA-level inter-pod affinity, and the scheduler's
    steps ``schedule``, ``reserve`` and ``unreserve`` are open (AWIRE-1..AWIRE-3)."""

    def __init__(self, *, affinity: bool = False, explain: bool = False) -> None:
        self.affinity = affinity
        #: EXPLAIN-1: every admit answer carries the admission's trace as ``explain``.
        self.explain = explain
        self.node: Node | None = None
        self.scheduler: NodeScheduler | None = None
        #: NWIRE-2: when set, the pods decoded so far by their JSON text, shared by the
        #: sessions that set the same dict (a pod is frozen): the model checker sends the same
        #: few pods many thousand times (CHECK-2).
        self.pod_memo: dict[str, Pod] | None = None

    def _pod(self, value: object) -> Pod:
        memo = self.pod_memo
        if memo is None:
            return decode_pod(value)
        key = json.dumps(value, sort_keys=True, separators=(",", ":"))
        found = memo.get(key)
        if found is None:
            found = memo[key] = decode_pod(value)
        return found

    def _ops(self) -> str:
        known = "create, admit, hints, remove, state, restart, register, resize"
        return known + (", schedule, reserve, unreserve" if self.affinity else "")

    def handle(self, request: object) -> dict[str, Any]:
        """One decoded request → its answer; a typed error for bad input.

        ADMIT-10: a step that raises leaves the session exactly as it was: the node's fields
        and the scheduler are restored, in place, from a snapshot taken before the step."""
        node = self.node
        if node is None or not isinstance(request, dict) or request.get("op") in (
                "create", "state"):
            return self._handle(request)  # nothing to restore: create only assigns at the end
        # what points at the node keeps pointing at it
        fields = vars(node.fork())
        scheduler = None if self.scheduler is None else self.scheduler.fork(node)
        try:
            return self._handle(request)
        except BaseException:
            vars(node).clear()
            vars(node).update(fields)
            self.scheduler = scheduler
            raise

    def fork(self) -> NodeSession:
        """NODE-6, CHECK-2: a copy of the session that later requests on either leave the
        other as it is (as a deep copy would be), at the cost of the node's mutable state
        alone (:meth:`Node.fork`)."""
        twin = NodeSession(affinity=self.affinity, explain=self.explain)
        twin.pod_memo = self.pod_memo
        if self.node is not None:
            twin.node = self.node.fork()
            if self.scheduler is not None:
                twin.scheduler = self.scheduler.fork(twin.node)
        return twin

    def _handle(self, request: object) -> dict[str, Any]:
        body = _object(request, "", {"op"}, {"node", "pod", "uid", "container",
                                             "unregistered", "resource", "containers",
                                             "resources"})
        op = body["op"]
        if op == "create":
            _object(body, "", {"op", "node"}, set())
            self.node = decode_node(body["node"], affinity=self.affinity)
            self.scheduler = NodeScheduler(self.node) if self.affinity else None
            return {"ok": True}
        if self.node is None:
            raise InvalidFieldError(f"{op!r} before a node was created (send "
                                    "{\"op\": \"create\", ...} first)", where="op")
        if op == "admit":
            _object(body, "", {"op", "pod"}, set())
            pod = self._pod(body["pod"])
            trace = AdmissionTrace() if self.explain else None
            decision = self.node.admit(pod) if trace is None else self.node.admit(pod, trace)
            if self.scheduler is not None:
                self.scheduler.settle(pod.uid)
            answer = encode_decision(decision)
            if trace is not None:
                answer["explain"] = trace.as_json()
            return answer
        if op == "hints":
            _object(body, "", {"op", "pod"}, {"container"})
            pod = self._pod(body["pod"])
            container = _str(body["container"], "container") if "container" in body else None
            return encode_hints(self.node.provider_hints(pod, container),
                                scores=self.node.version.answers_hint_scores)
        if op == "remove":
            _object(body, "", {"op", "uid"}, set())
            self.node.remove(_str(body["uid"], "uid"))
            return {"ok": True}
        if op == "resize":
            # NWIRE-6, RESIZE-1: a live pod's containers ask for new cpu and memory.
            # RESIZE-8: and, optionally, the pod-level resources (spec.resources).
            _object(body, "", {"op", "uid"}, {"containers", "resources"})
            pod_level = None
            if "resources" in body:
                pod_level = PodResourcesResize(*_requirements(body["resources"], "resources"))
            elif "containers" not in body:
                raise InvalidFieldError("a resize names at least one container, or the "
                                        "pod-level resources", where="containers")
            changes = decode_resize(body["containers"]) if "containers" in body else []
            return {"resize": resize(self.node, _str(body["uid"], "uid"), changes,
                                     pod_level).as_json()}
        if op == "restart":
            # NWIRE-7, DEV-11: kubelet restarts; the named resources' plugins stay away.
            _object(body, "", {"op"}, {"unregistered"})
            names = _list(body.get("unregistered", []), "unregistered")
            self.node.restart([_str(n, f"unregistered[{i}]") for i, n in enumerate(names)])
            return {"ok": True}
        if op == "register":
            # NWIRE-7, DEV-11: a resource's plugin registers again.
            _object(body, "", {"op", "resource"}, set())
            self.node.register(_str(body["resource"], "resource"))
            return {"ok": True}
        if op == "state":
            _object(body, "", {"op"}, set())
            state = self.node.state()
            if self.scheduler is not None:
                state["reserved"] = list(self.scheduler.reserved)
            return {"state": state}
        if self.scheduler is not None:
            if op == "schedule":
                _object(body, "", {"op", "pod"}, set())
                verdict = self.scheduler.check(self._pod(body["pod"]))
                return {"schedule": {"passes": verdict.passes, "reason": verdict.reason,
                                     "message": verdict.message}}
            if op == "reserve":
                _object(body, "", {"op", "pod"}, set())
                self.scheduler.reserve(self._pod(body["pod"]))
                return {"ok": True}
            if op == "unreserve":
                _object(body, "", {"op", "uid"}, set())
                self.scheduler.unreserve(_str(body["uid"], "uid"))
                return {"ok": True}
        raise InvalidFieldError(f"unknown op {op!r} (known: {self._ops()})", where="op")

    def answer(self, line: bytes | str) -> dict[str, Any]:
        """One request line → one answer; never raises for bad input."""
        try:
            return self.handle(decode_json_line(line))
        except NumaspecError as exc:
            return encode_error(exc)
        except Exception as exc:  # a bug in the reference must not end the stream
            return {"error": {"kind": "internal-error",
                              "message": f"numaspec failed on this line: "
                                         f"{type(exc).__name__}: {exc}"}}

