"""The node model on the seeds' worked examples and on bad input: NODE-4, NODE-6, NODE-7,
ADMIT-3, ADMIT-4, ADMIT-5, CPU-6, CPU-9, CPU-10, CPU-12, CPU-13, CPU-14, CPU-15, CPU-16,
CPU-17, DEV-1, DEV-3, DEV-4, DEV-5, DEV-7, MEM-2, MEM-4, MEM-5, MEM-6, MEM-8, MEM-9, MEM-10,
NWIRE-3.  Seed numbers refer to ../shared/seeds; each test's docstring gives its derivation
from the seed, and spec/node/admission.md the rules it follows."""

from __future__ import annotations

import json
from typing import Any

import pytest

from numaspec.errors import (
    InvalidFieldError,
    NodeStartupError,
    PodAlreadyAdmittedError,
    UnknownPodError,
    UnknownResourceError,
)
from numaspec.node.admission import Node
from numaspec.node.cpu_manager import STATIC_POLICY_ERROR
from numaspec.node.machine import Core, Device, Machine, NumaNode
from numaspec.node.nodeconfig import NodeConfig
from numaspec.node.pods import Container, Pod
from numaspec.protocols.node_protocol import NodeSession, decode_node, decode_pod
from numaspec.topology.versions import parse_version

GI = 1 << 30


def seed001_node(**config: Any) -> Node:
    """Seed 001 / the 1.18 blog machine: 2 NUMA nodes x 4 CPUs, gpu0/nic0 on NUMA 0 and
    gpu1/nic1 on NUMA 1, static CPU policy, restricted."""
    machine = Machine(
        (NumaNode(0, 16 * GI, cores=tuple(Core(0, (c,)) for c in range(4))),
         NumaNode(1, 16 * GI, cores=tuple(Core(1, (c,)) for c in range(4, 8)))),
        {"gpu-vendor.com/gpu": (Device("gpu0", (0,)), Device("gpu1", (1,))),
         "nic-vendor.com/nic": (Device("nic0", (0,)), Device("nic1", (1,)))})
    settings: dict[str, Any] = {"cpu_manager_policy": "static",
                                "kube_reserved": {"cpu": "500m"},
                                "topology_manager_policy": "restricted", **config}
    return Node(machine, NodeConfig(parse_version(settings.pop("version", "1.30")), **settings))


SEED001_LIMITS = {"cpu": "2", "memory": "200Mi", "gpu-vendor.com/gpu": "1",
                  "nic-vendor.com/nic": "1"}


@pytest.mark.parametrize("version", ["1.29", "1.30", "1.33", "1.37"])
def test_seed001_two_containers(version: str) -> None:
    """Container0 gets CPUs on NUMA 0 with gpu0 and nic0; Container1 the other node.  CPU 0
    is the reserved CPU here (the blog's machine reserves none), so Container0 gets 1 and 2."""
    node = seed001_node(version=version)
    first = node.admit(Pod("c0", (Container.of("numa-aligned-container0",
                                               limits=SEED001_LIMITS),)))
    second = node.admit(Pod("c1", (Container.of("numa-aligned-container1",
                                                limits=SEED001_LIMITS),)))
    assert first.admitted
    assert second.admitted
    a, b = first.containers[0], second.containers[0]
    assert (a.hint.numa_affinity and a.hint.numa_affinity.nodes, a.hint.preferred) == ((0,), True)
    assert a.cpus == {1, 2}
    assert dict(a.devices) == {"gpu-vendor.com/gpu": ("gpu0",), "nic-vendor.com/nic": ("nic0",)}
    assert b.hint.numa_affinity is not None
    assert b.hint.numa_affinity.nodes == (1,)
    assert b.cpus == {4, 5}
    assert dict(b.devices) == {"gpu-vendor.com/gpu": ("gpu1",), "nic-vendor.com/nic": ("nic1",)}
    third = node.admit(Pod("c2", (Container.of("x", limits=SEED001_LIMITS),)))
    assert (third.admitted, third.reason) == (False, "TopologyAffinityError")
    assert third.message == "Resources cannot be allocated with Topology locality"


def memory_node(nodes: int, version: str = "1.33", policy: str = "restricted") -> Node:
    """Seed 004: NUMA nodes with 10Gi allocatable memory each (11Gi, 1Gi reserved per node),
    Memory Manager Static, CPU Manager none."""
    request = {"op": "create", "node": {
        "kubeletVersion": version,
        "machine": {"numaNodes": [{"id": n, "memory": "11Gi",
                                   "cores": [{"socket": 0, "threads": [n]}]}
                                  for n in range(nodes)]},
        "config": {"memoryManagerPolicy": "Static", "topologyManagerPolicy": policy,
                   "systemReserved": {"memory": f"{nodes * 1024 - 100}Mi"},
                   "reservedMemory": [{"numaNode": n, "limits": {"memory": "1Gi"}}
                                      for n in range(nodes)]}}}
    return decode_node(request["node"])


def mem_pod(uid: str, memory: str, *, guaranteed: bool = True) -> Pod:
    if guaranteed:
        return Pod(uid, (Container.of("c", limits={"cpu": "500m", "memory": memory}),))
    return Pod(uid, (Container.of("c", requests={"cpu": "500m", "memory": memory}),))


def free_gi(node: Node) -> list[float]:
    assert node.memory is not None
    return [s.tables["memory"].free / GI for _, s in sorted(node.memory.nodes.items())]


def test_seed004_pods_1_to_3_on_a_group() -> None:
    """Pod1 (15Gi) makes a two-node group; pod2 (5Gi) could only use the group, which is not
    preferred for 5Gi, so restricted rejects it; pod3 is not Guaranteed and is admitted."""
    node = memory_node(2)
    pod1 = node.admit(mem_pod("pod1", "15Gi"))
    assert pod1.admitted
    assert pod1.containers[0].memory[0].numa == (0, 1)
    assert free_gi(node) == [0, 5]
    assert node.memory is not None
    assert node.memory.nodes[0].cells == (0, 1)
    pod2 = node.admit(mem_pod("pod2", "5Gi"))
    assert (pod2.admitted, pod2.reason) == (False, "TopologyAffinityError")
    pod3 = node.admit(mem_pod("pod3", "5Gi", guaranteed=False))
    assert pod3.admitted
    assert pod3.containers[0].memory == ()
    assert free_gi(node) == [0, 5]


def test_seed004_pods_4_to_7_single_numa_groups() -> None:
    """Pod4 (2Gi) and pod5 (6Gi) share NUMA 0; pod6 (3Gi) needs NUMA 1; pod7 (8Gi) fits
    neither alone, and the two single-NUMA groups cannot be combined: rejected (1.32+)."""
    node = memory_node(2)
    for uid, size, numa in (("pod4", "2Gi", 0), ("pod5", "6Gi", 0), ("pod6", "3Gi", 1)):
        decision = node.admit(mem_pod(uid, size))
        assert decision.admitted, decision
        assert decision.containers[0].memory[0].numa == (numa,)
    assert free_gi(node) == [2, 7]
    pod7 = node.admit(mem_pod("pod7", "8Gi"))
    assert (pod7.admitted, pod7.reason) == (False, "UnexpectedAdmissionError")
    assert pod7.message == ("Allocate failed due to [memorymanager] preferred hint violates "
                            "NUMA node allocation, which is unexpected")
    assert free_gi(node) == [2, 7]


def test_seed004_pod7_before_1_32_breaks_the_groups() -> None:
    """MEM-6 finding: before 1.32 nothing stops pod7: it is pinned to {0,1} although both
    nodes hold single-NUMA memory, and the groups overlap (spec/conformance/findings.md)."""
    node = memory_node(2, version="1.30")
    for uid, size in (("pod4", "2Gi"), ("pod5", "6Gi"), ("pod6", "3Gi")):
        assert node.admit(mem_pod(uid, size)).admitted
    pod7 = node.admit(mem_pod("pod7", "8Gi"))
    assert pod7.admitted
    assert pod7.containers[0].memory[0].numa == (0, 1)
    assert free_gi(node) == [0, 1]


def device_node() -> Node:
    """Seed 002: 12 GPUs without topology, Topology Manager none."""
    machine = Machine((NumaNode(0, 16 * GI, cores=(Core(0, (0, 1)),)),),
                      {"example.com/gpu": tuple(Device(f"gpu{i:02}") for i in range(12))})
    return Node(machine, NodeConfig(parse_version("1.30")))


def gpu(name: str, count: int) -> Container:
    return Container.of(name, limits={"example.com/gpu": str(count)})


def test_seed002_init_devices_are_reused() -> None:
    """Example 1 and 2: init containers reuse each other's GPUs; the app container reuses
    one of the largest init container's 10, and the pod keeps all 10 until it goes."""
    node = device_node()
    pod = Pod("p", (gpu("app", 1),), (gpu("init0", 1), gpu("init1", 10), gpu("init2", 1)))
    decision = node.admit(pod)
    held = {c.name: set(c.devices["example.com/gpu"]) for c in decision.containers}
    assert held["init1"] >= held["init0"]
    assert held["init1"] >= held["init2"]
    assert len(held["init1"]) == 10
    assert held["app"] <= held["init1"]
    assert len(node.devices.allocated("example.com/gpu")) == 10
    node.remove("p")
    assert not node.devices.allocated("example.com/gpu")


def test_seed002_apps_need_more_than_init() -> None:
    """Example 3: one init GPU, the apps ask for 10: the first app reuses it, 9 are new."""
    node = device_node()
    pod = Pod("p", (gpu("app0", 4), gpu("app1", 6)), (gpu("init0", 1),))
    decision = node.admit(pod)
    held = {c.name: set(c.devices["example.com/gpu"]) for c in decision.containers}
    assert held["init0"] <= held["app0"]
    assert not held["init0"] & held["app1"]
    assert len(node.devices.allocated("example.com/gpu")) == 10


def test_sidecar_keeps_its_devices() -> None:
    """DEV-5: a sidecar's devices are not handed to the app containers."""
    node = device_node()
    sidecar = Container.of("side", limits={"example.com/gpu": "2"}, restart_policy="Always")
    decision = node.admit(Pod("p", (gpu("app", 2),), (sidecar,)))
    held = {c.name: set(c.devices["example.com/gpu"]) for c in decision.containers}
    assert not held["side"] & held["app"]


def smt_node(options: dict[str, str], version: str = "1.30") -> Node:
    machine = Machine.symmetric(sockets=2, cores_per_numa=2, threads_per_core=2)
    return Node(machine, NodeConfig(parse_version(version), cpu_manager_policy="static",
                                    cpu_manager_policy_options=options,
                                    reserved_system_cpus=frozenset({0, 4}),
                                    topology_manager_policy="best-effort"))


def test_full_pcpus_only_refuses_half_cores() -> None:
    """CPU-9: SMTAlignmentError is the pod's reason, with kubelet's message."""
    node = smt_node({"full-pcpus-only": "true"})
    odd = node.admit(Pod("p", (Container.of("c", limits={"cpu": "1", "memory": "1Gi"}),)))
    assert (odd.reason, odd.message) == (
        "SMTAlignmentError", "SMT Alignment Error: requested 1 cpus not multiple cpus per "
        "core = 2")
    big = node.admit(Pod("q", (Container.of("c", limits={"cpu": "8", "memory": "1Gi"}),)))
    assert big.reason == "SMTAlignmentError"
    assert big.message == ("SMT Alignment Error: not enough free physical CPUs: available "
                           "physical CPUs = 6, requested CPUs = 8, CPUs per core = 2")


def test_packing_takes_whole_cores_from_the_fullest_numa_node() -> None:
    """CPU-10 (digest A.12 E7/E8 on this machine): NUMA 0 (CPU 0 and its sibling 4
    reserved) is fuller than NUMA 1, so a 2-CPU request takes its free core {1,5}; a 1-CPU
    request then takes a thread of the next core of NUMA 0."""
    node = smt_node({})
    two = node.admit(Pod("a", (Container.of("c", limits={"cpu": "2", "memory": "1Gi"}),)))
    assert two.containers[0].cpus == {1, 5}
    one = node.admit(Pod("b", (Container.of("c", limits={"cpu": "1", "memory": "1Gi"}),)))
    assert one.containers[0].cpus == {2}


def test_align_by_socket_refused_with_single_numa_node() -> None:
    machine = Machine.symmetric(sockets=2, cores_per_numa=2)
    config = NodeConfig(parse_version("1.30"), cpu_manager_policy="static",
                        cpu_manager_policy_options={"align-by-socket": "true"},
                        feature_gates={"CPUManagerPolicyAlphaOptions": True},
                        kube_reserved={"cpu": "1"}, topology_manager_policy="single-numa-node")
    with pytest.raises(NodeStartupError) as caught:
        Node(machine, config)
    assert caught.value.kubelet_message == (STATIC_POLICY_ERROR + "Topolgy manager "
                                            "single-numa-node policy is incompatible with "
                                            "CPUManager align-by-socket policy option")


def test_alpha_option_needs_its_gate() -> None:
    machine = Machine.symmetric(sockets=2, cores_per_numa=2)
    config = NodeConfig(parse_version("1.30"), cpu_manager_policy="static",
                        cpu_manager_policy_options={"distribute-cpus-across-numa": "true"},
                        kube_reserved={"cpu": "1"})
    with pytest.raises(NodeStartupError, match=r"Alpha-level Options not enabled"):
        Node(machine, config)


def test_pod_scope_stores_one_hint_for_every_container() -> None:
    node = seed001_node(topology_manager_scope="pod")
    limits = {"cpu": "1", "memory": "100Mi", "gpu-vendor.com/gpu": "1"}
    decision = node.admit(Pod("p", (Container.of("a", limits=limits),
                                    Container.of("b", limits={"cpu": "1", "memory": "100Mi"}))))
    assert decision.admitted
    assert {c.hint for c in decision.containers} == {decision.containers[0].hint}


# -- bad input: typed errors, and the node is unchanged ---------------------------------------


def test_bad_pods_are_typed_errors_and_change_nothing() -> None:
    node = seed001_node()
    assert node.admit(Pod("p", (Container.of("c", limits=SEED001_LIMITS),))).admitted
    before = node.state()
    with pytest.raises(PodAlreadyAdmittedError):
        node.admit(Pod("p", (Container.of("c", limits=SEED001_LIMITS),)))
    with pytest.raises(InvalidFieldError, match="used twice"):
        node.admit(Pod("q", (Container.of("c"), Container.of("c"))))
    with pytest.raises(UnknownResourceError, match=r"example\.com/fpga"):
        node.admit(Pod("r", (Container.of("c", limits={"example.com/fpga": "1"}),)))
    with pytest.raises(UnknownPodError):
        node.remove("nobody")
    assert node.state() == before


def test_the_line_protocol_never_raises() -> None:
    session = NodeSession()
    answers = [session.answer(line) for line in (
        "not json",
        json.dumps({"op": "admit", "pod": {}}),
        json.dumps({"op": "create", "node": {"kubeletVersion": "1.28", "machine": {
            "numaNodes": [{"id": 0, "memory": "1Gi", "cores": [{"socket": 0,
                                                                 "threads": [0]}]}]}}}),
        json.dumps({"op": "create", "node": {"kubeletVersion": "1.30", "machine": {
            "numaNodes": [{"id": 70, "memory": "1Gi"}]}}}),
        json.dumps({"op": "fly"}),
    )]
    assert [a["error"]["kind"] for a in answers] == [
        "malformed-json", "invalid-field", "not-modelled", "invalid-numa-id", "invalid-field"]


def test_requests_larger_than_the_machine_get_kubelets_decision() -> None:
    node = seed001_node(topology_manager_policy="best-effort")
    pod = decode_pod({"uid": "big", "containers": [{"name": "c", "resources": {
        "limits": {"cpu": "64", "memory": "1Gi"}}}]})
    decision = node.admit(pod)
    assert (decision.admitted, decision.reason) == (False, "UnexpectedAdmissionError")
    assert "not enough cpus available to satisfy request" in decision.message
    assert node.state()["pods"] == []


# -- targeted provider rules -------------------------------------------------------------------


def test_distribute_across_numa_spreads_evenly() -> None:
    """CPU-12: 4 CPUs over two NUMA nodes of 4 free CPUs each (no SMT): 2 + 2."""
    machine = Machine.symmetric(sockets=2, cores_per_numa=4, threads_per_core=1)
    node = Node(machine, NodeConfig(parse_version("1.33"), cpu_manager_policy="static",
                                    cpu_manager_policy_options={
                                        "distribute-cpus-across-numa": "true"},
                                    reserved_system_cpus=frozenset({0, 4}),
                                    topology_manager_policy="none"))
    decision = node.admit(Pod("p", (Container.of("c", limits={"cpu": "4", "memory": "1Gi"}),)))
    assert decision.containers[0].cpus == {1, 2, 5, 6}


def test_distribute_across_cores_takes_threads_by_socket_order() -> None:
    """CPU-13: spread order skips whole cores: two CPUs land on two cores."""
    machine = Machine.symmetric(sockets=1, cores_per_numa=4, threads_per_core=2)
    node = Node(machine, NodeConfig(parse_version("1.31"), cpu_manager_policy="static",
                                    cpu_manager_policy_options={
                                        "distribute-cpus-across-cores": "true"},
                                    feature_gates={"CPUManagerPolicyAlphaOptions": True},
                                    reserved_system_cpus=frozenset({0})))
    decision = node.admit(Pod("p", (Container.of("c", limits={"cpu": "2", "memory": "1Gi"}),)))
    assert decision.containers[0].cpus == {1, 2}


@pytest.mark.parametrize(("version", "options", "message"), [
    ("1.31", {"full-pcpus-only": "true", "distribute-cpus-across-cores": "true"},
     "static policy options full-pcpus-only and distribute-cpus-across-cores can not be used at "
     "the same time"),
    ("1.30", {"distribute-cpus-across-cores": "true"},
     'unknown CPU Manager Policy option: "distribute-cpus-across-cores"'),
    ("1.30", {"full-pcpus-only": "yes"},
     'bad value for option "full-pcpus-only": strconv.ParseBool: parsing "yes": invalid syntax'),
])
def test_cpu_option_errors(version: str, options: dict[str, str], message: str) -> None:
    """CPU-14: kubelet's start-up errors for CPU Manager options."""
    machine = Machine.symmetric(sockets=1, cores_per_numa=2)
    config = NodeConfig(parse_version(version), cpu_manager_policy="static",
                        cpu_manager_policy_options=options, kube_reserved={"cpu": "1"},
                        feature_gates={"CPUManagerPolicyAlphaOptions": True})
    with pytest.raises(NodeStartupError) as caught:
        Node(machine, config)
    # cpumanager.NewManager wraps the static policy's constructor errors.
    assert caught.value.kubelet_message == STATIC_POLICY_ERROR + message


def test_strict_reservation_keeps_reserved_cpus_out_of_the_pool() -> None:
    """CPU-17: with strict-cpu-reservation the shared pool never holds reserved CPUs; removing
    a container returns only its own CPUs (CPU-15: an app container that reused its init
    container's CPUs keeps them until the pod goes)."""
    machine = Machine.symmetric(sockets=1, cores_per_numa=4, threads_per_core=1)
    node = Node(machine, NodeConfig(parse_version("1.33"), cpu_manager_policy="static",
                                    cpu_manager_policy_options={"strict-cpu-reservation": "true"},
                                    reserved_system_cpus=frozenset({0})))
    assert node.cpu is not None
    assert 0 not in node.cpu.default
    init = Container.of("i", limits={"cpu": "2", "memory": "1Gi"})
    app = Container.of("a", limits={"cpu": "2", "memory": "1Gi"})
    decision = node.admit(Pod("p", (app,), (init,)))
    cpus = {c.name: c.cpus for c in decision.containers}
    assert cpus["a"] == cpus["i"]  # CPU-15: the app reuses the init container's CPUs
    node.remove("p")
    assert node.cpu.default == {1, 2, 3}


def test_device_hints_only_over_hosting_nodes_from_1_36() -> None:
    """DEV-3: from 1.36 a resource's masks only use the NUMA nodes that host its devices."""
    machine = Machine.symmetric(sockets=4, cores_per_numa=1, threads_per_core=1,
                                devices={"example.com/x": (Device("d0", (0,)),
                                                           Device("d1", (1,)))})
    pod = Pod("p", (Container.of("c", limits={"example.com/x": "1"}),))
    for version, count in (("1.35", 12), ("1.36", 3)):
        node = Node(machine, NodeConfig(parse_version(version)))
        hints = node.devices.container_hints(pod, pod.containers[0])
        assert hints is not None
        assert len(hints["example.com/x"] or []) == count


def test_memory_hints_of_a_container_that_holds_memory() -> None:
    """MEM-5: regenerated from the blocks, preferred; a different request: no preference."""
    node = memory_node(2)
    pod = mem_pod("p", "2Gi")
    assert node.admit(pod).admitted
    assert node.memory is not None
    hints = node.memory.container_hints(pod, pod.containers[0])
    assert hints is not None
    assert [(h.numa_affinity and h.numa_affinity.nodes, h.preferred)
                                  for h in hints["memory"] or []] == [((0,), True)]
    bigger = mem_pod("p", "3Gi")
    assert node.memory.container_hints(bigger, bigger.containers[0]) is None


def test_init_memory_is_reused_then_released_at_start() -> None:
    """MEM-8, MEM-10: the app reuses the init container's 4Gi on NUMA 0; the init block
    shrinks to what was not reused and is released when the pod starts."""
    node = memory_node(2)
    init = Container.of("i", limits={"cpu": "500m", "memory": "4Gi"})
    app = Container.of("a", limits={"cpu": "500m", "memory": "1Gi"})
    decision = node.admit(Pod("p", (app,), (init,)))
    blocks = {c.name: c.memory for c in decision.containers}
    assert blocks["a"][0].numa == blocks["i"][0].numa == (0,)
    assert blocks["i"][0].size == 3 * GI  # shrunk by the 1Gi the app reused
    assert free_gi(node) == [9, 10]  # after start only the app's 1Gi stays reserved


def test_reserved_memory_must_add_up() -> None:
    """MEM-2: reservedMemory must equal the node-allocatable reservation."""
    with pytest.raises(NodeStartupError, match="reservedMemory"):
        decode_node({"kubeletVersion": "1.30", "machine": {"numaNodes": [
            {"id": 0, "memory": "4Gi", "cores": [{"socket": 0, "threads": [0]}]}]},
            "config": {"memoryManagerPolicy": "Static", "reservedMemory": [
                {"numaNode": 0, "limits": {"memory": "1Gi"}}]}})
    with pytest.raises(NodeStartupError, match="does not exist"):
        decode_node({"kubeletVersion": "1.30", "machine": {"numaNodes": [
            {"id": 0, "memory": "4Gi", "cores": [{"socket": 0, "threads": [0]}]}]},
            "config": {"memoryManagerPolicy": "Static", "reservedMemory": [
                {"numaNode": 3, "limits": {"memory": "100Mi"}}]}})


def test_digest_t2_reservation_and_packing() -> None:
    """CPU-10, CPU-17 (providers digest A.12 E6-E8): 12 CPUs, 2 sockets = 2 NUMA nodes, SMT2,
    cores (0,6), (2,8), (4,10) on socket 0.  One reserved CPU is {0}; then 2 CPUs take the
    free core {2,8}; then 1 CPU fills the partly used core: {6}."""
    cores0 = (Core(0, (0, 6)), Core(0, (2, 8)), Core(0, (4, 10)))
    cores1 = (Core(1, (1, 7)), Core(1, (3, 9)), Core(1, (5, 11)))
    machine = Machine((NumaNode(0, 16 * GI, cores=cores0), NumaNode(1, 16 * GI, cores=cores1)))
    node = Node(machine, NodeConfig(parse_version("1.30"), cpu_manager_policy="static",
                                    kube_reserved={"cpu": "1"}))
    assert node.cpu is not None
    assert node.cpu.reserved == {0}
    two = node.admit(Pod("a", (Container.of("c", limits={"cpu": "2", "memory": "1Gi"}),)))
    assert two.containers[0].cpus == {2, 8}
    one = node.admit(Pod("b", (Container.of("c", limits={"cpu": "1", "memory": "1Gi"}),)))
    assert one.containers[0].cpus == {6}


@pytest.mark.parametrize(("request_", "expected"), [
    (2, [((0,), True), ((1,), True), ((0, 1), False)]),   # E9
    (3, [((0, 1), True)]),                                 # E10
    (5, []),                                               # E11: d4 has no topology
])
def test_digest_device_hints(request_: int, expected: list[tuple[tuple[int, ...], bool]]
                             ) -> None:
    """DEV-3 (providers digest B.10): d0, d1 on NUMA 0, d2, d3 on NUMA 1, d4 without
    topology.  A device without topology never counts for a mask."""
    devices = (Device("d0", (0,)), Device("d1", (0,)), Device("d2", (1,)), Device("d3", (1,)),
               Device("d4"))
    machine = Machine.symmetric(sockets=2, cores_per_numa=1, devices={"example.com/r": devices})
    node = Node(machine, NodeConfig(parse_version("1.30")))
    pod = Pod("p", (Container.of("c", limits={"example.com/r": str(request_)}),))
    hints = node.devices.container_hints(pod, pod.containers[0])
    assert hints is not None
    got = [(h.numa_affinity.nodes if h.numa_affinity else (), h.preferred)
           for h in hints["example.com/r"] or []]
    assert got == expected


@pytest.mark.parametrize(("version", "level"), [("1.34", "beta"), ("1.35", "beta"),
                                                ("1.36", "GA")])
def test_uncore_option_maturity(version: str, level: str) -> None:
    """CPU-14: prefer-align-cpus-by-uncorecache is beta in 1.34-1.35 and GA from 1.36
    (policy_options.go of v1.35.4 still lists it among the beta options)."""
    from numaspec.node.cpu_manager import cpu_option_maturity

    found = cpu_option_maturity("prefer-align-cpus-by-uncorecache", parse_version(version))
    assert found is not None
    assert found.value == level


# -- the hints step (NWIRE-4) ------------------------------------------------------------------


SEED001_CREATE: dict[str, Any] = {"op": "create", "node": {
    "kubeletVersion": "1.30",
    "machine": {"numaNodes": [
        {"id": n, "memory": "16Gi",
         "cores": [{"socket": n, "threads": [c]} for c in range(4 * n, 4 * n + 4)]}
        for n in (0, 1)],
        "devices": {"gpu-vendor.com/gpu": [{"id": "gpu0", "numa": [0]},
                                           {"id": "gpu1", "numa": [1]}],
                    "example.com/flat": [{"id": "f0"}]}},
    "config": {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "500m"},
               "topologyManagerPolicy": "restricted"}}}


def pod_json(uid: str, *containers: tuple[str, dict[str, str]]) -> dict[str, Any]:
    return {"uid": uid, "containers": [{"name": name, "resources": {"limits": limits}}
                                       for name, limits in containers]}


def session() -> NodeSession:
    created = NodeSession()
    assert created.answer(json.dumps(SEED001_CREATE)) == {"ok": True}
    return created


ONE_NODE = [{"numa": [0], "preferred": True}, {"numa": [1], "preferred": True},
            {"numa": [0, 1], "preferred": False}]


def test_hints_are_the_providers_answers_and_change_nothing() -> None:
    """NWIRE-4: container hints per resource in canonical order; devices without topology
    have no preference (null); a Burstable container is absent from the CPU Manager's
    answer; the node is unchanged."""
    node = session()
    before = node.answer('{"op": "state"}')
    pod = pod_json("p", ("a", {"cpu": "2", "memory": "1Gi", "gpu-vendor.com/gpu": "1",
                               "example.com/flat": "1"}))
    answer = node.answer(json.dumps({"op": "hints", "pod": pod, "container": "a"}))
    assert answer == {"hints": {"cpu": ONE_NODE, "gpu-vendor.com/gpu": ONE_NODE,
                                "example.com/flat": None}}
    burstable = {"uid": "b", "containers": [{"name": "a", "resources": {
        "requests": {"cpu": "1"}, "limits": {"gpu-vendor.com/gpu": "1"}}}]}
    answer = node.answer(json.dumps({"op": "hints", "pod": burstable}))
    assert answer == {"hints": {"gpu-vendor.com/gpu": ONE_NODE}}
    assert node.answer('{"op": "state"}') == before


def test_pod_hints_count_the_whole_pod() -> None:
    """NWIRE-4: without a container the answer is the pod-scope hints: two containers of 3
    CPUs need 6, more than one NUMA node's 4 CPUs."""
    node = session()
    pod = pod_json("p", ("a", {"cpu": "3", "memory": "1Gi"}), ("b", {"cpu": "3", "memory": "1Gi"}))
    assert node.answer(json.dumps({"op": "hints", "pod": pod, "container": "b"})) == {
        "hints": {"cpu": ONE_NODE}}
    assert node.answer(json.dumps({"op": "hints", "pod": pod})) == {
        "hints": {"cpu": [{"numa": [0, 1], "preferred": True}]}}
    too_big = pod_json("q", ("a", {"cpu": "9", "memory": "1Gi"}))
    assert node.answer(json.dumps({"op": "hints", "pod": too_big})) == {"hints": {"cpu": []}}


def test_hints_of_a_live_pod_are_regenerated() -> None:
    """NWIRE-4, CPU-8: a container that holds CPUs gets hints from exactly those (its CPUs
    1 and 2 are on NUMA 0: no hint without node 0)."""
    node = session()
    pod = pod_json("p", ("a", {"cpu": "2", "memory": "1Gi"}))
    decision = node.answer(json.dumps({"op": "admit", "pod": pod}))
    assert decision["decision"]["admitted"]
    answer = node.answer(json.dumps({"op": "hints", "pod": pod, "container": "a"}))
    assert answer == {"hints": {"cpu": [{"numa": [0], "preferred": True},
                                        {"numa": [0, 1], "preferred": False}]}}


@pytest.mark.parametrize(("request_", "kind", "where"), [
    ({"op": "hints", "pod": pod_json("p", ("a", {"cpu": "1"})), "container": "b"},
     "invalid-field", "container"),
    ({"op": "hints", "pod": pod_json("p", ("a", {"cpu": "1"})), "container": 1},
     "invalid-field", "container"),
    ({"op": "hints", "pod": pod_json("p", ("a", {"example.com/fpga": "1"}))},
     "unknown-resource", "pod.containers[0].resources"),
    ({"op": "hints", "pod": pod_json("p", ("a", {"cpu": "-1"}))},
     "invalid-quantity", None),
    ({"op": "admit", "pod": pod_json("p", ("a", {"cpu": "1"})), "container": "a"},
     "invalid-field", None),
])
def test_bad_hints_requests_are_typed_errors(request_: dict[str, Any], kind: str,
                                            where: str | None) -> None:
    """NWIRE-3, NWIRE-4: validation as for admit, and a container the pod lacks."""
    node = session()
    before = node.answer('{"op": "state"}')
    answer = node.answer(json.dumps(request_))
    assert answer["error"]["kind"] == kind, answer
    if where is not None:
        assert answer["error"]["where"] == where
    assert node.answer('{"op": "state"}') == before


def test_node_provider_hints_api() -> None:
    """NWIRE-4: ``Node.provider_hints`` answers in the providers' own types."""
    node = seed001_node()
    pod = Pod("p", (Container.of("a", limits={"cpu": "2", "memory": "1Gi"}),))
    hints = node.provider_hints(pod, "a")
    assert set(hints) == {"cpu"}
    assert hints == node.provider_hints(pod)
    with pytest.raises(InvalidFieldError) as caught:
        node.provider_hints(pod, "nope")
    assert caught.value.where == "container"


@pytest.mark.parametrize(("reserved", "message"), [
    (((0, {"memory": "0"}),),
     'invalid configuration: reserved memory may not be zero for NUMA node 0 and resource '
     '"memory"'),
    (((0, {"cpu": "1"}),),
     'invalid configuration: the limit type "cpu" for NUMA node 0 is not supported, only '
     '[memory hugepages-<HugePageSize>] is accepted'),
    (((0, {"memory": "100Mi"}), (0, {"memory": "100Mi"})),
     'invalid configuration: the reserved memory has a duplicate value for NUMA node 0 and '
     'resource "memory"'),
    (((1, {"memory": "0", "cpu": "0"}),),
     '[invalid configuration: the limit type "cpu" for NUMA node 1 is not supported, only '
     '[memory hugepages-<HugePageSize>] is accepted, invalid configuration: reserved memory may '
     'not be zero for NUMA node 1 and resource "cpu", invalid configuration: reserved memory '
     'may not be zero for NUMA node 1 and resource "memory"]'),
])
def test_reserved_memory_validation(reserved: tuple[tuple[int, dict[str, str]], ...],
                                    message: str) -> None:
    """MEM-2 (1): the configuration's validation refuses malformed reservedMemory entries
    before any manager starts, whatever the Memory Manager policy."""
    machine = Machine.symmetric(sockets=1, cores_per_numa=2)
    config = NodeConfig(parse_version("1.32"), memory_manager_policy="None",
                        reserved_memory=reserved)
    with pytest.raises(NodeStartupError) as caught:
        Node(machine, config)
    assert caught.value.kubelet_message == message
