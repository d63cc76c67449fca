"""In-place resize (spec chapter resize.md, RESIZE-*; the node protocol's NWIRE-6).

The property: whatever a resize answers, the pod's exclusive CPUs, memory blocks and devices
do not change (RESIZE-6, RESIZE-7); a refused resize changes nothing; an accepted one leaves
the pod counted at its new requests, and the live pods' requests never exceed the node's
allocatable (RESIZE-6's resource fit).  Every mutant of
tools/numaspec_tools/mutants/resize_mutants.py breaks
it."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numaspec.errors import NumaspecError
from numaspec.node.admission import Node
from numaspec.node.fit import pod_requests
from numaspec.node.pods import Container, Pod, PodResources
from numaspec.node.resize import ContainerResize, PodResourcesResize, ResizeResult, resize
from numaspec.protocols.node_protocol import NodeSession, decode_node
from numaspec_tools.mutants.resize_mutants import POD_LEVEL_RESIZE_MUTANTS, RESIZE_MUTANTS

Resize = Callable[[Node, str, Sequence[ContainerResize]], ResizeResult]


def _machine(threads: int) -> dict[str, Any]:
    nodes, cpu = [], 0
    for numa in range(2):
        cores = []
        for _ in range(2):
            cores.append({"socket": numa, "threads": list(range(cpu, cpu + threads))})
            cpu += threads
        nodes.append({"id": numa, "memory": "4Gi", "cores": cores})
    return {"numaNodes": nodes}


@st.composite
def sessions(draw: st.DrawFn) -> tuple[Node, list[tuple[str, list[ContainerResize]]]]:
    version = draw(st.sampled_from(["1.33", "1.34", "1.35", "1.36", "1.37"]))
    config: dict[str, Any] = {
        "topologyManagerPolicy": draw(st.sampled_from(["none", "best-effort",
                                                       "single-numa-node"])),
        "topologyManagerScope": draw(st.sampled_from(["container", "pod"])),
    }
    if draw(st.booleans()):
        config.update(cpuManagerPolicy="static", kubeReserved={"cpu": "1"})
    if draw(st.booleans()):
        config.update(memoryManagerPolicy="Static", systemReserved={"memory": "924Mi"},
                      reservedMemory=[{"numaNode": 0, "limits": {"memory": "1Gi"}}])
    node = decode_node({"kubeletVersion": version, "machine": _machine(draw(st.sampled_from(
        [1, 2]))), "config": config})
    cpus = st.sampled_from(["500m", "1", "2", "3", "5"])
    memory = st.sampled_from(["256Mi", "1Gi", "2Gi", "3Gi"])
    for index in range(draw(st.integers(1, 4))):
        cpu, mem = draw(cpus), draw(memory)
        if draw(st.booleans()):  # Guaranteed
            container = Container.of("c", limits={"cpu": cpu, "memory": mem})
        else:
            container = Container.of("c", requests={"cpu": "250m", "memory": "128Mi"},
                                     limits={"cpu": cpu, "memory": mem})
        node.admit(Pod(f"p{index}", (container,)))
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        uid = draw(st.sampled_from([f"p{i}" for i in range(4)]))
        cpu, mem = draw(cpus), draw(memory)
        if draw(st.booleans()):
            change = ContainerResize("c", {"cpu": cpu, "memory": mem}, {"cpu": cpu, "memory": mem})
        else:
            change = ContainerResize("c", {"cpu": draw(cpus), "memory": draw(memory)},
                                     {"cpu": cpu, "memory": mem})
        steps.append((uid, [change]))
    return node, steps


def _exclusive(node: Node, uid: str) -> tuple[object, ...]:
    name = "c"
    return (node.cpu.cpus_of(uid, name) if node.cpu else None,
            tuple(node.memory.blocks_of(uid, name)) if node.memory else None,
            dict(node.devices.devices_of(uid, name)))


def check_resizes(resize_fn: Resize, node: Node,
                  steps: list[tuple[str, list[ContainerResize]]]) -> None:
    """RESIZE-6, RESIZE-7: the property, for one session."""
    for uid, changes in steps:
        held = {u: _exclusive(node, u) for u in node.pods}
        pods = dict(node.pods)
        state = copy.deepcopy(node.state())
        try:
            answer = resize_fn(node, uid, changes)
        except NumaspecError:
            assert node.pods == pods
            assert node.state() == state
            continue
        assert {u: _exclusive(node, u) for u in node.pods} == held, "exclusive changed"
        if answer.status != "InProgress":
            assert node.pods == pods, f"{answer.status} changed the pods"
            assert node.state() == state, f"{answer.status} changed the state"
            continue
        assert set(node.pods) == set(pods)
        for name in ("cpu", "memory"):
            total = sum(pod_requests(p).get(name, 0) for p in node.pods.values())
            assert total <= node.allocatable[name], f"{name} overcommitted"


_SETTINGS = settings(max_examples=300, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(session=sessions())
def test_resize_keeps_exclusive_and_fit(
        session: tuple[Node, list[tuple[str, list[ContainerResize]]]]) -> None:
    """RESIZE-6, RESIZE-7: the reference keeps the property."""
    check_resizes(resize, *session)


@pytest.mark.parametrize("name", sorted(RESIZE_MUTANTS))
@pytest.mark.slow
def test_every_resize_mutant_is_caught(name: str) -> None:
    """RESIZE-6, RESIZE-7: each mutant breaks the property on some session."""
    mutant = RESIZE_MUTANTS[name]

    @_SETTINGS
    @given(session=sessions())
    def run(session: tuple[Node, list[tuple[str, list[ContainerResize]]]]) -> None:
        check_resizes(mutant, *session)

    with pytest.raises(AssertionError):
        run()


def test_the_wire_answers_resize() -> None:
    """NWIRE-6: a resize on the wire, and its errors."""
    session = NodeSession()
    assert session.answer('{"op": "create", "node": {"kubeletVersion": "1.37", "machine": '
                          '{"numaNodes": [{"id": 0, "memory": "4Gi", "cores": [{"socket": 0, '
                          '"threads": [0, 1]}]}]}}}') == {"ok": True}
    admitted = session.answer('{"op": "admit", "pod": {"uid": "a", "containers": [{"name": '
                              '"c", "resources": {"requests": {"cpu": "1"}}}]}}')
    assert admitted["decision"]["admitted"]
    answer = session.answer('{"op": "resize", "uid": "a", "containers": [{"name": "c", '
                            '"resources": {"requests": {"cpu": "2"}}}]}')
    assert answer == {"resize": {"status": "InProgress", "reason": "", "message": ""}}
    bad = session.answer('{"op": "resize", "uid": "a", "containers": [{"name": "c"}]}')
    assert bad["error"]["where"] == "containers[0]"
    extra = session.answer('{"op": "resize", "uid": "a", "containers": [], "pod": {}}')
    assert extra["error"]["kind"] == "invalid-field"


def _random_session(rng: random.Random, version: str) -> list[dict[str, Any]]:
    """A node, a few pods (Burstable or Guaranteed, some with a sidecar), then resizes of
    them mixed with new pods: what RESIZE-4..RESIZE-7 speak of, at every outcome."""
    config: dict[str, Any] = {
        "topologyManagerPolicy": rng.choice(["none", "best-effort", "restricted",
                                             "single-numa-node"]),
        "topologyManagerScope": rng.choice(["container", "pod"])}
    if rng.random() < 0.6:
        config.update(cpuManagerPolicy="static", kubeReserved={"cpu": "1"})
        if rng.random() < 0.3:
            config["cpuManagerPolicyOptions"] = {"full-pcpus-only": "true"}
    if rng.random() < 0.5:
        config.update(memoryManagerPolicy="Static", systemReserved={"memory": "924Mi"},
                      reservedMemory=[{"numaNode": 0, "limits": {"memory": "1Gi"}}])
    if rng.random() < 0.3:
        config["evictionHard"] = {"memory.available": rng.choice(["100Mi", "1Gi"])}
    steps: list[dict[str, Any]] = [{"op": "create", "node": {
        "kubeletVersion": version, "machine": _machine(rng.choice([1, 2])), "config": config}}]
    cpus = ["500m", "1", "2", "3", "4", "6", "9"]
    mems = ["256Mi", "1Gi", "2Gi", "3Gi", "7Gi", "9Gi"]

    def resources(guaranteed: bool) -> dict[str, Any]:
        cpu, memory = rng.choice(cpus), rng.choice(mems)
        if guaranteed:
            return {"limits": {"cpu": cpu, "memory": memory}}
        return {"requests": {"cpu": rng.choice(["100m", "250m", "1"]), "memory": "128Mi"},
                "limits": {"cpu": "1" if cpu == "500m" else cpu, "memory": memory}}

    kinds = {}
    for index in range(rng.randint(1, 4)):
        kinds[f"p{index}"] = guaranteed = rng.random() < 0.5
        pod: dict[str, Any] = {"uid": f"p{index}",
                               "containers": [{"name": "c", "resources": resources(guaranteed)}]}
        if rng.random() < 0.2:
            pod["initContainers"] = [{"name": "s", "restartPolicy": "Always",
                                      "resources": resources(guaranteed)}]
        elif rng.random() < 0.2:
            pod["initContainers"] = [{"name": "i", "resources": resources(guaranteed)}]
        steps.append({"op": "admit", "pod": pod})
    for _ in range(rng.randint(1, 4)):
        uid = rng.choice(sorted(kinds))
        steps.append({"op": "resize", "uid": uid, "containers": [
            {"name": rng.choice(["c", "c", "i", "s"]), "resources": resources(kinds[uid])}]})
        if rng.random() < 0.3:
            steps.append({"op": "admit", "pod": {"uid": f"x{rng.randint(0, 99)}", "containers": [
                {"name": "c", "resources": {"requests": {"cpu": rng.choice(cpus),
                                                         "memory": "256Mi"}}}]}})
    steps.append({"op": "state"})
    return steps


@pytest.mark.go
@pytest.mark.parametrize("version", ["1.34", "1.35", "1.36", "1.37"])
def test_resize_agrees_with_kubelet(version: str) -> None:
    """RESIZE-1, RESIZE-4..RESIZE-7: on seeded random sessions, every answer of the reference
    (resizes, the admissions after them, the state) is kubelet's: the node probe runs the
    resize through kubelet's own allocation manager."""
    from numaspec.conformance.implementations.exec_node import ExecNode
    from numaspec_tools.builds.kubelet import node_command
    from numaspec_tools.testing.sessions import normalizer

    probe = ExecNode(node_command(version), name=f"kubelet {version}")
    try:
        for seed in range(200):
            steps = _random_session(random.Random(seed), version)
            reference = NodeSession()
            ours, theirs = normalizer(), normalizer()
            for index, step in enumerate(steps):
                want = reference.answer(json.dumps(step))
                if want.get("error", {}).get("kind") == "not-modelled":
                    break  # the rest of the session is not the reference's to answer
                got = probe.handle(step)
                assert ours(step, want) == theirs(step, got), (seed, index, step, want, got)
    finally:
        probe.close()


PodLevelStep = tuple[str, list[ContainerResize], PodResourcesResize | None]


def _pod_level_resources(guaranteed: bool, cpu: str, memory: str) -> dict[str, dict[str, str]]:
    """RESIZE-8: pod-level resources with every cpu and memory request and limit given (what
    1.37's API server would complete is not modelled)."""
    if guaranteed:
        return {"requests": {"cpu": cpu, "memory": memory},
                "limits": {"cpu": cpu, "memory": memory}}
    return {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": "9", "memory": "4Gi"}}


@st.composite
def pod_level_sessions(draw: st.DrawFn) -> tuple[Node, list[PodLevelStep]]:
    """RESIZE-8: pods with pod-level resources, then resizes of their pod-level resources
    and containers."""
    version = draw(st.sampled_from(["1.34", "1.35", "1.36", "1.37"]))
    config: dict[str, Any] = {"topologyManagerPolicy": draw(st.sampled_from(
        ["none", "single-numa-node"]))}
    if draw(st.booleans()):
        config.update(cpuManagerPolicy="static", kubeReserved={"cpu": "1"})
    node = decode_node({"kubeletVersion": version, "machine": _machine(2), "config": config})
    cpus = st.sampled_from(["500m", "1", "2", "3", "5"])
    memory = st.sampled_from(["256Mi", "1Gi", "2Gi"])
    kinds = {}
    for index in range(draw(st.integers(1, 3))):
        kinds[f"p{index}"] = guaranteed = draw(st.booleans())
        raw = _pod_level_resources(guaranteed, draw(cpus), draw(memory))
        node.admit(Pod(f"p{index}", (Container.of("c", requests={"cpu": "250m",
                                                                  "memory": "128Mi"}),),
                       resources=PodResources.of(requests=raw["requests"],
                                                 limits=raw["limits"])))
    steps: list[PodLevelStep] = []
    for _ in range(draw(st.integers(1, 3))):
        uid = draw(st.sampled_from(sorted(kinds)))
        raw = _pod_level_resources(kinds[uid], draw(cpus), draw(memory))
        changes = [ContainerResize("c", {"cpu": draw(st.sampled_from(["100m", "250m"])),
                                         "memory": "128Mi"})] if draw(st.booleans()) else []
        steps.append((uid, changes, PodResourcesResize(raw["requests"], raw["limits"])))
    return node, steps


def check_pod_level_resizes(resize_fn: Callable[..., ResizeResult], node: Node,
                            steps: list[PodLevelStep]) -> None:
    """RESIZE-8: accepted, the pod has its new pod-level resources and the live pods never
    ask more than the node's allocatable; Unchanged only when nothing changes; refused,
    nothing changes."""
    for uid, changes, wanted in steps:
        pods = dict(node.pods)
        state = copy.deepcopy(node.state())
        try:
            answer = resize_fn(node, uid, changes, wanted)
        except NumaspecError:
            assert node.pods == pods
            assert node.state() == state
            continue
        new = None if wanted is None else PodResources.of(requests=wanted.requests,
                                                           limits=wanted.limits)
        if answer.status == "InProgress":
            assert new is None or node.pods[uid].resources == new, "pod-level not applied"
            for name in ("cpu", "memory"):
                total = sum(pod_requests(p).get(name, 0) for p in node.pods.values())
                assert total <= node.allocatable[name], f"{name} overcommitted"
            continue
        if answer.status == "Unchanged":
            assert new is None or new == pods[uid].resources, "a change answered Unchanged"
        assert node.pods == pods, f"{answer.status} changed the pods"
        assert node.state() == state, f"{answer.status} changed the state"


@_SETTINGS
@given(session=pod_level_sessions())
def test_pod_level_resize_keeps_fit(session: tuple[Node, list[PodLevelStep]]) -> None:
    """RESIZE-8: the reference keeps the pod-level property."""
    check_pod_level_resizes(resize, *session)


@pytest.mark.parametrize("name", sorted(POD_LEVEL_RESIZE_MUTANTS))
def test_every_pod_level_resize_mutant_is_caught(name: str) -> None:
    """RESIZE-8: each pod-level mutant breaks the pod-level property on some session."""
    mutant = POD_LEVEL_RESIZE_MUTANTS[name]

    @_SETTINGS
    @given(session=pod_level_sessions())
    def run(session: tuple[Node, list[PodLevelStep]]) -> None:
        check_pod_level_resizes(mutant, *session)

    with pytest.raises(AssertionError):
        run()


def test_pod_level_resize_per_release() -> None:
    """RESIZE-8, NWIRE-6: a pod-level resize on the wire at each release, default gates:
    refused by the API server up to 1.35, evaluated by kubelet from 1.36; no release answers
    not-modelled."""
    pod = {"uid": "a", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
           "resources": _pod_level_resources(False, "2", "1Gi")}
    container = [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]
    level = _pod_level_resources(False, "3", "1Gi")
    for version, want in (("1.33", ("Unchanged", "InProgress")),
                          ("1.34", ("invalid-field", "invalid-field")),
                          ("1.35", ("invalid-field", "invalid-field")),
                          ("1.36", ("InProgress", "InProgress")),
                          ("1.37", ("InProgress", "InProgress"))):
        session = NodeSession()
        session.answer(json.dumps({"op": "create", "node": {
            "kubeletVersion": version, "machine": _machine(1)}}))
        assert session.answer(json.dumps({"op": "admit", "pod": pod}))["decision"]["admitted"]
        got = []
        for step in ({"op": "resize", "uid": "a", "resources": level},
                     {"op": "resize", "uid": "a", "containers": container}):
            answer = session.answer(json.dumps(step))
            got.append(answer["error"]["kind"] if "error" in answer
                       else answer["resize"]["status"])
        assert tuple(got) == want, version
    session = NodeSession()
    session.answer(json.dumps({"op": "create", "node": {"kubeletVersion": "1.37",
                                                        "machine": _machine(1)}}))
    session.answer(json.dumps({"op": "admit", "pod": pod}))
    neither = session.answer('{"op": "resize", "uid": "a"}')
    assert neither["error"]["where"] == "containers"
    gone = session.answer(json.dumps({"op": "resize", "uid": "a", "resources": {
        "requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "9"}}}))
    assert gone["error"] == {"kind": "invalid-field", "where": "resources.limits",
                             "message": gone["error"]["message"]}


def _pod_level_session(rng: random.Random, version: str) -> list[dict[str, Any]]:
    """RESIZE-8: a node, pods with pod-level resources (Burstable or Guaranteed at pod
    level, some beside plain pods), then pod-level and container resizes mixed with new
    pods."""
    config: dict[str, Any] = {"topologyManagerPolicy": rng.choice(
        ["none", "best-effort", "single-numa-node"]),
        "topologyManagerScope": rng.choice(["container", "pod"])}
    if rng.random() < 0.6:
        config.update(cpuManagerPolicy="static", kubeReserved={"cpu": "1"})
    if rng.random() < 0.3:
        config.update(memoryManagerPolicy="Static", systemReserved={"memory": "924Mi"},
                      reservedMemory=[{"numaNode": 0, "limits": {"memory": "1Gi"}}])
    steps: list[dict[str, Any]] = [{"op": "create", "node": {
        "kubeletVersion": version, "machine": _machine(rng.choice([1, 2])), "config": config}}]
    cpus = ["500m", "1", "2", "3", "5", "9"]
    mems = ["256Mi", "1Gi", "3Gi"]
    kinds = {}
    for index in range(rng.randint(1, 3)):
        kinds[f"p{index}"] = guaranteed = rng.random() < 0.5
        steps.append({"op": "admit", "pod": {
            "uid": f"p{index}", "resources": _pod_level_resources(
                guaranteed, rng.choice(cpus), rng.choice(mems)),
            "containers": [{"name": "c", "resources": {
                "requests": {"cpu": "250m", "memory": "128Mi"}}}]}})
    if rng.random() < 0.5:
        steps.append({"op": "admit", "pod": {"uid": "g", "containers": [{"name": "c", "resources": {
            "limits": {"cpu": rng.choice(["1", "2"]), "memory": "256Mi"}}}]}})
    for _ in range(rng.randint(1, 4)):
        uid = rng.choice(sorted(kinds))
        step: dict[str, Any] = {"op": "resize", "uid": uid}
        if rng.random() < 0.8:
            step["resources"] = _pod_level_resources(kinds[uid], rng.choice(cpus),
                                                      rng.choice(mems))
        if "resources" not in step or rng.random() < 0.3:
            step["containers"] = [{"name": "c", "resources": {"requests": {
                "cpu": rng.choice(["100m", "250m", "1"]), "memory": "128Mi"}}}]
        steps.append(step)
        if rng.random() < 0.4:
            steps.append({"op": "admit", "pod": {"uid": f"x{rng.randint(0, 99)}", "containers": [
                {"name": "c", "resources": {"requests": {"cpu": rng.choice(cpus),
                                                         "memory": "256Mi"}}}]}})
    steps.append({"op": "state"})
    return steps


def _pod_level_added_session(rng: random.Random, version: str) -> list[dict[str, Any]]:
    """RESIZE-8: plain pods (Guaranteed ones holding exclusive CPUs under the static CPU
    Manager, or Burstable) given pod-level resources by a resize."""
    config: dict[str, Any] = {"topologyManagerPolicy": rng.choice(
        ["none", "best-effort", "single-numa-node"]),
        "topologyManagerScope": rng.choice(["container", "pod"])}
    if rng.random() < 0.7:
        config.update(cpuManagerPolicy="static", kubeReserved={"cpu": "1"})
    if rng.random() < 0.3:
        config.update(memoryManagerPolicy="Static", systemReserved={"memory": "924Mi"},
                      reservedMemory=[{"numaNode": 0, "limits": {"memory": "1Gi"}}])
    steps: list[dict[str, Any]] = [{"op": "create", "node": {
        "kubeletVersion": version, "machine": _machine(rng.choice([1, 2])), "config": config}}]
    kinds = {}
    for index in range(rng.randint(1, 3)):
        kinds[f"p{index}"] = guaranteed = rng.random() < 0.5
        resources: dict[str, Any] = (
            {"limits": {"cpu": rng.choice(["500m", "1", "2"]), "memory": "256Mi"}} if guaranteed
            else {"requests": {"cpu": "250m", "memory": "128Mi"},
                  "limits": {"cpu": "2", "memory": "1Gi"}})
        steps.append({"op": "admit", "pod": {"uid": f"p{index}", "containers": [
            {"name": "c", "resources": resources}]}})
    for _ in range(rng.randint(1, 3)):
        uid = rng.choice(sorted(kinds))
        steps.append({"op": "resize", "uid": uid, "resources": _pod_level_resources(
            kinds[uid], rng.choice(["1", "2", "3", "6"]), rng.choice(["256Mi", "1Gi", "2Gi"]))})
        if rng.random() < 0.4:
            steps.append({"op": "admit", "pod": {"uid": f"x{rng.randint(0, 99)}", "containers": [
                {"name": "c", "resources": {"requests": {"cpu": rng.choice(["1", "3", "5"])}}}]}})
    steps.append({"op": "state"})
    return steps


@pytest.mark.go
@pytest.mark.parametrize("version", ["1.34", "1.35", "1.36", "1.37"])
def test_pod_level_resize_agrees_with_kubelet(version: str) -> None:
    """RESIZE-8: on seeded random sessions of pods with pod-level resources, every answer of
    the reference is the node probe's (the API server's checks as glue, then kubelet's own
    allocation manager); with default gates the reference never answers not-modelled."""
    from numaspec.conformance.implementations.exec_node import ExecNode
    from numaspec_tools.builds.kubelet import node_command
    from numaspec_tools.testing.sessions import normalizer

    probe = ExecNode(node_command(version), name=f"kubelet {version}")
    try:
        for seed in range(300):
            make = _pod_level_session if seed % 2 else _pod_level_added_session
            steps = make(random.Random(seed), version)
            reference = NodeSession()
            ours, theirs = normalizer(), normalizer()
            for index, step in enumerate(steps):
                want = reference.answer(json.dumps(step))
                assert want.get("error", {}).get("kind") != "not-modelled", (seed, index, want)
                got = probe.handle(step)
                assert ours(step, want) == theirs(step, got), (seed, index, step, want, got)
    finally:
        probe.close()
