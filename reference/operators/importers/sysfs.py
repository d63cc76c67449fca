"""The machine from a Linux sysfs tree, read as kubelet's cadvisor reads it (spec chapter
``machine-import.md``, SYSFS-1..SYSFS-9).

kubelet takes its machine from cadvisor's ``MachineInfo.Topology``
(``utils/sysinfo/sysinfo.go``, ``GetNodesInfo``): the NUMA node directories, the CPU links in
each, every online CPU's ``topology/core_id`` and ``physical_package_id``, the node's
``meminfo``, its ``hugepages`` and its ``distance`` row, and the caches of a core's first
thread.  :func:`read_sysfs` reads the same files under any root (a copy of ``/sys`` works) and
refuses, with an :class:`~numaspec.errors.InputFileError` naming the file, every tree it would
otherwise have to guess about.

Devices are not cadvisor's: a device plugin reports them.  A small map (:func:`read_device_map`)
says which PCI devices back which extended resource; each device's NUMA node is the PCI
device's ``numa_node`` file, as the common device plugins read it (SYSFS-8).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs
import yaml

from numaspec.errors import InputFileError, NotModelledError, NumaspecError
from numaspec.limits import MAX_CPU_ID, MAX_DEVICES
from numaspec.node.machine import Core, Device, Machine, NumaNode
from numaspec.operators.importers.files import read_bytes

__all__ = [
    "DeviceSelector",
    "PciDevice",
    "read_device_map",
    "read_sysfs",
    "resolve_devices",
]

#: The most bytes read from one sysfs file (real ones are a page at most).
_MAX_FILE_BYTES = 1 << 20
#: The most directory entries looked at in one directory.
_MAX_ENTRIES = 65536
#: SYSFS-4: hugepage sizes (kB, as the kernel names the directory) numaspec models.
HUGEPAGE_KB: Mapping[int, str] = {2048: "hugepages-2Mi", 1048576: "hugepages-1Gi"}

_NODE_DIR = re.compile(r"^node(\d+)$")
_CPU_DIR = re.compile(r"^cpu(\d+)$")
_HUGEPAGE_DIR = re.compile(r"^hugepages-(\d+)kB$")
_INT = re.compile(r"^-?\d{1,20}$")
_PCI_ADDRESS = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_HEX = re.compile(r"^(?:0x)?([0-9a-f]{1,6})$")
_MEMTOTAL = re.compile(r"MemTotal:\s*([0-9]{1,20}) kB")
#: SYSFS-6: the files cadvisor reads of each cache index (``GetCacheInfo``), and a size.
_CACHE_FILES = ("id", "size", "level", "type", "shared_cpu_map")
_CACHE_SIZE = re.compile(r"^\d{1,20}K$")


# --- reading files ---------------------------------------------------------------------------


def _read(path: Path) -> str:
    data = read_bytes(path, limit=_MAX_FILE_BYTES)
    try:
        return data.decode("ascii")
    except UnicodeDecodeError:
        raise InputFileError("not ASCII text", where=str(path)) from None


def _int(path: Path, text: str | None = None) -> int:
    value = (_read(path) if text is None else text).strip()
    if not _INT.match(value):
        raise InputFileError(f"not an integer: {value[:40]!r}", where=str(path))
    return int(value)


def _listdir(path: Path) -> list[str]:
    try:
        with os.scandir(path) as entries:
            names = []
            for entry in entries:
                names.append(entry.name)
                if len(names) > _MAX_ENTRIES:
                    raise InputFileError(f"more than {_MAX_ENTRIES} entries", where=str(path))
            return sorted(names)
    except FileNotFoundError:
        raise InputFileError("missing directory", where=str(path)) from None
    except NotADirectoryError:
        raise InputFileError("not a directory", where=str(path)) from None
    except OSError as exc:
        raise InputFileError(f"cannot list: {exc.strerror or exc}", where=str(path)) from None


def _numbered(path: Path, pattern: re.Pattern[str]) -> list[tuple[int, str]]:
    """Entries named ``<prefix><number>``, in the order Go's filepath.Glob returns them
    (lexical), with their number."""
    found = []
    for name in _listdir(path):
        match = pattern.match(name)
        if match:
            number = int(match.group(1))
            found.append((number, name))
    return found


def parse_cpulist(path: Path, text: str | None = None) -> list[int]:
    """A kernel CPU list (``0-3,8,10-11``; empty: none), each id at most MAX_CPU_ID."""
    value = (_read(path) if text is None else text).strip()
    cpus: list[int] = []
    if not value:
        return cpus
    for part in value.split(","):
        bounds = part.split("-")
        if len(bounds) > 2 or not all(b.isdigit() and len(b) <= 6 for b in bounds):
            raise InputFileError(f"not a CPU list: {value[:40]!r}", where=str(path))
        low, high = int(bounds[0]), int(bounds[-1])
        if low > high or high > MAX_CPU_ID:
            raise InputFileError(f"bad range {part!r} in a CPU list (ids 0..{MAX_CPU_ID})",
                                 where=str(path))
        cpus.extend(range(low, high + 1))
    return cpus


def _cpumap_bits(path: Path) -> int:
    """SYSFS-6: the number of CPUs in a ``shared_cpu_map`` (comma-separated hex words)."""
    text = _read(path).strip()
    count = 0
    for raw in text.split(","):
        word = raw.strip()
        if not word or len(word) > 16 or any(c not in "0123456789abcdefABCDEF" for c in word):
            raise InputFileError(f"not a CPU bitmap: {text[:40]!r}", where=str(path))
        count += bin(int(word, 16)).count("1")
    return count


# --- devices ---------------------------------------------------------------------------------


def _hex_id(value: object, where: str, digits: int) -> str:
    text = str(value).strip().lower() if isinstance(value, (str, int)) else ""
    match = _HEX.match(text)
    if isinstance(value, bool) or not match or len(match.group(1)) > digits:
        raise InputFileError(f"expected a hexadecimal id of at most {digits} digits "
                             f"(e.g. '10de'), not {value!r}", where=where)
    return match.group(1)


@attrs.frozen
class DeviceSelector:
    """SYSFS-8: which PCI devices back one extended resource: explicit PCI addresses, or every
    device matching ``vendor`` (and ``device``) ids and/or a ``class_prefix`` (hex, as in the
    ``class`` file without ``0x``: ``02`` network, ``0200`` Ethernet, ``0302`` 3D).
    ``ids`` renames devices (PCI address -> the id the device plugin uses); by default a
    device's id is its PCI address."""

    addresses: tuple[str, ...] = ()
    vendor: str | None = None
    device: str | None = None
    class_prefix: str | None = None
    ids: Mapping[str, str] = attrs.field(factory=dict)

    def matches(self, pci: PciDevice) -> bool:
        if self.addresses:
            return pci.address in self.addresses
        return ((self.vendor is None or pci.vendor == self.vendor)
                and (self.device is None or pci.device == self.device)
                and (self.class_prefix is None or pci.class_code.startswith(self.class_prefix)))


@attrs.frozen
class PciDevice:
    """A PCI device as read from sysfs or hwloc: ids in lowercase hex without ``0x``
    (class: six digits), its NUMA nodes (``()``: none)."""

    address: str
    vendor: str
    device: str
    class_code: str
    numa: tuple[int, ...]
    where: str


def read_device_map(path: str | os.PathLike[str]) -> dict[str, DeviceSelector]:
    """SYSFS-8: a YAML (or JSON) mapping of extended resource name to a selector::

        intel.com/sriov_net: {pci: ["0000:18:02.1"]}
        nvidia.com/gpu: {vendor: "10de", device: "20b0", ids: {"0000:af:00.0": GPU-0}}
        example.com/nic: {class: "0200"}
    """
    where = str(path)
    raw = read_bytes(path, limit=_MAX_FILE_BYTES)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        body = yaml.load(raw, Loader=loader)  # a safe loader
    except yaml.YAMLError as exc:
        raise InputFileError(f"not YAML or JSON: {str(exc).splitlines()[0]}",
                             where=where) from None
    if not isinstance(body, dict) or not body:
        raise InputFileError("expected a mapping of extended resource name to a device "
                             "selector", where=where)
    selectors: dict[str, DeviceSelector] = {}
    for resource, raw_selector in body.items():
        rw = f"{where}: {resource}"
        if not isinstance(resource, str) or "/" not in resource:
            raise InputFileError("a device plugin resource is an extended resource name such "
                                 "as 'example.com/gpu'", where=rw)
        if not isinstance(raw_selector, dict):
            raise InputFileError("expected a mapping with 'pci', or 'vendor'/'device'/'class'",
                                 where=rw)
        unknown = set(raw_selector) - {"pci", "vendor", "device", "class", "ids"}
        if unknown:
            raise InputFileError(f"unknown field(s) {sorted(map(str, unknown))}", where=rw)
        addresses: tuple[str, ...] = ()
        if "pci" in raw_selector:
            listed = raw_selector["pci"]
            if not isinstance(listed, list) or not listed:
                raise InputFileError("expected a non-empty list of PCI addresses",
                                     where=f"{rw}.pci")
            for index, address in enumerate(listed):
                if not isinstance(address, str) or not _PCI_ADDRESS.match(address.lower()):
                    raise InputFileError(f"not a PCI address (dddd:bb:dd.f): {address!r}",
                                         where=f"{rw}.pci[{index}]")
            addresses = tuple(a.lower() for a in listed)
            if len(set(addresses)) != len(addresses):
                raise InputFileError("a PCI address is listed twice", where=f"{rw}.pci")
            if {"vendor", "device", "class"} & set(raw_selector):
                raise InputFileError("give either 'pci' addresses or ids/class, not both",
                                     where=rw)
        elif not {"vendor", "class"} & set(raw_selector):
            raise InputFileError("a selector needs 'pci', 'vendor' or 'class'", where=rw)
        if "device" in raw_selector and "vendor" not in raw_selector:
            raise InputFileError("a device id needs its vendor id", where=f"{rw}.device")
        vendor = (_hex_id(raw_selector["vendor"], f"{rw}.vendor", 4)
                  if "vendor" in raw_selector else None)
        device = (_hex_id(raw_selector["device"], f"{rw}.device", 4)
                  if "device" in raw_selector else None)
        class_prefix = (_hex_id(raw_selector["class"], f"{rw}.class", 6)
                        if "class" in raw_selector else None)
        ids: dict[str, str] = {}
        raw_ids = raw_selector.get("ids", {})
        if not isinstance(raw_ids, dict):
            raise InputFileError("expected a mapping of PCI address to device id",
                                 where=f"{rw}.ids")
        for address, name in raw_ids.items():
            if not isinstance(address, str) or not _PCI_ADDRESS.match(address.lower()):
                raise InputFileError(f"not a PCI address: {address!r}", where=f"{rw}.ids")
            if not isinstance(name, str) or not name:
                raise InputFileError("a device id is a non-empty string",
                                     where=f"{rw}.ids.{address}")
            ids[address.lower()] = name
        selectors[resource] = DeviceSelector(addresses, vendor, device, class_prefix, ids)
    return selectors


def resolve_devices(selectors: Mapping[str, DeviceSelector], pci: Mapping[str, PciDevice],
                    numa_ids: Iterable[int], where: str) -> dict[str, tuple[Device, ...]]:
    """SYSFS-8: each resource's devices, in PCI address order.  A selector that matches no
    device, an address the machine lacks, an ``ids`` entry for a device not selected, a device
    claimed by two resources and a NUMA node the machine lacks are refused."""
    known = set(numa_ids)
    claimed: dict[str, str] = {}
    result: dict[str, tuple[Device, ...]] = {}
    for resource, selector in selectors.items():
        rw = f"{where}: {resource}"
        for address in selector.addresses:
            if address not in pci:
                raise InputFileError(f"no PCI device {address} on the machine", where=rw)
        chosen = [pci[a] for a in sorted(pci) if selector.matches(pci[a])]
        if not chosen:
            raise InputFileError("the selector matches no PCI device of the machine", where=rw)
        for address in selector.ids:
            if address not in {d.address for d in chosen}:
                raise InputFileError(f"'ids' names {address}, which the selector does not "
                                     "select", where=f"{rw}.ids")
        devices = []
        for dev in chosen:
            if dev.address in claimed:
                raise InputFileError(f"PCI device {dev.address} is claimed by both "
                                     f"{claimed[dev.address]} and {resource}", where=rw)
            claimed[dev.address] = resource
            for numa in dev.numa:
                if numa not in known:
                    raise InputFileError(f"PCI device {dev.address} reports NUMA node {numa}, "
                                         "which the machine does not have", where=dev.where)
            devices.append(Device(selector.ids.get(dev.address, dev.address), dev.numa))
        result[resource] = tuple(devices)
    if len(claimed) > MAX_DEVICES:
        raise InputFileError(f"{len(claimed)} devices: numaspec accepts at most {MAX_DEVICES}",
                             where=where)
    return result


def _pci_devices(root: Path) -> dict[str, PciDevice]:
    """SYSFS-8: every PCI device under ``bus/pci/devices``: vendor, device, class and
    ``numa_node`` (-1: no NUMA node)."""
    base = root / "bus" / "pci" / "devices"
    found = {}
    for name in _listdir(base):
        if not _PCI_ADDRESS.match(name):
            continue
        path = base / name
        ids = {}
        for field, digits in (("vendor", 4), ("device", 4), ("class", 6)):
            file = path / field
            ids[field] = _hex_id(_read(file).strip().lower(), str(file), digits)
        numa_file = path / "numa_node"
        # SYSFS-8: no numa_node file (a kernel without NUMA): no NUMA node, as for -1.
        numa = _int(numa_file) if numa_file.exists() else -1
        if numa < -1:
            raise InputFileError(f"a NUMA node is -1 (none) or an id, not {numa}",
                                 where=str(numa_file))
        found[name] = PciDevice(name, ids["vendor"], ids["device"], ids["class"].rjust(6, "0"),
                                () if numa == -1 else (numa,), str(numa_file))
    return found


# --- the machine -----------------------------------------------------------------------------


@attrs.define
class _Cpu:
    cpu: int
    core_id: int
    package: int
    die: int | None
    path: Path


def _online_cpus(cpu_dir: Path) -> set[int] | None:
    """SYSFS-2: ``cpu/online``; ``None`` (every CPU online) when the file is absent."""
    path = cpu_dir / "online"
    if not path.exists():
        return None
    cpus = parse_cpulist(path)
    if not cpus:
        raise InputFileError("no CPU is online", where=str(path))
    return set(cpus)


def _read_cpu(path: Path, cpu: int) -> _Cpu:
    topo = path / "topology"
    die_path = topo / "die_id"
    die = _int(die_path) if die_path.exists() else None
    core_id = _int(topo / "core_id")
    package = _int(topo / "physical_package_id")
    if core_id < 0 or package < 0:
        raise InputFileError("a core or package id must not be negative", where=str(topo))
    return _Cpu(cpu, core_id, package, die, path)


def _group_cores(cpus: list[_Cpu]) -> list[list[_Cpu]]:
    """SYSFS-2: threads with the same core_id and package id, in listing order."""
    cores: dict[tuple[int, int], list[_Cpu]] = {}
    for cpu in cpus:
        cores.setdefault((cpu.core_id, cpu.package), []).append(cpu)
    return list(cores.values())


def _uncore_caches(groups: list[list[_Cpu]]) -> list[int | None]:
    """SYSFS-6: per core, the id of the first cache above level 2 that cadvisor files as the
    core's uncore cache (shared by a CPU count other than the node's cores times this core's
    threads), read from the core's first thread; ``None`` without cache information.

    cadvisor reads every ``index*`` of the core's first thread (``id``, ``size``, ``level``,
    ``type``, ``shared_cpu_map``); when one is missing (or the ``cache`` directory is) it stops
    reading caches for the node (``addCacheInfo`` returns), so that core and the node's later
    cores (in listing order) have none, while the earlier ones keep theirs."""
    result: list[int | None] = []
    stopped = False
    for threads in groups:
        first = threads[0]
        cache_dir = first.path / "cache"
        if stopped or not cache_dir.is_dir():
            stopped = True
            result.append(None)
            continue
        per_node = len(groups) * len(threads)
        uncore = None
        for name in _listdir(cache_dir):
            if not name.startswith("index"):
                continue
            index = cache_dir / name
            if not all((index / f).is_file() for f in _CACHE_FILES):
                stopped = True
                break
            cache_id = _int(index / "id")
            size = _read(index / "size").strip()
            if not _CACHE_SIZE.match(size):
                raise InputFileError(f"not a cache size in kB: {size[:40]!r}",
                                     where=str(index / "size"))
            level = _int(index / "level")
            bits = _cpumap_bits(index / "shared_cpu_map")
            if level > 2 and bits != per_node and uncore is None:
                uncore = cache_id
        result.append(None if stopped else uncore)
    return result


def _hugepages(node_dir: Path) -> dict[int, int]:
    """SYSFS-4: page size in kB -> pages, from ``hugepages/hugepages-<kB>kB/nr_hugepages``."""
    base = node_dir / "hugepages"
    if not base.is_dir():
        return {}
    pages = {}
    for size, name in _numbered(base, _HUGEPAGE_DIR):
        count = _int(base / name / "nr_hugepages")
        if count < 0:
            raise InputFileError("a page count must not be negative",
                                 where=str(base / name / "nr_hugepages"))
        pages[size] = count
    return pages


def _meminfo_bytes(path: Path) -> int:
    """SYSFS-3: the first ``MemTotal: N kB`` of a meminfo file, in bytes."""
    match = _MEMTOTAL.search(_read(path))
    if not match:
        raise InputFileError("no 'MemTotal: <n> kB' line", where=str(path))
    return int(match.group(1)) * 1024


def _distances(path: Path, online: int) -> tuple[int, ...] | None:
    """SYSFS-5: the kernel's row, one entry per online node in ascending id order, kept as
    it is (kubelet indexes it by node id: finding #5)."""
    if not path.exists():
        return None
    text = _read(path).strip()
    row = []
    for value in text.split(" "):
        if not value.isdigit() or len(value) > 20:
            raise InputFileError(f"not a list of non-negative integers: {text[:60]!r}",
                                 where=str(path))
        row.append(int(value))
    if len(row) != online:
        raise InputFileError(f"{len(row)} distances for {online} online NUMA nodes (the "
                             "kernel writes one per online node: the tree is incomplete)",
                             where=str(path))
    return tuple(row)


def _hugepage_table(found: dict[int, dict[int, int]], node_dirs: dict[int, Path]
                    ) -> dict[int, dict[str, int]]:
    """SYSFS-4: the kernel sizes -> numaspec's names, every node listing the same sizes."""
    sizes = {frozenset(p) for p in found.values()}
    if len(sizes) > 1:
        first = min(found)
        for node, pages in sorted(found.items()):
            if set(pages) != set(found[first]):
                raise InputFileError(
                    f"hugepage sizes {sorted(pages)} kB differ from node {first}'s "
                    f"{sorted(found[first])} kB (the kernel lists every size on every node)",
                    where=str(node_dirs[node] / "hugepages"))
    table: dict[int, dict[str, int]] = {}
    for node, pages in found.items():
        table[node] = {}
        for size, count in pages.items():
            if size in HUGEPAGE_KB:
                table[node][HUGEPAGE_KB[size]] = count
            elif any(p.get(size, 0) for p in found.values()):
                holder = min(n for n, p in found.items() if p.get(size, 0))
                raise NotModelledError(
                    f"{size} kB hugepages are pre-allocated; numaspec models only 2Mi and 1Gi "
                    "pages (kubelet would offer this size as its own resource)",
                    where=str(node_dirs[holder] / "hugepages" / f"hugepages-{size}kB"
                              / "nr_hugepages"))
    return table


def _machine(nodes: list[NumaNode], devices: dict[str, tuple[Device, ...]], where: str
             ) -> Machine:
    try:
        return Machine(tuple(nodes), devices)
    except NumaspecError as exc:
        raise InputFileError(f"{exc.message} ({exc.where})", where=where) from None


def _no_numa(cpu_dir: Path, online: set[int] | None) -> list[NumaNode]:
    """SYSFS-7: no node directory: cadvisor makes one node per physical package, with the
    package id as node id and no memory, hugepages or distances."""
    by_package: dict[int, list[_Cpu]] = {}
    for cpu, name in _numbered(cpu_dir, _CPU_DIR):
        if online is not None and cpu not in online:
            # getCPUTopology counts every cpuN directory, offline ones too, as the machine's
            # CPUs (MachineInfo.NumCores: kubelet's cpu capacity, topology.Discover's NumCPUs)
            raise NotModelledError(
                f"CPU {cpu} is offline on a machine without NUMA node directories: cadvisor "
                "then counts it in the machine's CPUs (kubelet's cpu capacity) though no core "
                "has it, which numaspec's machine cannot hold", where=str(cpu_dir / "online"))
        info = _read_cpu(cpu_dir / name, cpu)
        by_package.setdefault(info.package, []).append(info)
    if not by_package:
        raise InputFileError("no online CPU", where=str(cpu_dir))
    nodes = []
    for package, cpus in sorted(by_package.items()):
        groups = _group_cores(cpus)
        caches = _uncore_caches(groups)
        nodes.append(NumaNode(package, 0, {}, None, _cores(groups, caches)))
    return nodes


def _cores(groups: list[list[_Cpu]], caches: list[int | None]) -> tuple[Core, ...]:
    """SYSFS-2: the cores, ordered by their lowest thread (cadvisor lists them in the order of
    the node's ``cpuN`` entries; the order means nothing to kubelet)."""
    cores = (Core(socket=threads[0].package, threads=tuple(sorted(t.cpu for t in threads)),
                  core_id=threads[0].core_id, die=threads[0].die, uncore_cache=uncore)
             for threads, uncore in zip(groups, caches, strict=True))
    return tuple(sorted(cores, key=lambda core: min(core.threads)))


def _not_a_sysfs_root(base: Path) -> None:
    """SYSFS-9: a folder without ``devices/system/cpu`` is not a sysfs root: name the one
    below it that is (a copy of ``/sys`` given one level too high), else say what is
    missing."""
    below = sorted(child for child in base.iterdir()
                   if child.is_dir() and (child / "devices" / "system" / "cpu").is_dir()) \
        if os.access(base, os.R_OK) else []
    if below:
        raise InputFileError(f"not a sysfs root (no devices/system/cpu), but {below[0]} is: "
                             f"give --sysfs {below[0]}", where=str(base))
    raise InputFileError("not a sysfs root: no devices/system/cpu (give the folder that "
                         "holds devices/ and bus/, such as /sys or its copy)", where=str(base))


def read_sysfs(root: str | os.PathLike[str] = "/sys", *,
               devices: Mapping[str, DeviceSelector] | None = None,
               meminfo: str | os.PathLike[str] | None = None) -> Machine:
    """SYSFS-1..SYSFS-9: the machine kubelet would see on the host whose sysfs is ``root``.

    ``devices``: extended resources and the PCI devices backing them (SYSFS-8).
    ``meminfo``: the host's ``/proc/meminfo``, only to check that the nodes' memory adds up
    to its ``MemTotal`` (SYSFS-3); kubelet's node capacity comes from it, not the machine.
    """
    base = Path(root)
    if not base.is_dir():
        raise InputFileError("not a directory (a sysfs root such as /sys)", where=str(base))
    cpu_dir = base / "devices" / "system" / "cpu"
    node_root = base / "devices" / "system" / "node"
    if not cpu_dir.is_dir():
        _not_a_sysfs_root(base)
    online = _online_cpus(cpu_dir)
    node_names = _numbered(node_root, _NODE_DIR) if node_root.is_dir() else []
    if not node_names:
        nodes = _no_numa(cpu_dir, online)
    else:
        nodes = _numa_nodes(node_root, node_names, online)
    if meminfo is not None:
        total = _meminfo_bytes(Path(meminfo))
        listed = sum(n.memory for n in nodes)
        if node_names and listed != total:
            raise InputFileError(
                f"MemTotal is {total // 1024} kB but the NUMA nodes' MemTotal add up to "
                f"{listed // 1024} kB: the files are not from one machine at one time",
                where=str(meminfo))
    found_devices: dict[str, tuple[Device, ...]] = {}
    if devices:
        found_devices = resolve_devices(devices, _pci_devices(base), (n.id for n in nodes),
                                        str(base / "bus" / "pci" / "devices"))
    return _machine(nodes, found_devices, str(base))


def _numa_nodes(node_root: Path, node_names: list[tuple[int, str]], online: set[int] | None
                ) -> list[NumaNode]:
    node_dirs = {node: node_root / name for node, name in node_names}
    if len(node_dirs) != len(node_names):
        raise InputFileError("a NUMA node directory is listed twice", where=str(node_root))
    online_file = node_root / "online"
    if online_file.exists():
        listed = set(parse_cpulist(online_file))
        if listed != set(node_dirs):
            raise InputFileError(
                f"lists nodes {sorted(listed)} online but the tree has node directories "
                f"{sorted(node_dirs)} (the kernel has a directory for every online node)",
                where=str(online_file))
    owner: dict[int, Path] = {}
    hugepages: dict[int, dict[int, int]] = {}
    partial = []
    for node, path in sorted(node_dirs.items()):
        cpus = []
        cpu_names = _numbered(path, _CPU_DIR)
        if not cpu_names and (path / "cpulist").exists() and parse_cpulist(path / "cpulist"):
            raise InputFileError(
                "cpulist names CPUs but the node has no cpuN links (cadvisor reads the "
                "links: copy the tree with its symlinks)", where=str(path / "cpulist"))
        for cpu, name in cpu_names:
            if cpu in owner:
                raise InputFileError(f"CPU {cpu} is also listed on {owner[cpu]}",
                                     where=str(path / name))
            owner[cpu] = path
            if online is not None and cpu not in online:
                continue
            cpus.append(_read_cpu(path / name, cpu))
        groups = _group_cores(cpus)
        caches = _uncore_caches(groups)
        if not (path / "meminfo").exists():
            raise InputFileError("missing file: a NUMA node's memory comes from its meminfo "
                                 "(cadvisor would count 0 bytes: the tree is incomplete)",
                                 where=str(path / "meminfo"))
        memory = _meminfo_bytes(path / "meminfo")
        hugepages[node] = _hugepages(path)
        distances = _distances(path / "distance", len(node_dirs))
        partial.append((node, memory, distances, _cores(groups, caches)))
    table = _hugepage_table(hugepages, node_dirs)
    return [NumaNode(node, memory, table[node], distances, cores)
            for node, memory, distances, cores in partial]
