"""Broken copies of the two-socket sysfs tree (SYSFS-9): each break edits one file of a
copied tree and names the file an error must name.  tests/operators/test_sysfs.py holds numaspec's
reader to them, tests/upstream/kubelet/test_kubelet_machine.py cadvisor's."""

from __future__ import annotations

import shutil
from pathlib import Path


def node_dir(root: Path, node: int) -> Path:
    return root / "devices" / "system" / "node" / f"node{node}"


def break_tree(root: Path, how: str) -> str:
    """Breaks one file of a copied two-socket tree; returns the file the error must name."""
    node1 = node_dir(root, 1)
    cpu3 = node_dir(root, 2) / "cpu3"  # read through the node's link, as cadvisor does
    if how == "distance-non-integer":
        (node1 / "distance").write_text("11 ten 21 21\n")
        return str(node1 / "distance")
    if how == "distance-short":
        (node1 / "distance").write_text("11 10 21\n")
        return str(node1 / "distance")
    if how == "offline-node-still-listed":
        (root / "devices" / "system" / "node" / "online").write_text("0-4\n")
        return str(root / "devices" / "system" / "node" / "online")
    if how == "meminfo-missing":
        (node1 / "meminfo").unlink()
        return str(node1 / "meminfo")
    if how == "meminfo-garbled":
        (node1 / "meminfo").write_text("Node 1 MemTotal: lots\n")
        return str(node1 / "meminfo")
    if how == "core-id-missing":
        (cpu3 / "topology" / "core_id").unlink()
        return str(cpu3 / "topology" / "core_id")
    if how == "package-non-integer":
        (cpu3 / "topology" / "physical_package_id").write_text("one\n")
        return str(cpu3 / "topology" / "physical_package_id")
    if how == "cpu-on-two-nodes":
        (node1 / "cpu0").symlink_to("../../cpu/cpu0")
        return str(node1 / "cpu0")
    if how == "hugepages-garbled":
        path = node1 / "hugepages" / "hugepages-2048kB" / "nr_hugepages"
        path.write_text("-\n")
        return str(path)
    if how == "hugepage-size-missing-on-one-node":
        shutil.rmtree(node1 / "hugepages" / "hugepages-1048576kB")
        return str(node1 / "hugepages")
    if how == "cpu-online-garbled":
        (root / "devices" / "system" / "cpu" / "online").write_text("0-x\n")
        return str(root / "devices" / "system" / "cpu" / "online")
    if how == "cache-map-garbled":
        path = node_dir(root, 2) / "cpu1" / "cache" / "index3" / "shared_cpu_map"
        path.write_text("zz\n")
        return str(path)
    if how == "links-missing":
        for link in node1.glob("cpu[0-9]*"):
            link.unlink()
        return str(node1 / "cpulist")
    raise AssertionError(how)


BREAKS = ["distance-non-integer", "distance-short", "offline-node-still-listed",
          "meminfo-missing", "meminfo-garbled", "core-id-missing", "package-non-integer",
          "cpu-on-two-nodes", "hugepages-garbled", "hugepage-size-missing-on-one-node",
          "cpu-online-garbled", "cache-map-garbled", "links-missing"]
