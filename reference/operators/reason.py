"""The reason in plain words that opens every explanation (spec chapter ``operators.md``,
OPS-12): what the pod (or each container) asks for that the managers place, under which
Topology Manager policy and scope, what each NUMA node had free before the admission, and the
outcome: where it went and why that set, or why nothing fit.

Built only from the explanation's own numbers (the node summary, the free table, the trace and
the decision) and from :func:`asked`, which reads the requests with the managers' own
functions.  Presentation only: it decides nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from numaspec.node.admission import Node
    from numaspec.node.pods import Container, Pod

__all__ = ["CHOSEN", "asked", "reason", "size_text"]

#: OPS-12: why the merge chose its set, in words, by the rule that decided (EXPLAIN-2).
CHOSEN = {
    "MERGE-1": "the only set the hints allow",
    "MERGE-4": "the only set the hints allow (every other combination leaves no NUMA node)",
    "MERGE-5": "the set every resource prefers, ahead of any set some resource does not prefer",
    "MERGE-6": "the narrowest set every resource prefers",
    "MERGE-7": "the narrowest set with room",
    "MERGE-8": "the set closest to the width the most demanding resource needs",
    "MERGE-9": "the closest (by NUMA distance) of the equally narrow sets",
    "MERGE-10": "no set holds every resource, so the whole machine, not preferred",
}


def _amounts(node: Node, pod: Pod, container: Container | None) -> dict[str, int]:
    """What the managers place for ``container`` (the pod, when ``None``): exclusive CPUs,
    memory and hugepages in bytes, devices per resource."""
    from numaspec.errors import NumaspecError
    from numaspec.node.cpu_manager import guaranteed_cpus, pod_guaranteed_cpus
    from numaspec.node.devices import pod_device_limits
    from numaspec.node.memory import container_memory, pod_memory
    from numaspec.node.pods import QOSClass, qos_class
    from numaspec.node.quantity import value

    out: dict[str, int] = {}
    if node.cpu is not None:
        cpus = pod_guaranteed_cpus(pod) if container is None else guaranteed_cpus(pod, container)
        if cpus:
            out["cpu"] = cpus
    # MEM-3, MEM-11: the static policy pins the memory of Guaranteed pods without pod-level
    # resources
    if node.memory is not None and qos_class(pod) is QOSClass.GUARANTEED and \
            pod.resources is None:
        try:
            memory = (pod_memory(pod, every_type=node.version.memory_pod_request_every_type)
                      if container is None else container_memory(container))
        except NumaspecError:  # a request that is not whole bytes: the provider says nothing
            memory = {}
        out.update({t: size for t, size in sorted(memory.items()) if size})
    devices = node.devices.devices
    wanted = pod_device_limits(pod, devices) if container is None else \
        {n: value(q) for n, q in container.limits.items() if n in devices}
    out.update({r: n for r, n in sorted(wanted.items()) if n})
    return out


def asked(node: Node, pod: Pod) -> list[dict[str, Any]]:
    """OPS-12: per admission step (each container in admission order, or the pod in pod
    scope), what the managers place, as the node reads the pod."""
    effective = node.effective_pod(pod)
    if node.config.topology_manager_scope == "pod":
        return [{"container": None, "amounts": _amounts(node, effective, None)}]
    return [{"container": c.name, "amounts": _amounts(node, effective, c)}
            for c in effective.all_containers()]


def size_text(amount: int) -> str:
    """Bytes as an operator reads them: whole Gi or Mi, else two decimals."""
    for suffix, size in (("Gi", 1 << 30), ("Mi", 1 << 20)):
        if amount and amount % size == 0:
            return f"{amount // size}{suffix}"
    for suffix, size in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if amount >= size:
            return f"{amount / size:.2f}{suffix}"
    return str(amount)


def _what(resource: str, amount: int) -> str:
    if resource == "cpu":
        return f"{amount} exclusive CPU" + ("" if amount == 1 else "s")
    if resource == "memory":
        return f"{size_text(amount)} of memory"
    if resource.startswith("hugepages-"):
        return f"{size_text(amount)} of {resource}"
    return f"{amount} {resource}"


def _free_of(entry: Mapping[str, Any], resource: str) -> int:
    if resource == "cpu":
        return len(entry.get("cpus") or [])
    if resource == "memory" or resource.startswith("hugepages-"):
        return int((entry.get("memory") or {}).get(resource, 0))
    return len((entry.get("devices") or {}).get(resource) or [])


def _shown(resource: str, amount: int) -> str:
    return size_text(amount) if resource == "memory" or resource.startswith("hugepages-") \
        else str(amount)


def _label(resource: str) -> str:
    return {"cpu": "CPUs", "memory": "of memory"}.get(resource, resource
                                                       if "/" in resource else f"of {resource}")


def _and(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _nodes(numa: Sequence[int] | None) -> str:
    if numa is None:
        return "any NUMA node"
    return ("NUMA node " if len(numa) == 1 else "NUMA nodes ") + ",".join(map(str, numa))


def _asks(step: Mapping[str, Any], policy: str, scope: str,
          free: Mapping[str, Mapping[str, Any]]) -> str:
    who = "the pod" if step.get("container") is None else f"container {step['container']}"
    amounts: Mapping[str, int] = step.get("amounts") or {}
    if not amounts:
        return (f"{who} asks for nothing the managers place on NUMA nodes ({policy}, "
                f"{scope} scope)")
    one = " on one NUMA node" if policy == "single-numa-node" else ""
    text = (f"{who} needs {_and([_what(r, n) for r, n in amounts.items()])}{one} "
            f"({policy}, {scope} scope)")
    for resource in amounts:
        per = {numa: _free_of(entry, resource) for numa, entry in free.items()}
        if not per:
            continue
        most = max(per.values())
        listed = ", ".join(f"node {numa} {_shown(resource, n)}" for numa, n in per.items())
        what = f" {_label(resource)}" if len(amounts) > 1 else ""
        text += f"; the most any NUMA node has free is {_shown(resource, most)}{what}: {listed}"
    return text


def _refusal(answer: Mapping[str, Any], policy: str) -> str:
    decision = answer.get("decision") or {}
    refused = answer.get("refused") or {}
    rule = refused.get("rule")
    if rule == "ADMIT-3":
        steps = (answer.get("trace") or {}).get("steps") or []
        merge = next((s.get("merge") for s in reversed(steps) if s.get("merge")), None) or {}
        hint = (merge.get("result") or {}).get("hint") or {}
        numa = hint.get("numa")
        where = "the whole machine" if numa is None else _nodes(numa)
        if policy == "single-numa-node":
            why = "no single NUMA node holds all of it"
        else:
            why = "no set of NUMA nodes that every resource prefers holds all of it"
        return (f"refused ({decision.get('reason')}): {why}; the merged hint is {where}, "
                f"not preferred, which the {policy} policy refuses")
    return (f"refused ({decision.get('reason')}) by {refused.get('by')}: "
            f"{decision.get('message')}")


def reason(answer: Mapping[str, Any]) -> str:
    """OPS-12: the explanation's reason in plain words (see the module's docstring)."""
    if "startup_error" in answer:
        return f"kubelet would not start: {answer['startup_error'].get('message')}"
    node = answer.get("node") or {}
    tm = node.get("topology_manager") or {}
    policy, scope = str(tm.get("policy")), str(tm.get("scope"))
    free = answer.get("free") or {}
    sentences = [_asks(step, policy, scope, free) for step in answer.get("asked") or []]
    if scope == "container" and len(sentences) > 1:
        sentences.append("free is before admission; each container takes its share before "
                         "the next one is placed")
    decision = answer.get("decision") or {}
    if not decision.get("admitted"):
        sentences.append(_refusal(answer, policy))
        return "; ".join(sentences)
    if policy == "none":
        sentences.append("admitted: the none policy aligns nothing")
        return "; ".join(sentences)
    chosen = {s.get("container"): (s.get("merge") or {}).get("chosen_by")
              for s in (answer.get("trace") or {}).get("steps") or []}
    placed = []
    containers = decision.get("containers") or []
    if scope == "pod" and containers:
        hint = containers[0].get("hint") or {}
        rule = chosen.get(None)
        containers = [{"name": "the pod", "hint": hint}]
    for container in containers:
        hint = container.get("hint") or {}
        rule = chosen.get(container.get("name"), chosen.get(None))
        who = container.get("name")
        who = who if who == "the pod" else f"container {who}"
        placed.append(f"{who} fits on {_nodes(hint.get('numa'))}"
                      + (f", {CHOSEN[rule]} ({rule})" if rule in CHOSEN else ""))
    sentences.append("admitted: " + "; ".join(placed) if placed else "admitted")
    return "; ".join(sentences)
