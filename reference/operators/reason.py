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

__all__ = ["CHOSEN", "FORCED", "asked", "deciding", "reason", "size_text", "verdict"]

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


#: OPS-12: the merge rules that say the choice was forced (one candidate, or one left once the
#: empty ones are dropped): the hints decided, and the answer shows them; nothing an operator
#: can act on, so not listed among the rules that decided.
FORCED = frozenset({"MERGE-1", "MERGE-4"})


def deciding(rules: Sequence[str]) -> list[str]:
    """OPS-12: the rules an answer lists as deciding, for an operator: without :data:`FORCED`."""
    return [rule for rule in rules if rule not in FORCED]


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


def _refused_step(answer: Mapping[str, Any]) -> int:
    """The index of the admission step that was refused (the last one the trace has)."""
    steps = (answer.get("trace") or {}).get("steps") or []
    return max(len(steps) - 1, 0)


def _verdict(answer: Mapping[str, Any], policy: str) -> str:
    """OPS-12: the outcome, in the answer's first sentence."""
    decision = answer.get("decision") or {}
    dra = answer.get("dra") or {}
    if dra and dra.get("scheduled") is False:
        allocation = dra.get("allocation") or {}
        return ("Not scheduled on this node: the scheduler cannot allocate the pod's DRA claims "
                f"here ({allocation.get('message') or allocation.get('outcome', '')}), so "
                "kubelet never sees the pod")
    if decision.get("admitted"):
        if policy == "none":
            return "Admitted: the none policy aligns nothing"
        containers = decision.get("containers") or []
        scope = str(((answer.get("node") or {}).get("topology_manager") or {}).get("scope"))
        def on(container: Mapping[str, Any]) -> str:
            hint = container.get("hint") or {}
            late = "" if hint.get("preferred", True) else " (not preferred)"
            return f"{_nodes(hint.get('numa'))}{late}"

        if scope == "pod" and containers:
            return "Admitted on " + on(containers[0])
        placed = [f"container {c.get('name')} on {on(c)}" for c in containers]
        return "Admitted: " + "; ".join(placed) if placed else "Admitted"
    refused = answer.get("refused") or {}
    if refused.get("rule") == "ADMIT-3":
        steps = answer.get("asked") or []
        who = ""
        if len(steps) > 1:
            step = steps[min(_refused_step(answer), len(steps) - 1)]
            who = f" for container {step.get('container')}"
        if policy == "single-numa-node":
            why = "no single NUMA node has room for all of it"
        else:
            why = ("no set of NUMA nodes has room for all of it where every resource prefers "
                   "to be")
        return f"Rejected ({decision.get('reason')}){who}: {why}"
    return (f"Rejected ({decision.get('reason')}) by {refused.get('by')}: "
            f"{decision.get('message')}")


def _refusal_split(answer: Mapping[str, Any]) -> str | None:
    """OPS-12: why nothing fit, across resources: which NUMA nodes have enough of each, from the
    free table (before admission, so said only for the first step admitted)."""
    if (answer.get("refused") or {}).get("rule") != "ADMIT-3" or _refused_step(answer) != 0:
        return None
    steps = answer.get("asked") or []
    amounts: Mapping[str, int] = (steps[0].get("amounts") or {}) if steps else {}
    free = answer.get("free") or {}
    if len(amounts) < 2 or not free:
        return None
    parts = []
    for resource, need in amounts.items():
        per = {int(numa): _free_of(entry, resource) for numa, entry in free.items()}
        enough = sorted(n for n, have in per.items() if have >= need)
        what = _what(resource, need)
        if not enough:
            most = max(per.values())
            at = [n for n, have in per.items() if have == most]
            parts.append(f"no {_label_of(resource)} is free on any NUMA node" if most == 0 else
                         f"no NUMA node has {what} free (the most is "
                         f"{_shown(resource, most)}, on {_nodes(at)})")
        elif len(enough) < len(per):
            parts.append(f"{what} {'is' if need == 1 else 'are'} free only on {_nodes(enough)}")
    if not parts:
        return None
    return "Across resources: " + _and(parts)


def _placed_on(container: Mapping[str, Any], free: Mapping[str, Mapping[str, Any]]
               ) -> dict[str, tuple[int, ...]]:
    """Where each resource of an admitted container landed: its CPUs and devices by the
    NUMA node they were free on, its memory by its blocks."""
    where: dict[str, set[int]] = {}
    owner = {}
    for numa, entry in free.items():
        for cpu in entry.get("cpus") or []:
            owner[("cpu", cpu)] = int(numa)
        for resource, ids in (entry.get("devices") or {}).items():
            for ident in ids:
                owner[(resource, ident)] = int(numa)
    for cpu in container.get("cpus") or []:
        if ("cpu", cpu) in owner:
            where.setdefault("cpu", set()).add(owner[("cpu", cpu)])
    for block in container.get("memory") or []:
        where.setdefault(str(block.get("type")), set()).update(block.get("numa") or [])
    for resource, ids in (container.get("devices") or {}).items():
        for ident in ids:
            if (resource, ident) in owner:
                where.setdefault(resource, set()).add(owner[(resource, ident)])
    return {r: tuple(sorted(n)) for r, n in where.items() if n}


def _label_of(resource: str) -> str:
    return {"cpu": "CPU", "memory": "memory"}.get(resource, resource)


def _held(name: str) -> str:
    """What a container holds, as a split names it: its CPUs (``cpu`` in the decision,
    ``cpus`` among DRA's placements), else the resource or the claim."""
    return "CPUs" if name in ("cpu", "cpus") else name


def _admitted_split(answer: Mapping[str, Any]) -> str | None:
    """OPS-12: an admitted pod whose resources landed on different NUMA nodes, said plainly:
    the Topology Manager's (best-effort, none, or a hint wider than one node) and DRA's."""
    free = answer.get("free") or {}
    said = []
    for container in (answer.get("decision") or {}).get("containers") or []:
        placed = _placed_on(container, free)
        if len(set(placed.values())) > 1:
            together: dict[tuple[int, ...], list[str]] = {}
            for resource, numa in placed.items():
                together.setdefault(numa, []).append(_held(resource))
            listed = _and([f"{_and(names)} on {_nodes(numa)}"
                           for numa, names in together.items()])
            said.append(f"container {container.get('name')} has {listed}")
    for container in (answer.get("dra") or {}).get("containers") or []:
        groups: dict[tuple[int, ...], list[str]] = {}
        for item in container.get("placed") or []:
            numa = item.get("numa")
            if numa is not None:
                name = _held(str(item.get("name")))
                groups.setdefault(tuple(numa), []).append(name)
        if len(groups) > 1 and any(p.get("as_placed") == "apart" and not p.get("aligned_by")
                                   for p in container.get("pairs") or []):
            listed = _and([f"{_and(names)} on {_nodes(numa)}" for numa, names in groups.items()])
            said.append(f"container {container.get('name')} has {listed}: nothing aligns DRA's "
                        "devices with what the Topology Manager places (DEV-8)")
    if not said:
        return None
    return "Not aligned: " + "; ".join(said)


def verdict(answer: Mapping[str, Any]) -> str:
    """OPS-12: the outcome in one sentence, the answer's first line."""
    if "startup_error" in answer:
        return f"kubelet would not start: {answer['startup_error'].get('message')}"
    tm = (answer.get("node") or {}).get("topology_manager") or {}
    return _verdict(answer, str(tm.get("policy")))


def reason(answer: Mapping[str, Any]) -> str:
    """OPS-12: why, in plain words, after the verdict: how the resources split across NUMA
    nodes (when they do), then what the pod asks for and what each NUMA node had free."""
    if "startup_error" in answer:
        return ""
    node = answer.get("node") or {}
    tm = node.get("topology_manager") or {}
    policy, scope = str(tm.get("policy")), str(tm.get("scope"))
    free = answer.get("free") or {}
    decision = answer.get("decision") or {}
    split = _admitted_split(answer) if decision.get("admitted") else _refusal_split(answer)
    sentences = [_asks(step, policy, scope, free) for step in answer.get("asked") or []]
    if scope == "container" and len(sentences) > 1:
        sentences.append("free is before admission; each container takes its share before "
                         "the next one is placed")
    if decision.get("admitted") and policy != "none":
        chosen = {s.get("container"): (s.get("merge") or {}).get("chosen_by")
                  for s in (answer.get("trace") or {}).get("steps") or []}
        rules = {chosen.get(c.get("name"), chosen.get(None))
                 for c in decision.get("containers") or []}
        why = [CHOSEN[rule] if rule in FORCED else f"{CHOSEN[rule]} ({rule})"
               for rule in sorted(r for r in rules if r in CHOSEN)]
        if why:
            sentences.append("the NUMA set is " + _and(why))
    text = "; ".join(sentences)
    text = text[:1].upper() + text[1:]
    return f"{split}. {text}" if split else text
