"""DEV-10, DEV-11, NWIRE-7: a device plugin's preferred allocation and the window after a
kubelet restart.  A property (test_p_dev_preferred) checks the Device Manager's choice over
random machines, preferences and affinities against an oracle written here from DEV-4 and
DEV-10 (never through the reference's allocation), and is proven able to fail by
tools/numaspec_tools/mutants/preferred_mutants.py;
the restart window and the protocol's checks are unit tests beside the vectors of
spec/vectors/node/device-preferred.json."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numaspec.conformance.cases.vectors import load_vectors
from numaspec.conformance.implementations.exec_node import ExecNode
from numaspec.node.machine import Core, Device, DevicePlugin, Machine, NumaNode
from numaspec.protocols.node_protocol import NodeSession
from numaspec.topology.masks import NumaMask
from numaspec_tools.builds.kubelet import node_command
from numaspec_tools.mutants.preferred_mutants import (
    PREFERRED_KILLED_BY,
    PREFERRED_MUTANTS,
    Allocator,
    reference,
)

R = "example.com/gpu"
Case = tuple[Machine, frozenset[str], NumaMask | None, int]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """2-3 NUMA nodes; 1-8 devices on random NUMA node sets (none: no topology), a few
    unhealthy; devices another pod holds; an affinity or none; a request the free devices
    can meet; a plugin with a preference (ids of the machine, sometimes an unknown one) or
    none."""
    numa = draw(st.integers(2, 3))
    nodes = tuple(NumaNode(i, 1 << 30, {}, None, (Core(i, (i,)),)) for i in range(numa))
    count = draw(st.integers(1, 8))
    ids = [f"d{i}" for i in range(count)]
    devices = tuple(Device(d, tuple(sorted(draw(st.sets(st.integers(0, numa - 1))))),
                           draw(st.integers(0, 5)) > 0) for d in ids)
    healthy = [d.id for d in devices if d.healthy]
    if not healthy:
        devices = (Device(devices[0].id, devices[0].numa, True), *devices[1:])
        healthy = [devices[0].id]
    held = frozenset(draw(st.sets(st.sampled_from(healthy), max_size=len(healthy) - 1)))
    free = len(healthy) - len(held)
    n = draw(st.integers(1, free))
    affinity = None
    if draw(st.integers(0, 4)) > 0:
        affinity = NumaMask.of(draw(st.sets(st.integers(0, numa - 1), min_size=1)))
    plugins = {}
    if draw(st.integers(0, 5)) > 0:
        listed = draw(st.lists(st.sampled_from([*ids, "zz"]), unique=True))
        plugins[R] = DevicePlugin(tuple(listed), draw(st.booleans()))
    return Machine(nodes, {R: devices}, plugins), held, affinity, n


def check_choice(allocate: Allocator, case: Case) -> None:
    """DEV-4, DEV-10 (test_p_dev_preferred): the devices chosen are free, healthy and as many as
    asked; inside the affinity when it holds enough, all of it otherwise; and where a plugin
    is asked, its usable answer is taken."""
    machine, held, affinity, n = case
    devices = {d.id: d for d in machine.devices[R]}
    free = {d for d, dev in devices.items() if dev.healthy} - held
    chosen = allocate(machine, held, affinity, n)
    assert chosen <= free, (chosen, free)
    assert len(chosen) == n, (chosen, n)
    topology = any(d.numa for d in devices.values())
    aligned = set()
    if affinity is not None and topology:
        aligned = {d for d in free if any(affinity.is_set(x) for x in devices[d].numa)}
    if len(aligned) >= n:
        assert chosen <= aligned, ("not aligned", chosen, aligned)
    else:
        assert aligned <= chosen, ("aligned ones left", chosen, aligned)
    plugin = machine.device_plugins.get(R)
    if plugin is None or len(aligned) == n:
        return
    # DEV-10: what the plugin answers (numaspec's plugin), and what of it counts.
    offered = aligned if len(aligned) > n else free
    must = set() if len(aligned) > n else aligned
    answer = sorted(must)
    for d in plugin.preferred:
        if len(answer) == n:
            break
        if d not in must and (d in offered or not plugin.offered_only):
            answer.append(d)
    usable = (set(answer) & offered) - must
    assert usable <= chosen, ("the plugin's answer was not taken", chosen, usable)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_p_dev_preferred(case: Case) -> None:
    check_choice(reference, case)


@pytest.mark.parametrize("name", sorted(PREFERRED_MUTANTS))
@pytest.mark.slow
def test_p_dev_preferred_kills_mutant(name: str) -> None:
    """Every mutant breaks the property of test_p_dev_preferred on some case."""
    assert PREFERRED_KILLED_BY[name] == "test_p_dev_preferred"
    failures: list[Case] = []

    @settings(max_examples=600, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(cases())
    def run(case: Case) -> None:
        try:
            check_choice(PREFERRED_MUTANTS[name], case)
        except AssertionError:
            failures.append(case)

    run()
    assert failures, f"mutant {name} escaped test_p_dev_preferred"


def _session(*steps: Any) -> list[Any]:
    session = NodeSession()
    return [session.answer(json.dumps(s)) for s in steps]


MACHINE: dict[str, Any] = {
    "numaNodes": [{"id": 0, "memory": "1Gi", "cores": [{"socket": 0, "threads": [0]}]},
                  {"id": 1, "memory": "1Gi", "cores": [{"socket": 1, "threads": [1]}]}],
    "devices": {R: [{"id": "a", "numa": [0]}, {"id": "b", "numa": [1]}]}}
CREATE: dict[str, Any] = {"op": "create", "node": {"kubeletVersion": "1.37", "machine": MACHINE,
                                   "config": {"topologyManagerPolicy": "single-numa-node"}}}


def _pod(uid: str, n: int) -> dict[str, Any]:
    return {"uid": uid, "containers": [{"name": "c", "resources": {"limits": {R: str(n)}}}]}


def test_restart_window_and_register() -> None:
    """DEV-11: in the window the held device stays allocated, hints are null and allocation
    refuses; after register a new pod gets the free device."""
    answers = _session(CREATE, {"op": "admit", "pod": _pod("p", 1)},
                       {"op": "restart", "unregistered": [R]},
                       {"op": "hints", "pod": _pod("p", 1), "container": "c"},
                       {"op": "admit", "pod": _pod("q", 1)},
                       {"op": "register", "resource": R},
                       {"op": "admit", "pod": _pod("q", 1)}, {"op": "state"})
    assert answers[3] == {"hints": {R: None}}
    refused = answers[4]["decision"]
    assert not refused["admitted"]
    assert refused["reason"] == "UnexpectedAdmissionError"
    assert "no healthy devices present" in refused["message"]
    held = answers[1]["decision"]["containers"][0]["devices"][R]
    got = answers[6]["decision"]["containers"][0]["devices"][R]
    assert set(held).isdisjoint(got)
    assert answers[7]["state"]["devices"]["allocated"][R] == sorted([*held, *got])


@pytest.mark.parametrize(("step", "where"), [
    ({"op": "restart", "unregistered": ["example.com/nic"]}, "unregistered[0]"),
    ({"op": "restart", "unregistered": [R, R]}, "unregistered[1]"),
    ({"op": "restart", "unregistered": [7]}, "unregistered[0]"),
    ({"op": "restart", "unregistered": R}, "unregistered"),
    ({"op": "register", "resource": R}, "resource"),
    ({"op": "register"}, ""),
])
def test_nwire_7_errors_change_nothing(step: dict[str, Any], where: str) -> None:
    """NWIRE-7, NWIRE-3: bad restart and register requests are typed errors naming the field,
    and the node is unchanged."""
    answers = _session(CREATE, {"op": "state"}, step, {"op": "state"})
    assert answers[2]["error"]["kind"] == "invalid-field"
    assert answers[2]["error"].get("where", "") == where
    assert answers[1] == answers[3]


PLUGINS = "node.machine.devicePlugins"


@pytest.mark.parametrize(("plugins", "where"), [
    ({"example.com/nic": {"preferredAllocation": []}}, f"{PLUGINS}.example.com/nic"),
    ({R: {"preferredAllocation": ["a", "a"]}}, f"{PLUGINS}.{R}.preferredAllocation"),
    ({R: {"preferredAllocation": "a"}}, f"{PLUGINS}.{R}.preferredAllocation"),
    ({R: {"preferredAllocation": [], "offeredOnly": 1}}, f"{PLUGINS}.{R}.offeredOnly"),
    ({R: {}}, f"{PLUGINS}.{R}"),
])
def test_nwire_7_device_plugins_checked(plugins: dict[str, Any], where: str) -> None:
    create = json.loads(json.dumps(CREATE))
    create["node"]["machine"]["devicePlugins"] = plugins
    answer = _session(create)[0]
    assert answer["error"]["kind"] == "invalid-field"
    assert answer["error"]["where"] == where


#: DEV-10 vectors whose every decision is one answer in kubelet too (no Go map order decides
#: which ids): there the probe's device ids must equal the reference's, not just their NUMA
#: node sets (RUN-12 compares the other vectors).
EXACT = ("dev-10-preference-inside-aligned", "dev-10-exactly-aligned-not-asked",
         "dev-10-fewer-aligned-must-include", "dev-10-no-option-unchanged",
         "dev-10-no-hint-plugin-decides")


@pytest.mark.go
@pytest.mark.parametrize("minor", ["1.30", "1.37"])
@pytest.mark.parametrize("vector_id", EXACT)
def test_kubelet_takes_the_preferred_ids(vector_id: str, minor: str) -> None:
    """DEV-10 against kubelet's own Device Manager: the ids the plugin's preference decides."""
    vector = next(v for v in load_vectors() if v.id == vector_id)
    probe = ExecNode(node_command(minor), name=f"kubelet {minor}")
    try:
        for step, want in zip(vector.case["steps"], vector.expected["answers"], strict=True):
            request = step
            if step["op"] == "create":  # the probe serves its own release only
                request = {**step, "node": {**step["node"], "kubeletVersion": minor}}
            got = probe.handle(request)
            if "decision" in want:
                assert got["decision"] == want["decision"], (step, got)
    finally:
        probe.close()
