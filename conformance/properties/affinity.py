"""Conformance properties of NUMA-level inter-pod affinity (spec chapter ``affinity.md``).

Each property draws one whole ``affinity`` session (a machine, a node configuration and a run
of admits, removals, hint queries, scheduler checks and reservations), sends it to the
implementation as one case, and judges the answers.  The invariant properties read only the
answers and the session itself: where each pod landed comes from its admission decision (its
CPUs, memory blocks and devices, mapped to NUMA nodes through the machine the session
describes), and the admissible region is recomputed here from the spec's formula, not by the
reference.  ``P-AFF-EQUIVALENCE`` demands the reference's answers.

An implementation offers these properties by declaring the ``affinity`` operation; the
property target then has an ``affinity_session(case) -> result`` method.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

import attrs
from hypothesis import example, given, note
from hypothesis import strategies as st

from numaspec.conformance.implementations.claims import claims_of
from numaspec.node.affinity import (
    AFFINITY_ANNOTATION,
    ANTI_AFFINITY_ANNOTATION,
    MEMORY_ENHANCEMENT_ANNOTATION,
)

__all__ = ["INVARIANTS", "AffinityImplementation", "Session", "affinity_sessions",
           "affinity_violation"]

KEPT = ("role", "app")
_ROLES = ("ps", "worker")
_APPS = ("a", "b")
_GPU = "example.com/gpu"
_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")


class AffinityImplementation(Protocol):
    name: str

    def affinity_session(self, case: Any) -> Any: ...


# --- the sessions --------------------------------------------------------------------------


@attrs.frozen
class Session:
    """One drawn session: its steps, and the machine facts the properties need."""

    steps: tuple[dict[str, Any], ...]
    cpu_numa: Mapping[int, int]
    device_numa: Mapping[str, tuple[int, ...]]
    socket_peers: Mapping[int, frozenset[int]]
    numa_ids: tuple[int, ...]

    @classmethod
    def of(cls, steps: Iterable[dict[str, Any]]) -> Session:
        """A session of these steps, its machine facts read from the ``create`` step: which
        NUMA node each CPU and device is on, which NUMA nodes share a socket."""
        steps = tuple(steps)
        machine = steps[0]["node"]["machine"]
        cpu_numa: dict[int, int] = {}
        socket_of: dict[int, int] = {}
        for node in machine["numaNodes"]:
            for core in node["cores"]:
                socket_of[node["id"]] = core["socket"]
                cpu_numa.update((cpu, node["id"]) for cpu in core["threads"])
        device_numa = {device["id"]: tuple(device["numa"])
                       for listed in machine.get("devices", {}).values() for device in listed}
        peers = {n: frozenset(m for m in socket_of if socket_of[m] == socket_of[n])
                 for n in socket_of}
        return cls(steps, cpu_numa, device_numa, peers,
                   tuple(n["id"] for n in machine["numaNodes"]))

    def case(self, impl: object = None) -> dict[str, Any]:
        """The case, its node at a kubelet release ``impl`` declares for node sessions (the
        one drawn, 1.30, when it declares that or says nothing)."""
        steps = list(self.steps)
        declared = [v for v in getattr(impl, "node_kubelet_versions", ())
                    if _minor(v) >= 29]
        create = steps[0]
        drawn = create["node"]["kubeletVersion"]
        if declared and drawn not in declared:
            nearest = min(declared, key=lambda v: abs(_minor(v) - _minor(drawn)))
            steps[0] = {**create, "node": {**create["node"], "kubeletVersion": nearest}}
        return {"steps": steps}

    def fitted(self, impl: object = None) -> Session:
        """The session as ``impl`` is sent it: at a release it declares (:meth:`case`) and
        inside its node claims (PROTO-7): an unclaimed policy or scope becomes a claimed one,
        an unclaimed Memory Manager goes, and without the Device Manager so do the devices
        and every request for one.  The properties judge the answers against these steps."""
        steps = self.case(impl)["steps"]
        claims = claims_of(impl).node
        if claims.everything:
            return Session.of(steps)
        node = dict(steps[0]["node"])
        config, machine = dict(node["config"]), dict(node["machine"])
        for key, default, claimed, every in (
                ("topologyManagerPolicy", "none", claims.policies, _POLICIES),
                ("topologyManagerScope", "container", claims.scopes, ("container", "pod"))):
            drawn = config.get(key, default)
            if claimed is not None and drawn not in claimed:
                choices = [v for v in every if v in claimed]
                config[key] = choices[every.index(drawn) % len(choices)]
        if claims.managers is not None and "memory" not in claims.managers:
            config.pop("memoryManagerPolicy", None)
            config.pop("reservedMemory", None)
        devices = claims.managers is None or "device" in claims.managers
        if not devices:
            machine.pop("devices", None)
        node.update(config=config, machine=machine)
        fitted = [{**steps[0], "node": node}]
        fitted += [{**step, "pod": _without_devices(step["pod"])}
                   if not devices and isinstance(step.get("pod"), dict) else step
                   for step in steps[1:]]
        return Session.of(fitted)


def _without_devices(pod: dict[str, Any]) -> dict[str, Any]:
    containers = [{**c, "resources": {kind: {r: q for r, q in amounts.items() if r != _GPU}
                                      for kind, amounts in c["resources"].items()}}
                  for c in pod["containers"]]
    return {**pod, "containers": containers}


def _minor(version: str) -> int:
    try:
        return int(version.split(".")[1])
    except (IndexError, ValueError):
        return 0


@st.composite
def _selector(draw: st.DrawFn) -> dict[str, Any]:
    labels: dict[str, str] = {}
    for key, values in (("role", _ROLES), ("app", _APPS)):
        if draw(st.booleans()):
            labels[key] = draw(st.sampled_from(values))
    if not labels:
        labels["role"] = draw(st.sampled_from(_ROLES))
    body: dict[str, Any] = {"matchLabels": labels}
    zone = draw(st.sampled_from(["numa", "socket", None]))
    if zone is not None:
        body["zone"] = zone
    return body


@st.composite
def _pod(draw: st.DrawFn, uid: str, devices: bool) -> dict[str, Any]:
    labels = {key: draw(st.sampled_from(values)) for key, values in
              (("role", _ROLES), ("app", _APPS)) if draw(st.integers(0, 3)) > 0}
    if draw(st.integers(0, 9)) == 0:
        labels["team"] = "x"  # not a kept key: invisible to every selector
    annotations: dict[str, str] = {}
    exclusive = draw(st.integers(0, 7)) == 0
    if exclusive:
        annotations[MEMORY_ENHANCEMENT_ANNOTATION] = json.dumps({"numa_exclusive": "true"})
    anti = draw(st.lists(_selector(), max_size=2))
    if anti:
        annotations[ANTI_AFFINITY_ANNOTATION] = json.dumps({"required": anti})
    if not exclusive and draw(st.integers(0, 3)) == 0:
        annotations[AFFINITY_ANNOTATION] = json.dumps(
            {"required": draw(st.lists(_selector(), min_size=1, max_size=2))})
    for key in (AFFINITY_ANNOTATION, ANTI_AFFINITY_ANNOTATION, MEMORY_ENHANCEMENT_ANNOTATION):
        if key not in annotations and draw(st.integers(0, 15)) == 0:
            annotations[key] = ""  # AFF-1: the same as no annotation
    cpu = draw(st.sampled_from(["1", "1", "2", "2", "3", "5", "500m"]))
    limits = {"cpu": cpu, "memory": "1Gi"}
    if devices and draw(st.integers(0, 3)) == 0:
        limits[_GPU] = "1"
    return {"uid": uid, "labels": labels, "annotations": annotations,
            "containers": [{"name": "c", "resources": {"limits": limits}}]}


@st.composite
def _machine(draw: st.DrawFn) -> dict[str, Any]:
    sockets = 2
    per_socket = draw(st.sampled_from([1, 2, 2]))
    cores = draw(st.integers(2, 4))
    devices = draw(st.booleans())
    nodes, cpu = [], 0
    for numa in range(sockets * per_socket):
        threads = []
        for _ in range(cores):
            threads.append({"socket": numa // per_socket, "threads": [cpu]})
            cpu += 1
        nodes.append({"id": numa, "memory": "16Gi", "cores": threads})
    machine: dict[str, Any] = {"numaNodes": nodes}
    if devices:
        machine["devices"] = {_GPU: [{"id": f"g{n}", "numa": [n]} for n in range(len(nodes))]}
    return machine


@st.composite
def affinity_sessions(draw: st.DrawFn, *, hints: bool = False, schedule: bool = False,
                      version: str = "1.30") -> Session:
    """A random affinity session (AWIRE-1..AWIRE-3).  ``hints``: add pairs of hints steps
    (a pod, then the same pod with no labels or annotations), and now and then the hints of a
    pod sent before (maybe live); ``schedule``: add scheduler
    checks and reservations, each reserved pod later admitted."""
    machine = draw(_machine())
    config: dict[str, Any] = {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "500m"},
              "topologyManagerPolicy": draw(st.sampled_from(
                  ["none", "best-effort", "restricted", "single-numa-node"])),
              "topologyManagerScope": draw(st.sampled_from(["container", "pod"])),
              "interPodAffinityLabels": list(KEPT)}
    if draw(st.integers(0, 2)) == 0:
        # The Memory Manager too: its blocks are where a pod is as well (AFF-5).  The default
        # eviction threshold, 100Mi, is all node allocatable reserves of memory.
        config["memoryManagerPolicy"] = "Static"
        config["reservedMemory"] = [{"numaNode": 0, "limits": {"memory": "100Mi"}}]
    steps: list[dict[str, Any]] = [{"op": "create", "node": {
        "kubeletVersion": version, "machine": machine, "config": config}}]
    devices = "devices" in machine
    admitted_uids: list[str] = []
    sent: dict[str, dict[str, Any]] = {}
    for count in range(1, draw(st.integers(1, 7)) + 1):
        pod = draw(_pod(f"p{count}", devices))
        action = draw(st.integers(0, 9))
        if action == 0 and admitted_uids:
            steps.append({"op": "remove", "uid": draw(st.sampled_from(admitted_uids))})
        if hints and action == 7 and admitted_uids:
            # A pod sent before, maybe live: its hints are judged against the other live pods,
            # never against itself (AFF-5, AFF-7).
            steps.append({"op": "hints", "pod": sent[draw(st.sampled_from(admitted_uids))]})
        if hints and action in (1, 2, 3):
            stripped = {k: v for k, v in pod.items() if k not in ("labels", "annotations")}
            steps += [{"op": "hints", "pod": pod}, {"op": "hints", "pod": stripped}]
        if schedule and action in (4, 5, 6):
            reserved = [draw(_pod(f"r{count}-{i}", devices)) for i in range(draw(
                st.integers(0, 2)))]
            for other in reserved:
                steps += [{"op": "schedule", "pod": other}, {"op": "reserve", "pod": other}]
            steps.append({"op": "schedule", "pod": pod})
            steps += [{"op": "admit", "pod": other} for other in reserved]
            admitted_uids += [other["uid"] for other in reserved]
            sent.update((other["uid"], other) for other in reserved)
        steps.append({"op": "admit", "pod": pod})
        admitted_uids.append(pod["uid"])
        sent[pod["uid"]] = pod
    steps.append({"op": "state"})
    return Session.of(steps)


# --- reading the answers -------------------------------------------------------------------


@attrs.frozen
class _Terms:
    labels: Mapping[str, str]
    anti: tuple[tuple[Mapping[str, str], str], ...]
    affinity: tuple[tuple[Mapping[str, str], str], ...]
    exclusive: bool


def _selectors(annotations: Mapping[str, str], key: str) -> tuple[tuple[Mapping[str, str], str],
                                                                   ...]:
    if not annotations.get(key):  # AFF-1: missing or empty
        return ()
    return tuple((s["matchLabels"], s.get("zone") or "numa")
                 for s in json.loads(annotations[key]).get("required", []))


def _terms(pod: Mapping[str, Any]) -> _Terms:
    annotations = pod.get("annotations", {})
    exclusive = bool(annotations.get(MEMORY_ENHANCEMENT_ANNOTATION)) and json.loads(
        annotations[MEMORY_ENHANCEMENT_ANNOTATION]).get("numa_exclusive") == "true"
    return _Terms({k: v for k, v in pod.get("labels", {}).items() if k in KEPT},
                  _selectors(annotations, ANTI_AFFINITY_ANNOTATION),
                  _selectors(annotations, AFFINITY_ANNOTATION), exclusive)


def _selects(match: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in match.items())


@attrs.frozen
class _Live:
    uid: str
    terms: _Terms
    numa: frozenset[int]


def _zone(zone: str, numa: Iterable[int], session: Session) -> frozenset[int]:
    nodes = frozenset(numa)
    if zone == "numa":
        return nodes
    return frozenset(m for n in nodes for m in session.socket_peers[n])


def _placement(decision: Mapping[str, Any], session: Session) -> frozenset[int]:
    found: set[int] = set()
    for container in decision.get("containers", []):
        found |= {session.cpu_numa[c] for c in container.get("cpus", [])}
        for block in container.get("memory", []):
            found |= set(block.get("numa", []))
        for ids in container.get("devices", {}).values():
            for device in ids:
                found |= set(session.device_numa.get(device, ()))
    return frozenset(found)


def _region(terms: _Terms, live: Iterable[_Live], session: Session) -> frozenset[int]:
    """AFF-7, recomputed from the formula: every NUMA node minus those ruled out."""
    everything = frozenset(session.numa_ids)
    out: set[int] = set()
    others = [o for o in live if o.numa]
    for other in others:
        out |= {n for match, zone in other.terms.anti if _selects(match, terms.labels)
                for n in _zone(zone, other.numa, session)}
        out |= {n for match, zone in terms.anti if _selects(match, other.terms.labels)
                for n in _zone(zone, other.numa, session)}
        if other.terms.exclusive or terms.exclusive:
            out |= other.numa
    allowed = everything - out
    for match, zone in terms.affinity:
        allowed &= frozenset(n for o in others if _selects(match, o.terms.labels)
                             for n in _zone(zone, o.numa, session))
    return allowed


Visit = Callable[[dict[str, Any], Any, dict[str, _Live]], None]


def _walk(impl: AffinityImplementation, session: Session, visit: Visit) -> None:
    """Send the session as ``impl`` claims it, then replay its answers through ``visit``."""
    fitted = session.fitted(impl)
    _replay(fitted, _send(impl, fitted), visit)


def _send(impl: AffinityImplementation, session: Session) -> list[Any]:
    case = {"steps": list(session.steps)}
    note(f"request: {json.dumps(case, separators=(',', ':'))}")
    result = impl.affinity_session(case)
    assert isinstance(result, dict) and isinstance(result.get("answers"), list), (
        f"not a session result: {str(result)[:300]}")
    answers = result["answers"]
    assert len(answers) == len(session.steps), (
        f"{len(answers)} answers to {len(session.steps)} steps")
    note(f"answers: {json.dumps(answers, separators=(',', ':'))[:4000]}")
    return list(answers)


def _replay(session: Session, answers: list[Any], visit: Visit) -> None:
    """Call ``visit(step, answer, live)`` for every step, ``live`` being the pods on the node
    *before* the step; then bring ``live`` up to date."""
    assert "error" not in answers[0], f"the node did not start: {answers[0]}"
    live: dict[str, _Live] = {}
    for index, (step, answer) in enumerate(zip(session.steps, answers, strict=True), 1):
        try:
            visit(step, answer, live)
        except AssertionError as exc:
            raise AssertionError(f"step {index} ({step.get('op')}): {exc}") from None
        new = _newly_live(step, answer, session)
        if new is not None:
            live[new.uid] = new
        elif step["op"] == "remove" and answer == {"ok": True}:
            live.pop(step["uid"], None)


def _admitted(step: Mapping[str, Any], answer: Any) -> bool:
    return (step["op"] == "admit" and isinstance(answer, dict)
            and bool(answer.get("decision", {}).get("admitted")))


def _newly_live(step: Mapping[str, Any], answer: Any, session: Session) -> _Live | None:
    """The pod an ``admit`` step put on the node, with where it landed; None otherwise."""
    if not _admitted(step, answer):
        return None
    pod = step["pod"]
    return _Live(pod["uid"], _terms(pod), _placement(answer["decision"], session))


# --- the properties ------------------------------------------------------------------------

# Registered in the table of conformance/properties/registry.py (properties/merge.py imports
# this module, so that the table is whole whichever module is imported first).
from numaspec.conformance.properties.registry import register  # noqa: E402

#: The OR-matching defect of the Katalyst PR (divergence D1), as a fixed example: E with
#: {app: a} on the node, then a pod whose affinity needs {app: a, role: ps}.
_D1 = Session.of((
        {"op": "create", "node": {"kubeletVersion": "1.30", "machine": {"numaNodes": [
            {"id": n, "memory": "16Gi", "cores": [{"socket": n // 2, "threads": [4 * n + i]}
                                                   for i in range(4)]} for n in range(4)]},
            "config": {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "500m"},
                       "topologyManagerPolicy": "single-numa-node",
                       "interPodAffinityLabels": list(KEPT)}}},
        {"op": "admit", "pod": {"uid": "e", "labels": {"app": "a"}, "containers": [
            {"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}},
        {"op": "admit", "pod": {"uid": "p", "annotations": {AFFINITY_ANNOTATION: json.dumps(
            {"required": [{"matchLabels": {"app": "a", "role": "ps"}}]})}, "containers": [
            {"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}},
        {"op": "state"}))


def _no_anti_affine_neighbour(session: Session) -> Visit:
    def visit(step: dict[str, Any], answer: Any, live: dict[str, _Live]) -> None:
        new = _newly_live(step, answer, session)
        if new is None or not new.numa:
            return
        for other in live.values():
            for a, b in ((new, other), (other, new)):
                for match, zone in a.terms.anti:
                    shared = _zone(zone, a.numa, session) & b.numa
                    assert not (shared and _selects(match, b.terms.labels)), (
                        f"pod {b.uid!r} holds NUMA nodes {sorted(shared)} inside the {zone} "
                        f"zone of pod {a.uid!r}, whose anti-affinity {dict(match)} selects it")
    return visit


def _required_affinity_met(session: Session) -> Visit:
    def visit(step: dict[str, Any], answer: Any, live: dict[str, _Live]) -> None:
        if not _admitted(step, answer):
            return
        pod = step["pod"]
        terms = _terms(pod)
        numa = _placement(answer["decision"], session)
        for match, zone in terms.affinity:
            covered = frozenset(n for o in live.values() if o.numa
                                and _selects(match, o.terms.labels)
                                for n in _zone(zone, o.numa, session))
            assert numa <= covered, (
                f"pod {pod['uid']!r} was admitted on NUMA nodes {sorted(numa)}, but only "
                f"{sorted(covered)} are in the {zone} zone of a pod matching its required "
                f"affinity {dict(match)}")
    return visit


def _exclusive_alone(session: Session) -> Visit:
    def visit(step: dict[str, Any], answer: Any, live: dict[str, _Live]) -> None:
        new = _newly_live(step, answer, session)
        if new is None:
            return
        for other in live.values():
            if new.terms.exclusive or other.terms.exclusive:
                shared = new.numa & other.numa
                assert not shared, (f"pods {other.uid!r} and {new.uid!r} share NUMA nodes "
                                    f"{sorted(shared)} and one of them is NUMA-exclusive")
    return visit


def _scheduled_admitted(_session: Session) -> Visit:
    # The sessions check a pod, admit the pods reserved before it in reservation order, then
    # admit the pod: the node's state is then the one the scheduler judged.
    passed: set[str] = set()
    reserved: set[str] = set()

    def visit(step: dict[str, Any], answer: Any, _live: dict[str, _Live]) -> None:
        op = step["op"]
        if op == "schedule":
            assert isinstance(answer, dict) and "schedule" in answer, f"not a verdict: {answer}"
            if answer["schedule"]["passes"]:
                passed.add(step["pod"]["uid"])
        elif op == "reserve" and answer == {"ok": True}:
            reserved.add(step["pod"]["uid"])
        elif op == "admit":
            uid = step["pod"]["uid"]
            if uid in reserved:
                reserved.discard(uid)
            elif uid in passed:
                passed.discard(uid)
                assert _admitted(step, answer), (
                    f"the scheduler passed the node for pod {uid!r}, then the node rejected "
                    f"it: {answer}")
    return visit


#: The affinity invariants, by property: each reads only the steps and the answers.  The
#: exhaustive checker checks them all on every path (spec/conformance/checking.md, CHECK-7).
INVARIANTS: dict[str, Callable[[Session], Visit]] = {
    "P-AFF-ANTI": _no_anti_affine_neighbour,
    "P-AFF-REQUIRED": _required_affinity_met,
    "P-AFF-EXCLUSIVE": _exclusive_alone,
    "P-AFF-SCHEDULE": _scheduled_admitted,
}


def affinity_violation(steps: list[dict[str, Any]], answers: list[Any]) -> str | None:
    """The first affinity invariant an implementation's answers to an ``affinity`` session
    break, named, or None.  The steps' first is the ``create`` that started the node."""
    session = Session.of(steps)
    for name, invariant in INVARIANTS.items():
        try:
            _replay(session, answers, invariant(session))
        except AssertionError as exc:
            return f"{name}: {exc}"
    return None


@register("P-AFF-ANTI", rules=["AFF-4", "AFF-5", "AFF-7", "AFF-9"], level="invariant",
           requires="affinity_session", since=29, op="affinity")
@given(session=affinity_sessions())
def anti_affinity_holds(impl: AffinityImplementation, session: Session) -> None:
    """No pod shares a NUMA node or socket (by zone) with a pod it is anti-affine to, either
    way round."""
    _walk(impl, session, _no_anti_affine_neighbour(session))


@register("P-AFF-REQUIRED", rules=["AFF-4", "AFF-5", "AFF-7", "AFF-9"], level="invariant",
           requires="affinity_session", since=29, op="affinity")
@given(session=affinity_sessions())
@example(session=_D1)
def required_affinity_holds(impl: AffinityImplementation, session: Session) -> None:
    """Every admitted pod's NUMA nodes lie, for each of its required affinity selectors, in
    the zone of some other pod that selector matches."""
    _walk(impl, session, _required_affinity_met(session))


@register("P-AFF-EXCLUSIVE", rules=["AFF-5", "AFF-6", "AFF-9"], level="invariant",
           requires="affinity_session", since=29, op="affinity")
@given(session=affinity_sessions())
def exclusive_pods_alone(impl: AffinityImplementation, session: Session) -> None:
    """A NUMA-exclusive pod shares none of its NUMA nodes with another pod that holds
    resources there."""
    _walk(impl, session, _exclusive_alone(session))


def _hint_set(listed: Any) -> Any:
    if listed is None:
        return None
    return sorted(json.dumps(h, sort_keys=True) for h in listed)


@register("P-AFF-FILTER", rules=["AFF-7", "AFF-8"], level="invariant",
           requires="affinity_session", since=29, op="affinity")
@given(session=affinity_sessions(hints=True))
def filter_only_removes(impl: AffinityImplementation, session: Session) -> None:
    """The filter keeps exactly the hints that lie in the admissible region, unchanged: it
    never adds a hint or changes one."""
    pending: dict[str, Any] = {}

    def visit(step: dict[str, Any], answer: Any, live: dict[str, _Live]) -> None:
        if step["op"] != "hints":
            return
        pod = step["pod"]
        assert isinstance(answer, dict) and "hints" in answer, f"not a hints answer: {answer}"
        if "labels" in pod:  # the pod itself; its unconstrained twin comes next
            pending["pod"], pending["hints"] = pod, answer["hints"]
            return
        mine, twin = pending.pop("hints"), answer["hints"]
        region = _region(_terms(pending.pop("pod")), live.values(), session)
        assert set(mine) == set(twin), f"resources differ: {sorted(mine)} vs {sorted(twin)}"
        for resource, listed in twin.items():
            if listed is None:
                assert mine[resource] is None, f"{resource}: null became {mine[resource]}"
                continue
            kept = [h for h in listed
                    if set(h["numa"] if h["numa"] is not None else session.numa_ids) <= region]
            assert _hint_set(mine[resource]) == _hint_set(kept), (
                f"{resource}: region {sorted(region)}; unconstrained {listed}; expected "
                f"{kept}; got {mine[resource]}")
    _walk(impl, session, visit)


@register("P-AFF-SCHEDULE", rules=["SCHED-1", "SCHED-2", "SCHED-4"], level="invariant",
           requires="affinity_session", since=29, op="affinity")
@given(session=affinity_sessions(schedule=True))
def schedule_implies_admit(impl: AffinityImplementation, session: Session) -> None:
    """When the scheduler passes the node for a pod, the node admits it on the same state
    (with the pods reserved before it admitted first): no rejection after scheduling."""
    _walk(impl, session, _scheduled_admitted(session))


@register("P-AFF-EQUIVALENCE", rules=["AFF-1", "AFF-7", "AFF-8", "AFF-9", "SCHED-1",
                                        "AWIRE-1", "AWIRE-2", "AWIRE-3"],
           level="equivalence", requires="affinity_session", since=29, op="affinity")
@given(session=affinity_sessions(hints=True, schedule=True))
@example(session=_D1)
def affinity_equivalence(impl: AffinityImplementation, session: Session) -> None:
    """Every answer of an affinity session is the reference's."""
    from numaspec.conformance.cases.judges import compare
    from numaspec.protocols.adapter_protocol import reference_result

    case = {"steps": list(session.fitted(impl).steps)}
    note(f"request: {json.dumps(case, separators=(',', ':'))}")
    expected = reference_result("affinity", case)
    actual = impl.affinity_session(case)
    differences = compare("affinity", case, expected, actual)
    assert not differences, "; ".join(differences)

