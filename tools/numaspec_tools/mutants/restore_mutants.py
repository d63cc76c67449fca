"""Deliberately wrong state-file round trips: the round-trip property of
tests/operators/test_operator.py
(OPS-9, OPS-2) must reject every one.  ``RESTORE_MUTANTS`` maps a name to a pair
``(write, restore)`` of :func:`numaspec.operators.restore.state_files`'s and
:func:`numaspec.operators.restore.restore_state`'s shapes, each wrong in one way."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from numaspec.node.admission import Node
from numaspec.operators import restore
from numaspec.operators.importers.checkpoints import (
    DeviceEntry,
    encode_device_checkpoint,
    encode_memory_manager_state,
    read_memory_manager_state,
)

__all__ = ["RESTORE_MUTANTS"]


def _groups_forgotten(node: Node) -> dict[str, str]:
    """The memory file records every NUMA node as a group of its own (``cells``), losing the
    groups multi-NUMA blocks made (MEM-6)."""
    files = restore.state_files(node)
    if node.memory is None:
        return files
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "memory_manager_state"
        path.write_text(files["memory_manager_state"], encoding="utf-8")
        state = read_memory_manager_state(path)
    machine = {n: attrs.evolve(s, cells=(n,)) for n, s in state.machine_state.items()}
    files["memory_manager_state"] = encode_memory_manager_state(
        state.policy_name, machine, state.entries)
    return files


def _cpus_not_restored(node: Node, pods: Any, **state: Any) -> Any:
    """The CPU Manager's assignments are not put back: every CPU looks free."""
    return restore.restore_state(node, pods, **{**state, "cpu": None})


def _devices_on_node_zero(node: Node) -> dict[str, str]:
    """Every device is recorded on NUMA node 0, whatever the machine says (as kubelet 1.29 and
    1.30 read a v1 checkpoint)."""
    files = restore.state_files(node)
    key = "device-plugins/kubelet_internal_checkpoint"
    raw = json.loads(files[key])
    entries = [DeviceEntry(e["PodUID"], e["ContainerName"], e["ResourceName"],
                           {0: tuple(i for ids in e["DeviceIDs"].values() for i in ids)})
               for e in raw["Data"]["PodDeviceEntries"]]
    files[key] = encode_device_checkpoint(entries, raw["Data"]["RegisteredDevices"])
    return files


RESTORE_MUTANTS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "groups-forgotten": (_groups_forgotten, restore.restore_state),
    "cpus-not-restored": (restore.state_files, _cpus_not_restored),
    "devices-on-node-zero": (_devices_on_node_zero, restore.restore_state),
}
