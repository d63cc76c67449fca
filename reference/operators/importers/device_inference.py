"""OPS-15: a device map inferred from the device checkpoint and a sysfs copy.

Without ``--devices``, ``numaspec explain`` can still place the devices of a resource whose
device plugin names its devices by PCI address (SR-IOV network plugins do): the device
checkpoint (CKPT-3) lists, per resource, the devices pods hold and the devices that were
healthy when kubelet last wrote it (``RegisteredDevices``); each PCI address's NUMA node is
then the sysfs copy's ``bus/pci/devices/<address>/numa_node`` (SYSFS-8).  A resource with an
id that is not a PCI address, or an address the copy does not have, is left out and named.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

import attrs

from numaspec.operators.importers.checkpoints import DeviceCheckpoint
from numaspec.operators.importers.sysfs import DeviceSelector

__all__ = ["DeviceInference", "infer_device_map", "infer_from_state_dir", "is_pci_address"]

_PCI = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$", re.IGNORECASE)


def is_pci_address(device_id: str) -> bool:
    """A PCI address in the kernel's form ``dddd:bb:dd.f`` (hex, either case)."""
    return bool(_PCI.match(device_id))


@attrs.frozen
class DeviceInference:
    """What was inferred: the map for :func:`~numaspec.operators.importers.sysfs.read_sysfs`,
    and per resource how many devices (``inferred``) or why not (``not_inferred``)."""

    selectors: Mapping[str, DeviceSelector]
    inferred: Mapping[str, int]
    not_inferred: Mapping[str, str]
    #: resources the checkpoint gives no registered list for: only devices some pod holds.
    held_only: tuple[str, ...]

    def source_line(self) -> str:
        """The ``devices`` line of the answer's sources."""
        parts = []
        if self.inferred:
            counts = ", ".join(f"{r}: {n} device{'s' if n != 1 else ''}"
                               + (" (only devices some pod holds)" if r in self.held_only
                                  else "")
                               for r, n in sorted(self.inferred.items()))
            parts.append("inferred from the device checkpoint and sysfs PCI numa_node "
                         f"({counts}); the checkpoint lists the devices pods hold and those "
                         "healthy when kubelet last wrote it")
        if self.not_inferred:
            why = "; ".join(f"{r}: {reason}" for r, reason in sorted(self.not_inferred.items()))
            parts.append(f"not inferred ({why}): give --devices FILE to place them")
        return "; ".join(parts) if parts else "none in the device checkpoint"


def infer_device_map(sysfs_root: str | os.PathLike[str],
                     checkpoint: DeviceCheckpoint | None) -> DeviceInference:
    """OPS-15: per resource of ``checkpoint``, its devices (registered and held) when every
    id is a PCI address present under the sysfs copy's ``bus/pci/devices``."""
    if checkpoint is None:
        return DeviceInference({}, {}, {}, ())
    ids: dict[str, set[str]] = {r: set(d) for r, d in checkpoint.registered.items()}
    held_only = []
    for entry in checkpoint.entries:
        if entry.resource not in ids:
            held_only.append(entry.resource)
        ids.setdefault(entry.resource, set()).update(
            i for group in entry.devices.values() for i in group)
    base = Path(sysfs_root) / "bus" / "pci" / "devices"
    selectors: dict[str, DeviceSelector] = {}
    inferred: dict[str, int] = {}
    not_inferred: dict[str, str] = {}
    for resource, devices in sorted(ids.items()):
        if not devices:
            continue
        odd = sorted(i for i in devices if not is_pci_address(i))
        if odd:
            not_inferred[resource] = f"device id {odd[0]!r} is not a PCI address"
            continue
        missing = sorted(i for i in devices if not (base / i.lower()).is_dir())
        if missing:
            not_inferred[resource] = f"PCI device {missing[0]} is not in {base}"
            continue
        addresses = tuple(sorted(i.lower() for i in devices))
        renamed = {i.lower(): i for i in devices if i != i.lower()}
        selectors[resource] = DeviceSelector(addresses=addresses, ids=renamed)
        inferred[resource] = len(addresses)
    return DeviceInference(selectors, inferred, not_inferred,
                           tuple(sorted(set(held_only) & set(inferred))))


def infer_from_state_dir(sysfs_root: str | os.PathLike[str],
                         state_dir: str | os.PathLike[str]) -> DeviceInference:
    """OPS-15: :func:`infer_device_map` over the device checkpoint of a kubelet root directory,
    looked for where :func:`~numaspec.operators.importers.checkpoints.read_state_dir` looks."""
    from numaspec.operators.importers.checkpoints import read_device_checkpoint

    for parts in (("device-plugins", "kubelet_internal_checkpoint"),
                  ("kubelet_internal_checkpoint",)):
        path = os.path.join(os.fspath(state_dir), *parts)
        if os.path.lexists(path):
            return infer_device_map(sysfs_root, read_device_checkpoint(path))
    return infer_device_map(sysfs_root, None)
