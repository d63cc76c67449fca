"""QOS-1, QOS-2: QoS classes.  The cases below were also answered by kubelet v1.30.14's
ComputePodQOS with the same classes."""

from __future__ import annotations

from fractions import Fraction

import pytest

from numaspec.errors import InvalidQuantityError
from numaspec.pods import Container, Pod, QOSClass, parse_resources, qos_class


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
