"""kubelet's own state files, read as kubelet reads them (spec chapter ``checkpoints.md``, CKPT-*).

* ``cpu_manager_state`` (CPU Manager): formats ``v1`` to ``v4`` (CKPT-1);
* ``memory_manager_state`` (Memory Manager): formats ``v1`` to ``v3`` (CKPT-2);
* ``device-plugins/kubelet_internal_checkpoint`` (Device Manager): ``v1`` and ``v2`` (CKPT-3).

Every checksum is verified the way the releases that read the format verify it (CKPT-4): FNV-32a
over go-spew's ``%#v`` rendering of the checkpoint struct (``dump.ForHash``), which this module
reproduces for exactly these struct shapes (:func:`spew_for_hash`), or, for the newest formats,
over the rendering of the ``data`` string.  A missing file is ``None`` in :func:`read_state_dir`:
kubelet starts afresh (CKPT-5).

The JSON is decoded as Go's ``encoding/json`` decodes it into kubelet's structs (CKPT-7): unknown
fields are ignored, field names match case-insensitively when no exact match exists, ``null``
leaves a scalar at its zero value and makes a map or a slice nil (which renders differently in
the checksum), and a number must fit the Go type.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NoReturn, TypeVar

import attrs

from numaspec.errors import CorruptCheckpointError, InputFileError, NumaspecError
from numaspec.node.nodeconfig import format_cpuset, parse_cpuset
from numaspec.operators.importers.files import read_bytes

__all__ = [
    "CPUManagerState",
    "DeviceCheckpoint",
    "DeviceEntry",
    "FORMAT_READ_BY",
    "MemoryBlockRecord",
    "MemoryManagerState",
    "MemoryNodeRecord",
    "MemoryTableRecord",
    "as_read_by",
    "encode_cpu_manager_state",
    "encode_device_checkpoint",
    "encode_memory_manager_state",
    "fnv32a",
    "hashed_texts",
    "read_cpu_manager_state",
    "read_device_checkpoint",
    "read_memory_manager_state",
    "read_state_dir",
    "spew_for_hash",
]

#: CKPT-1..3: for each (file, format), the kubelet minors that read it and the minors that write
#: it (writers: by default gates; ``v3`` CPU and ``v2`` memory only with PodLevelResourceManagers
#: on).  A format written only by releases older than 1.29 has no writer here.  1.38 (read at
#: 1.38.0-beta.0) reads and writes as 1.37: its state packages are 1.37.2's, line for line.
FORMAT_READ_BY: Mapping[tuple[str, str], tuple[tuple[int, int], tuple[int, int] | None]] = {
    ("cpu_manager_state", "v1"): ((29, 36), None),
    ("cpu_manager_state", "v2"): ((29, 38), (29, 36)),
    ("cpu_manager_state", "v3"): ((36, 38), (36, 36)),
    ("cpu_manager_state", "v4"): ((29, 38), (37, 38)),
    ("memory_manager_state", "v1"): ((29, 38), (29, 36)),
    ("memory_manager_state", "v2"): ((36, 38), (36, 36)),
    ("memory_manager_state", "v3"): ((29, 38), (37, 38)),
    ("kubelet_internal_checkpoint", "v1"): ((29, 30), None),
    ("kubelet_internal_checkpoint", "v2"): ((29, 38), (29, 38)),
}


# --- the records --------------------------------------------------------------------------------


@attrs.frozen
class CPUManagerState:
    """``cpu_manager_state`` (CKPT-1).  ``format`` is kubelet's own name of the version:
    ``v1`` (entries by container ID, in :attr:`container_entries`; :attr:`entries` is empty),
    ``v2`` (pod UID -> container -> cpuset), ``v3`` (v2 plus pod-level :attr:`pod_entries`),
    ``v4`` (1.37: the state as a JSON string in ``data``, ``dataChecksum`` over it, and the
    ``v2`` fields kept beside it for older kubelets)."""

    path: str
    format: str
    policy_name: str
    default_cpu_set: frozenset[int]
    entries: Mapping[str, Mapping[str, frozenset[int]]]
    #: v1 only: container ID (as the runtime names it, no ``containerd://`` prefix) -> CPUs.
    container_entries: Mapping[str, frozenset[int]] = attrs.field(factory=dict)
    #: v3/v4 with PodLevelResourceManagers: pod UID -> the pod's CPUs.
    pod_entries: Mapping[str, frozenset[int]] = attrs.field(factory=dict)
    #: v4 only: the file as 1.29-1.36 read it (its top-level ``v2`` fields and ``checksum``),
    #: or None when they refuse it (:attr:`older_refusal` says why).  See :func:`as_read_by`.
    older: CPUManagerState | None = None
    older_refusal: str | None = None


@attrs.frozen
class MemoryBlockRecord:
    numa: tuple[int, ...]
    type: str
    size: int


@attrs.frozen
class MemoryTableRecord:
    total: int
    system_reserved: int
    allocatable: int
    reserved: int
    free: int


@attrs.frozen
class MemoryNodeRecord:
    assignments: int
    cells: tuple[int, ...]
    tables: Mapping[str, MemoryTableRecord]


@attrs.frozen
class MemoryManagerState:
    """``memory_manager_state`` (CKPT-2): ``v1`` (1.29-1.36), ``v2`` (1.36 with pod-level
    entries), ``v3`` (1.37: ``data`` + ``dataChecksum`` beside the ``v1`` fields)."""

    path: str
    format: str
    policy_name: str
    machine_state: Mapping[int, MemoryNodeRecord]
    entries: Mapping[str, Mapping[str, tuple[MemoryBlockRecord, ...]]]
    pod_entries: Mapping[str, tuple[MemoryBlockRecord, ...]] = attrs.field(factory=dict)
    #: ``v1`` accepted with a checksum of 0, which only 1.36 and later accept (CKPT-4).
    zero_checksum: bool = False
    #: v3 only: the file as 1.29-1.36 read it (its top-level ``v1`` fields and ``checksum``),
    #: or None when they refuse it (:attr:`older_refusal` says why).  See :func:`as_read_by`.
    older: MemoryManagerState | None = None
    older_refusal: str | None = None


@attrs.frozen
class DeviceEntry:
    pod_uid: str
    container: str
    resource: str
    #: CKPT-6: NUMA node -> device ids; -1 is the key of devices without topology.
    devices: Mapping[int, tuple[str, ...]]


@attrs.frozen
class DeviceCheckpoint:
    """``kubelet_internal_checkpoint`` (CKPT-3)."""

    path: str
    format: str
    entries: tuple[DeviceEntry, ...]
    registered: Mapping[str, tuple[str, ...]]


# --- FNV-32a and go-spew's %#v, for these shapes (CKPT-4) ---------------------------------------


def fnv32a(text: str) -> int:
    """FNV-32a of the UTF-8 bytes of ``text`` (Go's ``hash/fnv.New32a``)."""
    h = 0x811C9DC5
    for byte in text.encode("utf-8", "surrogatepass"):
        h ^= byte
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


class _Nil:
    """A nil map or slice (renders ``<nil>``)."""


NIL = _Nil()


@attrs.frozen
class _Scalar:
    gotype: str
    text: str


@attrs.frozen
class _Map:
    gotype: str
    items: tuple[tuple[Any, Any], ...] | _Nil  # keys are str or int; sorted when rendered


@attrs.frozen
class _Slice:
    gotype: str
    items: tuple[Any, ...] | _Nil


@attrs.frozen
class _Struct:
    gotype: str
    fields: tuple[tuple[str, Any], ...]


@attrs.frozen
class _Ptr:
    target: _Struct


def spew_for_hash(value: Any, *, typed: bool = True) -> str:
    """CKPT-4: go-spew's ``%#v`` with ``dump.ForHash``'s settings (sorted keys, no methods, no
    pointer addresses), for the values kubelet's checkpoints are built of.  Types are shown at
    the top and on struct fields; keys, map values and slice elements carry none, a pointer
    there is ``<*>``; strings are written raw; nil maps and slices are ``<nil>``."""
    if isinstance(value, _Ptr):
        inner = spew_for_hash(value.target, typed=False)
        return f"(*{value.target.gotype}){inner}" if typed else f"<*>{inner}"
    prefix = f"({value.gotype})" if typed else ""
    if isinstance(value, _Scalar):
        return prefix + value.text
    if isinstance(value, _Struct):
        inner = " ".join(f"{name}:{spew_for_hash(v)}" for name, v in value.fields)
        return prefix + "{" + inner + "}"
    if isinstance(value, _Map):
        if isinstance(value.items, _Nil):
            return prefix + "<nil>"
        pairs = sorted(value.items, key=lambda kv: kv[0])
        inner = " ".join(f"{k}:{spew_for_hash(v, typed=False)}" for k, v in pairs)
        return prefix + "map[" + inner + "]"
    if isinstance(value, _Slice):
        if isinstance(value.items, _Nil):
            return prefix + "<nil>"
        return prefix + "[" + " ".join(spew_for_hash(v, typed=False) for v in value.items) + "]"
    raise TypeError(f"no spew rendering for {value!r}")  # pragma: no cover


def _s(text: str) -> _Scalar:
    return _Scalar("string", text)


def _u64(n: int) -> _Scalar:
    return _Scalar("uint64", str(n))


def _checksum_zero() -> _Scalar:
    return _Scalar("checksum.Checksum", "0")


# --- Go-like JSON decoding ---------------------------------------------------------------------


class _Obj(list[tuple[str, Any]]):
    """A JSON object as its key/value pairs in order (duplicates kept, as Go sees them)."""


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


class _Reader:
    def __init__(self, path: str, minor: int | None = None) -> None:
        self.path = path
        #: the kubelet minor reading (None: 1.37, the newest); 1.29-1.36 ignore ``data``
        self.minor = minor
        #: the text whose FNV-32a matched, by checksum field (for :func:`hashed_texts`)
        self.hashed: dict[str, str] = {}

    def check(self, field: str, found: int, texts: list[str], *, zero_ok: bool = False) -> bool:
        """Whether one of ``texts`` hashes to ``found`` (or ``found`` is an accepted 0)."""
        for text in texts:
            if fnv32a(text) == found:
                self.hashed[field] = text
                return True
        return zero_ok and found == 0

    def where(self, field: str) -> str:
        return f"{self.path}: {field}" if field else self.path

    def fail(self, message: str, field: str = "") -> NoReturn:
        raise InputFileError(message, where=self.where(field))

    def load(self) -> _Obj:
        return self.parse(read_bytes(self.path), "")

    def parse(self, raw: bytes | str, field: str) -> _Obj:
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
            doc = json.loads(text, object_pairs_hook=_Obj, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as err:
            self.fail(f"not a JSON document ({err})", field)
        if not isinstance(doc, _Obj):
            self.fail("expected a JSON object", field)
        return doc

    # Go's encoding/json: exact field name first, else a case-insensitive match; last wins.
    @staticmethod
    def fields(obj: _Obj, names: tuple[str, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        lower = {n.lower(): n for n in names}
        for key, value in obj:
            name = key if key in names else lower.get(key.lower())
            if name is not None:
                out[name] = value
        return out

    def string(self, value: Any, field: str) -> str:
        if value is None:
            return ""
        if not isinstance(value, str):
            self.fail(f"expected a string, found {_json_type(value)}", field)
        return value

    def integer(self, value: Any, field: str, *, unsigned: bool, bits: int = 64) -> int:
        if value is None:
            return 0
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(f"expected an integer, found {_json_type(value)}", field)
        low, high = (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        if not low <= value <= high:
            self.fail(f"{value} does not fit a Go {'u' if unsigned else ''}int{bits}", field)
        return value

    def obj(self, value: Any, field: str) -> _Obj | None:
        """An object, or None for null (a nil map)."""
        if value is None:
            return None
        if not isinstance(value, _Obj):
            self.fail(f"expected a JSON object, found {_json_type(value)}", field)
        return value

    def array(self, value: Any, field: str) -> list[Any] | None:
        if value is None:
            return None
        if not isinstance(value, list) or isinstance(value, _Obj):
            self.fail(f"expected a JSON array, found {_json_type(value)}", field)
        return value

    def int_key(self, key: str, field: str) -> int:
        # strconv.ParseInt, base 10, as encoding/json reads an integer map key
        if not re.fullmatch(r"[+-]?[0-9]+", key):
            self.fail(f"map key {key!r} is not an integer", field)
        return self.integer(int(key), f"{field}[{key}]", unsigned=False)

    def str_map(self, value: Any, field: str,
                decode: Callable[[Any, str], Any]) -> dict[str, Any] | None:
        obj = self.obj(value, field)
        if obj is None:
            return None
        out: dict[str, Any] = {}
        for key, item in obj:
            out[key] = decode(item, f"{field}.{key}")
        return out

    def int_map(self, value: Any, field: str,
                decode: Callable[[Any, str], Any]) -> dict[int, Any] | None:
        obj = self.obj(value, field)
        if obj is None:
            return None
        out: dict[int, Any] = {}
        for key, item in obj:
            out[self.int_key(key, field)] = decode(item, f"{field}.{key}")
        return out

    def cpuset(self, text: str, field: str) -> frozenset[int]:
        try:
            cpus: frozenset[int] = parse_cpuset(text, where=self.where(field))
            return cpus
        except NumaspecError as err:
            raise InputFileError(err.message, where=self.where(field)) from None

    def checksum_mismatch(self, fmt: str, field: str, found: int, computed: int) -> NoReturn:
        raise CorruptCheckpointError(
            f"checksum mismatch (format {fmt}): the file says {found}, kubelet computes "
            f"{computed}; kubelet refuses this file", where=self.where(field))


def _is_array(value: Any) -> bool:
    return isinstance(value, list) and not isinstance(value, _Obj)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, _Obj):
        return "an object"
    return "an array"


def _smap(gotype: str, items: Mapping[Any, Any] | None, render: Callable[[Any], Any]) -> _Map:
    if items is None:
        return _Map(gotype, NIL)
    return _Map(gotype, tuple((k, render(v)) for k, v in items.items()))


def _data_spew(data: str) -> str:
    return spew_for_hash(_s(data))


# --- cpu_manager_state (CKPT-1) -----------------------------------------------------------------

_CPU_FIELDS = ("policyName", "defaultCpuSet", "entries", "podEntries", "checksum", "data",
               "dataChecksum")
_CPU_DATA_FIELDS = ("policyName", "defaultCpuSet", "entries", "podEntries", "baselines")


def _cpu_entries_v2(r: _Reader, value: Any, field: str) -> dict[str, dict[str, str] | None] | None:
    def containers(v: Any, f: str) -> dict[str, str] | None:
        return r.str_map(v, f, r.string)
    return r.str_map(value, field, containers)


def _cpu_pod_entries(r: _Reader, value: Any, field: str) -> dict[str, frozenset[int]] | None:
    def entry(v: Any, f: str) -> frozenset[int]:
        obj = r.obj(v, f)
        got = r.fields(obj, ("cpuSet",)) if obj is not None else {}
        return r.cpuset(r.string(got.get("cpuSet"), f"{f}.cpuSet"), f"{f}.cpuSet")
    return r.str_map(value, field, entry)


def _cpu_v2_spew(name: str, policy: str, default: str,
                 entries: Mapping[str, Mapping[str, str] | None] | None, *,
                 pods: Mapping[str, frozenset[int]] | None, v3: bool) -> str:
    fields: list[tuple[str, Any]] = [
        ("PolicyName", _s(policy)), ("DefaultCPUSet", _s(default)),
        ("Entries", _smap("map[string]map[string]string", entries,
                          lambda c: _smap("map[string]string", c, _s))),
    ]
    if v3:
        fields.append(("PodEntries", _smap("state.PodCPUAssignments", pods, lambda cpus: _Struct(
            "state.PodEntry", (("CPUSet", _Struct("cpuset.CPUSet", (("elems", _Map(
                "map[int]struct {}", tuple((c, _Struct("struct {}", ())) for c in cpus))),))),)))))
    fields.append(("Checksum", _checksum_zero()))
    return spew_for_hash(_Ptr(_Struct(f"state.{name}", tuple(fields))))


def _cpu_v1_spew(policy: str, default: str, entries: Mapping[str, str] | None) -> str:
    # VerifyChecksum of CPUManagerCheckpointV1 renames the type to CPUManagerCheckpoint.
    return spew_for_hash(_Ptr(_Struct("state.CPUManagerCheckpoint", (
        ("PolicyName", _s(policy)), ("DefaultCPUSet", _s(default)),
        ("Entries", _smap("map[string]string", entries, _s)), ("Checksum", _checksum_zero())))))


def read_cpu_manager_state(path: str | os.PathLike[str], *,
                           minor: int | None = None) -> CPUManagerState:
    """CKPT-1, CKPT-4: read ``cpu_manager_state`` in whichever format a modelled kubelet reads,
    verifying its checksum as kubelet does: as kubelet 1.``minor`` reads it when given
    (:func:`as_read_by`; a ``v4`` file's ``data`` is then not even decoded by 1.29-1.36),
    else as 1.37 does."""
    r = _Reader(os.fspath(path), minor)
    state = _read_cpu(r)
    return state if minor is None else as_read_by(state, minor)


def _read_cpu(r: _Reader) -> CPUManagerState:
    top = r.fields(r.load(), _CPU_FIELDS)
    policy = r.string(top.get("policyName"), "policyName")
    default = r.string(top.get("defaultCpuSet"), "defaultCpuSet")
    checksum = r.integer(top.get("checksum"), "checksum", unsigned=True)
    data = r.string(top.get("data"), "data")
    data_checksum = r.integer(top.get("dataChecksum"), "dataChecksum", unsigned=True)

    if data or data_checksum:
        # v4 (1.37): only data and dataChecksum count; no fall back to older formats.
        legacy = _cpu_entries_v2(r, top["entries"], "entries") if "entries" in top else {}
        # the v2 fields' checksum is what 1.29-1.36 verify in this file; 1.37 ignores it
        legacy_text = _cpu_v2_spew("CPUManagerCheckpoint", policy, default, legacy, pods=None,
                                   v3=False)
        older: CPUManagerState | None = None
        refusal: str | None = None
        if r.check("checksum", checksum, [legacy_text], zero_ok=True):
            older = _cpu_state(r, "v2", policy, default, legacy, pods=None, prefix="")
        else:
            refusal = _mismatch("v2", checksum, fnv32a(legacy_text), "1.29-1.36")
        if r.minor is not None and r.minor <= 36:  # they never look at data
            return _legacy_only(r, "v4", older, refusal)
        if not r.check("dataChecksum", data_checksum, [_data_spew(data)]):
            r.checksum_mismatch("v4", "dataChecksum", data_checksum, fnv32a(_data_spew(data)))
        try:
            inner = r.fields(r.parse(data, "data"), _CPU_DATA_FIELDS)
        except InputFileError as err:
            raise CorruptCheckpointError(err.message, where=err.where) from None
        policy = r.string(inner.get("policyName"), "data.policyName")
        default = r.string(inner.get("defaultCpuSet"), "data.defaultCpuSet")
        entries = _cpu_entries_v2(r, inner.get("entries"), "data.entries")
        pods = _cpu_pod_entries(r, inner.get("podEntries"), "data.podEntries")
        return attrs.evolve(_cpu_state(r, "v4", policy, default, entries, pods=pods,
                                       prefix="data."), older=older, older_refusal=refusal)

    if "entries" in top and isinstance(top["entries"], _Obj) and top["entries"] and all(
            isinstance(v, str) for _, v in top["entries"]):
        # v1 (1.28 and older wrote it; 1.29-1.36 read it): entries by container ID
        v1_entries = r.str_map(top["entries"], "entries", r.string) or {}
        text = _cpu_v1_spew(policy, default, v1_entries)
        if not r.check("checksum", checksum, [text], zero_ok=True):
            r.checksum_mismatch("v1", "checksum", checksum, fnv32a(text))
        return CPUManagerState(
            path=r.path, format="v1", policy_name=policy,
            default_cpu_set=r.cpuset(default, "defaultCpuSet"), entries={},
            container_entries={cid: r.cpuset(c, f"entries.{cid}") for cid, c in v1_entries.items()})

    # a field that is absent keeps the empty map kubelet's fresh checkpoint holds; null is nil
    entries = _cpu_entries_v2(r, top["entries"], "entries") if "entries" in top else {}
    pods = _cpu_pod_entries(r, top["podEntries"], "podEntries") if "podEntries" in top else {}
    v3 = [_cpu_v2_spew(n, policy, default, entries, pods=pods, v3=True)
          for n in ("CPUManagerCheckpoint", "CPUManagerCheckpointV3")]
    v2 = [_cpu_v2_spew(n, policy, default, entries, pods=None, v3=False)
          for n in ("CPUManagerCheckpoint", "CPUManagerCheckpointV2")]
    if checksum and r.check("checksum", checksum, v3):
        return _cpu_state(r, "v3", policy, default, entries, pods=pods, prefix="")
    if r.check("checksum", checksum, v2, zero_ok=True):
        # a checksum of 0 passes v2's check only: pod-level entries are then dropped
        return _cpu_state(r, "v2", policy, default, entries, pods=None, prefix="")
    if not entries:  # an older kubelet's v1 file with no entries
        v1_empty: dict[str, str] | None = None if entries is None else {}
        if r.check("checksum", checksum, [_cpu_v1_spew(policy, default, v1_empty)]):
            return _cpu_state(r, "v1", policy, default, {}, pods=None, prefix="")
    fmt = "v3" if pods else "v2"
    expected = fnv32a(_cpu_v2_spew("CPUManagerCheckpoint", policy, default, entries, pods=pods,
                                   v3=fmt == "v3"))
    return r.checksum_mismatch(fmt, "checksum", checksum, expected)


def _cpu_state(r: _Reader, fmt: str, policy: str, default: str,
               entries: Mapping[str, Mapping[str, str] | None] | None, *,
               pods: Mapping[str, frozenset[int]] | None, prefix: str) -> CPUManagerState:
    parsed = {
        pod: {c: r.cpuset(text, f"{prefix}entries.{pod}.{c}")
              for c, text in (containers or {}).items()}
        for pod, containers in (entries or {}).items()
    }
    return CPUManagerState(path=r.path, format=fmt, policy_name=policy,
                           default_cpu_set=r.cpuset(default, f"{prefix}defaultCpuSet"),
                           entries=parsed, pod_entries=dict(pods or {}))


# --- memory_manager_state (CKPT-2) --------------------------------------------------------------

_MEM_FIELDS = ("policyName", "machineState", "entries", "podEntries", "checksum", "data",
               "dataChecksum")
_TABLE_FIELDS = ("total", "systemReserved", "allocatable", "reserved", "free")
_BLOCK_FIELDS = ("numaAffinity", "type", "size")


@attrs.frozen
class _Block:
    numa: tuple[int, ...] | None
    type: str
    size: int


def _mem_block(r: _Reader, value: Any, field: str) -> _Block:
    obj = r.obj(value, field)
    got = r.fields(obj, _BLOCK_FIELDS) if obj is not None else {}
    numa = r.array(got.get("numaAffinity"), f"{field}.numaAffinity")
    return _Block(
        None if numa is None else tuple(
            r.integer(n, f"{field}.numaAffinity[{i}]", unsigned=False) for i, n in enumerate(numa)),
        r.string(got.get("type"), f"{field}.type"),
        r.integer(got.get("size"), f"{field}.size", unsigned=True))


def _mem_blocks(r: _Reader, value: Any, field: str) -> tuple[_Block, ...] | None:
    items = r.array(value, field)
    return None if items is None else tuple(
        _mem_block(r, b, f"{field}[{i}]") for i, b in enumerate(items))


def _mem_table(r: _Reader, value: Any, field: str) -> MemoryTableRecord:
    obj = r.obj(value, field)
    if obj is None:
        r.fail("a null memory table is not modelled", field)
    got = r.fields(obj, _TABLE_FIELDS)
    n = [r.integer(got.get(k), f"{field}.{k}", unsigned=True) for k in _TABLE_FIELDS]
    return MemoryTableRecord(*n)


@attrs.frozen
class _Node:
    assignments: int
    tables: dict[str, MemoryTableRecord] | None
    cells: tuple[int, ...] | None


def _mem_node(r: _Reader, value: Any, field: str) -> _Node:
    obj = r.obj(value, field)
    if obj is None:
        r.fail("a null NUMA node state is not modelled", field)
    got = r.fields(obj, ("numberOfAssignments", "memoryMap", "cells"))
    cells = r.array(got.get("cells"), f"{field}.cells")
    return _Node(
        r.integer(got.get("numberOfAssignments"), f"{field}.numberOfAssignments", unsigned=False),
        r.str_map(got.get("memoryMap"), f"{field}.memoryMap", lambda v, f: _mem_table(r, v, f)),
        None if cells is None else tuple(
            r.integer(c, f"{field}.cells[{i}]", unsigned=False) for i, c in enumerate(cells)))


def _block_spew(b: _Block) -> _Struct:
    return _Struct("state.Block", (
        ("NUMAAffinity", _Slice("[]int", NIL if b.numa is None else tuple(
            _Scalar("int", str(n)) for n in b.numa))),
        ("Type", _Scalar("v1.ResourceName", b.type)), ("Size", _u64(b.size))))


def _table_spew(t: MemoryTableRecord) -> _Ptr:
    return _Ptr(_Struct("state.MemoryTable", (
        ("TotalMemSize", _u64(t.total)), ("SystemReserved", _u64(t.system_reserved)),
        ("Allocatable", _u64(t.allocatable)), ("Reserved", _u64(t.reserved)),
        ("Free", _u64(t.free)))))


def _node_spew(n: _Node) -> _Ptr:
    return _Ptr(_Struct("state.NUMANodeState", (
        ("NumberOfAssignments", _Scalar("int", str(n.assignments))),
        ("MemoryMap", _smap("map[v1.ResourceName]*state.MemoryTable", n.tables, _table_spew)),
        ("Cells", _Slice("[]int", NIL if n.cells is None else tuple(
            _Scalar("int", str(c)) for c in n.cells))))))


def _blocks_spew(blocks: tuple[_Block, ...] | None) -> _Slice:
    return _Slice("[]state.Block", NIL if blocks is None else tuple(_block_spew(b) for b in blocks))


def _mem_spew(policy: str, machine: Mapping[int, _Node] | None,
              entries: Mapping[str, Mapping[str, tuple[_Block, ...] | None] | None] | None,
              *, pods: Mapping[str, tuple[_Block, ...] | None] | None, v2: bool,
              name: str = "MemoryManagerCheckpoint") -> str:
    fields: list[tuple[str, Any]] = [
        ("PolicyName", _s(policy)),
        ("MachineState", _smap("state.NUMANodeMap", machine, _node_spew)),
        ("Entries", _smap("state.ContainerMemoryAssignments", entries,
                          lambda c: _smap("map[string][]state.Block", c, _blocks_spew))),
    ]
    if v2:
        fields.append(("PodEntries", _smap("state.PodMemoryAssignments", pods, lambda b: _Struct(
            "state.PodEntry", (("MemoryBlocks", _blocks_spew(b)),)))))
    fields.append(("Checksum", _checksum_zero()))
    return spew_for_hash(_Ptr(_Struct(f"state.{name}", tuple(fields))))


def _mem_parts(r: _Reader, got: Mapping[str, Any], prefix: str) -> tuple[
        str, dict[int, _Node] | None, dict[str, Any] | None, dict[str, Any] | None]:
    policy = r.string(got.get("policyName"), f"{prefix}policyName")
    machine = r.int_map(got.get("machineState"), f"{prefix}machineState",
                        lambda v, f: _mem_node(r, v, f)) if "machineState" in got else {}
    entries = r.str_map(got.get("entries"), f"{prefix}entries", lambda v, f: r.str_map(
        v, f, lambda b, g: _mem_blocks(r, b, g))) if "entries" in got else {}

    def pod_entry(v: Any, f: str) -> tuple[_Block, ...] | None:
        obj = r.obj(v, f)
        inner = r.fields(obj, ("memoryBlocks",)) if obj is not None else {}
        return _mem_blocks(r, inner.get("memoryBlocks"), f"{f}.memoryBlocks")
    pods = r.str_map(got.get("podEntries"), f"{prefix}podEntries", pod_entry) \
        if "podEntries" in got else {}
    return policy, machine, entries, pods


def _records(blocks: tuple[_Block, ...] | None) -> tuple[MemoryBlockRecord, ...]:
    return tuple(MemoryBlockRecord(b.numa or (), b.type, b.size) for b in blocks or ())


def read_memory_manager_state(path: str | os.PathLike[str], *,
                              minor: int | None = None) -> MemoryManagerState:
    """CKPT-2, CKPT-4: read ``memory_manager_state`` as kubelet 1.``minor`` reads it (1.37
    when not given; :func:`as_read_by`)."""
    r = _Reader(os.fspath(path), minor)
    state = _read_mem(r)
    return state if minor is None else as_read_by(state, minor)


def _read_mem(r: _Reader) -> MemoryManagerState:
    top = r.fields(r.load(), _MEM_FIELDS)
    checksum = r.integer(top.get("checksum"), "checksum", unsigned=True)
    data = r.string(top.get("data"), "data")
    data_checksum = r.integer(top.get("dataChecksum"), "dataChecksum", unsigned=True)
    policy, machine, entries, pods = _mem_parts(r, top, "")
    fmt = "v1"
    zero = False
    older: MemoryManagerState | None = None
    refusal: str | None = None
    if data or data_checksum:
        fmt = "v3"
        # the v1 fields' checksum is what 1.29-1.36 verify in this file; 1.37 ignores it
        legacy = [_mem_spew(policy, machine, entries, pods=None, v2=False),
                  _mem_spew(policy, machine, entries, pods=None, v2=False,
                            name="MemoryManagerCheckpointV1")]
        if r.check("checksum", checksum, legacy, zero_ok=True):
            older = _mem_state(r, "v1", policy, machine, entries, pods={},
                               zero=checksum == 0)
        else:
            refusal = _mismatch("v1", checksum, fnv32a(legacy[0]), "1.29-1.36")
        if r.minor is not None and r.minor <= 36:  # they never look at data
            return _legacy_only(r, "v3", older, refusal)
        if not r.check("dataChecksum", data_checksum, [_data_spew(data)]):
            r.checksum_mismatch("v3", "dataChecksum", data_checksum, fnv32a(_data_spew(data)))
        try:
            inner = r.fields(r.parse(data, "data"), _MEM_FIELDS[:4])
            policy, machine, entries, pods = _mem_parts(r, inner, "data.")
        except InputFileError as err:
            raise CorruptCheckpointError(err.message, where=err.where) from None
    else:
        v2 = _mem_spew(policy, machine, entries, pods=pods, v2=True)
        v1 = _mem_spew(policy, machine, entries, pods=None, v2=False)
        v1_named = _mem_spew(policy, machine, entries, pods=None, v2=False,
                             name="MemoryManagerCheckpointV1")  # 1.36, gate off: tried first
        if r.check("checksum", checksum, [v2]):
            fmt = "v2"
        elif r.check("checksum", checksum, [v1, v1_named], zero_ok=True):
            # v1; a checksum of 0 is accepted from 1.36 on only (CKPT-4)
            pods = {}
            zero = checksum == 0 and not r.check("checksum", checksum, [v1, v1_named])
        else:
            fmt = "v2" if pods else "v1"
            r.checksum_mismatch(fmt, "checksum", checksum, fnv32a(v2 if pods else v1))
    return attrs.evolve(_mem_state(r, fmt, policy, machine, entries, pods=pods, zero=zero),
                        older=older, older_refusal=refusal)


def _mem_state(r: _Reader, fmt: str, policy: str, machine: Mapping[int, _Node] | None,
               entries: Mapping[str, Any] | None, *, pods: Mapping[str, Any] | None,
               zero: bool) -> MemoryManagerState:
    return MemoryManagerState(
        path=r.path, format=fmt, policy_name=policy,
        machine_state={n: MemoryNodeRecord(s.assignments, s.cells or (), dict(s.tables or {}))
                       for n, s in (machine or {}).items()},
        entries={pod: {c: _records(b) for c, b in (cs or {}).items()}
                 for pod, cs in (entries or {}).items()},
        pod_entries={pod: _records(b) for pod, b in (pods or {}).items()}, zero_checksum=zero)


def _legacy_only(r: _Reader, fmt: str, older: _State | None, refusal: str | None) -> _State:
    """A 1.37 file (``fmt``) as 1.29-1.36 read it: its top-level fields alone."""
    if older is None:
        raise CorruptCheckpointError(refusal or f"format {fmt}: refused", where=r.where(
            "checksum"))
    return older


_State = TypeVar("_State", CPUManagerState, MemoryManagerState)


def _mismatch(fmt: str, found: int, computed: int, releases: str) -> str:
    return (f"checksum mismatch (format {fmt}, as kubelet {releases} read this file): the "
            f"file says {found}, kubelet computes {computed}; kubelet {releases} refuse it")


def as_read_by(state: _State, minor: int) -> _State:
    """CKPT-1, CKPT-2, CKPT-4: ``state`` (as the reader gave it: what 1.37 reads) as kubelet
    1.``minor`` reads the same file.  1.29-1.36 read a ``v4`` CPU or ``v3`` memory file
    through its top-level fields and ``checksum``, ignoring ``data`` (and ``dataChecksum``);
    1.29-1.35 refuse a ``v1`` memory file whose checksum is 0.  Raises
    :class:`~numaspec.errors.CorruptCheckpointError` where that release refuses the file.
    Whether the release reads the format at all is ``FORMAT_READ_BY``'s."""
    if minor <= 36 and state.older_refusal is not None:
        raise CorruptCheckpointError(state.older_refusal, where=f"{state.path}: checksum")
    if minor <= 36 and state.older is not None:
        older: _State = state.older
        state = older
    if isinstance(state, MemoryManagerState) and state.zero_checksum and minor <= 35:
        raise CorruptCheckpointError(
            "checksum is 0: kubelet 1.29-1.35 verify it as any other (only 1.36 and later "
            "accept 0 in a v1 memory_manager_state); kubelet refuses this file",
            where=f"{state.path}: checksum")
    return state


# --- kubelet_internal_checkpoint (CKPT-3) -------------------------------------------------------

_DEV_FIELDS = ("PodUID", "ContainerName", "ResourceName", "DeviceIDs", "AllocResp")


@attrs.frozen
class _DevEntry:
    pod: str
    container: str
    resource: str
    devices: dict[int, tuple[str, ...] | None] | tuple[str, ...] | None  # v1: a list
    alloc: bytes | None
    v1: bool


def _strings(r: _Reader, value: Any, field: str) -> tuple[str, ...] | None:
    items = r.array(value, field)
    if items is None:
        return None
    return tuple(r.string(s, f"{field}[{i}]") for i, s in enumerate(items))


def _dev_entry(r: _Reader, value: Any, field: str, v1: bool) -> _DevEntry:
    obj = r.obj(value, field)
    got = r.fields(obj, _DEV_FIELDS) if obj is not None else {}
    ids = got.get("DeviceIDs")
    devices: dict[int, tuple[str, ...] | None] | tuple[str, ...] | None
    if v1:
        devices = _strings(r, ids, f"{field}.DeviceIDs")
    else:
        devices = r.int_map(ids, f"{field}.DeviceIDs", lambda v, f: _strings(r, v, f))
    alloc_raw = got.get("AllocResp")
    alloc: bytes | None = None
    if alloc_raw is not None:
        text = r.string(alloc_raw, f"{field}.AllocResp")
        try:
            alloc = base64.b64decode(text.replace("\r", "").replace("\n", ""), validate=True)
        except (binascii.Error, ValueError):
            r.fail("not base64", f"{field}.AllocResp")
    return _DevEntry(r.string(got.get("PodUID"), f"{field}.PodUID"),
                     r.string(got.get("ContainerName"), f"{field}.ContainerName"),
                     r.string(got.get("ResourceName"), f"{field}.ResourceName"), devices, alloc, v1)


def _dev_spew(entries: tuple[_DevEntry, ...] | None,
              registered: Mapping[str, tuple[str, ...] | None] | None) -> str:
    def strings(items: tuple[str, ...] | None) -> _Slice:
        return _Slice("[]string", NIL if items is None else tuple(_s(s) for s in items))

    def entry(e: _DevEntry) -> _Struct:
        devices: Any
        if e.v1:  # checkpointDataV1: DeviceIDs is a []string; its type names renamed
            devices = strings(e.devices if isinstance(e.devices, tuple) else None)
        else:
            devices = _smap("checkpoint.DevicesPerNUMA",
                            e.devices if isinstance(e.devices, dict) else None, strings)
        return _Struct("checkpoint.PodDevicesEntry", (
            ("PodUID", _s(e.pod)), ("ContainerName", _s(e.container)),
            ("ResourceName", _s(e.resource)), ("DeviceIDs", devices),
            ("AllocResp", _Slice("[]uint8", NIL if e.alloc is None else tuple(
                _Scalar("uint8", str(b)) for b in e.alloc)))))
    return spew_for_hash(_Struct("checkpoint.checkpointData", (
        ("PodDeviceEntries", _Slice("[]checkpoint.PodDevicesEntry", NIL if entries is None else
                                    tuple(entry(e) for e in entries))),
        ("RegisteredDevices", _smap("map[string][]string", registered, strings)))))


def read_device_checkpoint(path: str | os.PathLike[str]) -> DeviceCheckpoint:
    """CKPT-3, CKPT-4, CKPT-6: read the Device Manager's ``kubelet_internal_checkpoint``."""
    return _read_dev(_Reader(os.fspath(path)))


def _read_dev(r: _Reader) -> DeviceCheckpoint:
    top = r.fields(r.load(), ("Data", "Checksum"))
    checksum = r.integer(top.get("Checksum"), "Checksum", unsigned=True)
    data_obj = r.obj(top.get("Data"), "Data")
    data = r.fields(data_obj, ("PodDeviceEntries", "RegisteredDevices")) if data_obj else {}
    raw_entries = r.array(data.get("PodDeviceEntries"), "Data.PodDeviceEntries") \
        if "PodDeviceEntries" in data else []
    # v1 (1.19 and older): DeviceIDs is a list, not a map by NUMA node.
    v1 = any(isinstance(e, _Obj) and _is_array(r.fields(e, _DEV_FIELDS).get("DeviceIDs"))
             for e in raw_entries or [])
    entries = None if raw_entries is None else tuple(
        _dev_entry(r, e, f"Data.PodDeviceEntries[{i}]", v1) for i, e in enumerate(raw_entries))
    registered = r.str_map(data.get("RegisteredDevices"), "Data.RegisteredDevices",
                           lambda v, f: _strings(r, v, f)) if "RegisteredDevices" in data else {}
    fmt = "v1" if v1 else "v2"
    text = _dev_spew(entries, registered)
    if not r.check("Checksum", checksum, [text]):
        r.checksum_mismatch(fmt, "Checksum", checksum, fnv32a(text))
    out: list[DeviceEntry] = []
    for e in entries or ():
        if e.v1:
            # v1 carried no NUMA node: kubelet puts the devices on node 0
            devices = {0: e.devices if isinstance(e.devices, tuple) else ()}
        else:
            devices = {n: ids or () for n, ids in (e.devices or {}).items()} \
                if isinstance(e.devices, dict) else {}
        out.append(DeviceEntry(e.pod, e.container, e.resource, devices))
    return DeviceCheckpoint(path=r.path, format=fmt, entries=tuple(out),
                            registered={k: v or () for k, v in (registered or {}).items()})


def hashed_texts(path: str | os.PathLike[str]) -> Mapping[str, str]:
    """CKPT-4: the go-spew text whose FNV-32a verified each checksum field of the state file at
    ``path`` (named by its kubelet file name), for comparison with kubelet's own rendering."""
    r = _Reader(os.fspath(path))
    name = os.path.basename(r.path)
    if name == "cpu_manager_state":
        _read_cpu(r)
    elif name == "memory_manager_state":
        _read_mem(r)
    elif name == "kubelet_internal_checkpoint":
        _read_dev(r)
    else:
        r.fail("not a kubelet state file name (cpu_manager_state, memory_manager_state, "
               "kubelet_internal_checkpoint)")
    return dict(r.hashed)


# --- a kubelet root directory (CKPT-5) ----------------------------------------------------------


def read_state_dir(directory: str | os.PathLike[str], *, minor: int | None = None) -> tuple[
        CPUManagerState | None, MemoryManagerState | None, DeviceCheckpoint | None]:
    """CKPT-5: the three state files of a kubelet root directory (``/var/lib/kubelet``); a file
    that is not there is ``None``: kubelet would start with fresh state.  The device checkpoint
    is looked for in ``device-plugins/`` first, then at the top level.  ``minor``: read as
    kubelet 1.``minor`` reads them (as 1.37 when not given)."""
    root = os.fspath(directory)
    if not os.path.isdir(root):
        raise InputFileError("not a directory", where=root)

    def present(*parts: str) -> str | None:
        p = os.path.join(root, *parts)
        return p if os.path.lexists(p) else None

    cpu = present("cpu_manager_state")
    mem = present("memory_manager_state")
    dev = present("device-plugins", "kubelet_internal_checkpoint") or present(
        "kubelet_internal_checkpoint")
    return (read_cpu_manager_state(cpu, minor=minor) if cpu else None,
            read_memory_manager_state(mem, minor=minor) if mem else None,
            read_device_checkpoint(dev) if dev else None)


# --- writing, as kubelet 1.29-1.36 write (CKPT-8) -----------------------------------------------


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def encode_cpu_manager_state(policy_name: str, default_cpu_set: Iterable[int],
                             entries: Mapping[str, Mapping[str, Iterable[int]]]) -> str:
    """CKPT-8: ``cpu_manager_state`` in format ``v2`` (what 1.29-1.36 write and every modelled
    release reads), its checksum computed as kubelet computes it."""
    default = format_cpuset(default_cpu_set)
    texts = {uid: {name: format_cpuset(cpus) for name, cpus in sorted(containers.items())}
             for uid, containers in sorted(entries.items())}
    checksum = fnv32a(_cpu_v2_spew("CPUManagerCheckpoint", policy_name, default, texts,
                                   pods=None, v3=False))
    return _json({"policyName": policy_name, "defaultCpuSet": default, "entries": texts,
                  "checksum": checksum})


def encode_memory_manager_state(
        policy_name: str, machine_state: Mapping[int, MemoryNodeRecord],
        entries: Mapping[str, Mapping[str, Iterable[MemoryBlockRecord]]]) -> str:
    """CKPT-8: ``memory_manager_state`` in format ``v1`` (1.29-1.36; every modelled release
    reads it), with kubelet's checksum."""
    nodes = {n: _Node(s.assignments, dict(sorted(s.tables.items())), tuple(s.cells))
             for n, s in sorted(machine_state.items())}
    blocks = {uid: {name: tuple(_Block(tuple(b.numa), b.type, b.size) for b in listed)
                    for name, listed in sorted(containers.items())}
              for uid, containers in sorted(entries.items())}
    checksum = fnv32a(_mem_spew(policy_name, nodes, blocks, pods=None, v2=False))
    return _json({
        "policyName": policy_name,
        "machineState": {str(n): {
            "numberOfAssignments": s.assignments,
            "memoryMap": {kind: {"total": t.total, "systemReserved": t.system_reserved,
                                 "allocatable": t.allocatable, "reserved": t.reserved,
                                 "free": t.free} for kind, t in (s.tables or {}).items()},
            "cells": list(s.cells or ())} for n, s in nodes.items()},
        "entries": {uid: {name: [{"numaAffinity": list(b.numa or ()), "type": b.type,
                                  "size": b.size} for b in listed]
                          for name, listed in containers.items()}
                    for uid, containers in blocks.items()},
        "checksum": checksum})


def encode_device_checkpoint(entries: Iterable[DeviceEntry],
                             registered: Mapping[str, Iterable[str]]) -> str:
    """CKPT-8: ``kubelet_internal_checkpoint`` in format ``v2`` (every modelled release),
    entries without an allocation response (``AllocResp`` null), with kubelet's checksum."""
    raw = tuple(_DevEntry(e.pod_uid, e.container, e.resource,
                          {n: tuple(ids) for n, ids in sorted(e.devices.items())}, None, False)
                for e in entries)
    devices = {r: tuple(ids) for r, ids in sorted(registered.items())}
    checksum = fnv32a(_dev_spew(raw, devices))
    return _json({"Data": {
        "PodDeviceEntries": [{"PodUID": e.pod, "ContainerName": e.container,
                              "ResourceName": e.resource,
                              "DeviceIDs": {str(n): list(ids or ()) for n, ids in
                                            (e.devices or {}).items()
                                            } if isinstance(e.devices, dict) else {},
                              "AllocResp": None} for e in raw],
        "RegisteredDevices": {r: list(ids) for r, ids in devices.items()}},
        "Checksum": checksum})
