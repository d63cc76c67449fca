"""The machine importers: a sysfs tree and hwloc's XML -> Machine (spec chapter
``machine-import.md``).  Checks SYSFS-1, SYSFS-2, SYSFS-3, SYSFS-4, SYSFS-5, SYSFS-6,
SYSFS-7, SYSFS-8, SYSFS-9 and SYSFS-10.  Broken trees are built in tmp_path from a fixture.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import attrs
import pytest

from numaspec.errors import InputFileError, NotModelledError
from numaspec.node.machine import Core, Device, Machine
from numaspec.operators.importers.hwloc import read_lstopo_xml
from numaspec.operators.importers.sysfs import DeviceSelector, read_device_map, read_sysfs
from numaspec_tools import FIXTURES
from numaspec_tools.testing.sysfs_breaks import BREAKS, break_tree, node_dir

FIXTURES = FIXTURES / "sysfs"
TWO = FIXTURES / "two-socket-4numa"
SNC = FIXTURES / "snc"
DEVICE_MAP = FIXTURES / "two-socket-4numa.devices.yaml"
CORE_IDS = [0, 1, 2, 4, 8, 9, 10, 12]


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst, symlinks=True)
    return dst




# --- SYSFS-1, SYSFS-2, SYSFS-3, SYSFS-4, SYSFS-5, SYSFS-6, SYSFS-8: the two-socket machine --


def test_two_socket_machine() -> None:
    """SYSFS-1, SYSFS-2, SYSFS-3, SYSFS-4, SYSFS-5, SYSFS-6, SYSFS-8."""
    machine = read_sysfs(TWO, devices=read_device_map(DEVICE_MAP),
                         meminfo=FIXTURES / "two-socket-4numa.meminfo")
    assert machine.numa_ids == (0, 1, 2, 3)
    assert machine.sockets() == {0, 1}
    kb = {0: 16185996, 1: 16513792, 2: 16513792, 3: 16494328}
    pages = {0: (512, 2), 1: (0, 1), 2: (256, 0), 3: (0, 0)}
    for node in machine.numa_nodes:
        socket = node.id // 2
        ks = range(4) if node.id % 2 == 0 else range(4, 8)
        assert node.cores == tuple(
            Core(socket=socket, threads=(2 * k + socket, 2 * k + socket + 16),
                 core_id=CORE_IDS[k], die=0, uncore_cache=socket) for k in ks)
        assert node.memory == kb[node.id] * 1024
        assert node.hugepages == {"hugepages-2Mi": pages[node.id][0],
                                  "hugepages-1Gi": pages[node.id][1]}
        assert node.distances == tuple(10 if m == node.id else 11 if m // 2 == socket else 21
                                       for m in range(4))
    assert machine.devices == {
        "intel.com/sriov_netdevice": (Device("0000:18:02.1", (1,)),),
        "nvidia.com/gpu": (Device("GPU-9f3c", (2,)),),
    }
    # kubelet's view: a core is named by its lowest thread, whatever core_id says
    topo = machine.cpu_topology()
    assert {c.cpu: c.core for c in topo.cpus}[18] == 2


def test_snc_machine_offline_nodes_and_cpus_memory_only_node() -> None:
    """SYSFS-1 (offline nodes absent, memory-only node kept), SYSFS-2 (offline CPU 15
    skipped), SYSFS-5 (rows per online node, kept short: finding #5), SYSFS-6 (an L3 as
    large as the node is no uncore cache; an offline sibling makes it one)."""
    machine = read_sysfs(SNC)
    assert machine.numa_ids == (0, 1, 4)
    node0, node1, cxl = machine.numa_nodes
    assert node0.cores == tuple(Core(0, (k, k + 8), core_id=k) for k in range(4))
    assert node1.cores == (*(Core(0, (k, k + 8), core_id=k, uncore_cache=1)
                             for k in range(4, 7)), Core(0, (7,), core_id=7, uncore_cache=1))
    assert cxl.cores == ()
    assert cxl.memory == 16 << 30
    assert [n.distances for n in machine.numa_nodes] == [(10, 12, 24), (12, 10, 24),
                                                         (24, 24, 10)]
    assert all(n.hugepages == {"hugepages-2Mi": 128 if n.id != 4 else 0, "hugepages-1Gi": 0}
               for n in machine.numa_nodes)


def test_no_numa_directory_one_node_per_package(tmp_path: Path) -> None:
    """SYSFS-7: without node directories cadvisor makes a node per package, no memory."""
    root = _copy(TWO, tmp_path)
    shutil.rmtree(root / "devices" / "system" / "node")
    machine = read_sysfs(root)
    assert machine.numa_ids == (0, 1)
    assert all(n.memory == 0 and n.hugepages == {} and n.distances is None
               for n in machine.numa_nodes)
    assert [len(n.cores) for n in machine.numa_nodes] == [8, 8]


def test_no_online_file_means_every_cpu_online(tmp_path: Path) -> None:
    """SYSFS-2: no cpu/online file: every CPU is online (cadvisor's IsCPUOnline)."""
    root = _copy(TWO, tmp_path)
    (root / "devices" / "system" / "cpu" / "online").unlink()
    assert read_sysfs(root) == read_sysfs(TWO)


# --- SYSFS-10: hwloc's XML agrees with the sysfs tree -------------------------------------


def _without_die(machine: Machine) -> Machine:
    return Machine(tuple(attrs.evolve(n, cores=tuple(attrs.evolve(c, die=None)
                                                     for c in n.cores))
                         for n in machine.numa_nodes), machine.devices)


def test_hwloc_xml_agrees_with_sysfs() -> None:
    """SYSFS-10 (hwloc has no Die level when a package has one die)."""
    devices = read_device_map(DEVICE_MAP)
    from_xml = read_lstopo_xml(FIXTURES / "two-socket-4numa.xml", devices=devices)
    from_sysfs = read_sysfs(TWO, devices=devices)
    assert from_xml == _without_die(from_sysfs)


def test_hwloc_refusals(tmp_path: Path) -> None:
    """SYSFS-9, SYSFS-10: v1 format, entities, broken distances."""
    text = (FIXTURES / "two-socket-4numa.xml").read_text()
    cases = {
        "v1.xml": (text.replace('version="2.0"', ""), NotModelledError, "topology.version"),
        "ent.xml": (text.replace("<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">",
                                 '<!DOCTYPE t [<!ENTITY a "b">]>'), InputFileError, "ent.xml"),
        "dist.xml": (text.replace("0 1 2 3 </indexes>", "0 1 2 </indexes>"), InputFileError,
                     "distances2[type=NUMANode].indexes"),
        "bad.xml": ("<topology", InputFileError, "bad.xml"),
        "mem.xml": (text.replace('local_memory="', 'local_memory="x'), InputFileError,
                    "os_index=0].local_memory"),
    }
    for name, (body, error, where) in cases.items():
        path = tmp_path / name
        path.write_text(body)
        with pytest.raises(error) as info:
            read_lstopo_xml(path)
        assert where in info.value.where, (name, info.value.where)
        assert str(path) in info.value.where


# --- SYSFS-8: device maps ------------------------------------------------------------------


def test_device_selectors(tmp_path: Path) -> None:
    """SYSFS-8: a class prefix, numa_node -1 (no topology), bad maps."""
    root = _copy(TWO, tmp_path)
    (root / "bus" / "pci" / "devices" / "0000:18:02.1" / "numa_node").write_text("-1\n")
    machine = read_sysfs(root, devices={"example.com/nic": DeviceSelector(class_prefix="02")})
    assert machine.devices == {"example.com/nic": (Device("0000:18:02.1", ()),)}
    bad = {
        "a.yaml": ("gpu: {vendor: '10de'}\n", "a.yaml: gpu"),
        "b.yaml": ("x.com/g: {pci: ['18:02.1']}\n", "a.yaml"),
        "c.yaml": ("x.com/g: {vendor: 'zz'}\n", "x.com/g.vendor"),
        "d.yaml": ("x.com/g: {device: '20b0'}\n", "x.com/g.device"),
        "e.yaml": ("[unclosed\n", "e.yaml"),
        "f.yaml": ("x.com/g: {class: '03', colour: red}\n", "x.com/g"),
    }
    for name, (body, _where) in bad.items():
        path = tmp_path / name
        path.write_text(body)
        with pytest.raises(InputFileError) as info:
            read_device_map(path)
        assert info.value.where.startswith(str(path))
    with pytest.raises(InputFileError, match="matches no PCI device"):
        read_sysfs(TWO, devices={"x.com/g": DeviceSelector(vendor="1234")})
    with pytest.raises(InputFileError, match=r"no PCI device 0000:00:00\.0"):
        read_sysfs(TWO, devices={"x.com/g": DeviceSelector(addresses=("0000:00:00.0",))})
    both = {"x.com/a": DeviceSelector(vendor="10de"), "x.com/b": DeviceSelector(class_prefix="03")}
    with pytest.raises(InputFileError, match="claimed by both"):
        read_sysfs(TWO, devices=both)
    (root / "bus" / "pci" / "devices" / "0000:18:02.1" / "numa_node").write_text("7\n")
    with pytest.raises(InputFileError) as info:
        read_sysfs(root, devices={"x.com/n": DeviceSelector(class_prefix="0200")})
    assert info.value.where.endswith("0000:18:02.1/numa_node")


# --- SYSFS-9: every broken tree is refused, naming the file --------------------------------






@pytest.mark.parametrize("how", BREAKS)
def test_broken_tree_names_the_file(tmp_path: Path, how: str) -> None:
    """SYSFS-9 (and SYSFS-2..SYSFS-6 for what each file must hold)."""
    root = _copy(TWO, tmp_path)
    where = break_tree(root, how)
    with pytest.raises(InputFileError) as info:
        read_sysfs(root)
    assert info.value.kind == "invalid-input-file"
    assert info.value.where == where


def test_unmodelled_hugepage_size(tmp_path: Path) -> None:
    """SYSFS-4: other sizes are dropped when no page is pre-allocated, refused otherwise."""
    root = _copy(SNC, tmp_path)
    for node in (0, 1, 4):
        path = node_dir(root, node) / "hugepages" / "hugepages-16384kB" / "nr_hugepages"
        path.parent.mkdir()
        path.write_text("0\n")
    assert read_sysfs(root) == read_sysfs(SNC)
    path = node_dir(root, 1) / "hugepages" / "hugepages-16384kB" / "nr_hugepages"
    path.write_text("4\n")
    with pytest.raises(NotModelledError) as info:
        read_sysfs(root)
    assert info.value.where == str(path)


def test_meminfo_must_add_up(tmp_path: Path) -> None:
    """SYSFS-3: /proc/meminfo's MemTotal is the sum of the nodes' (a check only)."""
    path = tmp_path / "meminfo"
    path.write_text("MemTotal:       1024 kB\n")
    with pytest.raises(InputFileError) as info:
        read_sysfs(TWO, meminfo=path)
    assert info.value.where == str(path)


def test_not_a_tree(tmp_path: Path) -> None:
    """SYSFS-9: a root that is not a directory, a tree without any CPU."""
    with pytest.raises(InputFileError):
        read_sysfs(tmp_path / "absent")
    (tmp_path / "devices" / "system" / "cpu").mkdir(parents=True)
    with pytest.raises(InputFileError) as info:
        read_sysfs(tmp_path)
    assert info.value.where == str(tmp_path / "devices" / "system" / "cpu")
