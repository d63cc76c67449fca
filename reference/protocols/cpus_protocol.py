"""The ``cpus`` operation (spec chapter ``cpu.md``, CPU-21): a machine's CPU topology, the CPUs
available, how many are asked for and the static policy's options in; the CPUs the static
policy's allocator takes out.

A case::

    {"kubelet_version": "1.35", "machine": node-protocol machine,
     "available": [1, 2, 3, ...], "count": 4,
     "options": {"prefer-align-cpus-by-uncorecache": "true"}, "feature_gates": {...}}

The answer is ``{"cpus": [...]}`` (ascending), or ``{"unsatisfiable": message}`` with
kubelet's words when the CPUs cannot be found, or ``{"error": {...}}`` for a case kubelet would
not start with (an unknown option, a gate off) or that is malformed.  It is the CPU Manager's
allocator alone, for implementations that allocate CPUs by its rules outside kubelet (such as
a DRA CPU driver): no hints, no reservation, no state.
"""

from __future__ import annotations

from typing import Any

import attrs

from numaspec.errors import InvalidFieldError, UnsupportedVersionError
from numaspec.node.cpu import CPUTopology
from numaspec.node.cpu_assignment import CPUAllocationError
from numaspec.node.cpu_manager import CPUManagerOptions, parse_cpu_manager_options, take_by_policy
from numaspec.node.nodeconfig import NODE_VERSIONS
from numaspec.protocols.node_protocol import decode_machine
from numaspec.strict_json import as_array, as_object, bool_map, expect, string_map
from numaspec.topology.versions import KubeletVersion, parse_version

__all__ = ["CPUsCase", "decode_cpus_case", "reference_cpus"]

_KEYS = {"kubelet_version", "machine", "available", "count", "options", "feature_gates"}


@attrs.frozen
class CPUsCase:
    """A decoded ``cpus`` case."""

    version: KubeletVersion
    topology: CPUTopology
    available: frozenset[int]
    count: int
    options: CPUManagerOptions


def decode_cpus_case(case: object) -> CPUsCase:
    """CPU-21: a case, or a typed error naming the field (kubelet's start-up errors for the
    options, CPU-14)."""
    body = as_object(case, "case")
    for key in body:
        if key not in _KEYS:
            raise InvalidFieldError(f"unknown field (known: {', '.join(sorted(_KEYS))})",
                                    where=key)
    for key in ("kubelet_version", "machine", "available", "count"):
        if key not in body:
            raise InvalidFieldError("required", where=key)
    version = parse_version(body["kubelet_version"], where="kubelet_version")
    if version.minor not in NODE_VERSIONS:
        raise UnsupportedVersionError(
            f"the CPU Manager is modelled for 1.{NODE_VERSIONS.start} to "
            f"1.{NODE_VERSIONS.stop - 1}, not {version.described}", where="kubelet_version")
    topology = decode_machine(body["machine"], where="machine").cpu_topology()
    known = {c.cpu for c in topology.cpus}
    available = set()
    for i, item in enumerate(as_array(body["available"], "available")):
        expect(item, int, "a CPU id", f"available[{i}]")
        if item not in known:
            raise InvalidFieldError(f"CPU {item} is not a CPU of the machine",
                                    where=f"available[{i}]")
        if item in available:
            raise InvalidFieldError(f"CPU {item} is listed twice", where=f"available[{i}]")
        available.add(item)
    count = body["count"]
    expect(count, int, "a number of CPUs", "count")
    if count < 1:
        raise InvalidFieldError("at least one CPU", where="count")
    gates = bool_map(body.get("feature_gates", {}), "feature_gates")
    options = parse_cpu_manager_options(string_map(body.get("options", {}), "options"),
                                        version, gates)
    return CPUsCase(version, topology, frozenset(available), count, options)


def reference_cpus(case: object) -> dict[str, Any]:
    """CPU-21: the static policy's allocator's answer (CPU-10, CPU-12, CPU-13, CPU-19,
    CPU-20)."""
    cpus = decode_cpus_case(case)
    try:
        taken = take_by_policy(cpus.topology, cpus.version, cpus.options, cpus.available,
                               cpus.count)
    except CPUAllocationError as exc:
        return {"unsatisfiable": str(exc)}
    return {"cpus": sorted(taken)}
