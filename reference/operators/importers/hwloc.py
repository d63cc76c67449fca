"""The machine from hwloc's XML (``lstopo --of xml``, format 2.x), read into the same
:class:`~numaspec.node.machine.Machine` a sysfs tree gives (spec chapter ``machine-import.md``,
SYSFS-10).

hwloc's Linux backend reads the files cadvisor reads; its XML keeps what kubelet needs in
other words: a NUMANode's ``local_memory`` without its hugepages (hwloc subtracts them), the
hugepages as ``page_type`` children, the cores' ``core_id`` and the packages' ids as
``os_index``, and the distance matrix as a ``distances2`` element indexed by node os_index.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping

from numaspec.errors import InputFileError, NotModelledError, NumaspecError
from numaspec.node.machine import Core, Device, Machine, NumaNode
from numaspec.operators.importers.files import read_bytes
from numaspec.operators.importers.sysfs import (
    HUGEPAGE_KB,
    DeviceSelector,
    PciDevice,
    resolve_devices,
)

__all__ = ["read_lstopo_xml"]

_MAX_XML_BYTES = 64 << 20
_IO_TYPES = {"Bridge", "PCIDev", "OSDev", "Misc"}
_CACHE_LEVEL = {"L3Cache": 3, "L4Cache": 4, "L5Cache": 5}
_PCI_TYPE = re.compile(r"^([0-9a-fA-F]{4}) \[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]")
_PCI_ADDRESS = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


class _Tree:
    """The object tree with parent links and file-relative names for errors."""

    def __init__(self, root: ET.Element, path: str):
        self.path = path
        self.parent: dict[ET.Element, ET.Element] = {}
        for parent in root.iter("object"):
            for child in parent.findall("object"):
                self.parent[child] = parent

    def where(self, obj: ET.Element, attr: str | None = None) -> str:
        label = f"object[type={obj.get('type')}"
        if obj.get("os_index") is not None:
            label += f", os_index={obj.get('os_index')}"
        elif obj.get("gp_index") is not None:
            label += f", gp_index={obj.get('gp_index')}"
        label += "]"
        return f"{self.path}: {label}" + (f".{attr}" if attr else "")

    def ancestors(self, obj: ET.Element) -> Iterator[ET.Element]:
        while obj in self.parent:
            obj = self.parent[obj]
            yield obj

    def int_attr(self, obj: ET.Element, name: str, *, required: bool = True) -> int | None:
        raw = obj.get(name)
        if raw is None:
            if required:
                raise InputFileError(f"missing attribute {name}", where=self.where(obj))
            return None
        text = raw.strip()
        if not text.isdigit() or len(text) > 20:
            raise InputFileError(f"not a non-negative integer: {raw[:40]!r}",
                                 where=self.where(obj, name))
        return int(text)


def _parse(path: str) -> ET.Element:
    data = read_bytes(path, limit=_MAX_XML_BYTES)
    if b"<!ENTITY" in data:
        raise InputFileError("XML entity declarations are refused (hwloc writes none)",
                             where=path)
    try:
        root = ET.fromstring(data)  # no entities (checked above), size bounded
    except ET.ParseError as exc:
        raise InputFileError(f"not XML: {exc}", where=path) from None
    if root.tag != "topology":
        raise InputFileError(f"the root element is <{root.tag}>, not hwloc's <topology>",
                             where=path)
    version = root.get("version", "")
    if not version.startswith("2."):
        raise NotModelledError(
            f"hwloc XML format {version or '1.x'!r}: numaspec reads format 2.x (hwloc 2's "
            "lstopo --of xml)", where=f"{path}: topology.version")
    return root


def _pu_numa(tree: _Tree, pu: ET.Element) -> ET.Element:
    """SYSFS-10: a PU's NUMA node is the NUMANode attached to its nearest ancestor that has
    NUMANode children; several there cannot be told apart."""
    for ancestor in tree.ancestors(pu):
        numa = [c for c in ancestor.findall("object") if c.get("type") == "NUMANode"]
        if len(numa) == 1:
            return numa[0]
        if numa:
            raise NotModelledError(
                "several NUMA nodes are attached to one object (e.g. DRAM and HBM): which "
                "owns the CPUs is not in the XML", where=tree.where(ancestor))
    raise InputFileError("the PU has no NUMA node", where=tree.where(pu))


def _first(tree: _Tree, obj: ET.Element, kind: str) -> ET.Element | None:
    for ancestor in tree.ancestors(obj):
        if ancestor.get("type") == kind:
            return ancestor
    return None


def _pus_below(obj: ET.Element) -> int:
    return sum(1 for o in obj.iter("object") if o.get("type") == "PU")


def _distances(tree: _Tree, root: ET.Element, ids: list[int]) -> dict[int, tuple[int, ...]]:
    """SYSFS-10: the NUMANode latency matrix, each row in ascending node id order (the
    kernel's row order)."""
    found = [d for d in root.findall("distances2") if d.get("type") == "NUMANode"
             and d.get("name") in (None, "", "NUMALatency")]
    if not found:
        return {}
    element = found[0]
    where = f"{tree.path}: distances2[type=NUMANode]"
    if element.get("indexing") != "os":
        raise NotModelledError(f"indexing {element.get('indexing')!r}: numaspec reads "
                               "os-indexed distances", where=where)
    words: dict[str, list[int]] = {}
    for tag in ("indexes", "u64values"):
        words[tag] = []
        for part in element.findall(tag):
            for value in (part.text or "").split():
                if not value.isdigit() or len(value) > 20:
                    raise InputFileError(f"not a non-negative integer: {value[:40]!r}",
                                         where=f"{where}.{tag}")
                words[tag].append(int(value))
    order = words["indexes"]
    if sorted(order) != sorted(ids) or len(set(order)) != len(order):
        raise InputFileError(f"indexes {order} are not the machine's NUMA nodes {ids}",
                             where=f"{where}.indexes")
    n = len(order)
    values = words["u64values"]
    if len(values) != n * n:
        raise InputFileError(f"{len(values)} values for {n} nodes (needs {n * n})",
                             where=f"{where}.u64values")
    position = {node: i for i, node in enumerate(order)}
    return {node: tuple(values[position[node] * n + position[other]] for other in sorted(ids))
            for node in ids}


def _pci(tree: _Tree, root: ET.Element, all_nodes: dict[ET.Element, int]
         ) -> dict[str, PciDevice]:
    """SYSFS-10: PCI devices and their NUMA node: the NUMA nodes attached in or below the
    nearest non-I/O ancestor (none for a device attached to the whole machine)."""
    found: dict[str, PciDevice] = {}
    machine_nodes = set(all_nodes.values())
    for obj in root.iter("object"):
        if obj.get("type") != "PCIDev":
            continue
        address = (obj.get("pci_busid") or "").lower()
        kind = _PCI_TYPE.match(obj.get("pci_type") or "")
        if not _PCI_ADDRESS.match(address) or not kind:
            raise InputFileError("a PCIDev needs pci_busid (dddd:bb:dd.f) and pci_type "
                                 "('cccc [vvvv:dddd] ...')", where=tree.where(obj))
        local = next(a for a in tree.ancestors(obj) if a.get("type") not in _IO_TYPES)
        nodes: set[int] = set()
        for holder in (local, *tree.ancestors(local)):
            nodes = {all_nodes[o] for o in holder.iter("object") if o in all_nodes}
            if nodes:
                break
        numa: tuple[int, ...]
        if local is root.find("object") and len(machine_nodes) > 1:
            numa = ()
        elif len(nodes) == 1:
            numa = (next(iter(nodes)),)
        else:
            raise NotModelledError(
                f"PCI device {address} is local to NUMA nodes {sorted(nodes)}: a device "
                "plugin reports one node (read it from sysfs instead)", where=tree.where(obj))
        found[address] = PciDevice(address, kind.group(2).lower(), kind.group(3).lower(),
                                   kind.group(1).lower(), numa, tree.where(obj))
    return found


def read_lstopo_xml(path: str | os.PathLike[str], *,
                    devices: Mapping[str, DeviceSelector] | None = None) -> Machine:
    """SYSFS-10: the machine of an hwloc 2.x XML file (``lstopo --of xml``).

    ``devices``: as for :func:`~numaspec.operators.importers.sysfs.read_sysfs`, matched against the
    XML's PCIDev objects (a class prefix matches hwloc's 4-digit class, never 6 digits).
    """
    where = os.fspath(path)
    root = _parse(where)
    tree = _Tree(root, where)
    numa_objs = [o for o in root.iter("object") if o.get("type") == "NUMANode"]
    if not numa_objs:
        raise InputFileError("no NUMANode object", where=where)
    ids: dict[ET.Element, int] = {}
    for obj in numa_objs:
        node_id = tree.int_attr(obj, "os_index")
        assert node_id is not None
        if node_id in ids.values():
            raise InputFileError(f"NUMA node {node_id} is listed twice", where=tree.where(obj))
        ids[obj] = node_id
    # cores per NUMA node: PU -> (its Core object or itself)
    cores: dict[int, dict[ET.Element, list[ET.Element]]] = {n: {} for n in ids.values()}
    seen: set[int] = set()
    for pu in root.iter("object"):
        if pu.get("type") != "PU":
            continue
        cpu = tree.int_attr(pu, "os_index")
        assert cpu is not None
        if cpu in seen:
            raise InputFileError(f"CPU {cpu} is listed twice", where=tree.where(pu))
        seen.add(cpu)
        node = ids[_pu_numa(tree, pu)]
        core = _first(tree, pu, "Core") or pu
        cores[node].setdefault(core, []).append(pu)
    nodes = []
    hugepages: dict[int, dict[int, int]] = {}
    for obj, node_id in ids.items():
        # the first page_type is the normal page size; the others are hugepages
        hugepages[node_id] = {}
        for page in obj.findall("page_type")[1:]:
            size = tree.int_attr(page, "size")
            count = tree.int_attr(page, "count")
            assert size is not None and count is not None
            hugepages[node_id][size // 1024] = count
    table: dict[int, dict[str, int]] = {}
    for node_id, sizes in hugepages.items():
        table[node_id] = {}
        for size_kb, count in sizes.items():
            if size_kb in HUGEPAGE_KB:
                table[node_id][HUGEPAGE_KB[size_kb]] = count
            elif any(s.get(size_kb, 0) for s in hugepages.values()):
                raise NotModelledError(
                    f"{size_kb} kB hugepages are pre-allocated; numaspec models only 2Mi "
                    "and 1Gi pages", where=f"{where}: NUMANode {node_id}.page_type")
    distances = _distances(tree, root, sorted(ids.values()))
    for obj, node_id in ids.items():
        node_cores = []
        groups = cores[node_id]
        for core_obj, pus in groups.items():
            package = _first(tree, pus[0], "Package")
            if package is None:
                raise InputFileError("the PU has no Package (socket)", where=tree.where(pus[0]))
            die = _first(tree, pus[0], "Die")
            uncore = None
            per_node = len(groups) * len(pus)
            for ancestor in tree.ancestors(pus[0]):
                if ancestor.get("type") in _CACHE_LEVEL and _pus_below(ancestor) != per_node:
                    uncore = tree.int_attr(ancestor, "os_index", required=False)
                    break
            node_cores.append(Core(
                socket=tree.int_attr(package, "os_index") or 0,
                threads=tuple(sorted(tree.int_attr(p, "os_index") or 0 for p in pus)),
                core_id=(tree.int_attr(core_obj, "os_index", required=False)
                         if core_obj.get("type") == "Core" else None),
                die=tree.int_attr(die, "os_index", required=False) if die is not None else None,
                uncore_cache=uncore))
        nodes.append((node_id, obj, sorted(node_cores, key=lambda c: min(c.threads))))
    numa_nodes = []
    for node_id, obj, node_cores in nodes:
        memory = tree.int_attr(obj, "local_memory", required=False) or 0
        memory += sum(size * 1024 * count for size, count in hugepages[node_id].items())
        numa_nodes.append(NumaNode(node_id, memory, table[node_id],
                                   distances.get(node_id), tuple(node_cores)))
    found: dict[str, tuple[Device, ...]] = {}
    if devices:
        found = resolve_devices(devices, _pci(tree, root, ids), ids.values(), where)
    try:
        return Machine(tuple(numa_nodes), found)
    except NumaspecError as exc:
        raise InputFileError(f"{exc.message} ({exc.where})", where=where) from None
