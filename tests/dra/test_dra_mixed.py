"""The mixed pod (spec chapter dra.md, DRA-11 to DRA-14; operators.md, OPS-11; kubelet-config.md,
KCONF-11): a pod with exclusive CPUs, device-plugin devices and DRA claims, answered through the
``mixed`` operation and by ``numaspec explain --dra`` from YAML; the importer's refusals; the
drivers' attributes; and a mutant that proves the mixed vectors can fail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from numaspec.conformance.cases.judges import compare
from numaspec.conformance.cases.vectors import instances, load_vectors
from numaspec.conformance.cli import main
from numaspec.dra import mixed_pod
from numaspec.protocols.adapter_protocol import reference_result
from numaspec_tools import FIXTURES

MIXED = FIXTURES / "operator" / "dra-mixed"


def _explain(*extra: str, pod: Path | None = None, dra: Path | None = None) -> list[str]:
    return ["explain", "--machine", str(MIXED / "machine.json"),
            "--kubelet-config", str(MIXED / "kubelet-config.yaml"),
            "--node", str(MIXED / "node.yaml"), "--pod", str(pod or MIXED / "pod.yaml"),
            "--dra", str(dra or MIXED / "dra.yaml"), *extra]


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(args)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _pairs(container: dict[str, Any]) -> dict[tuple[str, str], tuple[str, str, str]]:
    return {(p["first"], p["second"]): (p["aligned_by"], p["rule"], p["as_placed"])
            for p in container["pairs"]}


# --- explain from YAML (OPS-11, KCONF-11) ------------------------------------------------------


def test_explain_answers_a_mixed_pod_from_yaml(capsys: pytest.CaptureFixture[str]) -> None:
    """DRA-12: single-numa-node put the CPUs and the VF on NUMA 0; the claim template's
    constraint put the GPU and the NIC under one root on NUMA 1; nothing aligns the groups."""
    status, out, err = _run([*_explain(), "--json"], capsys)
    assert (status, err) == (0, "")
    answer = json.loads(out)
    dra = answer["dra"]
    assert (dra["release"], dra["node"], dra["scheduled"]) == ("1.35", "node-a", True)
    assert dra["claims"] == ["gpu-nic: a new claim from ResourceClaimTemplate "
                             "default/gpu-nic-aligned"]
    (container,) = dra["containers"]
    assert [(p["name"], p["numa"]) for p in container["placed"]] == [
        ("cpus", [0]), ("intel.com/sriov_vf", [0]), ("claim gpu-nic/gpu", [1]),
        ("claim gpu-nic/nic", [1])]
    pairs = _pairs(container)
    assert pairs[("cpus", "intel.com/sriov_vf")] == ("topology-manager", "ADMIT-1",
                                                     "one NUMA node")
    assert pairs[("cpus", "claim gpu-nic/gpu")] == ("", "DEV-8", "apart")
    assert pairs[("claim gpu-nic/gpu", "claim gpu-nic/nic")] == (
        "matchAttribute resource.kubernetes.io/pcieRoot", "DRA-6", "one NUMA node")
    assert answer["notes"] == []  # the DEV-8 note gives way to the DRA part
    status, out, _ = _run(_explain(), capsys)
    assert status == 0
    assert "nothing aligns 4 of its 6 pairs, and 4 of those are not on one NUMA node" in out
    assert "nothing (DEV-8): the Topology Manager does not see DRA devices" in out


def test_an_unschedulable_claim_says_the_pod_never_reaches_the_node(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """DRA-11: another pod's allocated claim holds both GPUs: the scheduler does not place the
    pod here; the admission is still shown, and the exit status is 1."""
    taken = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "other", "namespace": "team-b"},
             "spec": {"devices": {"requests": []}},
             "status": {"allocation": {"devices": {"results": [
                 {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-a",
                  "device": f"gpu-{i}"} for i in range(2)]}}}}
    extra = tmp_path / "taken.json"
    extra.write_text(json.dumps(taken), encoding="utf-8")
    status, out, err = _run([*_explain("--dra", str(extra)), "--json"], capsys)
    assert (status, err) == (1, "")
    answer = json.loads(out)
    assert answer["dra"]["scheduled"] is False
    assert answer["dra"]["allocation"] == {"outcome": "unschedulable",
                                           "variant": "incubating"}
    assert answer["decision"]["admitted"] is True
    assert answer["notes"][0].startswith("the scheduler would not place this pod on this "
                                         "node")


def test_a_device_allocated_with_admin_access_is_not_in_use(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """DRA-11: the scheduler does not count a device allocated with admin access as
    allocated: a monitoring claim on one of the two GPUs leaves the pod schedulable."""
    taken = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "other", "namespace": "team-b"},
             "spec": {"devices": {"requests": []}},
             "status": {"allocation": {"devices": {"results": [
                 {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-a",
                  "device": f"gpu-{i}", **({"adminAccess": True} if i == 0 else {})}
                 for i in range(2)]}}}}
    extra = tmp_path / "taken.json"
    extra.write_text(json.dumps(taken), encoding="utf-8")
    status, out, err = _run([*_explain("--dra", str(extra)), "--json"], capsys)
    assert (status, err) == (0, "")
    answer = json.loads(out)
    assert answer["dra"]["scheduled"] is True
    devices = [d["device"] for c in answer["dra"]["allocation"]["claims"]
               for d in c["devices"]]
    assert "gpu-1" not in devices
    assert "gpu-0" in devices


def test_an_allocated_claim_of_the_pod_keeps_its_devices(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """DRA-11: a pod whose claim (made from the template, named in its status) is allocated
    already: nothing is asked of the allocator, the devices are the claim's."""
    pod = tmp_path / "pod.yaml"
    pod.write_text((MIXED / "pod.yaml").read_text("utf-8") + (
        "status:\n  resourceClaimStatuses:\n  - {name: gpu-nic, resourceClaimName: "
        "trainer-gpu-nic-x1}\n"), encoding="utf-8")
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "trainer-gpu-nic-x1", "namespace": "default"},
             "spec": {"devices": {"requests": [
                 {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
             "status": {"allocation": {"devices": {"results": [
                 {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-a",
                  "device": "gpu-1"}]}}}}
    extra = tmp_path / "claim.json"
    extra.write_text(json.dumps(claim), encoding="utf-8")
    status, out, _ = _run([*_explain("--dra", str(extra), pod=pod), "--json"], capsys)
    assert status == 0
    dra = json.loads(out)["dra"]
    assert dra["asked"] == []
    assert dra["allocation"] == {"outcome": "allocated", "claims": [],
                                 "variant": "incubating"}
    assert dra["claims"] == ["gpu-nic: ResourceClaim default/trainer-gpu-nic-x1, allocated "
                             "already"]
    placed = dra["containers"][0]["placed"]
    assert placed[-1] == {"name": "claim gpu-nic/gpu", "by": "dra", "numa": [0],
                          "items": ["gpu.nvidia.com/node-a/gpu-1"], "pcie_roots": ["pci0000:00"]}


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.replace("apiVersion: resource.k8s.io/v1\n  kind: DeviceClass",
                         "apiVersion: resource.k8s.io/v1beta1\n  kind: DeviceClass", 1),
     "items[0].apiVersion: DeviceClass of apiVersion 'resource.k8s.io/v1beta1': only "
     "resource.k8s.io/v1 is read"),
    (lambda t: t.replace("kind: ResourceClaimTemplate", "kind: ConfigMap"),
     "items[4].kind: kind 'ConfigMap' is not a DRA object"),
    (lambda t: t.replace("name: gpu-nic-aligned", "name: other-template"),
     "pod.yaml: the pod's claim 'gpu-nic' is made from ResourceClaimTemplate "
     "default/gpu-nic-aligned, which no --dra file holds"),
    (lambda t: t.replace("resourceSliceCount: 1}\n    devices:\n    - name: gpu-0",
                         "resourceSliceCount: 1}\n    devices:\n    - name: gpu-0\n"
                         "      allowMultipleAllocations: true", 1),
     "dra.yaml: items[2].spec.devices[0].allowMultipleAllocations: consumable "
     "capacity before 1.36 is outside the chapter's scope (DRA-20)"),
    (lambda t: t + "  - {", "not YAML at line"),
])
def test_bad_dra_files_are_one_line_naming_the_object(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, message: str) -> None:
    """KCONF-11: every refusal is one line and exit status 2, naming the file and object."""
    bad = tmp_path / "dra.yaml"
    bad.write_text(edit((MIXED / "dra.yaml").read_text("utf-8")), encoding="utf-8")
    status, out, err = _run(_explain(dra=bad), capsys)
    assert (status, out) == (2, "")
    assert err.count("\n") == 1, err
    assert message in err, err


def test_the_node_is_named_or_found_from_the_slices(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """KCONF-11: without --node the slices name the node; when they name two, --node is
    asked for; --dra-release goes with --dra, and a release the allocator is not modelled for
    is named."""
    args = [a for a in _explain() if a not in ("--node", str(MIXED / "node.yaml"))]
    status, out, _ = _run([*args, "--kubelet-version", "1.36.1", "--json"], capsys)
    assert status == 0
    assert json.loads(out)["dra"]["node"] == "node-a"
    other = tmp_path / "dra.yaml"
    other.write_text((MIXED / "dra.yaml").read_text("utf-8").replace(
        "driver: dra.net\n    nodeName: node-a", "driver: dra.net\n    nodeName: node-b"),
        encoding="utf-8")
    status, _, err = _run([*[a if a != str(MIXED / "dra.yaml") else str(other) for a in args],
                           "--kubelet-version", "1.36.1"], capsys)
    assert status == 2
    assert "--node: which node is this?" in err
    assert "(node-a, node-b)" in err
    status, _, err = _run([*_explain(), "--dra-release", "1.32"], capsys)
    assert status == 2
    assert "--dra-release: the scheduler's DRA allocator is modelled for 1.33, 1.34, 1.35, " \
           "1.36, 1.37, 1.38, not 1.32" in err
    plain = [a for a in _explain() if a not in ("--dra", str(MIXED / "dra.yaml"))]
    status, _, err = _run([*plain, "--dra-release", "1.35"], capsys)
    assert status == 2
    assert "--dra-release goes with --dra FILE" in err


# --- the mixed operation (DRA-13) --------------------------------------------------------------


def _mixed_vector(vector_id: str) -> Any:
    return next(v for v in load_vectors() if v.id == vector_id)


@pytest.mark.parametrize(("change", "where"), [
    (lambda c: {**c, "extra": 1}, "extra"),
    (lambda c: {**c, "uses": {"nobody": []}}, "uses.nobody"),
    (lambda c: {**c, "uses": {"app": [{"claim": "missing"}]}}, "uses.app[0].claim"),
    (lambda c: {**c, "uses": {"app": [{"claim": "gpu-nic", "request": "tpu"}]}},
     "uses.app[0].request"),
    (lambda c: {**c, "dra": {**c["dra"], "claims": []}}, "dra.claims"),
    (lambda c: {**c, "dra": {**c["dra"], "release": "1.30"}}, "dra.release"),
    (lambda c: {**c, "claims": [*c["claims"], c["claims"][0]]}, "claims[1].name"),
    (lambda c: {**c, "steps": [{"op": "admit", "pod": c["pod"]}]}, "steps[0].op"),
])
def test_a_bad_mixed_case_is_a_typed_error_naming_the_field(change: Any, where: str) -> None:
    """DRA-13: never a traceback; the field is named."""
    case = _mixed_vector("mixed-single-numa-node-does-not-align-the-dra-pair").case
    answer = reference_result("mixed", change(case))
    assert "error" in answer, answer
    assert answer["error"]["where"] == where, answer


def test_the_mixed_vectors_fail_on_a_mutant_that_aligns_dra_with_the_topology_manager(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """DRA-12: a model that says the Topology Manager aligns a DRA device with the CPUs (what
    users assume, kubernetes/website#56232) disagrees with the mixed vectors."""
    real = mixed_pod._pair

    def believes_in_alignment(a: Any, b: Any, tm_rule: str, claims: Any) -> Any:
        pair = real(a, b, tm_rule, claims)
        return pair if pair.rule != "DEV-8" else mixed_pod.Pair(
            pair.first, pair.second, "topology-manager", tm_rule, pair.as_placed)

    monkeypatch.setattr(mixed_pod, "_pair", believes_in_alignment)
    failed = []
    for vector in load_vectors():
        if vector.op != "mixed":
            continue
        for instance in instances(vector):
            if compare("mixed", instance.case, instance.expected,
                       reference_result("mixed", instance.case)):
                failed.append(instance.id)
    assert "mixed-single-numa-node-does-not-align-the-dra-pair" in failed
    assert len(failed) >= 5 * 6


# --- drivers' attributes (DRA-14) ---------------------------------------------------------------


def test_the_numa_attributes_read_first_found_first_and_never_negative() -> None:
    """DRA-14: the standard attribute first; the SR-IOV driver's -1 says nothing."""
    from numaspec.dra.objects import Device

    both = Device("d", {"resource.kubernetes.io/numaNode": ("int", 1), "numaNode": ("int", 0)},
                  {})
    assert mixed_pod.device_numa(both, "dra.net") == 1
    unknown = Device("vf", {"dra.net/numaNode": ("int", -1)}, {})
    assert mixed_pod.device_numa(unknown, "sriovnetwork.k8snetworkplumbingwg.io") is None
    cpu = Device("cpudev004", {"numaNodeID": ("int", 1)}, {})
    assert mixed_pod.device_numa(cpu, "dra.cpu") == 1  # unqualified, under the driver's domain
    assert mixed_pod.device_numa(cpu, "other.driver") is None


def test_dra_driver_cpu_grouped_mode_is_answered_with_shares() -> None:
    """DRA-14, DRA-20: grouped mode's devices allow multiple allocations; with
    ConsumableCapacity each request takes a share, and one that asks no capacity consumes
    the whole of it; before 1.36 they are refused by name."""
    case = next(v for v in load_vectors()
                if v.id == "drivers-dra-cpu-individual-same-socket").case
    grouped = json.loads(json.dumps(case))
    grouped["features"] = sorted({*grouped.get("features", []), "ConsumableCapacity"})
    first = reference_result("allocate", case)["claims"][0]["devices"][0]["device"]
    index, device = next((i, d) for i, d in enumerate(grouped["slices"][0]["spec"]["devices"])
                         if d["name"] == first)
    device["allowMultipleAllocations"] = True
    device["capacity"] = {"dra.cpu/cpu": {"value": "4"}}
    answer = reference_result("allocate", grouped)
    assert answer["outcome"] == "allocated", answer
    shares = [d for claim in answer["claims"] for d in claim["devices"]
              if d["device"] == device["name"]]
    assert shares == [{"request": "cpus-a", "driver": "dra.cpu", "pool": "node-a",
                       "device": device["name"], "shared": True,
                       "consumedCapacity": {"dra.cpu/cpu": "4"}}]
    grouped["release"] = "1.35"
    grouped["features"] = []
    answer = reference_result("allocate", grouped)
    assert answer["error"]["kind"] == "not-modelled"
    assert answer["error"]["where"] == \
        f"slices[0].spec.devices[{index}].allowMultipleAllocations"


def test_every_driver_scenario_cites_its_source() -> None:
    """DRA-14: each worked scenario names the driver's repository and the tag or commit."""
    scenarios = [v for v in load_vectors() if v.id.startswith("drivers-")]
    assert len(scenarios) >= 7
    for vector in scenarios:
        assert any(repo in vector.notes for repo in (
            "kubernetes-sigs/dranet", "intel/intel-resource-drivers-for-kubernetes",
            "kubernetes-sigs/dra-driver-cpu", "k8snetworkplumbingwg/dra-driver-sriov")), vector.id
