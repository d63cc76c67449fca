"""``numaspec allocate`` (OPS-17, DRA-15): the scheduler's DRA allocation of claims on a node
from kubectl's YAML, the allocator its release's default gates choose (DRA-8), the verdict
first, why each device and why none; bad input is one line and exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from numaspec_tools.testing.operator_cli import OPERATOR, run, run_json

CLUSTER = OPERATOR / "dra-allocate" / "cluster.yaml"


def _devices(answer: dict[str, object]) -> list[str]:
    claims = answer["claims"]
    assert isinstance(claims, list)
    return [d["device"] for c in claims for d in c["devices"]]


@pytest.mark.parametrize(("release", "variant", "gpu", "nic"), [
    # incubating sorts pools by name: node-a-a first; gpu-0's monitor claim has admin access
    # 1.38's default gates run stable, which sorts pools too from 1.38
    ("1.38", "stable", "gpu.example.com/node-a-a/gpu-0", "nic.example.com/node-a/nic-1"),
    ("1.37", "incubating", "gpu.example.com/node-a-a/gpu-0", "nic.example.com/node-a/nic-1"),
    ("1.36", "incubating", "gpu.example.com/node-a-a/gpu-0", "nic.example.com/node-a/nic-1"),
    # experimental at 1.34 searches pools as listed (their order is not defined upstream)
    ("1.34", "experimental", "gpu.example.com/node-a-b/gpu-2",
     "nic.example.com/node-a/nic-0"),
    ("1.33", "single", "gpu.example.com/node-a-b/gpu-2", "nic.example.com/node-a/nic-0"),
])
def test_the_release_chooses_the_allocator_and_the_device(
        release: str, variant: str, gpu: str, nic: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    status, answer = run_json(["allocate", str(CLUSTER), "--release", release], capsys)
    assert status == 0
    assert answer["outcome"] == "allocated"
    assert answer["variant"] == variant
    assert [c["claim"] for c in answer["claims"]] == ["default/pair"]
    assert _devices(answer) == [gpu, nic]
    assert [c["claim"] for c in answer["already_allocated"]] == []


def test_the_verdict_comes_first_and_each_pick_says_why(
        capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(["allocate", str(CLUSTER), "--release", "1.37"], capsys)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == ("ALLOCATED 2 devices to 1 claim on node node-a (Kubernetes 1.37 "
                        "scheduler, incubating allocator)")
    assert ("  pools in the order searched: gpu.example.com/node-a-a, "
            "gpu.example.com/node-a-b, nic.example.com/node-a") in lines
    assert ("      passed over nic.example.com/node-a/nic-0: its "
            "resource.kubernetes.io/pcieRoot is pci0000:80, the claim's devices taken before "
            "share pci0000:00") in lines
    # a device of another class is counted, not listed
    assert not any("passed over gpu.example.com" in line and "nic" in line.split(":")[0]
                   for line in lines)


def test_a_device_given_back_is_said_to_fit(capsys: pytest.CaptureFixture[str]) -> None:
    """DRA-15: gpu-0 is taken first and given back (gpu-1, its only partner on root
    pci0000:00, is in use); the second GPU is passed over it for the root the first fixed."""
    status, answer = run_json(["allocate", str(CLUSTER), "--release", "1.37",
                               "--claim", "default/two-on-one-root"], capsys)
    assert status == 0
    first, second = answer["claims"][0]["devices"]
    assert [first["device"], second["device"]] == ["gpu.example.com/node-a-b/gpu-2",
                                                   "gpu.example.com/node-a-b/gpu-3"]
    assert first["passed"][0] == {
        "device": "gpu.example.com/node-a-a/gpu-0",
        "why": "it fits, but the claims could not be completed with it (with its "
               "resource.kubernetes.io/pcieRoot pci0000:00)"}
    assert first["passed"][1] == {"device": "gpu.example.com/node-a-a/gpu-1",
                                  "why": "allocated already"}
    assert second["passed"][0]["why"].startswith("its resource.kubernetes.io/pcieRoot is "
                                                 "pci0000:00")


@pytest.mark.parametrize(("claim", "first_line"), [
    ("default/four-gpus", "NOT SCHEDULABLE on node node-a (Kubernetes 1.37 scheduler, "
     "incubating allocator): claim default/four-gpus: request gpus: asks for 4 device(s) of "
     "class gpu; 4 on the node match, 3 free"),
    ("default/gpu-nic-one-numa", "NOT SCHEDULABLE on node node-a (Kubernetes 1.37 scheduler, "
     "incubating allocator): claim default/gpu-nic-one-numa: enough devices match each "
     "request, but no set of them shares gpu.example.com/numa (matchAttribute)"),
])
def test_why_nothing_fits(claim: str, first_line: str,
                          capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(["allocate", str(CLUSTER), "--release", "1.37", "--claim", claim],
                           capsys)
    assert (status, err) == (1, "")
    assert out.splitlines()[0] == first_line


def test_gates_and_a_forced_variant(capsys: pytest.CaptureFixture[str]) -> None:
    """DRA-8: without the binding and consumable-capacity gates 1.37 runs stable (pools as
    listed), and stable can be forced then."""
    off = "DRADeviceBindingConditions=false,DRAConsumableCapacity=false"
    status, answer = run_json(["allocate", str(CLUSTER), "--release", "1.37",
                               "--feature-gates", off], capsys)
    assert (status, answer["variant"]) == (0, "stable")
    assert _devices(answer)[0] == "gpu.example.com/node-a-b/gpu-2"
    status, answer = run_json(["allocate", str(CLUSTER), "--release", "1.37",
                               "--feature-gates", off, "--variant", "experimental"], capsys)
    assert (status, answer["variant"]) == (0, "experimental")
    assert _devices(answer)[0] == "gpu.example.com/node-a-a/gpu-0"


@pytest.mark.parametrize(("extra", "error"), [
    (["--release", "1.32"], "numaspec allocate: invalid-field: --release: the scheduler's DRA "
                            "allocator is modelled for 1.33, 1.34, 1.35, 1.36, 1.37, 1.38, "
                            "not '1.32'"),
    (["--release", "1.37", "--feature-gates", "DRAPrioritisedList=true"],
     "numaspec allocate: invalid-field: feature_gates.DRAPrioritisedList: the 1.37 scheduler "
     "refuses its feature gates: unrecognized feature gate: DRAPrioritisedList"),
    (["--release", "1.37", "--feature-gates", "DRAConsumableCapacity"],
     "numaspec allocate: invalid-field: --feature-gates: 'DRAConsumableCapacity' is not "
     "GATE=true or GATE=false"),
    (["--release", "1.37", "--variant", "stable"],
     "numaspec allocate: invalid-field: variant: the stable allocator of 1.37 does not support "
     "ConsumableCapacity, DeviceBindingAndStatus (no allocator available)"),
    (["--release", "1.37", "--claim", "default/nope"],
     "numaspec allocate: invalid-field: --claim: no ResourceClaim or ResourceClaimTemplate "
     "default/nope in the files"),
    (["--release", "1.37", "--claim", "default/busy"],
     "numaspec allocate: invalid-field: --claim: no claim to allocate: every ResourceClaim in "
     "the files is allocated already; name one with --claim NAMESPACE/NAME (a ResourceClaim, "
     "or a ResourceClaimTemplate to make one from)"),
])
def test_bad_input_is_one_line(extra: list[str], error: str,
                               capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(["allocate", str(CLUSTER), *extra], capsys)
    assert (status, out) == (2, "")
    assert err.strip() == error


def test_a_misspelled_field_is_named_with_its_file(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "cluster.yaml"
    broken.write_text(CLUSTER.read_text(encoding="utf-8").replace(
        "resourceSliceCount: 1}\n    devices:\n    - name: gpu-2",
        "resourceSliceCount: 1}\n    devics:\n    - name: gpu-2"), encoding="utf-8")
    status, out, err = run(["allocate", str(broken), "--release", "1.37"], capsys)
    assert (status, out) == (2, "")
    assert str(broken) in err
    assert "devics" in err


def test_a_tainted_device_is_passed_over_by_its_taint(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """DRA-16: at 1.37 the default gates turn DeviceTaints on: gpu-0 under maintenance is
    passed over for the pair, and the answer names the taint."""
    tainted = tmp_path / "cluster.yaml"
    tainted.write_text(CLUSTER.read_text(encoding="utf-8").replace(
        "    - name: gpu-0\n      attributes:\n",
        "    - name: gpu-0\n      taints:\n      - {key: example.com/maintenance, value: "
        "\"true\", effect: NoSchedule}\n      attributes:\n"), encoding="utf-8")
    status, answer = run_json(["allocate", str(tainted), "--release", "1.37"], capsys)
    assert status == 0
    gpu = answer["claims"][0]["devices"][0]
    assert gpu["device"] == "gpu.example.com/node-a-b/gpu-2"
    assert {"device": "gpu.example.com/node-a-a/gpu-0",
            "why": "its taint example.com/maintenance=true:NoSchedule is not tolerated by the "
                   "request (DRA-16)"} in gpu["passed"]


def test_a_device_taint_rule_is_refused_by_name(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """DRA-0: the taints a DeviceTaintRule adds are not applied, so a file with one is refused
    by name, never read as if the rule were not there."""
    rule = tmp_path / "rule.yaml"
    rule.write_text("apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\n"
                    "metadata: {name: maintenance}\nspec: {}\n", encoding="utf-8")
    status, out, err = run(["allocate", str(CLUSTER), str(rule), "--release", "1.37"], capsys)
    assert (status, out) == (2, "")
    assert err.startswith("numaspec allocate: not-modelled: ")
    assert "DeviceTaintRule" in err


LISTS = """apiVersion: v1
kind: List
items:
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: cpu}
  spec: {selectors: [{cel: {expression: 'device.driver == "dra.cpu"'}}]}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: cpus}
  spec:
    driver: dra.cpu
    nodeName: node-a
    pool: {name: node-a, generation: 1, resourceSliceCount: 1}
    devices:
    - {name: cpu0, attributes: {resource.kubernetes.io/pcieRoot: {strings: [a, b]}}}
    - {name: cpu1, attributes: {resource.kubernetes.io/pcieRoot: {strings: [c]}}}
    - {name: cpu2, attributes: {resource.kubernetes.io/pcieRoot: {strings: [b]}}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: two, namespace: default}
  spec:
    devices:
      requests: [{name: cpus, exactly: {deviceClassName: cpu, count: 2}}]
      constraints: [{matchAttribute: resource.kubernetes.io/pcieRoot}]
"""


def test_list_typed_roots_keep_what_they_share(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """DRA-18: with DRAListTypeAttributes at 1.37 (the experimental allocator) two CPUs whose
    root lists share b are taken, and the answer says they keep b; at 1.36 the class's selector
    cannot read a device with a list (the allocator's error)."""
    path = tmp_path / "lists.yaml"
    path.write_text(LISTS, encoding="utf-8")
    status, answer = run_json(["allocate", str(path), "--release", "1.37", "--feature-gates",
                               "DRAListTypeAttributes=true"], capsys)
    assert (status, answer["variant"]) == (0, "experimental")
    picks = answer["claims"][0]["devices"]
    assert [p["device"] for p in picks] == ["dra.cpu/node-a/cpu0", "dra.cpu/node-a/cpu2"]
    assert picks[1]["keeps"] == ["resource.kubernetes.io/pcieRoot = [b]"]
    status, out, _ = run(["allocate", str(path), "--release", "1.36"], capsys)
    assert status == 1
    assert out.startswith("ERROR ")
    assert "unsupported attribute value" in out.splitlines()[0]


PARTITIONS = OPERATOR / "dra-partitions" / "cluster.yaml"


def test_counters_pass_over_a_partition_without_room(
        capsys: pytest.CaptureFixture[str]) -> None:
    """DRA-19: half-a is allocated, so of 4Gi only 2Gi is left: the whole partition is passed
    over for its counters and half-b is given; without the gate, nothing that consumes
    counters is."""
    status, out, _ = run(["allocate", str(PARTITIONS), "--release", "1.37"], capsys)
    assert status == 0
    assert "  r: gpu.example.com/p/half-b" in out.splitlines()
    assert ("      passed over gpu.example.com/p/whole: its pool's counters set-0/memory have "
            "no room for it beside what is allocated and taken before it (DRA-19)") in out
    status, out, _ = run(["allocate", str(PARTITIONS), "--release", "1.37", "--feature-gates",
                          "DRAPartitionableDevices=false"], capsys)
    assert status == 1
    assert out.startswith("NOT SCHEDULABLE")
    assert "which the allocator reads only with PartitionableDevices" in out.splitlines()[0]


def test_counters_before_1_36_are_refused_naming_the_document(
        capsys: pytest.CaptureFixture[str]) -> None:
    """DRA-19: counters are modelled from 1.36; before, a refusal naming where they are."""
    status, out, err = run(["allocate", str(PARTITIONS), "--release", "1.35"], capsys)
    assert (status, out) == (2, "")
    assert err.strip() == (f"numaspec allocate: not-modelled: {PARTITIONS}: document 1"
                           ".spec.sharedCounters: shared counters (partitionable devices) "
                           "before 1.36 are outside the chapter's scope (DRA-19)")


SHARES = OPERATOR / "dra-shares" / "cluster.yaml"


def test_shares_and_distinct_from_the_claims_status(capsys: pytest.CaptureFixture[str]) -> None:
    """DRA-20, DRA-21: the running claim's share of gpu-0 (12Gi of 16Gi) leaves no room for a
    6Gi share, its admin share of gpu-1 counts nothing, 5500Mi is rounded up to the policy's
    6Gi, and distinctAttribute puts the second share on gpu-2; --json says the same."""
    status, out, _ = run(["allocate", str(SHARES), "--release", "1.37"], capsys)
    assert status == 0
    lines = out.splitlines()
    assert "  a: gpu.example.com/node-a/gpu-1  (a share: memory 6Gi)" in lines
    assert "  b: gpu.example.com/node-a/gpu-2  (a share: memory 6Gi)" in lines
    assert ("      passed over gpu.example.com/node-a/gpu-0: its memory has 4Gi of 16Gi left "
            "beside its shares; the request consumes 6Gi (DRA-20)") in lines
    assert ("      passed over gpu.example.com/node-a/gpu-1: its gpu.example.com/index is 1, "
            "which a device of the claim taken before has (distinctAttribute, DRA-21)") in lines
    status, out, _ = run(["allocate", str(SHARES), "--release", "1.37", "--json"], capsys)
    devices = json.loads(out)["claims"][0]["devices"]
    assert [(d["device"], d["shared"], d["consumed"]) for d in devices] == [
        ("gpu.example.com/node-a/gpu-1", True, {"memory": "6Gi"}),
        ("gpu.example.com/node-a/gpu-2", True, {"memory": "6Gi"})]


def test_shares_without_the_gate_and_before_1_36(capsys: pytest.CaptureFixture[str]) -> None:
    """DRA-20: with DRAConsumableCapacity off, 1.37's incubating allocator (its binding
    features still need it) stops on the capacity request; before 1.36 shares are refused,
    naming the document."""
    status, out, _ = run(["allocate", str(SHARES), "--release", "1.37", "--feature-gates",
                          "DRAConsumableCapacity=false"], capsys)
    assert status == 1
    assert out.startswith("ERROR ")
    assert "has capacity requests, but the DRAConsumableCapacity feature is disabled" in out
    status, out, err = run(["allocate", str(SHARES), "--release", "1.35"], capsys)
    assert (status, out) == (2, "")
    assert err.strip() == (f"numaspec allocate: not-modelled: {SHARES}: document 1.spec."
                           "devices[0].allowMultipleAllocations: consumable capacity before "
                           "1.36 is outside the chapter's scope (DRA-20)")


def test_a_bad_share_in_a_claims_status_names_the_result(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """DRA-20: a consumed capacity that is no quantity is refused, naming the result."""
    bad = tmp_path / "cluster.yaml"
    bad.write_text(SHARES.read_text(encoding="utf-8").replace("memory: 12Gi\n      - request",
                                                              "memory: lots\n      - request"),
                   encoding="utf-8")
    status, out, err = run(["allocate", str(bad), "--release", "1.37"], capsys)
    assert (status, out) == (2, "")
    assert "status.allocation.devices.results[0].consumedCapacity.memory" in err
    assert err.count("\n") == 1
