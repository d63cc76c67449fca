"""The machine import against cadvisor's own code: each sysfs tree (the fixtures, and copies
edited in tmp_path) is read by numaspec's importer and by the kubelet adapter's ``machine`` mode
(adapters/kubelet/release/machine.go: cadvisor's ``sysinfo.GetNodesInfo`` over its real sysfs
reader, the code kubelet's cadvisor runs, then kubelet's ``topology.Discover``), and the NUMA
nodes, their memory, hugepages, distance rows, cores (socket, threads), uncore caches and the
CPU Manager's CPU topology must agree.  Checks SYSFS-1, SYSFS-2, SYSFS-3, SYSFS-4, SYSFS-5,
SYSFS-6, SYSFS-7, and SYSFS-9's refusals against what cadvisor does with the same broken file.

cadvisor's reader is hard-wired to ``/sys``: the adapter runs in a mount namespace of its own
with the tree bound over ``/sys`` (``unshare -m`` as root, else ``unshare -rm``, an
unprivileged user namespace); nothing of cadvisor is reimplemented.  Not cadvisor's reading:
``/proc/cpuinfo`` (the socket count kubelet's ``NumSockets`` takes from it is the topology's
here) and ``/proc/meminfo`` (the node capacity; numaspec uses it only as a check, SYSFS-3).
Where neither namespace can be made the test skips, saying why (a failure under
NUMASPEC_REQUIRE_KUBELET=1).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from numaspec.errors import InputFileError, NotModelledError
from numaspec.node.machine import Machine
from numaspec.operators.importers.sysfs import parse_cpulist, read_sysfs
from numaspec_tools import FIXTURES
from numaspec_tools.builds import kubelet as kubelet_builds
from numaspec_tools.builds.go import REQUIRED
from numaspec_tools.testing.sysfs_breaks import BREAKS, break_tree

FIXTURES = FIXTURES / "sysfs"
TREES = ["two-socket-4numa", "snc"]
#: The node releases (the ``machine`` mode is in their shim, adapters/kubelet/release).
MINORS = [m for m, r in kubelet_builds.TABLE_RELEASES.items() if "node" in r.ops]
#: numaspec's hugepage names by page size in kB (SYSFS-4).
PAGES = {2048: "hugepages-2Mi", 1048576: "hugepages-1Gi"}

_MOUNT = 'mount --bind "$1" /sys && exec "$2" machine'


def _namespaces() -> list[list[str]]:
    """The unshare commands to try, privileged first."""
    tries = [["unshare", "-m", "--propagation", "private"]] if os.geteuid() == 0 else []
    return [*tries, ["unshare", "-rm", "--propagation", "private"]]


@cache
def _working_namespace(binary: str, root: str) -> tuple[list[str] | None, str]:
    """The first unshare command that can bind a tree over /sys here, or None and why."""
    why = []
    for command in _namespaces():
        done = subprocess.run([*command, "sh", "-c", _MOUNT, "_", root, binary],
                              capture_output=True, text=True, timeout=120, check=False)
        if done.returncode == 0:
            return command, ""
        why.append(f"{' '.join(command)}: {done.stderr.strip() or done.returncode}")
    return None, "; ".join(why)


def cadvisor(minor: str, root: Path) -> dict[str, Any]:
    """The adapter's ``machine`` answer for the tree at ``root`` (release ``1.<minor>``)."""
    binary = str(kubelet_builds.binary(minor))
    command, why = _working_namespace(binary, str(FIXTURES / TREES[0]))
    if command is None:
        message = ("cadvisor reads /sys only, and no mount namespace can be made here to bind "
                   f"a sysfs copy over it ({why})")
        if REQUIRED:
            pytest.fail(f"NUMASPEC_REQUIRE_KUBELET is set, but {message}")
        pytest.skip(message)
    done = subprocess.run([*command, "sh", "-c", _MOUNT, "_", str(root), binary],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    assert answer["version"] == kubelet_builds.RELEASES[minor]
    return answer


def _kubelet_view(answer: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Per NUMA node what numaspec's Machine holds, from cadvisor's nodes."""
    view = {}
    for node in answer["nodes"]:
        pages = {int(size): n for size, n in node["hugepages"].items()}
        view[node["id"]] = {
            "memory": node["memory"],
            "hugepages": {PAGES[s]: n for s, n in pages.items() if s in PAGES},
            "other-pages": sum(n for s, n in pages.items() if s not in PAGES),
            "distances": tuple(node["distances"]) if node["distances"] is not None else None,
            "cores": sorted((c["socket"], tuple(sorted(c["threads"])),
                             c["uncoreCaches"][0]["id"] if c["uncoreCaches"] else None)
                            for c in node["cores"]),
        }
    return view


def _numaspec_view(machine: Machine) -> dict[int, dict[str, Any]]:
    return {n.id: {"memory": n.memory, "hugepages": dict(n.hugepages), "other-pages": 0,
                   "distances": n.distances,
                   "cores": sorted((c.socket, tuple(sorted(c.threads)), c.uncore_cache)
                                   for c in n.cores)}
            for n in machine.numa_nodes}


def _discover_view(machine: Machine, uncore: bool) -> dict[str, dict[str, int]]:
    """kubelet's CPUDetails as numaspec's machine implies them (NODE-1: a core is named by its
    lowest thread; CPU-19: the uncore cache, or the socket without one, 1.32 on)."""
    cpus = {}
    for node in machine.numa_nodes:
        for core in node.cores:
            for cpu in core.threads:
                detail = {"core": min(core.threads), "socket": core.socket, "numaNode": node.id}
                if uncore:
                    detail["uncoreCache"] = (core.uncore_cache if core.uncore_cache is not None
                                             else core.socket)
                cpus[str(cpu)] = detail
    return cpus


def assert_same_machine(answer: dict[str, Any], machine: Machine) -> None:
    """cadvisor's machine and kubelet's CPU topology equal numaspec's."""
    assert answer.get("error") is None, answer
    assert _kubelet_view(answer) == _numaspec_view(machine)
    threads = sum(len(c.threads) for n in machine.numa_nodes for c in n.cores)
    assert answer["numCores"] == threads
    found = answer["discover"]
    assert found is not None, answer.get("discoverError")
    assert found["cpus"] == _discover_view(machine, "numUncoreCache" in found)
    assert found["numCPUs"] == threads
    assert found["numNUMANodes"] == len({n.id for n in machine.numa_nodes if n.cores})
    assert found["numCores"] == sum(len(n.cores) for n in machine.numa_nodes)


def _copy(tree: str, tmp_path: Path) -> Path:
    dst = tmp_path / tree
    shutil.copytree(FIXTURES / tree, dst, symlinks=True)
    return dst


def _cpu_dirs(root: Path) -> list[Path]:
    return sorted((root / "devices" / "system" / "cpu").glob("cpu[0-9]*"))


def _edit(root: Path, how: str) -> None:
    """Edits a copied tree into another machine shape both readers must agree on."""
    system = root / "devices" / "system"
    if how == "as-copied":
        return
    online = parse_cpulist(system / "cpu" / "online")
    if how == "one-cpu-offline":
        (system / "cpu" / "online").write_text(",".join(str(c) for c in online if c != 3) + "\n")
    elif how == "no-online-file":
        # a kernel without CPU hotplug: every CPU directory is an online CPU with its topology
        (system / "cpu" / "online").unlink()
        for cpu in _cpu_dirs(root):
            if int(cpu.name[3:]) not in online:
                for node in (system / "node").glob("node[0-9]*"):
                    (node / cpu.name).unlink(missing_ok=True)
                shutil.rmtree(cpu)
    elif how == "no-numa-directory":
        shutil.rmtree(system / "node")
    elif how == "no-cache-information":
        for cpu in _cpu_dirs(root):
            shutil.rmtree(cpu / "cache", ignore_errors=True)
    elif how == "no-distance-files":
        for node in (system / "node").glob("node[0-9]*"):
            (node / "distance").unlink()
    elif how == "a-64k-hugepage-size-unused":
        for node in (system / "node").glob("node[0-9]*"):
            size = node / "hugepages" / "hugepages-64kB"
            size.mkdir(parents=True)
            (size / "nr_hugepages").write_text("0\n")
    elif how == "l3-as-large-as-its-node":
        for cpu in _cpu_dirs(root):
            index = cpu / "cache" / "index3"
            if index.is_dir():
                name = next(p.name for p in cpu.iterdir() if p.name.startswith("node"))
                mates = sorted(int(p.name[3:]) for p in
                               (system / "node" / name).glob("cpu[0-9]*"))
                (index / "shared_cpu_map").write_text(f"{sum(1 << c for c in mates):x}\n")
    elif how == "one-core-without-cache-size":
        # cadvisor stops reading the node's caches at the first core whose first thread
        # lacks a cache file: that core and the node's later cores have no uncore cache
        for path in (system / "cpu" / "cpu1" / "cache").glob("index*/size"):
            path.unlink()
    else:
        raise AssertionError(how)


EDITS = ["as-copied", "one-cpu-offline", "no-online-file", "no-numa-directory",
         "no-cache-information", "no-distance-files", "a-64k-hugepage-size-unused",
         "l3-as-large-as-its-node", "one-core-without-cache-size"]


@pytest.mark.parametrize("minor", MINORS)
@pytest.mark.parametrize("tree", TREES)
def test_fixture_trees_read_as_cadvisor_reads_them(minor: str, tree: str) -> None:
    """SYSFS-1..SYSFS-6: each fixture tree, as it is."""
    assert_same_machine(cadvisor(minor, FIXTURES / tree), read_sysfs(FIXTURES / tree))


#: The edits of each tree both readers agree on; snc without node directories is
#: test_no_numa_with_an_offline_cpu's.
EDIT_CASES = [(tree, how) for tree in TREES for how in EDITS[1:]
              if (tree, how) != ("snc", "no-numa-directory")]


@pytest.mark.parametrize("minor", MINORS)
@pytest.mark.parametrize(("tree", "how"), EDIT_CASES)
def test_edited_trees_read_as_cadvisor_reads_them(tmp_path: Path, minor: str, tree: str,
                                                  how: str) -> None:
    """SYSFS-2 (offline CPUs, no online file), SYSFS-4 (a size no node pre-allocates),
    SYSFS-5 (no distance file), SYSFS-6 (no cache information; an L3 as large as its node),
    SYSFS-7 (no node directories: one node per package)."""
    root = _copy(tree, tmp_path)
    _edit(root, how)
    assert_same_machine(cadvisor(minor, root), read_sysfs(root))


@pytest.mark.parametrize("minor", MINORS)
def test_no_numa_with_an_offline_cpu(tmp_path: Path, minor: str) -> None:
    """SYSFS-7: without node directories cadvisor counts every cpuN directory as a CPU of the
    machine (kubelet's cpu capacity, Discover's NumCPUs), the offline one too, though no core
    has it; numaspec refuses such a tree as not modelled (found by this test)."""
    root = _copy("snc", tmp_path)
    _edit(root, "no-numa-directory")
    with pytest.raises(NotModelledError) as info:
        read_sysfs(root)
    assert info.value.where == str(root / "devices" / "system" / "cpu" / "online")
    answer = cadvisor(minor, root)
    online = len(parse_cpulist(root / "devices" / "system" / "cpu" / "online"))
    threads = sum(len(c["threads"]) for n in answer["nodes"] for c in n["cores"])
    assert threads == online
    assert answer["numCores"] == len(_cpu_dirs(root)) == online + 1
    assert answer["discover"]["numCPUs"] == online + 1


#: SYSFS-9: numaspec refuses every broken file (a copy that lacks or garbles a file is likelier
#: than a kernel that writes it so); what cadvisor does with the same file: "error" (kubelet's
#: cadvisor fails, so kubelet does not start), or "reads" (it logs and carries on with a
#: partial machine: the divergence SYSFS-9 documents).
CADVISOR_ON_BREAKS = {
    "distance-non-integer": "error", "distance-short": "reads",
    "offline-node-still-listed": "reads", "meminfo-missing": "reads",
    "meminfo-garbled": "error", "core-id-missing": "reads", "package-non-integer": "error",
    "cpu-on-two-nodes": "reads", "hugepages-garbled": "error",
    "hugepage-size-missing-on-one-node": "reads", "cpu-online-garbled": "reads",
    "cache-map-garbled": "reads", "links-missing": "reads",
}


@pytest.mark.parametrize("minor", MINORS)
@pytest.mark.parametrize("how", BREAKS)
def test_refusals_against_cadvisor(tmp_path: Path, minor: str, how: str) -> None:
    """SYSFS-9: numaspec refuses the broken file; cadvisor fails on it or reads on, as the
    table says."""
    root = tmp_path / "two-socket-4numa"
    shutil.copytree(FIXTURES / "two-socket-4numa", root, symlinks=True)
    break_tree(root, how)
    with pytest.raises(InputFileError):
        read_sysfs(root)
    answer = cadvisor(minor, root)
    assert ("error" if answer.get("error") else "reads") == CADVISOR_ON_BREAKS[how], answer


# --- numaspec's side alone (no Go needed) -------------------------------------------------------


def test_caches_stop_at_the_first_incomplete_core(tmp_path: Path) -> None:
    """SYSFS-6: a core whose first thread lacks a cache file has no uncore cache, nor have
    the node's later cores (listing order); the earlier ones keep theirs."""
    root = _copy("two-socket-4numa", tmp_path)
    _edit(root, "one-core-without-cache-size")
    node_of_cpu1 = next(n for n in read_sysfs(root).numa_nodes
                        if any(1 in c.threads for c in n.cores))
    caches = [(min(c.threads), c.uncore_cache) for c in node_of_cpu1.cores]
    whole = next(n for n in read_sysfs(FIXTURES / "two-socket-4numa").numa_nodes
                 if n.id == node_of_cpu1.id)
    listed = sorted((min(c.threads) for c in whole.cores), key=lambda cpu: f"cpu{cpu}")
    stop = listed.index(1)
    expected = {cpu: (core.uncore_cache if listed.index(cpu) < stop else None)
                for core in whole.cores for cpu in [min(core.threads)]}
    assert dict(caches) == expected
    assert None in expected.values()


def test_no_numa_offline_cpu_is_not_modelled(tmp_path: Path) -> None:
    """SYSFS-7: without node directories an offline CPU would count in kubelet's capacity."""
    root = _copy("snc", tmp_path)
    _edit(root, "no-numa-directory")
    with pytest.raises(NotModelledError) as info:
        read_sysfs(root)
    assert info.value.where == str(root / "devices" / "system" / "cpu" / "online")
