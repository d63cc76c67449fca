"""dra-driver-cpu's own publishing and prepare code (adapters/peers/dra-driver-cpu), and its
promise end to end: a Guaranteed container's CPUs asked for through a claim, allocated by
numaspec's DRA allocator (spec/dra/dra.md) over the devices the driver publishes and prepared by
the driver, beside what kubelet's CPU Manager gives the same container on the same machine
(numaspec's node model).  The table this computes is the end-to-end table of
adapters/peers/dra-driver-cpu/FINDINGS.md (``tools/numaspec_tools/regenerate.py --only dracpu``
rewrites it;
tests/upstream/peers/test_dracpu.py checks it is current).
"""

from __future__ import annotations

import json
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import attrs

from numaspec.node.machine import Machine
from numaspec.node.nodeconfig import format_cpuset, parse_cpuset
from numaspec.operators.importers.sysfs import read_sysfs
from numaspec.protocols.adapter_protocol import reference_result
from numaspec_tools import FIXTURES, REPO, vector_pieces

SYSFS = FIXTURES / "sysfs"
FINDINGS = REPO / "adapters" / "peers" / "dra-driver-cpu" / "FINDINGS.md"
#: the kubelet release the driver's parity table cites
RELEASE = "1.35"
DRIVER = "dra.cpu"
BEGIN, END = "<!-- e2e table: begin -->", "<!-- e2e table: end -->"


def driver(adapter: Path, command: str, tree: Path, *args: str) -> dict[str, Any]:
    """``adapter publish|prepare --sysfs tree args``'s JSON."""
    done = subprocess.run([str(adapter), command, "--sysfs", str(tree), *args],
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"{adapter.name} {command} {tree.name} {' '.join(args)}: "
                             f"{done.stderr.strip()}")
    return dict(json.loads(done.stdout))


@cache
def _read(tree: Path) -> Machine:
    """numaspec's importer on a sysfs tree, once per tree (every row reads it several times)."""
    return read_sysfs(tree)


def machine_json(tree: Path) -> dict[str, Any]:
    """The machine numaspec reads from a sysfs tree, in the node protocol's words."""
    machine = _read(tree)
    nodes = []
    for node in machine.numa_nodes:
        cores = []
        for core in node.cores:
            entry: dict[str, Any] = {"socket": core.socket, "threads": list(core.threads)}
            if core.core_id is not None:
                entry["id"] = core.core_id  # as sysfs numbers it (kubelet does not read it)
            if core.uncore_cache is not None:
                entry["uncoreCache"] = core.uncore_cache
            cores.append(entry)
        nodes.append({"id": node.id, "memory": "64Gi", "cores": cores})
    return {"numaNodes": nodes}


@attrs.frozen
class Scenario:
    """One row: a machine, the CPUs set aside (the driver's --reserved-cpus, kubelet's
    reservedSystemCPUs), how many CPUs the container asks for, and on what they must agree
    (``numa`` or ``socket``)."""

    tree: str
    reserved: str
    count: int
    align: str
    #: the set-aside CPUs are held by another claim (individual mode: their devices are
    #: allocated) rather than reserved; the grouped driver and kubelet see them reserved
    in_use: bool = False

    @property
    def attribute(self) -> str:
        return f"{DRIVER}/{'numaNodeID' if self.align == 'numa' else 'socketID'}"


#: kubelet's static policy needs some CPUs reserved, so every row sets some aside: a whole
#: core, one thread of a core, or one thread on each socket
SCENARIOS = (
    Scenario("two-socket-4numa", "0,16", 4, "numa"),
    Scenario("two-socket-4numa", "0", 4, "numa"),
    Scenario("two-socket-4numa", "0-1", 4, "numa"),
    Scenario("two-socket-4numa", "0,16", 3, "numa"),
    Scenario("two-socket-4numa", "0", 7, "numa"),
    Scenario("two-socket-4numa", "0,16", 6, "socket"),
    Scenario("two-socket-4numa", "0", 6, "socket"),
    Scenario("two-socket-4numa", "0", 2, "numa", in_use=True),
    Scenario("two-socket-4numa", "0,2,4", 4, "numa", in_use=True),
    Scenario("snc", "0,8", 6, "numa"),
    Scenario("snc", "0", 4, "numa"),
)


def _slices(devices: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"metadata": {"name": "cpus"},
             "spec": {"driver": DRIVER, "nodeName": "node-a",
                      "pool": {"name": "node-a", "generation": 0, "resourceSliceCount": 1},
                      "devices": devices}}]


def individual_case(devices: list[dict[str, Any]], s: Scenario) -> dict[str, Any]:
    """The allocate case of the row in individual mode: one request of ``count`` CPU devices
    of the driver's class, with matchAttribute on the NUMA node or socket; the devices of CPUs
    in use are allocated."""
    held = parse_cpuset(s.reserved, where="reserved") if s.in_use else frozenset()
    allocated = [f"{DRIVER}/node-a/{d['name']}" for d in devices
                 if d["attributes"][f"{DRIVER}/cpuID"]["int"] in held]
    return {"release": RELEASE, "features": [], "node": {"name": "node-a"},
            "slices": _slices(devices),
            "classes": [{"metadata": {"name": DRIVER}, "spec": {"selectors": [
                {"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}],
            "allocated": allocated,
            "claims": [{"metadata": {"name": "cpus", "namespace": "default"},
                        "spec": {"devices": {
                            "requests": [{"name": "cpus", "exactly": {
                                "deviceClassName": DRIVER, "count": s.count}}],
                            "constraints": [{"requests": ["cpus"],
                                             "matchAttribute": s.attribute}]}}}]}


def kubelet_session(tree: Path, s: Scenario) -> dict[str, Any]:
    """The node session of the row: the static policy with the options the driver builds in
    (uncore-cache alignment, strict reservation), the Topology Manager's single-numa-node for
    a NUMA row and restricted with align-by-socket for a socket row, and one Guaranteed pod."""
    options = {"prefer-align-cpus-by-uncorecache": "true", "strict-cpu-reservation": "true"}
    config: dict[str, Any] = {"cpuManagerPolicy": "static",
                              "topologyManagerPolicy": "single-numa-node"}
    if s.align == "socket":
        options["align-by-socket"] = "true"
        config["topologyManagerPolicy"] = "restricted"
        config["featureGates"] = {"CPUManagerPolicyAlphaOptions": True}
    config["cpuManagerPolicyOptions"] = options
    config["reservedSystemCPUs"] = s.reserved
    pod = {"uid": "p", "containers": [{"name": "c", "resources": {
        "limits": {"cpu": str(s.count), "memory": "1Gi"}}}]}
    return {"steps": [{"op": "create", "node": {"kubeletVersion": RELEASE,
                                                 "machine": machine_json(tree),
                                                 "config": config}},
                      {"op": "admit", "pod": pod}]}


def grouped_cpus_case(tree: Path, s: Scenario, device: dict[str, Any]) -> dict[str, Any]:
    """What prepareGroupedResourceClaim asks TakeByTopologyNUMAPacked: the CPUs of the
    device's NUMA node or socket that are free, and the count, with the uncore-cache option
    the driver always applies."""
    attrs_ = device["attributes"]
    key, field = (("numaNodeID", "numa") if s.align == "numa" else ("socketID", "socket"))
    wanted = attrs_[f"{DRIVER}/{key}"]["int"]
    held = parse_cpuset(s.reserved, where="reserved")
    group = [t for n in _read(tree).numa_nodes for core in n.cores for t in core.threads
             if (n.id if field == "numa" else core.socket) == wanted]
    return {"kubelet_version": RELEASE, "machine": machine_json(tree),
            "available": sorted(set(group) - held), "count": s.count,
            "options": {"prefer-align-cpus-by-uncorecache": "true"}}


def _cpus_of(answer: dict[str, Any]) -> list[int] | str:
    decision = answer["answers"][1]["decision"]
    if not decision["admitted"]:
        return f"refused ({decision['reason']})"
    return sorted(decision["containers"][0]["cpus"])


@attrs.frozen
class Row:
    scenario: Scenario
    individual: list[int] | str
    grouped: list[int] | str
    group: str
    kubelet: list[int] | str
    allocate_case: dict[str, Any]
    allocate_answer: dict[str, Any]
    #: what the grouped prepare asked the driver's allocator: the group's free CPUs and the
    #: count (a ``cpus`` case), or None when no group had room
    cpus_case: dict[str, Any] | None


def _where(tree: Path, cpus: list[int] | str) -> str:
    if isinstance(cpus, str):
        return cpus
    topo = {t: (n.id, core.socket, min(core.threads)) for n in _read(tree).numa_nodes
            for core in n.cores for t in core.threads}
    numas = sorted({topo[c][0] for c in cpus})
    sockets = sorted({topo[c][1] for c in cpus})
    cores = {topo[c][2] for c in cpus}
    whole = sum(1 for k in cores if all(t in cpus for t, v in topo.items() if v[2] == k))
    return (f"{format_cpuset(cpus)} (NUMA {','.join(map(str, numas))}; socket "
            f"{','.join(map(str, sockets))}; {whole} whole core{'s' if whole != 1 else ''} "
            f"of {len(cores)})")


def compute(adapter: Path) -> list[Row]:
    """Every scenario's row."""
    rows = []
    for s in SCENARIOS:
        tree = SYSFS / s.tree
        flags = ("--reserved", s.reserved)
        published = driver(adapter, "publish", tree, "--mode", "individual",
                           *(() if s.in_use else flags))
        case = individual_case(published["devices"], s)
        answer = reference_result("allocate", case)
        if answer.get("outcome") == "allocated":
            names = [d["device"] for d in answer["claims"][0]["devices"]]
            prepared = driver(adapter, "prepare", tree, "--mode", "individual",
                              *(() if s.in_use else flags),
                              "--claims", json.dumps([{"devices": names}]))["prepared"][0]
            individual: list[int] | str = prepared.get("cpus") or prepared["error"]
        else:
            individual = f"unschedulable ({answer.get('message', '')})"
        group_by = "numanode" if s.align == "numa" else "socket"
        groups = driver(adapter, "publish", tree, "--mode", "grouped", "--group-by", group_by,
                        *flags)["devices"]
        # consumable capacity is outside DRA-0: the first group device with room, as the
        # allocator takes devices in the order of the slice (DRA-2)
        room = [d for d in groups
                if int(d["capacity"]["dra.cpu/cpu"]["value"]) >= s.count]
        if room:
            prepared = driver(adapter, "prepare", tree, "--mode", "grouped", "--group-by",
                              group_by, *flags, "--claims", json.dumps(
                                  [{"devices": [room[0]["name"]], "cpus": s.count}])
                              )["prepared"][0]
            grouped: list[int] | str = prepared.get("cpus") or prepared["error"]
            group = room[0]["name"]
            cpus_case: dict[str, Any] | None = grouped_cpus_case(tree, s, room[0])
        else:
            grouped, group, cpus_case = "no group device has room", "-", None
        kubelet = _cpus_of(reference_result("node", kubelet_session(tree, s)))
        rows.append(Row(s, individual, grouped, group, kubelet, case, answer, cpus_case))
    return rows


def table(rows: list[Row]) -> str:
    """The end-to-end table, as FINDINGS.md shows it."""
    lines = ["| machine (sysfs fixture) | set aside | asks | must share | DRA + driver, "
             "individual | DRA + driver, grouped (device) | CPU Manager, kubelet " + RELEASE
             + " |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        s = r.scenario
        tree = SYSFS / s.tree
        aside = f"{s.reserved} ({'in use' if s.in_use else 'reserved'})"
        lines.append(f"| {s.tree} | {aside} | {s.count} CPUs | "
                     f"{'NUMA node' if s.align == 'numa' else 'socket'} | "
                     f"{_where(tree, r.individual)} | {_where(tree, r.grouped)} "
                     f"({r.group}) | {_where(tree, r.kubelet)} |")
    return "\n".join(lines) + "\n"


def rewrite(text: str, rendered: str) -> str:
    """FINDINGS.md's text with the table between its markers replaced."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{rendered}{END}{tail}"


#: The vectors' folder and name: spec/vectors/dra/dra-cpu-driver.json, in numbered pieces
#: when it is larger than a vector file is kept whole (numaspec_tools.vector_pieces).
VECTORS = (REPO / "spec" / "vectors" / "dra", "dra-cpu-driver")
_SOURCE = ("kubernetes-sigs/dra-driver-cpu v0.2.0's own code run by "
           "adapters/peers/dra-driver-cpu on the sysfs fixture tests/fixtures/sysfs/{tree}")


def _slug(s: Scenario) -> str:
    aside = s.reserved.replace("-", "to").replace(",", ".")
    return (f"{s.tree}-{'inuse' if s.in_use else 'reserved'}-{aside}-{s.count}-"
            f"{'numa' if s.align == 'numa' else 'socket'}")


def vectors(rows: list[Row]) -> list[dict[str, Any]]:
    """The rows as vectors (answers left to fill): each row's allocate case of individual mode
    (the DRA allocator over the devices the driver published), and the cpus case its grouped
    prepare hands the driver's allocator."""
    out: list[dict[str, Any]] = []
    for r in rows:
        s = r.scenario
        aside = f"CPUs {s.reserved} {'in use by another claim' if s.in_use else 'reserved'}"
        where = "one NUMA node" if s.align == "numa" else "one socket"
        out.append({
            "id": f"dracpu-individual-{_slug(s)}",
            "description": (f"dra-driver-cpu individual mode on {s.tree}, {aside}: {s.count} "
                            f"CPU devices with matchAttribute {s.attribute} ({where}); the "
                            "allocator takes the first devices in the slice's order"),
            "rules": ["DRA-3", "DRA-6", "DRA-14"], "op": "allocate", "derived": "reference",
            "case": r.allocate_case,
            "notes": _SOURCE.format(tree=s.tree) + " (publish --mode individual); the "
                     "end-to-end table of adapters/peers/dra-driver-cpu/FINDINGS.md"})
        if r.cpus_case is not None:
            out.append({
                "id": f"dracpu-grouped-{_slug(s)}",
                "description": (f"dra-driver-cpu grouped mode on {s.tree}, {aside}: the "
                                f"{s.count} CPUs its prepare takes from {r.group}'s free CPUs "
                                "(core ids as sysfs gives them)"),
                "rules": ["CPU-10", "CPU-19", "CPU-21"], "op": "cpus",
                "derived": "reference", "case": r.cpus_case,
                "notes": _SOURCE.format(tree=s.tree) + " (prepareGroupedResourceClaim calls "
                         "TakeByTopologyNUMAPacked on these CPUs); the expected answer is "
                         "kubelet's allocator's (numaspec's reference)"})
    return out


def stored_vectors() -> list[dict[str, Any]]:
    """The vectors of spec/vectors/dra/dra-cpu-driver.json (or its pieces) as stored; none
    before the first run."""
    folder, name = VECTORS
    try:
        return vector_pieces.read(name, folder)
    except FileNotFoundError:
        return []


def write_vectors(rows: list[Row]) -> None:
    """spec/vectors/dra/dra-cpu-driver.json (in pieces when large): the rows' vectors; a stored
    vector whose case has not changed keeps its expected answer, a new or changed one gets the
    reference's (to review: CONTRIBUTING.md, "Generated files")."""
    stored = {v["id"]: v for v in stored_vectors()}
    out = []
    for vector in vectors(rows):
        old = stored.get(vector["id"])
        if old is not None and old["case"] == vector["case"]:
            vector["expected"] = old["expected"]
        else:
            vector["expected"] = reference_result(vector["op"], vector["case"])
        # the cpus vectors at the release the driver's parity table cites; the allocator's at
        # every release whose allocator takes resource.k8s.io/v1, as the driver publishes
        vector["releases"] = RELEASE if vector["op"] == "cpus" else "1.34\u20131.37"
        out.append({k: vector[k] for k in ("id", "description", "rules", "op", "derived",
                                           "case", "expected", "notes", "releases")})
    vector_pieces.write(*VECTORS, out)


def regenerate(adapter: Path) -> None:
    """``tools/numaspec_tools/regenerate.py --only dracpu``: the end-to-end table and its
    vectors."""
    rows = compute(adapter)
    FINDINGS.write_text(rewrite(FINDINGS.read_text(encoding="utf-8"), table(rows)),
                        encoding="utf-8")
    write_vectors(rows)
