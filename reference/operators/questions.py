"""The operator's questions about a real node (spec chapter ``operators.md``, OPS-5..OPS-9):
would this pod be admitted, onto which NUMA nodes, and if not, why; what changes if the
configuration changes; what is the largest pod of this shape that still fits, and where.

A node is described by :class:`NodeFiles` (what the importers read from the node's own files);
:func:`build_node` starts the node model on it and restores the running pods and their
allocations (:mod:`numaspec.operators.restore`).  Every answer is JSON-ready and carries the
admission's trace (EXPLAIN-3), so the rules that decided are named.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import attrs
import yaml

from numaspec.errors import InvalidFieldError, NumaspecError, StateConflictError
from numaspec.node.admission import Node
from numaspec.node.machine import Machine
from numaspec.node.nodeconfig import NodeConfig, format_cpuset, parse_cpuset
from numaspec.node.pods import Container, Pod, qos_class
from numaspec.node.quantity import parse_quantity
from numaspec.node.trace import AdmissionTrace
from numaspec.operators.restore import RestoreReport, RunningPod, restore_state
from numaspec.topology.versions import parse_version

if TYPE_CHECKING:
    from numaspec.operators.dra_question import DraQuestion
    from numaspec.operators.importers.checkpoints import (
        CPUManagerState,
        DeviceCheckpoint,
        MemoryManagerState,
    )

__all__ = ["SETTABLE", "Change", "NodeFiles", "PodChange", "apply_requests", "build_node",
           "explain_pod", "largest_pod", "parse_change", "parse_request", "what_if"]


@attrs.frozen
class NodeFiles:
    """OPS-5: a node as its files describe it.  ``sources`` says which file each part came
    from (``machine``, ``config``, ``pods``, ``state``), for messages."""

    machine: Machine
    config: NodeConfig
    pods: tuple[RunningPod, ...] = ()
    cpu_state: CPUManagerState | None = None
    memory_state: MemoryManagerState | None = None
    device_checkpoint: DeviceCheckpoint | None = None
    sources: Mapping[str, str] = attrs.field(factory=dict)

    def drained(self) -> NodeFiles:
        """The same node with no pods and no state: after a drain and the state files'
        removal, which kubelet asks for when a manager's policy changes."""
        return attrs.evolve(self, pods=(), cpu_state=None, memory_state=None,
                            device_checkpoint=None)


def build_node(files: NodeFiles) -> tuple[Node, RestoreReport]:
    """OPS-5: start the node model on the machine and configuration (kubelet's start-up checks,
    NODE-5), then restore the running pods and their allocations (OPS-1..OPS-4)."""
    try:
        node = Node(files.machine, files.config)
    except NumaspecError as exc:
        source = files.sources.get("config", "")
        where = exc.where.removeprefix("config.") if exc.where.startswith("config") else exc.where
        raise exc.relocated(f"{source}: {where}" if source else exc.where) from None
    report = restore_state(node, files.pods, cpu=files.cpu_state, memory=files.memory_state,
                           devices=files.device_checkpoint)
    return node, report


# --- explain ------------------------------------------------------------------------------


def _rules(trace: Mapping[str, Any]) -> list[str]:
    """The rule IDs the trace names, in the order they appear."""
    found: list[str] = []

    def add(rule: object) -> None:
        if isinstance(rule, str) and rule and rule not in found:
            found.append(rule)

    for step in trace.get("steps") or ():
        add(step.get("rule"))
        merge = step.get("merge") or {}
        add(merge.get("chosen_by"))  # EXPLAIN-2: the rule that decided, not each kept one
        add(merge.get("decided_by"))
    refused = trace.get("refused")
    if refused:
        add(refused.get("rule"))
    return found


def _node_summary(node: Node, files: NodeFiles) -> dict[str, Any]:
    config = node.config
    return {
        "kubelet_version": str(config.kubelet_version),
        "topology_manager": {"policy": config.topology_manager_policy,
                             "scope": config.topology_manager_scope,
                             "options": dict(config.topology_manager_policy_options)},
        "cpu_manager": {"policy": config.cpu_manager_policy,
                        "options": dict(config.cpu_manager_policy_options),
                        "reserved": sorted(node.cpu.reserved) if node.cpu else []},
        "memory_manager": {"policy": config.memory_manager_policy},
        "numa_nodes": list(node.machine.numa_ids),
        "cpus": sum(len(c.threads) for n in node.machine.numa_nodes for c in n.cores),
        "devices": {r: len(ds) for r, ds in sorted(node.machine.devices.items())},
        "sources": dict(files.sources),
    }


def _free(node: Node) -> dict[str, Any]:
    """What the node has free for exclusive use, per NUMA node, before the pod's admission
    (OPS-12)."""
    free: dict[str, Any] = {}
    for numa in node.machine.numa_ids:
        entry: dict[str, Any] = {}
        if node.cpu is not None:
            available = node.cpu.available()
            entry["cpus"] = sorted(c.cpu for c in node.cpu.topology.cpus
                                   if c.numa == numa and c.cpu in available)
        if node.memory is not None:
            entry["memory"] = {t: s.free for t, s in node.memory.nodes[numa].tables.items()}
        devices = {r: sorted(d for d in node.devices.available(r)
                             if numa in node.devices.devices[r][d].numa)
                   for r in sorted(node.devices.devices)}
        if devices:
            entry["devices"] = devices
        free[str(numa)] = entry
    return free


def _explain_on(node: Node, pod: Pod) -> dict[str, Any]:
    trace = AdmissionTrace()
    copy.deepcopy(node).admit(pod, trace)
    data = trace.as_json()
    decision = data.get("decision") or {}
    merged = [{"container": step.get("container"),
               "hint": ((step.get("merge") or {}).get("result") or {}).get("hint")}
              for step in data.get("steps") or ()]
    return {"decision": decision, "merged": merged, "refused": data.get("refused"),
            "rules": _rules(data), "trace": data}


def explain_pod(files: NodeFiles, pod: Pod, *, node: Node | None = None,
                report: RestoreReport | None = None,
                resource_claims: Sequence[str] = (),
                dra: DraQuestion | None = None) -> dict[str, Any]:
    """OPS-6: would ``pod`` be admitted on the node ``files`` describe, onto which NUMA nodes,
    CPUs, memory blocks and devices, and if not, why: each container's (or, in pod scope,
    the pod's) hints per provider, the merged hint, and the rules that decided.
    ``resource_claims``: the pod's DRA claims, which take no part (DEV-8): said in ``notes``.
    ``dra``: the node's DRA objects (OPS-11): the answer gains ``dra``, the scheduler's
    allocation of the claims and each container's placements and pairs (DRA-12)."""
    if node is None or report is None:
        node, report = build_node(files)
    notes = []
    dra_answer = dra.answer(node, pod) if dra is not None else None
    if dra_answer is not None and not dra_answer["scheduled"]:
        allocation = dra_answer["allocation"]
        notes.append("the scheduler would not place this pod on this node: its DRA claims "
                     "cannot be allocated here ("
                     + (allocation.get("message") or allocation.get("outcome", "")) + "), so "
                     "kubelet never admits it; below is what kubelet would do if it did "
                     "(DRA-11)")
    if resource_claims and dra_answer is None:
        notes.append(f"the pod's DRA resource claims ({', '.join(resource_claims)}) take no "
                     "part in NUMA alignment: no hint provider speaks for them, and nothing "
                     "aligns their devices with the CPUs, memory and device-plugin devices "
                     "below (DEV-8)")
    restored: dict[str, Any] = report.as_json()
    if any(p.source.endswith("(known only from the state)") for p in files.pods):
        restored["caveat"] = (
            "the node's pods were not given (--pods): the running pods are known only from "
            "the state files, each at what it holds exclusively; pods that hold nothing "
            "exclusive are not counted by the resource-fit check (ADMIT-8), so a pod shown "
            "admitted may still be refused for capacity")
    from numaspec.operators.reason import asked, reason, verdict

    answer: dict[str, Any] = {
        "kind": "explanation", "node": _node_summary(node, files),
        "restored": restored, "free": _free(node), "asked": asked(node, pod),
        "pod": {"uid": pod.uid, "name": pod.name, "qos": qos_class(pod).value,
                "containers": [_container_json(c, pod) for c in pod.all_containers()]},
        "notes": notes, **({"dra": dra_answer} if dra_answer is not None else {}),
        **_explain_on(node, pod)}
    # OPS-12: the verdict first, then why
    return {"verdict": verdict(answer), "reason": reason(answer), **answer}


def _container_json(container: Container, pod: Pod) -> dict[str, Any]:
    kind = ("sidecar" if container.restartable else "init") if pod.is_init(container.name) \
        else "app"
    return {"name": container.name, "kind": kind,
            "requests": {k: _quantity_text(v) for k, v in sorted(container.requests.items())}}


def _quantity_text(amount: Fraction) -> str:
    return str(amount.numerator) if amount.denominator == 1 else f"{float(amount):g}"


# --- what-if ------------------------------------------------------------------------------


@attrs.frozen
class Change:
    """OPS-7: one ``--set KEY=VALUE``: a KubeletConfiguration field (dotted into maps) or
    ``kubeletVersion``."""

    key: str
    value: str

    def __str__(self) -> str:
        return f"{self.key}={self.value}"


#: OPS-7: the keys ``--set`` accepts; ``NAME.*`` sets one entry of a map (an empty value
#: removes it).
SETTABLE = ("kubeletVersion", "topologyManagerPolicy", "topologyManagerScope",
            "topologyManagerPolicyOptions.*", "cpuManagerPolicy", "cpuManagerPolicyOptions.*",
            "memoryManagerPolicy", "reservedSystemCPUs", "reservedMemory", "kubeReserved.*",
            "systemReserved.*", "evictionHard.*", "featureGates.*", "maxPods")

_SIMPLE = {"topologyManagerPolicy": "topology_manager_policy",
           "topologyManagerScope": "topology_manager_scope",
           "cpuManagerPolicy": "cpu_manager_policy",
           "memoryManagerPolicy": "memory_manager_policy"}
_MAPS = {"topologyManagerPolicyOptions": "topology_manager_policy_options",
         "cpuManagerPolicyOptions": "cpu_manager_policy_options",
         "kubeReserved": "kube_reserved", "systemReserved": "system_reserved",
         "evictionHard": "eviction_hard", "featureGates": "feature_gates"}


def parse_change(text: str) -> Change:
    """``KEY=VALUE`` → a :class:`Change`; an unknown key is an error naming the known ones."""
    key, sep, value = text.partition("=")
    key = key.strip()
    head = key.split(".", 1)[0]
    if not sep or not key:
        raise InvalidFieldError(f"{text!r} is not KEY=VALUE", where="--set")
    if key in _SIMPLE or key in ("kubeletVersion", "reservedSystemCPUs", "reservedMemory",
                                 "maxPods"):
        return Change(key, value.strip())
    if head in _MAPS and "." in key:
        return Change(key, value.strip())
    raise InvalidFieldError(f"cannot set {key!r}; known: {', '.join(SETTABLE)}", where="--set")


@attrs.frozen
class PodChange:
    """OPS-16: one ``--request CONTAINER.RESOURCE=AMOUNT``: what one container asks."""

    container: str
    resource: str
    text: str
    amount: Fraction

    def __str__(self) -> str:
        return f"{self.container}.{self.resource}={self.text}"


def parse_request(text: str, pod: Pod) -> PodChange:
    """``CONTAINER.RESOURCE=AMOUNT`` → a :class:`PodChange` of a container ``pod`` has; the
    amount a Kubernetes quantity, not negative (container names hold no dot: the first one
    ends it; resource names may hold more)."""
    target, sep, amount = text.partition("=")
    container, dot, resource = target.strip().partition(".")
    if not sep or not dot or not container or not resource.strip() or not amount.strip():
        raise InvalidFieldError(f"{text!r} is not CONTAINER.RESOURCE=AMOUNT (such as "
                                "app.cpu=16 or app.memory=8Gi)", where="--request")
    names = [c.name for c in pod.all_containers()]
    if container not in names:
        raise InvalidFieldError(f"the pod has no container {container!r} (it has: "
                                f"{', '.join(names)})", where="--request")
    quantity = parse_quantity(amount.strip(), where=f"--request {target.strip()}")
    if quantity < 0:
        raise InvalidFieldError(f"{amount.strip()!r} is negative: a request is zero or more",
                                where=f"--request {target.strip()}")
    return PodChange(container, resource.strip(), amount.strip(), quantity)


def apply_requests(pod: Pod, changes: Iterable[PodChange]) -> Pod:
    """OPS-16: ``pod`` with each container's request changed; a limit the container sets for
    that resource follows it, so a Guaranteed pod stays Guaranteed (as ``--largest`` grows
    one, OPS-8)."""
    for change in changes:
        pod = _scaled(pod, change.container, change.resource, change.amount)
    return pod


def apply_changes(config: NodeConfig, changes: Iterable[Change]) -> NodeConfig:
    """OPS-7: the configuration with ``changes`` applied in order (each value read as the
    KubeletConfiguration field it names)."""
    for change in changes:
        where = f"--set {change.key}"
        key, value = change.key, change.value
        if key in _SIMPLE:
            fields: dict[str, Any] = {_SIMPLE[key]: value}
            config = attrs.evolve(config, **fields)
        elif key == "kubeletVersion":
            config = attrs.evolve(config, kubelet_version=parse_version(value, where=where))
        elif key == "reservedSystemCPUs":
            config = attrs.evolve(config, reserved_system_cpus=parse_cpuset(value, where=where))
        elif key == "maxPods":
            try:
                config = attrs.evolve(config, max_pods=int(value))
            except ValueError:
                raise InvalidFieldError(f"{value!r} is not an integer", where=where) from None
        elif key == "reservedMemory":
            config = attrs.evolve(config, reserved_memory=_reserved_memory(value, where))
        else:
            head, _, entry = key.partition(".")
            field = _MAPS[head]
            current = dict(getattr(config, field) or {})
            if head == "featureGates":
                if value.lower() not in ("true", "false"):
                    raise InvalidFieldError(f"{value!r}: a feature gate is true or false",
                                            where=where)
                current[entry] = value.lower() == "true"
            elif value == "":
                current.pop(entry, None)
            else:
                if head in ("kubeReserved", "systemReserved", "evictionHard") and \
                        not value.endswith("%"):
                    parse_quantity(value, where=where)
                current[entry] = value
            changed: dict[str, Any] = {field: current}
            config = attrs.evolve(config, **changed)
    return config


def _reserved_memory(text: str, where: str) -> tuple[tuple[int, Mapping[str, str]], ...]:
    """``[{numaNode: 0, limits: {memory: 1Gi}}, ...]`` (YAML or JSON)."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InvalidFieldError(f"not YAML: {exc}", where=where) from None
    if not isinstance(raw, list):
        raise InvalidFieldError("expected a list such as [{numaNode: 0, limits: {memory: 1Gi}}]",
                                where=where)
    out = []
    for index, item in enumerate(raw):
        at = f"{where}[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("numaNode"), int) or \
                not isinstance(item.get("limits"), dict):
            raise InvalidFieldError("expected {numaNode: <int>, limits: {<type>: <quantity>}}",
                                    where=at)
        out.append((item["numaNode"], {str(k): str(v) for k, v in item["limits"].items()}))
    return tuple(out)


def _differences(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """OPS-7: what changed in the decision, in words."""
    out: list[str] = []
    b, a = before.get("decision") or {}, after.get("decision") or {}
    if b.get("admitted") != a.get("admitted"):
        out.append(f"admitted: {b.get('admitted')} -> {a.get('admitted')}"
                   + (f" ({a.get('reason')})" if a.get("reason") else ""))
    elif b.get("reason") != a.get("reason"):
        out.append(f"reason: {b.get('reason') or '-'} -> {a.get('reason') or '-'}")
    if not b.get("containers"):
        for placed in a.get("containers") or []:
            out.append(f"{placed.get('name')}: placed on {_brief(placed.get('hint'))}, CPUs "
                       f"{_brief(placed.get('cpus')) if placed.get('cpus') else '-'}")
    for mine, theirs in zip(b.get("containers") or [], a.get("containers") or [], strict=False):
        for field in ("hint", "cpus", "memory", "devices"):
            if mine.get(field) != theirs.get(field):
                out.append(f"{mine.get('name')}: {field} {_brief(mine.get(field))} -> "
                           f"{_brief(theirs.get(field))}")
    if not b.get("containers"):  # refused before and after: the merged hints may differ
        for x, y in zip(before.get("merged") or [], after.get("merged") or [], strict=False):
            if x.get("hint") != y.get("hint"):
                out.append(f"{x.get('container') or 'pod'}: merged hint "
                           f"{_brief(x.get('hint'))} -> {_brief(y.get('hint'))}")
    from numaspec.operators.reason import deciding

    ruled = deciding(before.get("rules") or []), deciding(after.get("rules") or [])
    if set(ruled[0]) != set(ruled[1]):
        out.append(f"rules: {', '.join(ruled[0]) or '-'} -> {', '.join(ruled[1]) or '-'}")
    return out


def _brief(value: object) -> str:
    if isinstance(value, Mapping) and "numa" in value:
        numa = value.get("numa")
        return ("{" + ",".join(map(str, numa)) + "}" if isinstance(numa, list) else "any") + \
            ("" if value.get("preferred") else " not preferred")
    if isinstance(value, list) and value and all(isinstance(v, int) for v in value):
        return format_cpuset(value)
    return str(value)


def what_if(files: NodeFiles, pod: Pod, changes: Sequence[Change], *,
            resource_claims: Sequence[str] = (), dra: DraQuestion | None = None,
            requests: Sequence[PodChange] = ()) -> dict[str, Any]:
    """OPS-7, OPS-16: the explanation before and after ``changes`` to the configuration and
    ``requests`` to the pod, and what changed.  A change
    kubelet would not start with on this node's state (a manager's policy or a reservation
    the state files contradict) is answered for the drained node, and says so; a change
    kubelet would not start with at all is the answer (``after.startup_error``)."""
    node, report = build_node(files)
    claims = tuple(resource_claims)
    before = explain_pod(files, pod, node=node, report=report, resource_claims=claims,
                         dra=dra)
    changed = attrs.evolve(files, config=apply_changes(files.config, changes))
    asked = pod
    pod = apply_requests(pod, requests)
    answer: dict[str, Any] = {"kind": "what-if", "changes": [
        *(str(c) for c in changes), *(_request_text(asked, pod, r) for r in requests)],
        "note": None, "before": before}
    try:
        try:
            answer["after"] = explain_pod(changed, pod, resource_claims=claims, dra=dra)
        except StateConflictError as exc:
            answer["note"] = (f"kubelet would not start with this node's state after the "
                              f"change ({exc}); shown: the node drained, its state files "
                              "removed")
            answer["before_drained"] = before = explain_pod(files.drained(), pod,
                                                            resource_claims=claims, dra=dra)
            answer["after"] = explain_pod(changed.drained(), pod, resource_claims=claims,
                                          dra=dra)
    except NumaspecError as exc:
        from numaspec.protocols.merge_protocol import encode_error

        answer["after"] = {"kind": "explanation", "startup_error": encode_error(exc)["error"]}
        answer["differences"] = [f"kubelet would not start: {exc}"]
        return {"verdict": f"With {', '.join(answer['changes'])}: kubelet would not start",
                **answer}
    answer["differences"] = _differences(before, answer["after"])
    return {"verdict": _what_if_verdict(answer["changes"], before, answer["after"]), **answer}


def _what_if_verdict(changes: Sequence[str], before: Mapping[str, Any],
                     after: Mapping[str, Any]) -> str:
    """OPS-7: the what-if's outcome first, against the answer without the change: ``With
    topologyManagerPolicy=restricted: still rejected (TopologyAffinityError): ...``."""
    def state(answer: Mapping[str, Any]) -> str:
        if ((answer.get("dra") or {}).get("scheduled")) is False:
            return "not scheduled on this node"
        decision = answer.get("decision") or {}
        return "admitted" if decision.get("admitted") else \
            f"rejected ({decision.get('reason')})"

    was, now = state(before), state(after)
    outcome = str(after.get("verdict") or now)
    outcome = outcome[:1].lower() + outcome[1:]
    if was == now:
        return f"With {', '.join(changes)}: still {outcome}"
    return f"With {', '.join(changes)}: {outcome}; without the change: {was}"


def _request_text(before: Pod, after: Pod, change: PodChange) -> str:
    """``app.cpu=16 (requests and limits, was 18)``: what ``--request`` changed."""
    def of(pod: Pod) -> Container:
        return next(c for c in pod.all_containers() if c.name == change.container)

    old, new = of(before), of(after)
    was = old.requests.get(change.resource)
    which = "requests and limits" if change.resource in new.limits else "requests"
    if was is None:
        said = "not asked"
    elif change.resource == "memory" or change.resource.startswith("hugepages-"):
        from numaspec.operators.reason import size_text

        said = size_text(int(was))
    else:
        said = _quantity_text(was)
    return f"{change} ({which}, was {said})"


# --- the largest pod ----------------------------------------------------------------------


def _scaled(pod: Pod, container: str, resource: str, amount: Fraction) -> Pod:
    def fix(c: Container) -> Container:
        if c.name != container:
            return c
        limits = dict(c.limits)
        if resource in limits or resource not in ("cpu", "memory"):
            limits[resource] = amount  # a Guaranteed shape stays Guaranteed
        return attrs.evolve(c, requests={**c.requests, resource: amount}, limits=limits)

    return attrs.evolve(pod, containers=tuple(fix(c) for c in pod.containers),
                        init_containers=tuple(fix(c) for c in pod.init_containers))


def largest_pod(files: NodeFiles, pod: Pod, resource: str, *, container: str | None = None
                ) -> dict[str, Any]:
    """OPS-8: the largest amount of ``resource`` one container of ``pod`` (its first app
    container unless named) can ask for, the rest of the pod unchanged, with the node still
    admitting the pod; and where it lands.

    CPUs, devices and hugepages are tried one unit at a time from none upwards, because
    admission is not monotone in them (full-pcpus-only refuses odd counts); memory is
    bisected in MiB, since a larger memory request never fits where a smaller one does not
    (MEM-4).  None at all is an answer too (the rest of the pod fits, with none of it),
    unless it changes the pod's QoS class (no memory or CPU makes a Guaranteed pod
    Burstable, which the managers treat otherwise)."""
    node, _ = build_node(files)
    names = [c.name for c in pod.all_containers()]
    target = container or pod.containers[0].name
    if target not in names:
        raise InvalidFieldError(f"the pod has no container {target!r} (it has: "
                                f"{', '.join(names)})", where="--container")
    unit, top = _search_space(node, resource)
    tried = 0
    asked_qos = qos_class(pod)

    def admits(units: int) -> dict[str, Any] | None:
        nonlocal tried
        tried += 1
        candidate = _scaled(pod, target, resource, Fraction(units * unit))
        if qos_class(candidate) is not asked_qos:
            return None  # none at all makes another QoS class: another question (QOS-1)
        try:
            found = _explain_on(node, candidate)
        except NumaspecError:
            return None
        return found if (found["decision"] or {}).get("admitted") else None

    best: tuple[int, dict[str, Any]] | None = None
    if resource == "memory":
        low, high = 0, top  # invariant: low admits (or is 0), high + 1 does not
        while low < high:
            mid = (low + high + 1) // 2
            found = admits(mid)
            if found is not None:
                low, best = mid, (mid, found)
            else:
                high = mid - 1
        if best is None:
            found = admits(0)
            best = None if found is None else (0, found)
    else:
        for units in range(0, top + 1):
            found = admits(units)
            if found is not None:
                best = (units, found)
    without = qos_class(_scaled(pod, target, resource, Fraction(0)))
    return {"kind": "largest", "resource": resource, "container": target,
            "qos_without": None if without is asked_qos else without.value,
            "unit": _unit_text(resource, unit), "searched": tried,
            "largest": None if best is None else _amount_text(resource, best[0] * unit),
            "decision": None if best is None else best[1]["decision"],
            "rules": [] if best is None else best[1]["rules"]}


def _search_space(node: Node, resource: str) -> tuple[int, int]:
    """(the step, the most steps) for ``resource`` on ``node``."""
    machine = node.machine
    if resource == "cpu":
        return 1, sum(len(c.threads) for n in machine.numa_nodes for c in n.cores)
    if resource == "memory":
        return 1 << 20, sum(n.memory for n in machine.numa_nodes) >> 20
    if resource.startswith("hugepages-"):
        if resource not in machine.hugepage_sizes:
            raise InvalidFieldError(f"the machine has no {resource}", where="--largest")
        from numaspec.node.machine import HUGEPAGE_SIZES

        size = HUGEPAGE_SIZES[resource]
        return size, sum(n.hugepages.get(resource, 0) for n in machine.numa_nodes)
    if resource in machine.devices:
        return 1, len(machine.devices[resource])
    raise InvalidFieldError(f"{resource!r} is not a resource of this node (cpu, memory, "
                            f"{', '.join([*machine.hugepage_sizes, *machine.devices])})",
                            where="--largest")


def _unit_text(resource: str, unit: int) -> str:
    return {1 << 20: "1Mi", 2 << 20: "2Mi", 1 << 30: "1Gi"}.get(unit, str(unit)) \
        if resource != "cpu" else "1"


def _amount_text(resource: str, amount: int) -> str:
    if resource == "cpu" or "/" in resource:
        return str(amount)
    for suffix, size in (("Gi", 1 << 30), ("Mi", 1 << 20)):
        if amount % size == 0:
            return f"{amount // size}{suffix}"
    return str(amount)
