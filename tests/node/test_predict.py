"""The scheduler's view and the predict operation (spec chapter predict.md).

NRT-1..NRT-10: what the resource-topology-exporter would publish for a numaspec node, fact by
fact.  PRED-1..PRED-4: the case a scheduler-side implementation is sent (never the session),
the expected answer (the node's admission), the claims (``node_fit``) and the verdicts,
checked through the runner with the fixture scheduler tools/numaspec_tools/adapters/nrt_scheduler.py
and its two mutants (one that says every pod fits, which must fail; one that refuses every
pod, which is conservative and must not).

Rules checked here: NRT-1, NRT-2, NRT-3, NRT-4, NRT-5, NRT-6, NRT-7, NRT-8, NRT-9, NRT-10,
PRED-1, PRED-2, PRED-3, PRED-4.
"""

from __future__ import annotations

import copy
import io
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from numaspec.conformance.cases.predictions import check_answer, judge
from numaspec.conformance.implementations.claims import Claims, PredictClaims
from numaspec.conformance.running.reports import read_report
from numaspec.conformance.running.runner import RunConfig, run_conformance
from numaspec.errors import InvalidFieldError, NotModelledError
from numaspec.node.predict import node_resource_topology
from numaspec.protocols.adapter_protocol import (
    predict_case,
    reference_predict,
    reference_result,
    scheduler_case,
    sent_case,
)
from numaspec.protocols.node_protocol import decode_node
from numaspec_tools import ADAPTERS

SCHEDULER = ADAPTERS / "nrt_scheduler.py"


def machine(**over: Any) -> dict[str, Any]:
    nodes = [{"id": n, "memory": "8Gi", "hugepages": {"hugepages-2Mi": 256 * (1 - n)},
              "distances": [10 if j == n else 21 for j in range(2)],
              "cores": [{"socket": 0, "threads": [n * 4 + c]} for c in range(4)]}
             for n in range(2)]
    return {"numaNodes": nodes, "devices": {"example.com/gpu": [
        {"id": "g0", "numa": [0]}, {"id": "g01", "numa": [0, 1]}, {"id": "gx", "numa": []},
        {"id": "sick", "numa": [1], "healthy": False}]}, **over}


def config(**over: Any) -> dict[str, Any]:
    return {"topologyManagerPolicy": "single-numa-node", "cpuManagerPolicy": "static",
            "reservedSystemCPUs": "7", "memoryManagerPolicy": "Static",
            "systemReserved": {"memory": "412Mi"},
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "512Mi"}}], **over}


def create(version: str = "1.33", m: dict[str, Any] | None = None, **over: Any
           ) -> dict[str, Any]:
    return {"op": "create", "node": {"kubeletVersion": version,
                                     "machine": m or machine(), "config": config(**over)}}


def guaranteed(cpu: str, memory: str = "256Mi", **more: str) -> dict[str, Any]:
    limits = {"cpu": cpu, "memory": memory, **more}
    return {"requests": dict(limits), "limits": dict(limits)}


def pod(uid: str, *apps: dict[str, Any], inits: tuple[tuple[dict[str, Any], bool], ...] = ()
        ) -> dict[str, Any]:
    body: dict[str, Any] = {"uid": uid, "containers": [
        {"name": f"app{i}", "resources": r} for i, r in enumerate(apps)]}
    if inits:
        body["initContainers"] = [{"name": f"init{i}", "resources": r,
                                   **({"restartPolicy": "Always"} if side else {})}
                                  for i, (r, side) in enumerate(inits)]
    return body


def zones(case: dict[str, Any]) -> dict[str, dict[str, tuple[str, str, str]]]:
    """zone name → resource → (capacity, allocatable, available)."""
    return {z["name"]: {r["name"]: (r["capacity"], r["allocatable"], r["available"])
                        for r in z["resources"]} for z in case["nrt"]["zones"]}


def view(*steps: dict[str, Any]) -> dict[str, Any]:
    return predict_case({"steps": list(steps), "pod": pod("asked", guaranteed("1"))})


# --- NRT-1..NRT-10 ---------------------------------------------------------------------------


def test_nrt_1_zones_names_types_and_costs() -> None:
    case = view(create())
    nrt = case["nrt"]
    assert nrt["kind"] == "NodeResourceTopology"
    assert nrt["metadata"]["name"] == case["node"]["name"]
    assert [(z["name"], z["type"]) for z in nrt["zones"]] == [("node-0", "Node"),
                                                            ("node-1", "Node")]
    assert nrt["zones"][1]["costs"] == [{"name": "node-0", "value": 21},
                                        {"name": "node-1", "value": 10}]


def test_nrt_1_other_numa_ids_are_not_modelled() -> None:
    m = machine(devices={})
    m["numaNodes"][1]["id"] = 3
    m["numaNodes"][0]["distances"] = m["numaNodes"][1]["distances"] = None
    node = decode_node(create(m=m)["node"])
    with pytest.raises(NotModelledError, match="NRT-1"):
        node_resource_topology(node)


def test_nrt_2_3_allocatable_cpus_and_memory() -> None:
    got = zones(view(create()))
    assert got["node-0"]["cpu"][1:] == ("4", "4")
    assert got["node-1"]["cpu"][1:] == ("3", "3")
    # NRT-3: NUMA 0 has 8Gi less its 512Mi hugepage pool less its 512Mi reservation.
    assert got["node-0"]["memory"] == (str(8 << 30), str((8 << 30) - (1 << 30)),
                                       str((8 << 30) - (1 << 30)))
    assert got["node-0"]["hugepages-2Mi"][1] == str(512 << 20)
    assert "hugepages-2Mi" not in got["node-1"]  # Allocatable 0: left out


def test_nrt_2_3_5_none_policies_list_no_cpu_and_no_memory() -> None:
    step = create(m=machine(devices={}), cpuManagerPolicy="none", memoryManagerPolicy="None")
    for key in ("reservedSystemCPUs", "reservedMemory", "systemReserved"):
        step["node"]["config"].pop(key)
    got = zones(view(step))
    # NRT-5: nothing allocatable at all: cpu at 0, capacity the logical CPUs.
    assert got == {"node-0": {"cpu": ("4", "0", "0")}, "node-1": {"cpu": ("4", "0", "0")}}


def test_nrt_4_devices_healthy_by_topology() -> None:
    got = zones(view(create()))
    # g0 on 0, g01 on both (counted on each), gx without topology nowhere, sick not at all.
    assert got["node-0"]["example.com/gpu"] == ("2", "2", "2")
    assert got["node-1"]["example.com/gpu"] == ("1", "1", "1")


def test_nrt_6_7_used_by_app_containers_and_from_1_30_sidecars() -> None:
    steps = [create("1.30"), {"op": "admit", "pod": pod("full0", guaranteed("4"))},
             {"op": "admit", "pod": pod("a", guaranteed("1"), inits=((guaranteed("2"), True),))}]
    assert zones(view(*steps))["node-1"]["cpu"][2] == "0"
    steps[0] = create("1.29")
    assert zones(view(*steps))["node-1"]["cpu"][2] == "2"  # 1.29 lists app containers only


def test_nrt_6_init_containers_are_never_counted() -> None:
    steps = [create(), {"op": "admit", "pod": pod("full0", guaranteed("4"))},
             {"op": "admit", "pod": pod("a", guaranteed("1"), inits=((guaranteed("3"), False),))}]
    case = view(*steps)
    assert zones(case)["node-1"]["cpu"][2] == "2"
    assert reference_predict({**case, "pod": pod("b", guaranteed("2"))})["fits"] is False


def test_nrt_6_memory_blocks_and_devices_are_counted_where_they_are() -> None:
    steps = [create(), {"op": "admit", "pod": pod("a", guaranteed("1", "1Gi",
                                                                  **{"example.com/gpu": "1"}))}]
    got = zones(view(*steps))
    assert got["node-0"]["memory"][2] == str((8 << 30) - (2 << 30))
    assert int(got["node-0"]["example.com/gpu"][2]) == 1


def test_nrt_8_capacity_is_never_below_allocatable() -> None:
    for zone in view(create())["nrt"]["zones"]:
        for r in zone["resources"]:
            assert int(r["capacity"]) >= int(r["allocatable"]) >= int(r["available"]) >= 0


def test_nrt_9_10_attributes_are_the_policy_and_scope_only() -> None:
    nrt = view(create(topologyManagerScope="pod"))["nrt"]
    assert nrt["attributes"] == [{"name": "topologyManagerScope", "value": "pod"},
                                 {"name": "topologyManagerPolicy",
                                  "value": "single-numa-node"}]
    assert "topologyPolicies" not in nrt


# --- PRED-1..PRED-4 --------------------------------------------------------------------------


def test_pred_1_the_sent_case_has_no_session() -> None:
    case = view(create())
    assert set(case) == {"kubelet_version", "steps", "nrt", "node", "pod"}
    assert set(sent_case("predict", case)) == {"kubelet_version", "nrt", "node", "pod"}
    assert scheduler_case(case) == sent_case("predict", case)
    assert case["node"]["allocatable"]["cpu"] == "7"
    assert case["kubelet_version"] == "1.33"


def test_pred_1_a_failing_step_is_a_bad_case_not_a_verdict() -> None:
    bad = {"op": "admit", "pod": {"uid": "x", "containers": [{"name": "c", "resources": {
        "limits": {"cpu": "-1"}}}]}}
    with pytest.raises(InvalidFieldError, match=r"step 1"):
        predict_case({"steps": [create(), bad], "pod": pod("b", guaranteed("1"))})
    answer = reference_result("predict", {"steps": [create(), bad], "pod": {}})
    assert set(answer) == {"error"}


def test_pred_2_the_answer_is_the_admission_and_the_session_is_unchanged() -> None:
    steps = [create(), {"op": "admit", "pod": pod("a", guaranteed("2"))}]
    case = predict_case({"steps": steps, "pod": pod("b", guaranteed("3"))})
    before = copy.deepcopy(case)
    assert reference_predict(case) == {"fits": True, "numa_nodes": {"app0": [1]}}
    assert case == before
    too_wide = reference_predict({**case, "pod": pod("c", guaranteed("4"))})
    assert too_wide["fits"] is False
    assert too_wide["reason"] == "TopologyAffinityError"


def test_pred_3_claims_node_fit_and_the_node_fields() -> None:
    claims = Claims.from_json({"predict": {"policies": ["single-numa-node"], "node_fit": False}})
    assert Claims.from_json(claims.to_json()) == claims
    case = {"steps": [create()], "pod": {}}
    assert claims.outside("predict", case, {"fits": False, "reason": "OutOfpods"}, ()) \
        is not None
    assert claims.outside("predict", case, {"fits": False, "reason": "TopologyAffinityError"},
                          ()) is None
    restricted = {"steps": [create(topologyManagerPolicy="restricted")], "pod": {}}
    assert "restricted" in str(claims.outside("predict", restricted, {"fits": True}, ()))
    assert PredictClaims().node_fit is True


@pytest.mark.parametrize(("expected", "actual", "verdict"), [
    ({"fits": True}, {"fits": True}, "passed"),
    ({"fits": False, "reason": "TopologyAffinityError"}, {"fits": True}, "failed"),
    ({"fits": True}, {"fits": False, "message": "cannot align container"}, "refused"),
    ({"fits": False, "reason": "TopologyAffinityError"}, {"fits": False}, "passed"),
    ({"fits": True}, {"fits": "yes"}, "failed"),
    ({"fits": True}, {"fits": True, "extra": 1}, "failed"),
])
def test_pred_4_verdicts(expected: dict[str, Any], actual: dict[str, Any], verdict: str
                         ) -> None:
    assert judge(expected, actual)[0] == verdict


def test_pred_4_a_placement_is_noted_not_judged() -> None:
    verdict, message = judge({"fits": True, "numa_nodes": {"c": [1]}},
                             {"fits": True, "numa_nodes": {"c": [0]}})
    assert verdict == "passed"
    assert message.startswith("misplaced")
    assert check_answer({"fits": True, "numa_nodes": {"c": [True]}}) is not None


def scheduler(*flags: str) -> str:
    return f"exec:{shlex.quote(sys.executable)} {shlex.quote(str(SCHEDULER))} {' '.join(flags)}"


SELECTION = ("predict-single-numa-admits", "predict-single-numa-rejects-what-fits-nowhere",
             "predict-init-cpus-invisible", "predict-fractional-cpu-refused",
             "predict-node-fit-out-of-pods", "predict-restricted-spanning", "P-PREDICT")


def run(tmp_path: Path, impl: str) -> tuple[int, dict[str, dict[str, Any]], str]:
    printed = io.StringIO()
    config = RunConfig(impl=impl, out=str(tmp_path / "out"), ids=SELECTION, timeout=20.0)
    status = run_conformance(config, stream=printed)
    _, records, _ = read_report(tmp_path / "out" / "report.jsonl")
    return status, {r["id"]: r for r in records}, printed.getvalue()


def test_pred_4_a_scheduler_through_the_runner(tmp_path: Path) -> None:
    status, records, printed = run(tmp_path, scheduler())
    verdicts = {k: (r["verdict"], r.get("skip_source", "")) for k, r in records.items()}
    assert verdicts == {
        "predict-single-numa-admits": ("passed", ""),
        "predict-single-numa-rejects-what-fits-nowhere": ("passed", ""),
        # NRT-6: the init container's CPUs are invisible, so the scheduler admits.
        "predict-init-cpus-invisible": ("failed", ""),
        "predict-fractional-cpu-refused": ("refused", ""),
        "predict-node-fit-out-of-pods": ("skipped", "not-claimed"),
        "predict-restricted-spanning": ("skipped", "not-claimed"),
        # P-PREDICT's fixed example is NRT-6's blind spot: a faithful NRT filter fails it.
        "P-PREDICT": ("failed", ""),
    }, printed
    assert status == 1
    for case_id in ("predict-init-cpus-invisible", "P-PREDICT"):
        assert "admits-what-kubelet-rejects" in records[case_id]["message"]
    assert "1 refused" in printed
    # PRED-1: what the scheduler was sent had no steps; the report keeps the session.
    assert "steps" in records["predict-init-cpus-invisible"]["case"]


def test_pred_4_the_mutant_that_always_fits_is_caught(tmp_path: Path) -> None:
    _, records, _ = run(tmp_path, scheduler("--bug", "always-fits"))
    assert records["P-PREDICT"]["verdict"] == "failed"
    assert "admits-what-kubelet-rejects" in records["P-PREDICT"]["message"]
    assert records["predict-single-numa-rejects-what-fits-nowhere"]["verdict"] == "failed"


def test_pred_4_refusing_everything_is_conservative_not_failing(tmp_path: Path) -> None:
    status, records, printed = run(tmp_path, scheduler("--bug", "never-fits"))
    assert records["predict-single-numa-admits"]["verdict"] == "refused"
    assert records["P-PREDICT"]["verdict"] == "passed"
    assert status == 0, printed


def test_the_predict_schema_accepts_what_the_reference_sends() -> None:
    import jsonschema

    from numaspec.conformance.implementations.strict import schema_registry

    validator = jsonschema.Draft202012Validator(
        {"$ref": "tag:numaspec,2026:predict#/$defs/case"}, registry=schema_registry())
    case = sent_case("predict", view(create()))
    assert not list(validator.iter_errors(case)), json.dumps(case)[:300]
