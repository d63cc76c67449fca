"""OPS-15: without --devices, the device map is inferred from the device checkpoint's PCI
addresses and the sysfs copy's numa_node, and the answer's sources say so."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from numaspec.conformance.cli import main
from numaspec.operators.importers.checkpoints import DeviceCheckpoint, DeviceEntry
from numaspec.operators.importers.device_inference import (
    infer_device_map,
    infer_from_state_dir,
    is_pci_address,
)
from numaspec.operators.importers.sysfs import resolve_devices
from numaspec_tools import FIXTURES

KUBE = FIXTURES / "kube"
SYSFS = FIXTURES / "sysfs" / "two-socket-4numa"
STATE = FIXTURES / "operator" / "two-socket" / "state"


def _pci(root: Path, address: str, numa: str | None) -> None:
    folder = root / "bus" / "pci" / "devices" / address
    folder.mkdir(parents=True)
    for name, value in (("vendor", "0x8086"), ("device", "0x154c"), ("class", "0x020000")):
        (folder / name).write_text(value + "\n")
    if numa is not None:
        (folder / "numa_node").write_text(numa + "\n")


def _checkpoint(registered: dict[str, tuple[str, ...]],
                *held: tuple[str, str]) -> DeviceCheckpoint:
    entries = tuple(DeviceEntry("uid", "c", resource, {0: (device,)})
                    for resource, device in held)
    return DeviceCheckpoint("ckpt", "v2", entries, registered)


def test_pci_addresses() -> None:
    assert is_pci_address("0000:18:02.1")
    assert is_pci_address("0000:AF:00.0")
    assert not is_pci_address("GPU-9f3c")
    assert not is_pci_address("0000:18:02.8")


def test_inferred_from_registered_and_held(tmp_path: Path) -> None:
    _pci(tmp_path, "0000:18:02.1", "1")
    _pci(tmp_path, "0000:18:02.2", "-1")
    _pci(tmp_path, "0000:af:00.0", None)  # no numa_node file: no NUMA node
    ckpt = _checkpoint({"intel.com/vf": ("0000:18:02.1", "0000:18:02.2")},
                       ("intel.com/vf", "0000:18:02.1"), ("example.com/nic", "0000:AF:00.0"))
    inference = infer_device_map(tmp_path, ckpt)
    assert inference.inferred == {"intel.com/vf": 2, "example.com/nic": 1}
    assert inference.held_only == ("example.com/nic",)
    from numaspec.operators.importers.sysfs import _pci_devices

    found = resolve_devices(inference.selectors, _pci_devices(tmp_path), [0, 1], "here")
    assert [(d.id, d.numa) for d in found["intel.com/vf"]] == [("0000:18:02.1", (1,)),
                                                                ("0000:18:02.2", ())]
    # the checkpoint's spelling is the device's id
    assert [(d.id, d.numa) for d in found["example.com/nic"]] == [("0000:AF:00.0", ())]
    line = inference.source_line()
    assert "intel.com/vf: 2 devices" in line
    assert "example.com/nic: 1 device (only devices some pod holds)" in line


def test_not_inferred(tmp_path: Path) -> None:
    _pci(tmp_path, "0000:18:02.1", "0")
    ckpt = _checkpoint({"nvidia.com/gpu": ("GPU-1",), "intel.com/vf": ("0000:18:02.1",
                                                                       "0000:18:03.0")})
    inference = infer_device_map(tmp_path, ckpt)
    assert inference.selectors == {}
    assert inference.not_inferred == {
        "nvidia.com/gpu": "device id 'GPU-1' is not a PCI address",
        "intel.com/vf": f"PCI device 0000:18:03.0 is not in {tmp_path / 'bus/pci/devices'}"}
    assert inference.source_line().endswith("give --devices FILE to place them")
    assert infer_device_map(tmp_path, None).source_line() == "none in the device checkpoint"
    assert infer_from_state_dir(tmp_path, tmp_path).inferred == {}


def _explain(pod: Path, *extra: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    args = ["explain", "--sysfs", str(SYSFS),
            "--kubelet-config", str(KUBE / "kubelet-config.yaml"),
            "--node", str(KUBE / "node.yaml"), "--state-dir", str(STATE),
            "--pods", str(KUBE / "pods.yaml"), "--pod", str(pod), *extra]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def _pod(tmp_path: Path, resource: str) -> Path:
    path = tmp_path / "pod.yaml"
    path.write_text(f"""apiVersion: v1
kind: Pod
metadata: {{name: net, namespace: default, uid: 11111111-2222-4333-8444-555555555555}}
spec:
  containers:
  - name: c
    image: x
    resources:
      limits: {{cpu: "2", memory: 1Gi, {resource}: "1"}}
""")
    return path


def test_explain_places_inferred_devices(tmp_path: Path) -> None:
    code, out, err = _explain(_pod(tmp_path, "intel.com/sriov_netdevice"), "--json")
    assert code == 0, err
    answer = json.loads(out)
    devices = answer["node"]["sources"]["devices"]
    assert devices.startswith("inferred from the device checkpoint and sysfs PCI numa_node "
                              "(intel.com/sriov_netdevice: 1 device)")
    assert "not inferred (nvidia.com/gpu: device id 'GPU-9f3c' is not a PCI address)" in devices
    code, text, _ = _explain(_pod(tmp_path, "intel.com/sriov_netdevice"))
    assert "devices: inferred from the device checkpoint" in text


def test_explain_names_devices_flag(tmp_path: Path) -> None:
    code, _, err = _explain(_pod(tmp_path, "nvidia.com/gpu"))
    assert code == 2
    assert ("no device plugin on this node serves 'nvidia.com/gpu': give --devices FILE "
            "(which PCI devices back each extended resource)") in err
    code, out, err = _explain(_pod(tmp_path, "nvidia.com/gpu"), "--devices",
                              str(FIXTURES / "sysfs" / "two-socket-4numa.devices.yaml"), "--json")
    assert code in (0, 1), err
    assert "devices" not in json.loads(out)["node"]["sources"]
