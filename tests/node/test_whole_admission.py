"""The whole admission: the API server's checks (ADMIT-7), the resource-fit handler after the
Topology Manager's (ADMIT-8, ADMIT-9), the node-allocatable start-up check (NODE-9), the gates
the node reads (NODE-10, NODE-11), and INV-10 (the admitted pods fit allocatable), shown
failing on every mutant in tools/numaspec_tools/mutants/whole_admission_mutants.py.  Texts are
kubelet's, from
pkg/kubelet/lifecycle/predicate.go and pkg/kubelet/cm/node_container_manager_linux.go of each
release."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from numaspec.conformance.properties.node_machine import (
    allocatable_violation,
    rejected_step_change,
)
from numaspec.conformance.properties.node_strategies import node_requests, pods
from numaspec.errors import InvalidFieldError, NodeStartupError
from numaspec.node.fit import format_quantity, pod_requests
from numaspec.protocols.node_protocol import NodeSession, decode_node, decode_pod
from numaspec_tools.mutants.whole_admission_mutants import WHOLE_ADMISSION_MUTATIONS, MutantSession

GI = 1 << 30


def _machine(cpus: int = 2, memory: str = "4Gi", **numa: Any) -> dict[str, Any]:
    return {"numaNodes": [{"id": 0, "memory": memory,
                           "cores": [{"socket": 0, "threads": [c]} for c in range(cpus)],
                           **numa}]}


def _node(version: str = "1.30", config: dict[str, Any] | None = None, **machine: Any
          ) -> dict[str, Any]:
    return {"kubeletVersion": version, "machine": _machine(**machine), "config": config or {}}


def _pod(uid: str, *containers: dict[str, Any], inits: tuple[dict[str, Any], ...] = ()
         ) -> dict[str, Any]:
    body: dict[str, Any] = {"uid": uid, "containers": list(containers)}
    if inits:
        body["initContainers"] = list(inits)
    return body


def _c(name: str = "c", requests: dict[str, str] | None = None,
       limits: dict[str, str] | None = None, restart: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "resources": {"requests": requests or {},
                                                        "limits": limits or {}}}
    if restart:
        out["restartPolicy"] = restart
    return out


# -- helpers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("amount", "binary", "text"), [
    (Fraction(2), False, "2"), (Fraction(3, 2), False, "1500m"), (Fraction(2000), False, "2k"),
    (Fraction(4 * GI), True, "4Gi"), (Fraction(4 * GI + 100 * (1 << 20)), True, "4196Mi"),
    (Fraction(1000), True, "1k"), (Fraction(1025), True, "1025"),
    (Fraction(-100 * (1 << 20)), True, "-100Mi"),
    (Fraction(1, 2000), False, "500u"), (Fraction(0), True, "0"),
])
def test_quantities_print_as_apimachinery_prints_them(amount: Fraction, binary: bool,
                                                       text: str) -> None:
    assert format_quantity(amount, binary=binary) == text


def test_pod_requests_follow_the_scheduler() -> None:
    """ADMIT-8: sidecars add up; an init container's use is its own plus the sidecars
    before it; each quantity is rounded up to a thousandth by the API server (QOS-3), then
    sums are exact, then rounded up."""
    pod = decode_pod(_pod("p", _c(requests={"cpu": "100m"}), inits=(
        _c("s", requests={"cpu": "500m"}, restart="Always"), _c("i", requests={"cpu": "1800m"}))))
    assert pod_requests(pod) == {"cpu": 2300}
    pod = decode_pod(_pod("p", _c(requests={"cpu": "100m"}), inits=(
        _c("i", requests={"cpu": "1800m"}), _c("s", requests={"cpu": "500m"}, restart="Always"))))
    assert pod_requests(pod) == {"cpu": 1800}
    pod = decode_pod(_pod("p", _c("a", requests={"cpu": "0.0005"}),
                          _c("b", requests={"cpu": "0.0005"})))
    assert pod_requests(pod) == {"cpu": 2}  # kubelet 1.30.14 says requested: 2


# -- ADMIT-8 / ADMIT-9 ----------------------------------------------------------------------------


def test_audit_example_is_out_of_cpu() -> None:
    """ADMIT-8: the audit's 3 CPUs + 64Gi on a 2-CPU / 4Gi node."""
    session = NodeSession()
    assert session.handle({"op": "create", "node": _node()}) == {"ok": True}
    answer = session.handle({"op": "admit", "pod": _pod(
        "p", _c(requests={"cpu": "3", "memory": "64Gi"}))})["decision"]
    assert (answer["admitted"], answer["reason"], answer["message"]) == (
        False, "OutOfcpu",
        "Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000")


def test_fit_rejection_frees_what_the_providers_allocated() -> None:
    """ADMIT-9: the CPU Manager assigned CPUs, then the fit handler refused: the state is as
    before the admit."""
    session = NodeSession()
    session.handle({"op": "create", "node": _node(
        config={"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}}, cpus=4,
        memory="2Gi")})
    before = session.handle({"op": "state"})
    answer = session.handle({"op": "admit", "pod": _pod(
        "p", _c(limits={"cpu": "2", "memory": "4Gi"}))})["decision"]
    assert answer["reason"] == "OutOfmemory"
    assert answer["containers"] == []
    assert session.handle({"op": "state"}) == before


def test_max_pods() -> None:
    """ADMIT-8: the pod count comes first."""
    session = NodeSession()
    session.handle({"op": "create", "node": _node(config={"maxPods": 1})})
    session.handle({"op": "admit", "pod": _pod("a", _c())})
    answer = session.handle({"op": "admit", "pod": _pod("b", _c(requests={"cpu": "9"}))})
    assert answer["decision"]["message"] == (
        "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1")


# -- ADMIT-7 --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("container", "where", "text"), [
    (_c(requests={"cpu": "2"}, limits={"cpu": "1"}), "requests.cpu",
     "must be less than or equal to cpu limit of 1"),
    (_c(limits={"cpu": "1", "hugepages-2Mi": "3Mi"}), "limits.hugepages-2Mi",
     "is not positive integer multiple of hugepages-2Mi"),
    (_c(requests={"cpu": "1", "hugepages-2Mi": "2Mi"}), "limits.hugepages-2Mi",
     "Limit must be set for non overcommitable resources"),
    (_c(requests={"memory": "1Gi", "hugepages-2Mi": "2Mi"},
        limits={"memory": "1Gi", "hugepages-2Mi": "4Mi"}), "requests.hugepages-2Mi",
     "must be equal to hugepages-2Mi limit of 4Mi"),
    (_c(limits={"hugepages-2Mi": "2Mi"}), "resources", "HugePages require cpu or memory"),
])
def test_api_validation(container: dict[str, Any], where: str, text: str) -> None:
    """ADMIT-7: a pod the API server refuses is a typed error naming the field."""
    session = NodeSession()
    session.handle({"op": "create", "node": _node(hugepages={"hugepages-2Mi": 8})})
    answer = session.answer(json.dumps({"op": "admit", "pod": _pod("p", container)}))
    assert answer["error"]["kind"] == InvalidFieldError.kind
    assert answer["error"]["where"].endswith(where)
    assert text in answer["error"]["message"]
    assert session.handle({"op": "state"})["state"]["pods"] == []


# -- NODE-9..NODE-11 ----------------------------------------------------------------------------


_CPU = "{{2000 -3} {<nil>}  DecimalSI}"


@pytest.mark.parametrize(("version", "text"), [
    ("1.29", 'invalid Node Allocatable configuration. Resource "cpu" has an allocatable of '
             '{{100 0} {<nil>}  DecimalSI}, capacity of {{-98000 -3} {<nil>}  DecimalSI}'),
    ("1.30", 'invalid Node Allocatable configuration. Resource "cpu" has a reservation of '
             '{{100 0} {<nil>}  DecimalSI} but capacity of ' + _CPU + '. Expected capacity >= '
             'reservation.'),
    ("1.37", 'invalid Node Allocatable configuration. Resource "cpu" has a reservation of '
             '{{100000 -3} {<nil>}  DecimalSI} but capacity of ' + _CPU + '. Expected '
             'capacity >= reservation.'),
])
def test_reservation_above_capacity_stops_kubelet(version: str, text: str) -> None:
    """NODE-9: kubeReserved cpu 100 on 2 CPUs, in each release's words, the quantities as Go
    prints their struct (finding 17)."""
    with pytest.raises(NodeStartupError) as caught:
        decode_node(_node(version, {"kubeReserved": {"cpu": "100"}}))
    assert caught.value.kubelet_message == text


def test_memory_reservation_text_sums_the_eviction_threshold() -> None:
    """NODE-9: 4Gi + the default 100Mi, in BinarySI."""
    with pytest.raises(NodeStartupError) as caught:
        decode_node(_node("1.33", {"kubeReserved": {"memory": "4Gi"}}))
    assert 'Resource "memory" has a reservation of 4196Mi but capacity of 4Gi' in \
        caught.value.message


def test_cpu_options_gate_off() -> None:
    """NODE-10: options with CPUManagerPolicyOptions off, before the Topology Manager."""
    with pytest.raises(NodeStartupError) as caught:
        decode_node(_node("1.30", {
            "cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"},
            "cpuManagerPolicyOptions": {"full-pcpus-only": "true"},
            "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"},
            "featureGates": {"CPUManagerPolicyOptions": False,
                             "TopologyManagerPolicyOptions": False}}))
    assert caught.value.kubelet_message == (
        'CPU Manager policy options map[full-pcpus-only:true] require feature gates '
        '"CPUManager", "CPUManagerPolicyOptions" enabled')


def test_memory_manager_gate_off_builds_no_memory_manager() -> None:
    """NODE-11: no reservedMemory needed, no Memory Manager state."""
    node = decode_node(_node("1.30", {"memoryManagerPolicy": "Static",
                                      "featureGates": {"MemoryManager": False}}))
    assert node.memory is None


# -- INV-10 and the mutants ---------------------------------------------------------------------


def run_session(session: NodeSession, data: st.DataObject) -> None:
    """Admit and remove drawn pods; after every step INV-10 holds, and a refused admit
    leaves the state as it was (ADMIT-6, ADMIT-9)."""
    request = data.draw(node_requests(), label="create")
    if data.draw(st.integers(0, 2), label="maxPods 1") == 0:
        # ADMIT-8's pod count bites only when the node's maxPods is within a session's reach
        # (most drawn pods are refused): node_requests draws a small one rarely, and with it
        # alone 150 examples of the pods-not-counted mutant missed in 9 of 12 seeds.
        request["node"]["config"]["maxPods"] = 1
    answer = session.answer(json.dumps(request))
    if "ok" not in answer:
        return
    devices = sorted(request["node"]["machine"].get("devices", {}))
    live: dict[str, dict[str, Any]] = {}
    for step in range(data.draw(st.integers(1, 8), label="steps")):
        if live and data.draw(st.integers(0, 3), label="remove") == 0:
            uid = data.draw(st.sampled_from(sorted(live)), label="uid")
            session.handle({"op": "remove", "uid": uid})
            del live[uid]
            continue
        pod = data.draw(pods(f"p{step}", devices), label="pod")
        before = session.handle({"op": "state"})
        decision = session.handle({"op": "admit", "pod": pod})["decision"]
        if decision["admitted"]:
            live[pod["uid"]] = pod
        else:
            problem = rejected_step_change(before, session.handle({"op": "state"}),
                                           refused_admission=True)
            assert problem is None, f"ADMIT-9: refused ({decision['reason']}) but {problem}"
        problem = allocatable_violation(session, live)
        assert problem is None, problem


_SETTINGS = settings(max_examples=150, deadline=None, database=None, derandomize=True,
                     suppress_health_check=list(HealthCheck))


@_SETTINGS
@given(st.data())
def test_reference_keeps_inv_10(data: st.DataObject) -> None:
    run_session(NodeSession(), data)


#: Whether a mutant is caught must be a fixed fact: ``derandomize`` seeds from the test's
#: source text, so an unrelated edit of this file once changed the examples and the
#: pods-not-counted mutant escaped (it is caught in about 10 of 12 seeds).  One seed instead,
#: as tests/suite/power/test_mutants.py's KILL_SEED.
KILL_SEED = 20261121


@pytest.mark.parametrize("mutation", sorted(WHOLE_ADMISSION_MUTATIONS))
@pytest.mark.slow
def test_whole_admission_mutant_is_caught(mutation: str) -> None:
    @seed(KILL_SEED)
    @settings(_SETTINGS, derandomize=False, max_examples=400)  # issue 33: wider draws, more needed
    @given(st.data())
    def property_(data: st.DataObject) -> None:
        run_session(MutantSession(mutation), data)

    # Hypothesis may shrink to several distinct failures and raise them as one group: each
    # must be the mutant caught by INV-10 or ADMIT-9.
    with pytest.raises((AssertionError, ExceptionGroup)) as caught:
        property_()
    found = caught.value.exceptions if isinstance(caught.value, ExceptionGroup) else (
        caught.value,)
    assert all(isinstance(e, AssertionError) and re.search(r"INV-10|ADMIT-9", str(e))
               for e in found), found
