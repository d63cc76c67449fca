"""QOS-1, QOS-2: QoS classes.  The cases below were also answered by kubelet v1.30.14's
ComputePodQOS with the same classes."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from numaspec.errors import InvalidQuantityError
from numaspec.node.pods import Container, Pod, QOSClass, parse_resources, qos_class


def ctr(name: str, requests: dict[str, str] | None = None,
        limits: dict[str, str] | None = None) -> Container:
    return Container.of(name, requests=requests, limits=limits, where=f"containers.{name}")


GUARANTEED = {"cpu": "2", "memory": "1Gi"}


@pytest.mark.parametrize(("containers", "init", "expected"), [
    ([ctr("a")], [], QOSClass.BEST_EFFORT),
    ([ctr("a", {"example.com/gpu": "1"}, {"example.com/gpu": "1"})], [], QOSClass.BEST_EFFORT),
    ([ctr("a", limits=GUARANTEED)], [], QOSClass.GUARANTEED),  # QOS-2: requests from limits
    ([ctr("a", GUARANTEED, GUARANTEED)], [ctr("i", GUARANTEED, GUARANTEED)],
     QOSClass.GUARANTEED),
    ([ctr("a", GUARANTEED, GUARANTEED)], [ctr("i", {"cpu": "1"})], QOSClass.BURSTABLE),
    ([ctr("a", {"cpu": "1"}, {"cpu": "1"})], [], QOSClass.BURSTABLE),  # no memory limit
    ([ctr("a", {"cpu": "500m", "memory": "1Gi"}, GUARANTEED)], [], QOSClass.BURSTABLE),
    # QOS-1: pod-wide sums are compared, not each container: 1+2 == 2+1
    ([ctr("a", {"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"}),
      ctr("b", {"cpu": "2", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})], [],
     QOSClass.GUARANTEED),
    # zero quantities do not count
    ([ctr("a", {"cpu": "0"}, {"cpu": "0"})], [], QOSClass.BEST_EFFORT),
])
def test_qos_class(containers: list[Container], init: list[Container],
                   expected: QOSClass) -> None:
    assert qos_class(Pod("p", tuple(containers), tuple(init))) is expected


def test_requests_default_to_limits() -> None:  # QOS-2
    container = ctr("a", {"cpu": "1"}, {"cpu": "2", "memory": "1Gi"})
    assert container.requests == {"cpu": 1, "memory": Fraction(2**30)}


def test_negative_and_malformed_quantities_are_typed_errors() -> None:
    with pytest.raises(InvalidQuantityError) as info:
        ctr("a", {"cpu": "-1"})
    assert info.value.where == "containers.a.requests.cpu"
    with pytest.raises(InvalidQuantityError) as info:
        ctr("a", limits={"memory": "1Gb"})
    assert info.value.where == "containers.a.limits.memory"


def test_each_quantity_is_rounded_up_to_a_thousandth() -> None:
    """QOS-3: the API server's defaulting rounds a request or limit up to a thousandth before
    anything sums it (kubelet 1.30.14 asked 2m for two containers of 0.0005 cpu)."""
    parsed = parse_resources({"cpu": "0.0005", "memory": "1.0001", "example.com/x": "1"},
                             where="r")
    assert parsed == {"cpu": Fraction(1, 1000), "memory": Fraction(1001, 1000),
                      "example.com/x": Fraction(1)}


# --- pod-level resources (KEP-2837) -------------------------------------------------------------

_TWO_NUMA = {"numaNodes": [
    {"id": n, "memory": "8Gi", "cores": [{"socket": n, "threads": [4 * n + c]} for c in range(4)]}
    for n in range(2)]}
_STATIC = {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"},
           "memoryManagerPolicy": "Static", "systemReserved": {"memory": "924Mi"},
           "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
           "topologyManagerPolicy": "single-numa-node"}


def _node(version: str, **config: Any) -> Any:
    from numaspec.protocols.node_protocol import decode_node

    return decode_node({"kubeletVersion": version, "machine": _TWO_NUMA,
                        "config": {**_STATIC, **config}})


def _pod_level(uid: str, cpu: str, *, container_cpu: str = "1") -> Any:
    from numaspec.protocols.node_protocol import decode_pod

    return decode_pod({"uid": uid, "resources": {"requests": {"cpu": cpu, "memory": "1Gi"},
                                                 "limits": {"cpu": cpu, "memory": "1Gi"}},
                       "containers": [{"name": "c", "resources": {"limits": {
                           "cpu": container_cpu, "memory": "512Mi"}}}]})


def test_pod_level_resources_decide_the_qos_class() -> None:
    """QOS-4: the containers do not count; the pod's own cpu and memory do."""
    from numaspec.node.pods import PodResources

    burstable = Pod("p", (Container.of("c", requests={"cpu": "1"}),),
                    resources=PodResources.of(limits={"cpu": "2", "memory": "1Gi"}))
    assert qos_class(burstable) is QOSClass.GUARANTEED
    only_cpu = Pod("p", (Container.of("c", limits={"cpu": "1", "memory": "1Gi"}),),
                   resources=PodResources.of(limits={"cpu": "2"}))
    assert qos_class(only_cpu) is QOSClass.BURSTABLE


@pytest.mark.parametrize("version", ["1.34", "1.37"])
def test_a_pod_level_pod_gets_nothing_exclusive(version: str) -> None:
    """CPU-18, MEM-11: no hints, no CPUs, no blocks; ADMIT-11: the fit counts 2 CPUs, not
    the container's 1, so a second such pod of 6 does not fit the 7 allocatable CPUs."""
    node = _node(version)
    assert node.provider_hints(_pod_level("b", "2")) == {}
    decision = node.admit(_pod_level("a", "2"))
    assert decision.admitted
    (placed,) = decision.containers
    assert (placed.cpus, placed.memory) == (frozenset(), ())
    assert node.state()["cpu"]["assignments"] == {}
    refused = node.admit(_pod_level("d", "6"))
    assert (refused.admitted, refused.reason) == (False, "OutOfcpu")
    assert "requested: 6000, used: 2000, capacity: 7000" in refused.message


def test_kubelet_ignores_pod_level_resources_with_the_gate_off() -> None:
    """QOS-4: 1.30 (no such field) and 1.33 (PodLevelResources off by default): the
    containers decide; the gate on before 1.34, or PodLevelResourceManagers on, is not
    modelled."""
    from numaspec.errors import NotModelledError

    decision = _node("1.33").admit(_pod_level("a", "2"))
    (placed,) = decision.containers
    assert len(placed.cpus) == 1
    assert placed.memory[0].size == 512 << 20
    with pytest.raises(NotModelledError, match="alpha"):
        _node("1.33", featureGates={"PodLevelResources": True}).admit(_pod_level("a", "2"))
    with pytest.raises(NotModelledError, match="PodLevelResourceManagers"):
        _node("1.37", featureGates={"PodLevelResourceManagers": True}).admit(
            _pod_level("a", "2"))


def test_pod_level_resources_the_api_server_refuses() -> None:
    """ADMIT-11 (ADMIT-7): below the containers' requests, or another resource."""
    from numaspec.errors import InvalidFieldError
    from numaspec.protocols.node_protocol import decode_pod

    with pytest.raises(InvalidFieldError, match="below what the containers request"):
        _node("1.37").admit(_pod_level("a", "1", container_cpu="2"))
    with pytest.raises(InvalidFieldError, match="cannot be set at pod level"):
        _node("1.37").admit(decode_pod({"uid": "a", "resources": {"limits": {
            "example.com/gpu": "1"}}, "containers": [{"name": "c"}]}))


# --- QOS-5: the API server completes pod-level resources ------------------------------------


def _pod_level_pod(resources: dict[str, dict[str, str]],
                   containers: list[dict[str, dict[str, str]]]) -> Pod:
    from numaspec.node.pods import PodResources

    return Pod("p", tuple(Container.of(f"c{i}", requests=c.get("requests"),
                                       limits=c.get("limits"))
                          for i, c in enumerate(containers)),
               resources=PodResources.of(requests=resources.get("requests"),
                                         limits=resources.get("limits")))


@pytest.mark.parametrize(("fix", "resources", "containers", "requests", "limits"), [
    # limits only: cpu and memory requested at the containers' requests, not the limits
    (False, {"limits": {"cpu": "2", "memory": "2Gi"}},
     [{"requests": {"cpu": "500m", "memory": "256Mi"}}], {"cpu": "500m", "memory": "256Mi"},
     {"cpu": "2", "memory": "2Gi"}),
    # requests only: nothing completed before 1.37
    (False, {"requests": {"cpu": "300m"}}, [{"limits": {"cpu": "100m"}},
                                            {"limits": {"cpu": "200m"}}],
     {"cpu": "300m"}, {}),
    # 1.37: memory requested at the containers' requests, cpu limited at the containers'
    (True, {"requests": {"cpu": "300m"}},
     [{"requests": {"memory": "64Mi"}, "limits": {"cpu": "100m"}},
      {"limits": {"cpu": "200m", "memory": "64Mi"}}],
     {"cpu": "300m", "memory": "128Mi"}, {"cpu": "300m"}),
    # hugepages the containers limit become a pod-level limit, then a request
    (False, {"limits": {"cpu": "1"}}, [{"limits": {"hugepages-2Mi": "4Mi", "cpu": "1",
                                                   "memory": "1Gi"}}],
     {"cpu": "1", "memory": "1Gi", "hugepages-2Mi": "4Mi"},
     {"cpu": "1", "hugepages-2Mi": "4Mi"}),
])
def test_pod_level_resources_are_completed_as_the_api_server_does(
        fix: bool, resources: dict[str, dict[str, str]],
        containers: list[dict[str, dict[str, str]]], requests: dict[str, str],
        limits: dict[str, str]) -> None:
    from numaspec.node.admission import default_pod_level_resources
    from numaspec.node.quantity import parse_quantity

    pod = _pod_level_pod(resources, containers)
    assert pod.resources is not None
    done = default_pod_level_resources(pod, pod.resources, fix=fix)
    assert dict(done.requests) == {k: parse_quantity(v) for k, v in requests.items()}
    assert dict(done.limits) == {k: parse_quantity(v) for k, v in limits.items()}
