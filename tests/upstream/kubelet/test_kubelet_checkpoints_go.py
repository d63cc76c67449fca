"""kubelet's own state-file writers and readers, run by the test command (spec chapter
checkpoints.md: CKPT-1..6, CKPT-8).

tests/operators/test_checkpoints.py reads the committed fixtures (tests/fixtures/state/) without
Go; here
the programs that wrote them (adapters/kubelet/checkpoints/, one per release: 1.30, 1.36,
1.37, 1.38) are built for the run's releases (tools/numaspec_tools/builds/kubelet.py: 1.37 and
1.38 every run, 1.30 and 1.36 with their rotation groups; 1.38 with the Go toolchain its
releases.json row names)
and run:

* writers: each program writes its scenarios again into a temporary directory, and every file
  it writes must equal the committed fixture byte for byte (the files carry no time stamps, so
  a difference is a finding: a stale fixture, or a release that changed its format);
* readers: ``checkpoints read DIR`` opens the three files with the release's own readers
  (``cpumanager/state`` and ``memorymanager/state`` ``NewCheckpointState``, the Device
  Manager's checkpoint through ``checkpointmanager``, with its v1 fall back before 1.31), and
  answers what each restored or the error it refused it with.  Every file numaspec writes
  (the operator fixtures' ``state/`` directories, made by ``state_files``, and the kubelet
  fixtures written again by the encoders, CKPT-8) must be accepted with the same content; and
  on every file of every release's fixtures, unchanged and edited (checksum off by one,
  checksum 0, ``dataChecksum`` off by one, cut in half), numaspec's reader and the release
  must agree on accepting it and, when both accept, on what it holds.  numaspec's verdict for
  a release is ``read_*`` plus ``FORMAT_READ_BY`` (which formats the release reads);
* restarts (OPS-2, findings 22 and 59): ``checkpoints restart DIR N`` starts the release's own
  Memory Manager N times on the files numaspec writes for each session of
  ``tests/fixtures/restarts.json``; it must always start, always refuse, or do both (its
  check ranges over Go maps), as numaspec's restart verdict says.

The programs build from the same module cache as the node adapters and share most compiled
packages with them (the build cache); each is its own link.  Skipped, saying why, when Go is
missing or the release is not in the run (a failure under ``NUMASPEC_REQUIRE_KUBELET=1``).
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from numaspec.errors import CorruptCheckpointError, InputFileError
from numaspec.node.nodeconfig import parse_cpuset
from numaspec.operators.importers.checkpoints import (
    FORMAT_READ_BY,
    encode_cpu_manager_state,
    encode_device_checkpoint,
    encode_memory_manager_state,
    read_cpu_manager_state,
    read_device_checkpoint,
    read_memory_manager_state,
    read_state_dir,
)
from numaspec_tools import FIXTURES
from numaspec_tools.builds import NO_DWARF
from numaspec_tools.builds import kubelet as kubelet_builds
from numaspec_tools.builds.go import built
from numaspec_tools.testing.restarts import (
    RESTARTS,
    restart_session,
    restart_verdict,
    round_trip,
    write_restart_machine,
)

STATE = FIXTURES / "state"
OPERATOR = FIXTURES / "operator"
PROGRAMS = kubelet_builds.ROOT / "checkpoints"
#: The releases with a checkpoints program (adapters/kubelet/checkpoints/v1_N).
MINORS = ("1.30", "1.36", "1.37", "1.38")
#: Files kept by hand beside the written ones (adapters/kubelet/checkpoints/README.md).
BY_HAND = {"pods.yaml", "machine.json", "kubelet-config.yaml"}
CPU, MEM, DEV = "cpu_manager_state", "memory_manager_state", "kubelet_internal_checkpoint"
PATHS = {CPU: CPU, MEM: MEM, DEV: f"device-plugins/{DEV}"}


def _tags(minor: str) -> str:
    return ",".join(f"kubelet1.{i}" for i in range(1, int(minor.split(".")[1]) + 1))


@cache
def _build(minor: str) -> str | None:
    """Build release ``minor``'s checkpoints program into adapters/kubelet/bin (under the
    adapters' build lock); None when built, else why not."""
    if shutil.which("go") is None:
        return "Go is not installed, so the kubelet checkpoint programs cannot be built"
    directory = PROGRAMS / f"v1_{minor.split('.')[1]}"
    out = kubelet_builds.BIN / f"kubelet-checkpoints-{kubelet_builds.RELEASES[minor]}"
    kubelet_builds.BIN.mkdir(exist_ok=True)
    with (kubelet_builds.BIN / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(["go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w",
                               NO_DWARF, "-tags", _tags(minor),
                               "-o", str(out), "."], cwd=directory,
                              env=kubelet_builds.TABLE_RELEASES[minor].go_environment(),
                              capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        return (f"go build of adapters/kubelet/checkpoints/{directory.name} failed "
                f"({done.returncode}):\n{done.stderr[-3000:]}")
    return None


def program(minor: str) -> Path:
    """Release ``minor``'s built checkpoints program (skips when the release is not in this
    run; skips, or fails when required, when it cannot be built)."""
    if minor not in kubelet_builds.SELECTED:
        pytest.skip(f"kubelet {minor} is not in this run's releases (the report header names "
                    f"them); NUMASPEC_KUBELET_RELEASES={minor} or =all runs it")
    return built(kubelet_builds.BIN / f"kubelet-checkpoints-{kubelet_builds.RELEASES[minor]}",
                 _build(minor), "go build (tests/upstream/kubelet/test_kubelet_checkpoints_go.py)")


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


# --- writers -------------------------------------------------------------------------------


@pytest.mark.parametrize("minor", MINORS)
def test_the_fixtures_are_what_the_release_writes(minor: str, tmp_path: Path) -> None:
    """CKPT-1, CKPT-2, CKPT-3, CKPT-4, CKPT-6: the release's own code writes every committed
    fixture file again, byte for byte (and the checksums' go-spew texts, hashed.json)."""
    done = subprocess.run([str(program(minor)), str(tmp_path)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    committed = STATE / f"v1_{minor.split('.')[1]}"
    assert sorted(p.name for p in tmp_path.iterdir()) == \
        sorted(p.name for p in committed.iterdir() if p.is_dir())
    for scenario in sorted(committed.iterdir()):
        written = _files(tmp_path / scenario.name)
        kept = {k: v for k, v in _files(scenario).items() if Path(k).name not in BY_HAND}
        assert sorted(written) == sorted(kept), scenario
        for name, blob in written.items():
            assert blob == kept[name], (
                f"tests/fixtures/state/{committed.name}/{scenario.name}/{name} is not what "
                f"kubelet {minor} writes: regenerate (adapters/kubelet/checkpoints/README.md)")


# --- readers -------------------------------------------------------------------------------


def run_read(minor: str, directory: Path) -> dict[str, Any]:
    """``checkpoints read`` of release ``minor`` on a copy of ``directory`` (the readers
    write a fresh file where there was none, and may rewrite the others)."""
    work = directory.parent / f"{directory.name}.kubelet-{minor}"
    shutil.copytree(directory, work)
    try:
        done = subprocess.run([str(program(minor)), "read", str(work)], capture_output=True,
                              text=True, timeout=600)
    finally:
        shutil.rmtree(work)
    assert done.returncode == 0, done.stderr[-3000:]
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def kubelet_reads(minor: str, directory: Path) -> dict[str, Any]:
    """What release ``minor``'s readers restore from the files ``directory`` has, per file:
    ``{"error": ...}`` or the content, normalised as :func:`ours`."""
    out: dict[str, Any] = {}
    for name, got in run_read(minor, directory).items():
        if got["fresh"]:
            continue
        if "error" in got:
            out[name] = {"error": got["error"]}
        elif name == CPU:
            out[name] = {"default": _cpus(got["default"]),
                         "entries": {pod: {c: _cpus(t) for c, t in cs.items()}
                                     for pod, cs in got["entries"].items()},
                         "pods": {pod: _cpus(t) for pod, t in (got.get("pods") or {}).items()}}
        elif name == MEM:
            out[name] = {
                "machine": {int(n): {"assignments": s["numberOfAssignments"],
                                     "cells": list(s.get("cells") or []),
                                     "tables": {k: [t[f] for f in ("total", "systemReserved",
                                                                   "allocatable", "reserved",
                                                                   "free")]
                                                for k, t in (s.get("memoryMap") or {}).items()}}
                            for n, s in (got["machineState"] or {}).items()},
                "entries": {pod: {c: [_block(b) for b in bs or []] for c, bs in cs.items()}
                            for pod, cs in (got["entries"] or {}).items()},
                "pods": {pod: [_block(b) for b in bs or []]
                         for pod, bs in (got.get("pods") or {}).items()}}
        else:
            out[name] = {
                "format": got["format"],
                "entries": sorted([e["PodUID"], e["ContainerName"], e["ResourceName"],
                                   {int(n): list(ids or []) for n, ids in
                                    (e["DeviceIDs"] or {}).items()}]
                                  for e in got["entries"]),
                "registered": {r: list(ids or []) for r, ids in got["registered"].items()}}
    return out


def _cpus(text: str) -> list[int]:
    return sorted(parse_cpuset(text, where="kubelet's answer"))


def _block(b: dict[str, Any]) -> list[Any]:
    return [list(b.get("numaAffinity") or []), b["type"], b["size"]]


def _sort_key(entry: list[Any]) -> str:
    return json.dumps(entry, sort_keys=True, default=str)


def ours(minor: str, directory: Path) -> dict[str, Any]:
    """numaspec's reading of ``directory`` as release ``minor``: the reader's record as that
    release reads it (``as_read_by``), or ``{"error": ...}`` when the reader refuses the file,
    or the release does, or it does not read its format (FORMAT_READ_BY)."""
    n = int(minor.split(".")[1])
    readers: dict[str, Callable[..., Any]] = {
        CPU: read_cpu_manager_state, MEM: read_memory_manager_state,
        DEV: read_device_checkpoint}
    out: dict[str, Any] = {}
    for name, reader in readers.items():
        path = directory / PATHS[name]
        if not path.exists():
            continue
        try:
            record = reader(path) if name == DEV else reader(path, minor=n)
        except (CorruptCheckpointError, InputFileError) as exc:
            out[name] = {"error": str(exc)}
            continue
        (first, last), _ = FORMAT_READ_BY[(name, record.format)]
        if not first <= n <= last:
            out[name] = {"error": f"kubelet {minor} does not read a {record.format} {name}"}
        elif name == CPU:
            out[name] = {"default": sorted(record.default_cpu_set),
                         "entries": {pod: {c: sorted(s) for c, s in cs.items()}
                                     for pod, cs in record.entries.items()},
                         "pods": {pod: sorted(s) for pod, s in record.pod_entries.items()}}
        elif name == MEM:
            out[name] = {
                "machine": {node: {"assignments": s.assignments, "cells": list(s.cells),
                                   "tables": {k: [t.total, t.system_reserved, t.allocatable,
                                                  t.reserved, t.free]
                                              for k, t in s.tables.items()}}
                            for node, s in record.machine_state.items()},
                "entries": {pod: {c: [[list(b.numa), b.type, b.size] for b in bs]
                                  for c, bs in cs.items()}
                            for pod, cs in record.entries.items()},
                "pods": {pod: [[list(b.numa), b.type, b.size] for b in bs]
                         for pod, bs in record.pod_entries.items()}}
        else:
            out[name] = {
                "format": record.format,
                "entries": sorted([e.pod_uid, e.container, e.resource,
                                   {k: list(v) for k, v in e.devices.items()}]
                                  for e in record.entries),
                "registered": {r: list(ids) for r, ids in record.registered.items()}}
    return out


def _normal(reading: dict[str, Any]) -> dict[str, Any]:
    """Entries sorted the same way on both sides (the device entries' order is not state)."""
    out = dict(reading)
    if DEV in out and "entries" in out[DEV]:
        out[DEV] = {**out[DEV], "entries": sorted(out[DEV]["entries"], key=_sort_key)}
    return out


#: The one divergence left, by design: kubelet runs with its default gates, under which
#: PodLevelResourceManagers is off; numaspec's reader reports a file's pod-level entries
#: whatever the gate (FORMAT_READ_BY counts 1.36 among the readers of CPU ``v3`` and memory
#: ``v2``, as 1.36 with the gate on), and restoring any pod-level entry is refused as not
#: modelled (restore_state), so no answer rests on them.  With the gate off 1.36
#: refuses such a file (it falls back to the older formats, whose checksum does not verify)
#: and 1.37 reads it but keeps no pod-level entries.
POD_LEVEL_GATE = ("PodLevelResourceManagers is off in kubelet (its default), while numaspec "
                  "reads pod-level entries whatever the gate and refuses to restore them")


def _pod_level_gate(theirs: dict[str, Any], mine: dict[str, Any]) -> bool:
    """Whether the only difference is POD_LEVEL_GATE's: numaspec read pod-level entries, and
    kubelet refused the file or read the same without them."""
    if not mine.get("pods"):
        return False
    return "error" in theirs or (theirs.get("pods") == {} and
                                 {**mine, "pods": {}} == theirs)


def disagreements(minor: str, directory: Path, label: str) -> tuple[list[str], list[str]]:
    """Where release ``minor`` and numaspec differ on ``directory``'s files, one line each:
    (unexplained, explained by POD_LEVEL_GATE)."""
    theirs, mine = _normal(kubelet_reads(minor, directory)), _normal(ours(minor, directory))
    out: tuple[list[str], list[str]] = ([], [])
    for name in sorted(set(theirs) | set(mine)):
        k, o = theirs.get(name), mine.get(name)
        if k is None or o is None:
            out[0].append(f"{label} {name}: read by one side only")
            continue
        if ("error" in k) != ("error" in o):
            line = (f"{label} {name}: kubelet {minor} "
                    f"{'refuses (' + k['error'] + ')' if 'error' in k else 'accepts'}, "
                    f"numaspec "
                    f"{'refuses (' + o['error'] + ')' if 'error' in o else 'accepts'}")
        elif "error" not in k and k != o:
            line = f"{label} {name}: read differently: kubelet {k} numaspec {o}"
        else:
            continue
        out[1 if "error" not in o and _pod_level_gate(k, o) else 0].append(line)
    return out


@pytest.mark.parametrize("minor", MINORS)
def test_a_missing_file_is_a_fresh_start(minor: str, tmp_path: Path) -> None:
    """CKPT-5: with no state files the release's readers start empty, without an error, as
    read_state_dir gives None for each."""
    (tmp_path / "root").mkdir()
    answer = run_read(minor, tmp_path / "root")
    assert {name: got.get("error") for name, got in answer.items()} == dict.fromkeys(
        (CPU, MEM, DEV))
    assert all(got["fresh"] for got in answer.values())
    assert (answer[CPU]["default"], answer[CPU]["entries"]) == ("", {})
    assert (answer[MEM]["machineState"], answer[MEM]["entries"]) == ({}, {})
    assert (answer[DEV]["entries"], answer[DEV]["registered"]) == ([], {})
    assert read_state_dir(tmp_path / "root") == (None, None, None)


# the files numaspec writes


def _numaspec_written(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """Every state directory numaspec writes: the operator fixtures' (state_files, OPS-9;
    tests/operators/test_operator.py proves them current) and each kubelet fixture written again by
    the
    encoders (CKPT-8)."""
    for state in sorted(OPERATOR.glob("*/state")):
        yield f"operator/{state.parent.name}", state
    for scenario in sorted(p for p in STATE.glob("*/*") if p.is_dir()):
        cpu, mem, dev = read_state_dir(scenario)
        assert cpu is not None
        assert mem is not None
        assert dev is not None
        if cpu.pod_entries or mem.pod_entries:
            continue  # numaspec writes no pod-level entries (CKPT-8: v2 / v1 / v2)
        target = tmp_path / "encoded" / scenario.parent.name / scenario.name
        (target / "device-plugins").mkdir(parents=True)
        (target / CPU).write_text(encode_cpu_manager_state(
            cpu.policy_name, cpu.default_cpu_set, cpu.entries), encoding="utf-8")
        (target / MEM).write_text(encode_memory_manager_state(
            mem.policy_name, mem.machine_state, mem.entries), encoding="utf-8")
        (target / PATHS[DEV]).write_text(encode_device_checkpoint(
            dev.entries, dev.registered), encoding="utf-8")
        yield f"encoded {scenario.parent.name}/{scenario.name}", target


@pytest.mark.parametrize("minor", MINORS)
def test_kubelet_reads_what_numaspec_writes(minor: str, tmp_path: Path) -> None:
    """CKPT-8 (and CKPT-1..4, CKPT-6): every state file numaspec writes is accepted by the
    release's own readers, its checksum valid, with the content numaspec wrote."""
    program(minor)
    problems = []
    for label, directory in _numaspec_written(tmp_path):
        theirs = _normal(kubelet_reads(minor, directory))
        mine = _normal(ours(minor, directory))
        assert set(theirs) == {CPU, MEM, DEV}, label
        for name in (CPU, MEM, DEV):
            if "error" in theirs[name]:
                problems.append(f"{label} {name}: kubelet {minor} refuses it: "
                                f"{theirs[name]['error']}")
            elif theirs[name] != mine[name]:
                problems.append(f"{label} {name}: kubelet {minor} reads {theirs[name]}, "
                                f"numaspec wrote {mine[name]}")
    assert problems == []


# files edited, and other releases' files


def _edit(text: str, how: str) -> str | None:
    """``text`` (a state file) edited ``how``; None when the edit does not apply."""
    if how == "as written":
        return text
    if how == "cut in half":
        return text[: len(text) // 2]
    value = json.loads(text)
    field = {"checksum+1": "checksum", "checksum=0": "checksum",
             "dataChecksum+1": "dataChecksum"}[how]
    key = next((k for k in value if k.lower() == field.lower()), None)
    if key is None or not isinstance(value[key], int):
        return None
    value[key] = 0 if how == "checksum=0" else (value[key] + 1) % (1 << 32)
    return json.dumps(value, separators=(",", ":"))


EDITS = ("as written", "checksum+1", "checksum=0", "dataChecksum+1", "cut in half")

@pytest.mark.parametrize("minor", MINORS)
def test_kubelet_and_numaspec_refuse_the_same_files(minor: str, tmp_path: Path) -> None:
    """CKPT-1..6: every release's fixtures (so the other releases' formats too), unchanged
    and edited one way at a time (a checksum off by one or 0, ``dataChecksum`` off by one,
    the JSON cut in half): the release accepts exactly the files numaspec accepts for it,
    with the same content."""
    program(minor)
    found: list[str] = []
    gated: list[str] = []
    for scenario in sorted(p for p in STATE.glob("*/*") if p.is_dir()):
        for how in EDITS:
            target = tmp_path / scenario.parent.name / scenario.name / how.replace(" ", "-")
            (target / "device-plugins").mkdir(parents=True)
            edited = False
            for name in (CPU, MEM, DEV):
                text = _edit((scenario / PATHS[name]).read_text(encoding="utf-8"), how)
                if text is not None:
                    (target / PATHS[name]).write_text(text, encoding="utf-8")
                    edited = True
            if edited:
                unexplained, explained = disagreements(
                    minor, target, f"{scenario.parent.name}/{scenario.name} ({how})")
                found += unexplained
                gated += explained
    assert found == []
    # POD_LEVEL_GATE explains differences on the pod-level fixtures only
    assert all("/guaranteed-podlevel " in line for line in gated), gated


# --- restarts ------------------------------------------------------------------------------

#: How many times kubelet's Memory Manager is started on one case's files: a check that
#: depends on Go's map order answers both ways in far fewer (finding 59: 57 starts of 200).
STARTS = 100


@pytest.mark.parametrize("case", RESTARTS, ids=[c["name"] for c in RESTARTS])
def test_kubelet_restarts_as_numaspec_says(case: dict[str, Any], tmp_path: Path) -> None:
    """OPS-2, findings 22 and 59: ``checkpoints restart`` starts the release's own Memory
    Manager (Static policy, the case's machine and reservations) on the files numaspec
    writes for the session, again and again: it always starts when numaspec says it starts,
    always refuses when numaspec says it would refuse, and does both when numaspec says it
    may refuse (its check ranges over Go maps)."""
    node = restart_session(case)
    minor = f"1.{node.version.minor}"
    if minor not in MINORS:
        pytest.fail(f"{case['name']}: kubelet {minor} has no checkpoints program ({MINORS})")
    _, report = round_trip(node, tmp_path)
    write_restart_machine(node, tmp_path)
    done = subprocess.run([str(program(minor)), "restart", str(tmp_path), str(STARTS)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    answers: dict[str, int] = json.loads(done.stdout)["answers"]
    started = answers.pop("started", 0)
    assert set(answers) <= {"[memorymanager] the expected machine state is different from "
                            "the real one"}, answers
    kubelet = ("starts" if started == STARTS else "would refuse" if not started else
               "may refuse")
    assert kubelet == case["restart"] == restart_verdict(report.restart_warnings), answers

