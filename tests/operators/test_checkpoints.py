"""kubelet's state files read back (numaspec.operators.importers.checkpoints; spec chapter
checkpoints.md).

The fixtures under tests/fixtures/state/<release>/<scenario>/ were written by kubelet's own state
packages (adapters/kubelet/checkpoints/, see its README); hashed.json beside them holds, per file
and checksum field, the exact go-spew text the release hashed.  No Go is needed here.

Rules checked: CKPT-1 (cpu_manager_state formats), CKPT-2 (memory_manager_state formats), CKPT-3
(the device checkpoint's formats), CKPT-4 (checksums: spew text, FNV-32a, what 0 means), CKPT-5
(a missing file means fresh state), CKPT-6 (the device checkpoint's NUMA keys), CKPT-7 (decoding
as encoding/json does; typed errors naming file and field).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from numaspec.errors import CorruptCheckpointError, InputFileError
from numaspec.operators.importers.checkpoints import (
    FORMAT_READ_BY,
    MemoryBlockRecord,
    MemoryTableRecord,
    as_read_by,
    fnv32a,
    hashed_texts,
    read_cpu_manager_state,
    read_device_checkpoint,
    read_memory_manager_state,
    read_state_dir,
)
from numaspec_tools import FIXTURES

STATE = FIXTURES / "state"
POD_A = "6f1c2a7e-0d3b-4c55-9a01-000000000a01"
POD_B = "6f1c2a7e-0d3b-4c55-9a01-000000000b02"
GI = 1 << 30
SCENARIOS = sorted(p for p in STATE.glob("*/*") if p.is_dir())

# CKPT-1, CKPT-2, CKPT-3: the format each release writes, by scenario.
EXPECTED_FORMATS = {
    ("v1_30", "empty"): ("v2", "v1", "v2"),
    ("v1_30", "guaranteed"): ("v2", "v1", "v2"),
    ("v1_36", "empty"): ("v2", "v1", "v2"),
    ("v1_36", "guaranteed"): ("v2", "v1", "v2"),
    ("v1_36", "guaranteed-podlevel"): ("v3", "v2", "v2"),
    ("v1_37", "empty"): ("v4", "v3", "v2"),
    ("v1_37", "guaranteed"): ("v4", "v3", "v2"),
    ("v1_37", "guaranteed-podlevel"): ("v4", "v3", "v2"),
    ("v1_38", "empty"): ("v4", "v3", "v2"),
    ("v1_38", "guaranteed"): ("v4", "v3", "v2"),
    ("v1_38", "guaranteed-podlevel"): ("v4", "v3", "v2"),
    ("v1_30", "memory-group-release"): ("v2", "v1", "v2"),
    ("v1_36", "memory-group-release"): ("v2", "v1", "v2"),
    ("v1_37", "memory-group-release"): ("v4", "v3", "v2"),
    ("v1_38", "memory-group-release"): ("v4", "v3", "v2"),
}


def test_every_fixture_is_expected() -> None:
    assert {(p.parent.name, p.name) for p in SCENARIOS} == set(EXPECTED_FORMATS)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_formats_per_release(scenario: Path) -> None:
    """CKPT-1, CKPT-2, CKPT-3, CKPT-5 (read_state_dir's layout)."""
    cpu, mem, dev = read_state_dir(scenario)
    assert cpu is not None
    assert mem is not None
    assert dev is not None
    assert (cpu.format, mem.format, dev.format) == EXPECTED_FORMATS[
        (scenario.parent.name, scenario.name)]
    minor = int(scenario.parent.name.split("_")[1])
    for kind, fmt in (("cpu_manager_state", cpu.format), ("memory_manager_state", mem.format),
                      ("kubelet_internal_checkpoint", dev.format)):
        (first, last), writers = FORMAT_READ_BY[(kind, fmt)]
        assert first <= minor <= last
        assert writers is not None
        assert writers[0] <= minor <= writers[1]


@pytest.mark.parametrize("scenario", [p for p in SCENARIOS if p.name.startswith("guaranteed")],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_guaranteed_content(scenario: Path) -> None:
    """CKPT-1, CKPT-2, CKPT-3, CKPT-6: the content kubelet wrote reads back."""
    cpu, mem, dev = read_state_dir(scenario)
    assert cpu is not None
    assert mem is not None
    assert dev is not None
    assert cpu.policy_name == "static"
    assert cpu.default_cpu_set == frozenset({0, *range(5, 16), *range(24, 32)})
    assert cpu.entries == {POD_A: {"app": frozenset(range(1, 5))},
                           POD_B: {"worker": frozenset(range(16, 24))}}
    assert mem.policy_name == "Static"
    assert sorted(mem.machine_state) == [0, 1, 2, 3]
    assert mem.machine_state[0].tables["memory"] == MemoryTableRecord(
        total=16 * GI, system_reserved=GI, allocatable=15 * GI, reserved=2 * GI, free=13 * GI)
    assert mem.machine_state[0].tables["hugepages-2Mi"] == MemoryTableRecord(0, 0, 0, 0, 0)
    assert (mem.machine_state[0].assignments, mem.machine_state[0].cells) == (2, (0,))
    assert mem.machine_state[2].cells == mem.machine_state[3].cells == (2, 3)
    assert mem.machine_state[3].tables["memory"].free == 12 * GI
    assert mem.entries == {
        POD_A: {"app": (MemoryBlockRecord((0,), "memory", 2 * GI),),
                "init": (MemoryBlockRecord((0,), "memory", 0),)},
        POD_B: {"worker": (MemoryBlockRecord((2, 3), "memory", 20 * GI),)},
    }
    by_resource = {e.resource: e for e in dev.entries}
    assert by_resource["example.com/gpu"].devices == {2: ("gpu2",), 3: ("gpu3",)}
    assert by_resource["example.com/nic"].devices == {0: ("nic0",)}
    assert by_resource["example.com/fpga"].devices == {-1: ("fpga0",)}  # CKPT-6: no topology
    assert by_resource["example.com/fpga"].pod_uid == POD_B
    assert dev.registered["example.com/gpu"] == ("gpu0", "gpu1", "gpu2", "gpu3")
    if scenario.name == "guaranteed-podlevel":
        assert cpu.pod_entries == {POD_B: frozenset(range(16, 24))}
        assert mem.pod_entries == {POD_B: (MemoryBlockRecord((2, 3), "memory", 20 * GI),)}
    else:
        assert cpu.pod_entries == {}
        assert mem.pod_entries == {}
    assert (scenario / "pods.yaml").is_file()


@pytest.mark.parametrize("scenario", [p for p in SCENARIOS if p.name == "empty"],
                         ids=lambda p: p.parent.name)
def test_empty_content(scenario: Path) -> None:
    """CKPT-1, CKPT-2, CKPT-3: fresh state of the none/None policies."""
    cpu, mem, dev = read_state_dir(scenario)
    assert cpu is not None
    assert mem is not None
    assert dev is not None
    assert (cpu.policy_name, cpu.default_cpu_set, cpu.entries) == ("none", frozenset(), {})
    assert (mem.policy_name, mem.machine_state, mem.entries) == ("None", {}, {})
    assert (dev.entries, dev.registered) == ((), {})


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_spew_text_equals_kubelets(scenario: Path) -> None:
    """CKPT-4: the Python rendering of go-spew equals the Go one, string for string, for every
    checksum field (1.37's files: both the legacy checksum and dataChecksum)."""
    expected = json.loads((scenario / "hashed.json").read_text())
    for name, texts in expected.items():
        got = hashed_texts(scenario / name)
        assert got == texts
        blob = json.loads((scenario / name).read_text())
        for field, text in texts.items():
            assert fnv32a(text) == blob[field]


def test_fnv32a_known_values() -> None:
    """CKPT-4: FNV-32a's offset basis and a published test value."""
    assert fnv32a("") == 0x811C9DC5
    assert fnv32a("a") == 0xE40C292C


# --- tampering -----------------------------------------------------------------------------------


def _copy(tmp_path: Path, release: str, scenario: str, name: str) -> Path:
    dst = tmp_path / Path(name).name
    shutil.copy(STATE / release / scenario / name, dst)
    return dst


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_tampered_cpu_id_is_corrupt(tmp_path: Path) -> None:
    """CKPT-4: one CPU id changed in a v2 file."""
    path = _copy(tmp_path, "v1_30", "guaranteed", "cpu_manager_state")
    _edit(path, '"worker":"16-23"', '"worker":"16-24"')
    with pytest.raises(CorruptCheckpointError) as err:
        read_cpu_manager_state(path)
    assert err.value.where == f"{path}: checksum"
    assert "498443127" in err.value.message
    assert "format v2" in err.value.message


def test_tampered_memory_size_is_corrupt(tmp_path: Path) -> None:
    """CKPT-4: one block size changed in a v1 memory file."""
    path = _copy(tmp_path, "v1_36", "guaranteed", "memory_manager_state")
    _edit(path, '"size":2147483648', '"size":2147483647')
    with pytest.raises(CorruptCheckpointError) as err:
        read_memory_manager_state(path)
    assert err.value.where == f"{path}: checksum"


def test_tampered_v4_data_is_corrupt_and_legacy_fields_ignored(tmp_path: Path) -> None:
    """CKPT-1, CKPT-4: 1.37 checks dataChecksum over data only; the v2 fields beside it are
    not what it reads."""
    path = _copy(tmp_path, "v1_37", "guaranteed", "cpu_manager_state")
    _edit(path, '\\"app\\":\\"1-4\\"', '\\"app\\":\\"1-5\\"')
    with pytest.raises(CorruptCheckpointError) as err:
        read_cpu_manager_state(path)
    assert err.value.where == f"{path}: dataChecksum"
    path = _copy(tmp_path, "v1_37", "guaranteed", "cpu_manager_state")
    _edit(path, '{"policyName":"static","defaultCpuSet":"0,5-15,24-31"',
          '{"policyName":"static","defaultCpuSet":"0-31"')
    state = read_cpu_manager_state(path)
    assert state.format == "v4"
    assert 5 in state.default_cpu_set
    assert 1 not in state.default_cpu_set
    assert "checksum" not in hashed_texts(path)  # the legacy checksum no longer verifies


def test_tampered_memory_v3_data_is_corrupt(tmp_path: Path) -> None:
    """CKPT-2, CKPT-4."""
    path = _copy(tmp_path, "v1_37", "guaranteed", "memory_manager_state")
    _edit(path, '\\"size\\":0', '\\"size\\":1')
    with pytest.raises(CorruptCheckpointError):
        read_memory_manager_state(path)


def test_tampered_device_is_corrupt(tmp_path: Path) -> None:
    """CKPT-3, CKPT-4."""
    path = _copy(tmp_path, "v1_37", "guaranteed", "device-plugins/kubelet_internal_checkpoint")
    _edit(path, '"gpu3"]}', '"gpu1"]}')
    with pytest.raises(CorruptCheckpointError) as err:
        read_device_checkpoint(path)
    assert err.value.where == f"{path}: Checksum"


# --- a checksum of 0 (CKPT-4) ------------------------------------------------------------------


def test_cpu_checksum_zero_is_accepted(tmp_path: Path) -> None:
    """CKPT-4: v1/v2 CPU checkpoints with checksum 0 pass (compatibility with old files)."""
    path = _copy(tmp_path, "v1_30", "guaranteed", "cpu_manager_state")
    _edit(path, '"checksum":498443127', '"checksum":0')
    _edit(path, '"worker":"16-23"', '"worker":"16-17"')
    state = read_cpu_manager_state(path)
    assert state.format == "v2"
    assert state.entries[POD_B]["worker"] == frozenset({16, 17})


def test_cpu_v3_checksum_zero_reads_as_v2(tmp_path: Path) -> None:
    """CKPT-4: v3 has no zero exception; kubelet falls back to v2, which drops podEntries."""
    path = _copy(tmp_path, "v1_36", "guaranteed-podlevel", "cpu_manager_state")
    blob = json.loads(path.read_text())
    blob["checksum"] = 0
    path.write_text(json.dumps(blob))
    state = read_cpu_manager_state(path)
    assert state.format == "v2"
    assert state.pod_entries == {}


def test_memory_checksum_zero(tmp_path: Path) -> None:
    """CKPT-4: memory v1 with checksum 0 passes (1.36 on), v2 falls back to v1."""
    path = _copy(tmp_path, "v1_30", "guaranteed", "memory_manager_state")
    blob = json.loads(path.read_text())
    blob["checksum"] = 0
    path.write_text(json.dumps(blob))
    assert read_memory_manager_state(path).format == "v1"
    path = _copy(tmp_path, "v1_36", "guaranteed-podlevel", "memory_manager_state")
    blob = json.loads(path.read_text())
    blob["checksum"] = 0
    path.write_text(json.dumps(blob))
    state = read_memory_manager_state(path)
    assert state.format == "v1"
    assert state.pod_entries == {}


def test_zero_data_checksum_and_device_zero_are_corrupt(tmp_path: Path) -> None:
    """CKPT-4: dataChecksum and the device checkpoint's Checksum have no zero exception."""
    path = _copy(tmp_path, "v1_37", "empty", "cpu_manager_state")
    blob = json.loads(path.read_text())
    blob["dataChecksum"] = 0
    path.write_text(json.dumps(blob))
    with pytest.raises(CorruptCheckpointError):
        read_cpu_manager_state(path)
    path = _copy(tmp_path, "v1_30", "empty", "device-plugins/kubelet_internal_checkpoint")
    blob = json.loads(path.read_text())
    blob["Checksum"] = 0
    path.write_text(json.dumps(blob))
    with pytest.raises(CorruptCheckpointError):
        read_device_checkpoint(path)


# --- old formats, hand-made (their spew text written out here, independently) ----------------


def test_cpu_v1_by_container_id(tmp_path: Path) -> None:
    """CKPT-1, CKPT-4: v1 (1.28 and older wrote it) keys entries by container ID; the checksum
    is over the struct renamed to CPUManagerCheckpoint."""
    text = ("(*state.CPUManagerCheckpoint){PolicyName:(string)static DefaultCPUSet:(string)0,4-7 "
            "Entries:(map[string]string)map[abc123:1-3] Checksum:(checksum.Checksum)0}")
    path = tmp_path / "cpu_manager_state"
    path.write_text(json.dumps({"policyName": "static", "defaultCpuSet": "0,4-7",
                                "entries": {"abc123": "1-3"}, "checksum": fnv32a(text)}))
    state = read_cpu_manager_state(path)
    assert (state.format, state.entries) == ("v1", {})
    assert state.container_entries == {"abc123": frozenset({1, 2, 3})}
    assert hashed_texts(path) == {"checksum": text}


def test_device_v1_lands_on_node_0(tmp_path: Path) -> None:
    """CKPT-3, CKPT-6: a 1.19 device checkpoint (DeviceIDs a list) reads with its devices on
    NUMA node 0, as 1.29 and 1.30 convert it."""
    text = ("(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)"
            "[{PodUID:(string)p ContainerName:(string)c ResourceName:(string)r "
            "DeviceIDs:([]string)[d1 d2] AllocResp:([]uint8)[1 2]}] "
            "RegisteredDevices:(map[string][]string)map[r:[d1 d2]]}")
    path = tmp_path / "kubelet_internal_checkpoint"
    path.write_text(json.dumps({"Data": {"PodDeviceEntries": [
        {"PodUID": "p", "ContainerName": "c", "ResourceName": "r", "DeviceIDs": ["d1", "d2"],
         "AllocResp": "AQI="}], "RegisteredDevices": {"r": ["d1", "d2"]}},
        "Checksum": fnv32a(text)}))
    dev = read_device_checkpoint(path)
    assert dev.format == "v1"
    assert dev.entries[0].devices == {0: ("d1", "d2")}


def test_field_names_match_case_insensitively(tmp_path: Path) -> None:
    """CKPT-7: encoding/json matches a field name case-insensitively when none is exact."""
    path = tmp_path / "cpu_manager_state"
    path.write_text('{"PolicyName": "static", "DEFAULTCPUSET": "0-3", "checksum": 0}')
    state = read_cpu_manager_state(path)
    assert (state.policy_name, state.default_cpu_set) == ("static", frozenset(range(4)))


# --- bad input (CKPT-7) ------------------------------------------------------------------------


def test_truncated_json(tmp_path: Path) -> None:
    path = _copy(tmp_path, "v1_30", "guaranteed", "cpu_manager_state")
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(InputFileError) as err:
        read_cpu_manager_state(path)
    assert err.value.where == str(path)
    assert err.value.kind == "invalid-input-file"


def test_missing_and_not_an_object(tmp_path: Path) -> None:
    with pytest.raises(InputFileError) as err:
        read_memory_manager_state(tmp_path / "memory_manager_state")
    assert err.value.where == str(tmp_path / "memory_manager_state")
    path = tmp_path / "kubelet_internal_checkpoint"
    path.write_text("[1, 2]")
    with pytest.raises(InputFileError, match="object"):
        read_device_checkpoint(path)


@pytest.mark.parametrize(("name", "body", "where"), [
    ("cpu_manager_state", '{"policyName": 5, "checksum": 0}', "policyName"),
    ("cpu_manager_state", '{"policyName": "static", "defaultCpuSet": "0-x", "checksum": 0}',
     "defaultCpuSet"),
    ("cpu_manager_state", '{"policyName": "static", "entries": {"p": {"c": "3-1"}}, '
     '"checksum": 0}', "entries.p.c"),
    ("cpu_manager_state", '{"policyName": "static", "entries": [], "checksum": 0}', "entries"),
    ("cpu_manager_state", '{"policyName": "static", "checksum": -1}', "checksum"),
    ("cpu_manager_state", '{"policyName": "static", "checksum": 1.5}', "checksum"),
    ("memory_manager_state", '{"policyName": "Static", "machineState": {"x": {}}, '
     '"checksum": 0}', "machineState"),
    ("memory_manager_state", '{"policyName": "Static", "machineState": {"0": '
     '{"memoryMap": {"memory": {"total": "1"}}}}, "checksum": 0}',
     "machineState.0.memoryMap.memory.total"),
    ("memory_manager_state", '{"policyName": "Static", "entries": {"p": {"c": '
     '[{"numaAffinity": [0], "size": -1}]}}, "checksum": 0}', "entries.p.c[0].size"),
    ("kubelet_internal_checkpoint", '{"Data": {"RegisteredDevices": {"r": ["a"]}}}',
     "Checksum"),
    ("kubelet_internal_checkpoint", '{"Data": {"PodDeviceEntries": [{"DeviceIDs": '
     '{"zero": ["a"]}}]}, "Checksum": 1}', "Data.PodDeviceEntries[0].DeviceIDs"),
    ("kubelet_internal_checkpoint", '{"Data": {"PodDeviceEntries": [{"AllocResp": "!!"}]}, '
     '"Checksum": 1}', "Data.PodDeviceEntries[0].AllocResp"),
])
def test_wrong_shapes_name_the_field(tmp_path: Path, name: str, body: str, where: str) -> None:
    """CKPT-7: a missing or wrongly typed field names the file and the field; a wrong checksum
    is CorruptCheckpointError (itself an InputFileError)."""
    path = tmp_path / name
    path.write_text(body)
    readers: dict[str, Callable[[Path], object]] = {
        "cpu_manager_state": read_cpu_manager_state,
        "memory_manager_state": read_memory_manager_state,
        "kubelet_internal_checkpoint": read_device_checkpoint}
    reader = readers[name]
    with pytest.raises(InputFileError) as err:
        reader(path)
    assert err.value.where == f"{path}: {where}"


def test_unknown_format_is_corrupt(tmp_path: Path) -> None:
    """CKPT-1, CKPT-4: a file whose checksum matches no format a modelled release reads."""
    path = tmp_path / "cpu_manager_state"
    path.write_text('{"policyName": "static", "defaultCpuSet": "", "checksum": 12345}')
    with pytest.raises(CorruptCheckpointError, match="12345"):
        read_cpu_manager_state(path)
    checksum = fnv32a("(string)not json")
    path.write_text(f'{{"policyName": "static", "data": "not json", "dataChecksum": {checksum}}}')
    with pytest.raises(CorruptCheckpointError) as err:
        read_cpu_manager_state(path)
    assert err.value.where == f"{path}: data"


# --- the directory (CKPT-5) --------------------------------------------------------------------


def test_state_dir_missing_files_are_none(tmp_path: Path) -> None:
    """CKPT-5: a missing file is None (kubelet starts fresh); the device checkpoint may sit at
    the top level."""
    assert read_state_dir(tmp_path) == (None, None, None)
    shutil.copy(STATE / "v1_30" / "guaranteed" / "device-plugins" / "kubelet_internal_checkpoint",
                tmp_path / "kubelet_internal_checkpoint")
    cpu, mem, dev = read_state_dir(tmp_path)
    assert cpu is None
    assert mem is None
    assert dev is not None
    assert len(dev.entries) == 3
    with pytest.raises(InputFileError):
        read_state_dir(tmp_path / "nowhere")


def test_written_files_are_kubelets_own(tmp_path: Path) -> None:
    """CKPT-8: the encoders write kubelet 1.30.14's cpu_manager_state and memory_manager_state
    byte for byte, and every file (1.37's and 1.38's v4 and v3 included) reads back to what was
    read."""
    from numaspec.operators.importers.checkpoints import (
        encode_cpu_manager_state,
        encode_device_checkpoint,
        encode_memory_manager_state,
    )

    for release in ("v1_30", "v1_36", "v1_37", "v1_38"):
        cpu, mem, dev = read_state_dir(STATE / release / "guaranteed")
        assert cpu is not None
        assert mem is not None
        assert dev is not None
        texts = {
            "cpu_manager_state": encode_cpu_manager_state(
                cpu.policy_name, cpu.default_cpu_set, cpu.entries),
            "memory_manager_state": encode_memory_manager_state(
                mem.policy_name, mem.machine_state, mem.entries),
            "kubelet_internal_checkpoint": encode_device_checkpoint(dev.entries, dev.registered)}
        for name, text in texts.items():
            (tmp_path / name).write_text(text, encoding="utf-8")
        again = read_state_dir(tmp_path)
        assert again[0] is not None
        assert again[1] is not None
        assert again[2] is not None
        assert (again[0].default_cpu_set, again[0].entries) == (cpu.default_cpu_set, cpu.entries)
        assert (again[1].machine_state, again[1].entries) == (mem.machine_state, mem.entries)
        assert (again[2].entries, again[2].registered) == (dev.entries, dev.registered)
        if release == "v1_30":
            for name in ("cpu_manager_state", "memory_manager_state"):
                kubelets = (STATE / release / "guaranteed" / name).read_text("utf-8").strip()
                assert texts[name] == kubelets, name


def _edited(source: Path, target: Path, field: str, value: int | None) -> Path:
    """``source`` with ``field`` set to ``value`` (None: one more than it was)."""
    doc = json.loads(source.read_text(encoding="utf-8"))
    doc[field] = doc[field] + 1 if value is None else value
    target.write_text(json.dumps(doc), encoding="utf-8")
    return target


@pytest.mark.parametrize("name", ["cpu_manager_state", "memory_manager_state"])
def test_a_1_37_file_as_older_releases_read_it(name: str, tmp_path: Path) -> None:
    """CKPT-1, CKPT-2, CKPT-4 (finding 43): 1.29-1.36 read a 1.37 file through its top-level
    fields and checksum alone; 1.37 through data and dataChecksum alone (as kubelet's own
    readers do: tests/upstream/kubelet/test_kubelet_checkpoints_go.py)."""
    source = STATE / "v1_37" / "guaranteed" / name
    reader: Callable[..., Any] = (read_cpu_manager_state if name.startswith("cpu")
                                  else read_memory_manager_state)
    path = _edited(source, tmp_path / name, "dataChecksum", None)
    with pytest.raises(CorruptCheckpointError, match="dataChecksum"):
        reader(path)
    with pytest.raises(CorruptCheckpointError, match="dataChecksum"):
        reader(path, minor=37)
    older = reader(path, minor=36)
    assert older.format == ("v2" if name.startswith("cpu") else "v1")
    assert older.entries == reader(source).entries
    path = _edited(source, tmp_path / name, "checksum", None)
    assert reader(path).entries == reader(source).entries
    for minor in (30, 36):
        with pytest.raises(CorruptCheckpointError, match=r"1\.29-1\.36"):
            reader(path, minor=minor)
    with pytest.raises(CorruptCheckpointError, match=r"1\.29-1\.36"):
        as_read_by(reader(path), 30)


def test_a_memory_checksum_of_0_before_1_36(tmp_path: Path) -> None:
    """CKPT-4 (finding 43): a v1 memory_manager_state whose checksum is 0 is refused by
    1.29-1.35 and accepted from 1.36 on."""
    path = _edited(STATE / "v1_30" / "guaranteed" / "memory_manager_state",
                   tmp_path / "memory_manager_state", "checksum", 0)
    assert read_memory_manager_state(path).zero_checksum
    for minor in (29, 35):
        with pytest.raises(CorruptCheckpointError, match="checksum is 0"):
            read_memory_manager_state(path, minor=minor)
    assert read_memory_manager_state(path, minor=36).entries == \
        read_memory_manager_state(path).entries
    cpu, mem, _ = read_state_dir(STATE / "v1_30" / "guaranteed", minor=30)
    assert cpu is not None
    assert mem is not None
    assert not mem.zero_checksum
