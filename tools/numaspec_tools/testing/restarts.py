"""Sessions whose state files a restarting kubelet is started on (OPS-2, findings 22 and 59):
``tests/fixtures/restarts.json``, the node each reaches, its files, and numaspec's verdict on
them.  ``tests/operators/test_operator.py`` checks the verdict; the kubelet checkpoint programs'
test (``tests/upstream/kubelet/test_kubelet_checkpoints_go.py``) starts each release's own
Memory Manager on the same files and compares.  :func:`round_trip` is the operator tests'
way of writing a node's files and restoring them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from numaspec.node.admission import Node
from numaspec.node.machine import HUGEPAGE_SIZES
from numaspec.operators.importers.checkpoints import read_state_dir
from numaspec.operators.restore import RestoreReport, RunningPod, restore_state, state_files
from numaspec.protocols.node_protocol import decode_node, decode_pod
from numaspec_tools import FIXTURES

#: Each case: ``name``, ``node`` (a create body), the pods to ``admit`` and the UIDs to
#: ``remove`` after, and ``restart``: ``starts``, ``may refuse`` or ``would refuse``.
RESTARTS: list[dict[str, Any]] = json.loads(
    (FIXTURES / "restarts.json").read_text("utf-8"))["cases"]


def restart_session(case: dict[str, Any]) -> Node:
    """The node a case's admissions and removals reach."""
    node = decode_node(case["node"])
    for body in case["admit"]:
        if not node.admit(decode_pod(body)).admitted:
            raise AssertionError(f"{case['name']}: pod {body['uid']} was not admitted")
    for uid in case["remove"]:
        node.remove(uid)
    return node


def restart_verdict(warnings: tuple[str, ...] | list[str]) -> str:
    """numaspec's verdict on a restart, from the memory file's warnings."""
    memory = [w for w in warnings if "memory_manager_state" in w]
    if not memory:
        return "starts"
    (warning,) = memory
    return "may refuse" if "kubelet may refuse to restart" in warning else "would refuse"


def round_trip(node: Node, directory: Path, write: Callable[..., Any] = state_files,
               restore: Callable[..., Any] = restore_state) -> tuple[Node, RestoreReport]:
    """Write the node's state files into ``directory``, read them back and restore them, with
    the node's pods, onto a fresh node of the same machine and configuration."""
    for path, text in write(node).items():
        (directory / path).parent.mkdir(parents=True, exist_ok=True)
        (directory / path).write_text(text, encoding="utf-8")
    cpu, memory, devices = read_state_dir(directory)
    fresh = Node(node.machine, node.config)
    report = restore(fresh, [RunningPod(p) for p in node.pods.values()], cpu=cpu,
                     memory=memory, devices=devices)
    return fresh, report


def write_restart_machine(node: Node, directory: Path) -> None:
    """``restart.json`` into ``directory``: the machine and reservations the checkpoint
    programs' ``restart`` mode starts a Memory Manager with, beside the node's state files
    (:func:`round_trip` writes those)."""
    sizes = node.machine.hugepage_sizes
    reserved = [{"numaNode": numa, "limits": dict(limits)}
                for numa, limits in node.config.reserved_memory]
    manager = node.memory
    if manager is None:
        raise AssertionError("the node has no Memory Manager")
    held = sum(manager.nodes[n.id].tables["memory"].system_reserved
               for n in node.machine.numa_nodes)
    machine = {"nodes": [{"memory": n.memory, "hugepages": [
        {"pageSizeKiB": HUGEPAGE_SIZES[name] // 1024, "pages": n.hugepages.get(name, 0)}
        for name in sizes]} for n in node.machine.numa_nodes],
        "nodeAllocatable": {"memory": str(held)}, "reservedMemory": reserved}
    (directory / "restart.json").write_text(json.dumps(machine), encoding="utf-8")
