"""Issue 38's first-run failures of ``numaspec explain`` on an operator's node files (OPS-13,
OPS-14, SYSFS-10): the version asked for with the flags that give it, or settled by the state
files; a sysfs copy without its NUMA folder named; a pod whose QoS class its containers do not
suggest (a cut file) warned about."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from numaspec_tools import FIXTURES
from numaspec_tools.testing.operator_cli import (
    OPERATOR,
    SYSFS,
    run,
    run_json,
    seed_args,
    two_socket_args,
)

STATE = FIXTURES / "state"


POD = """apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, uid: 11111111-2222-3333-4444-555555555555}
spec:
  containers:
  - name: app
    resources:
      requests: {cpu: "2", memory: 1Gi}
      limits: {cpu: "2", memory: 1Gi}
"""


def _scenario(release: str, pod: Path) -> list[str]:
    """The memory-group-release scenario kubelet wrote (adapters/kubelet/checkpoints): its
    machine, configuration, pods and state, no version given."""
    here = STATE / release / "memory-group-release"
    pod.write_text(POD, encoding="utf-8")
    return ["explain", "--machine", str(here / "machine.json"),
            "--kubelet-config", str(here / "kubelet-config.yaml"), "--state-dir", str(here),
            "--pods", str(here / "pods.yaml"), "--pod", str(pod)]


def _without_version(args: list[str]) -> list[str]:
    i = args.index("--kubelet-version")
    return args[:i] + args[i + 2:]


def test_the_version_error_names_both_flags(capsys: pytest.CaptureFixture[str]) -> None:
    args = seed_args("seed001", "1.30")
    i = args.index("--state-dir")
    status, _, err = run(_without_version(args[:i] + args[i + 2:]), capsys)
    assert status == 2
    assert err.startswith("numaspec explain: invalid-field: --kubelet-version: the kubelet "
                          "version is not part of a kubelet configuration: give the node's "
                          "kubelet release with --kubelet-version (such as 1.30.14) or its "
                          "Node object with --node FILE")


def test_state_files_of_one_release_settle_the_version(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """1.37's formats (cpu v4, memory v3) are written by 1.37 alone of the releases (the
    pre-release 1.38.0-beta.0 writes them too, and is named)."""
    _, answer = run_json(_scenario("v1_37", tmp_path / "pod.yaml"), capsys)
    said = answer["node"]["sources"]["kubelet version"]
    assert said.startswith("1.37, from the state files (cpu_manager_state format v4, "
                           "memory_manager_state format v3, kubelet_internal_checkpoint "
                           "format v2: ")
    assert "written only by kubelet 1.37, and by the pre-release 1.38.0-beta.0; give " in said


def test_state_files_of_several_releases_ask_naming_what_they_narrowed(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, err = run(_scenario("v1_30", tmp_path / "pod.yaml"), capsys)
    assert status == 2
    assert "not part of a kubelet configuration nor settled by the state files; the state " \
           "files (cpu_manager_state format v2, memory_manager_state format v1, " \
           "kubelet_internal_checkpoint format v2) were written by kubelet 1.29\u20131.36: " \
           "give the node's kubelet release with --kubelet-version" in err


CUT_POD = """apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, uid: 11111111-2222-3333-4444-555555555555}
spec:
  containers:
  - name: app
    resources:
      requests: {cpu: "2", memory: 1Gi}
      limits:
        cpu: "2"
"""


def test_a_pod_cut_inside_its_resources_is_warned_about(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A file cut after the cpu limit reads as Burstable: admitted with no exclusive CPUs, and
    said so (OPS-14)."""
    args = _scenario("v1_37", tmp_path / "pod.yaml")
    (tmp_path / "pod.yaml").write_text(CUT_POD, encoding="utf-8")
    _, answer = run_json(args, capsys)
    assert answer["pod"]["qos"] == "Burstable"
    assert answer["warnings"] == [
        "the pod is Burstable, not Guaranteed, though it sets limits equal to requests "
        "(container app: no memory limit): kubelet gives a Burstable pod no exclusive CPUs "
        "and no Memory Manager placement; if the file was cut short, give it whole"]
    out = run(args, capsys)[1]
    assert "warning: the pod is Burstable, not Guaranteed" in " ".join(out.split())


def test_a_whole_guaranteed_or_plain_burstable_pod_is_not_warned_about(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = _scenario("v1_37", tmp_path / "pod.yaml")
    assert "warnings" not in run_json(args, capsys)[1]
    (tmp_path / "pod.yaml").write_text(CUT_POD.replace('      limits:\n        cpu: "2"\n', ""),
                                       encoding="utf-8")
    assert "warnings" not in run_json(args, capsys)[1]


def test_a_sysfs_copy_without_its_numa_folder_is_named(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The configuration reserves memory on node 1..3; a copy without devices/system/node reads
    as a node per socket, and the error says why node 2 is missing (SYSFS-7)."""
    copy = tmp_path / "sys"
    shutil.copytree(SYSFS, copy, symlinks=True)
    shutil.rmtree(copy / "devices" / "system" / "node")
    args = two_socket_args(OPERATOR / "two-socket" / "gpu-pod.yaml")
    args[args.index("--sysfs") + 1] = str(copy)
    status, _, err = run(args, capsys)
    assert status == 2
    assert err.rstrip().endswith(
        f"(note: {copy}/devices/system/node is missing, so the machine was read the way "
        "cadvisor reads a kernel built without NUMA: one NUMA node per socket; if the copy "
        "left the folder out, copy it too)")


def test_a_sysfs_copy_given_one_level_too_high_names_the_root(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Issue 57: a copy of /sys as DIR/sys, given as DIR, names DIR/sys (SYSFS-9), not the
    NUMA note, which is about a root without devices/system/node."""
    shutil.copytree(SYSFS, tmp_path / "sys", symlinks=True)
    args = two_socket_args(OPERATOR / "two-socket" / "gpu-pod.yaml")
    args[args.index("--sysfs") + 1] = str(tmp_path)
    status, _, err = run(args, capsys)
    assert status == 2
    assert err.strip() == (f"numaspec explain: invalid-input-file: {tmp_path}: not a sysfs "
                           f"root (no devices/system/cpu), but {tmp_path}/sys is: give "
                           f"--sysfs {tmp_path}/sys")
