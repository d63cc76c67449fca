"""kubernetes-sigs/dra-driver-cpu as a peer of the CPU Manager (issue 35): the adapter over its
own code (adapters/peers/dra-driver-cpu) run by the suite with its manifest, its findings,
its publishing and prepare code on the sysfs trees numaspec's importer reads, the end-to-end
table of its FINDINGS.md, and the differential against kubelet's allocator."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from numaspec.conformance.cases.judges import compare
from numaspec.conformance.implementations.connection import connect
from numaspec.conformance.properties.random_cases import CaseShape
from numaspec.conformance.running.differential import differential
from numaspec.conformance.running.reports import read_report
from numaspec.conformance.running.runner import RunConfig, run_conformance
from numaspec.operators.importers.sysfs import read_sysfs
from numaspec.protocols.adapter_protocol import reference_result
from numaspec_tools import dracpu
from numaspec_tools.builds.peers import ROOT, VERSIONS, binary, start_answer

PEER = "dra-driver-cpu"
MANIFEST = str(ROOT / "expectations" / f"{PEER}-{VERSIONS[PEER]}.json")
FINDINGS = ROOT / PEER / "findings.json"
TREES = [dracpu.SYSFS / "two-socket-4numa", dracpu.SYSFS / "snc"]
#: the marker that starts the driver's own answer in a finding's notes
ANSWER = "peer answer ("


def _adapter() -> Path:
    return binary(PEER)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(_adapter()), *args], capture_output=True, text=True,
                          timeout=120)


def test_the_suite_passes_against_the_driver(tmp_path: Path) -> None:
    """The driver's allocator through the suite, strictly, with its manifest: the cpus
    vectors of its release pass or fail as DRACPU-1 says, P-CPUS explores past DRACPU-1's
    cases and finds nothing else."""
    printed = io.StringIO()
    status = run_conformance(RunConfig(impl=f"exec:{_adapter()}", out=str(tmp_path),
                                       strict=True, expectations=MANIFEST, timeout=60.0,
                                       profile="ci"), stream=printed)
    assert status == 0, printed.getvalue()[-6000:]
    _, records, _ = read_report(tmp_path / "report.jsonl")
    passed = [r for r in records if r["verdict"] == "passed" and r["op"] == "cpus"]
    assert len(passed) >= 10, printed.getvalue()[-3000:]
    prop = next(r for r in records if r["id"] == "P-CPUS")
    assert prop["verdict"] in ("passed", "xfailed"), prop
    # the vectors without the uncore-cache option are not claimed: the driver always aligns;
    # and a vector of a kubelet release whose allocator the driver does not vendor (1.38's) is
    # not sent: the driver does not declare it
    skipped = [r for r in records if r["op"] == "cpus" and r["verdict"] == "skipped"]
    assert any(r.get("skip_source") == "not-claimed" for r in skipped)
    assert {r.get("skip_source") for r in skipped} <= {"not-claimed", "undeclared"}
    assert all(r["id"].endswith("1.38") for r in skipped if r.get("skip_source") == "undeclared")


def test_the_adapter_declares_its_claims() -> None:
    raw = start_answer(_adapter())
    assert raw["name"] == PEER
    assert raw["version"] == VERSIONS[PEER].removeprefix("v")
    assert raw["operations"] == ["cpus"]
    assert raw["node_kubelet_versions"] == ["1.35"]
    assert raw["claims"]["cpus"] == {"options": {"prefer-align-cpus-by-uncorecache": "true"}}


def test_the_findings_still_hold() -> None:
    """DRACPU-1's minimal vectors: numaspec's answer is the recorded one, the driver's the
    one its notes record, and they differ."""
    vectors = json.loads(FINDINGS.read_text(encoding="utf-8"))["vectors"]
    assert vectors
    connection = connect(f"exec:{_adapter()}", timeout=60.0, strict=True)
    try:
        answers = connection.run_many("cpus", [v["case"] for v in vectors])
    finally:
        connection.close()
    for vector, answer in zip(vectors, answers, strict=True):
        assert reference_result("cpus", vector["case"]) == vector["expected"], vector["id"]
        assert answer.status == "result", (vector["id"], answer)
        assert answer.result == _peer(vector), (vector["id"], answer.result)
        assert compare("cpus", vector["case"], vector["expected"], answer.result)
    outside = next(v for v in vectors if v["id"].endswith("cpus-of-another-socket"))
    taken = set(_peer(outside)["cpus"])
    assert taken - set(outside["case"]["available"]), "it takes CPUs it was not given"


def _peer(vector: dict[str, Any]) -> Any:
    notes = vector["notes"]
    return json.loads(notes[notes.index(ANSWER):].split("): ", 1)[1])


def _prepare(*args: str) -> list[dict[str, Any]]:
    done = _run("prepare", "--sysfs", str(TREES[0]), "--mode", "grouped", "--group-by",
                "numanode", *args)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout)["prepared"])


def test_dracpu_1_in_the_drivers_own_prepare() -> None:
    """DRACPU-1 through prepareGroupedResourceClaim on the two-socket fixture: a claim on NUMA
    node 0's device gets CPUs of socket 1, a reserved one, and another claim's."""
    socket_of = {t: core.socket for n in read_sysfs(TREES[0]).numa_nodes for core in n.cores
                 for t in core.threads}
    alone = _prepare("--reserved", "0", "--claims",
                     json.dumps([{"devices": ["cpudevnuma000"], "cpus": 4}]))[0]["cpus"]
    assert alone == [2, 3, 18, 19]
    assert {socket_of[c] for c in alone} == {0, 1}
    reserved = _prepare("--reserved", "0,3", "--claims",
                        json.dumps([{"devices": ["cpudevnuma000"], "cpus": 4}]))[0]["cpus"]
    assert 3 in reserved
    first, second = _prepare("--reserved", "0", "--claims", json.dumps(
        [{"devices": ["cpudevnuma002"], "cpus": 4}, {"devices": ["cpudevnuma000"], "cpus": 4}]))
    assert set(first["cpus"]) & set(second["cpus"]) == {3, 19}


@pytest.mark.parametrize("tree", [*TREES, Path("/sys")], ids=lambda p: p.name or "sys")
def test_the_driver_reads_the_machine_numaspec_reads(tree: Path) -> None:
    """SYSFS-1, SYSFS-2, SYSFS-6: the driver's own topology reading (pkg/cpuinfo) and
    numaspec's importer agree CPU by CPU on a sysfs tree: online CPUs, NUMA node, socket,
    core_id; the L3 groups are the same sets where cadvisor reports an uncore cache."""
    try:
        machine = read_sysfs(tree)
    except Exception as exc:  # this machine's /sys may not be one the importer reads
        if tree == Path("/sys"):
            pytest.skip(f"numaspec's importer cannot read this machine's /sys: {exc}")
        raise
    done = _run("publish", "--sysfs", str(tree))
    assert done.returncode == 0, done.stderr
    read = {c["cpu"]: c for c in json.loads(done.stdout)["topology"]["cpus"]}
    ours = {t: (n.id, core.socket, core.core_id, core.uncore_cache)
            for n in machine.numa_nodes for core in n.cores for t in core.threads}
    assert sorted(read) == sorted(ours)
    for cpu, (numa, socket, core_id, _) in ours.items():
        assert (read[cpu]["numa"], read[cpu]["socket"], read[cpu]["core"]) == (
            numa, socket, core_id), cpu
    groups: dict[int, set[int]] = {}
    for cpu, c in read.items():
        groups.setdefault(c["uncore"], set()).add(cpu)
    for cpu, (*_, uncore) in ours.items():
        if uncore is not None:
            assert groups[read[cpu]["uncore"]] == {t for t, v in ours.items()
                                                   if v[3] == uncore}, cpu


@pytest.mark.parametrize("tree", TREES, ids=lambda p: p.name)
def test_what_the_driver_publishes(tree: Path) -> None:
    """DRA-14's attributes, one device per CPU not reserved (StrictCPUReservation: a reserved
    CPU is in no device and in no group's capacity), siblings next to each other in the device
    order; grouped: one device per NUMA node counting its CPUs not reserved."""
    machine = read_sysfs(tree)
    where = {t: (n.id, core.socket, min(core.threads)) for n in machine.numa_nodes
             for core in n.cores for t in core.threads}
    reserved = {0, min(t for t in where if t != 0)}
    flags = ("--reserved", ",".join(map(str, sorted(reserved))))
    devices = json.loads(_run("publish", "--sysfs", str(tree), *flags).stdout)["devices"]
    cpus = [d["attributes"]["dra.cpu/cpuID"]["int"] for d in devices]
    assert sorted(cpus) == sorted(set(where) - reserved)
    assert [d["name"] for d in devices] == [f"cpudev{i:03d}" for i in range(len(devices))]
    for device, cpu in zip(devices, cpus, strict=True):
        attributes = device["attributes"]
        assert attributes["dra.cpu/numaNodeID"]["int"] == where[cpu][0]
        assert attributes["dra.net/numaNode"]["int"] == where[cpu][0]
        assert attributes["dra.cpu/socketID"]["int"] == where[cpu][1]
    # a core's free threads are next to each other in the order
    order = [where[c][2] for c in cpus]
    assert all(order.index(core) + sum(1 for o in order if o == core) - 1
               == len(order) - 1 - order[::-1].index(core) for core in set(order))
    grouped = json.loads(_run("publish", "--sysfs", str(tree), "--mode", "grouped",
                              *flags).stdout)["devices"]
    capacity = {d["attributes"]["dra.cpu/numaNodeID"]["int"]:
                int(d["capacity"]["dra.cpu/cpu"]["value"]) for d in grouped}
    expected = {n.id: sum(1 for core in n.cores for t in core.threads if t not in reserved)
                for n in machine.numa_nodes if n.cores}
    assert capacity == expected


def test_the_end_to_end_table_and_vectors_are_current() -> None:
    """The FINDINGS.md table and spec/vectors/dra/dra-cpu-driver-*.json are what the driver's code,
    numaspec's allocator and numaspec's node model give today (``numaspec-dev regenerate
    --only dracpu`` rewrites both); and the cpus operation, on what a grouped prepare asks,
    answers what the driver's prepare gives (the adapter's topology is the driver's)."""
    rows = dracpu.compute(_adapter())
    text = dracpu.FINDINGS.read_text(encoding="utf-8")
    assert dracpu.rewrite(text, dracpu.table(rows)) == text, (
        "the end-to-end table is stale: run numaspec-dev regenerate --only dracpu")
    stored = {v["id"]: v for v in dracpu.stored_vectors()}
    fresh = dracpu.vectors(rows)
    assert sorted(stored) == sorted(v["id"] for v in fresh)
    for vector in fresh:
        assert stored[vector["id"]]["case"] == vector["case"], (
            f"{vector['id']} is stale: run numaspec-dev regenerate --only dracpu")
    connection = connect(f"exec:{_adapter()}", timeout=60.0)
    try:
        for row in rows:
            if row.cpus_case is not None:
                answer = connection.run("cpus", row.cpus_case)
                assert answer.result == {"cpus": row.grouped}, row.scenario
    finally:
        connection.close()


def test_every_random_disagreement_is_dracpu_1() -> None:
    """The differential (issue 35's campaign is 20,000 cases; FINDINGS.md has its figures):
    with cores named as sysfs names them every disagreement is DRACPU-1's, booked by the
    manifest's class entry; named as kubelet names them there is none."""
    shape = CaseShape("cpus")
    sysfs = differential(f"exec:{_adapter()}", cases=1_500, shape=shape, shrink=0,
                         expectations=MANIFEST)
    assert sysfs.verdicts.get("agreed", 0) > 500, sysfs.summary()
    assert sysfs.disagreements, sysfs.summary()
    assert sysfs.unexplained == [], sysfs.unexplained[:2]
    unique = differential(f"exec:{_adapter()} --core-ids unique", cases=1_500, shape=shape,
                          shrink=0)
    assert unique.disagreements == [], unique.disagreements[:2]
    assert unique.verdicts["agreed"] == 1_500


@pytest.mark.parametrize(("args", "says"), [
    (["publish"], "--sysfs is required"),
    (["publish", "--sysfs", "/nonexistent"], "--sysfs /nonexistent: not a directory"),
    (["publish", "--sysfs", ".", "--mode", "bunched"], "--mode must be individual or grouped"),
    (["publish", "--sysfs", ".", "--group-by", "die"], "--group-by must be numanode"),
    (["publish", "--sysfs", ".", "--reserved", "x"], "--reserved \"x\""),
    (["prepare", "--sysfs", str(TREES[0])], "--claims is required"),
    (["prepare", "--sysfs", str(TREES[0]), "--claims", "{"], "--claims:"),
    (["publish", "--sysfs", "."], "failed to get online CPUs"),
])
def test_a_bad_command_is_one_line_naming_what(args: list[str], says: str) -> None:
    done = _run(*args)
    assert done.returncode == 2, done
    assert says in done.stderr, done.stderr
    assert "goroutine" not in done.stderr
    assert done.stdout == ""
