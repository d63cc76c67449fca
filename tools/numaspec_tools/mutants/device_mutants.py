"""Two device implementations for RUN-12's equivalence (tests/suite/test_device_equivalence.py).

``PermutedDevices`` is the reference with every device renamed within its class (same
resource, same NUMA nodes, same health), the last id of a class standing for the first: what
an implementation taking devices from a group in another order, as kubelet does in Go map
order, answers.  The equivalence must accept it.  ``UnalignedFirst`` takes the devices outside
the container's affinity before those inside it (DEV-4 broken): it holds the same number of
devices, on other NUMA nodes, and the equivalence must reject it."""

from __future__ import annotations

import json
from typing import Any

from numaspec.node.admission import Node
from numaspec.protocols.node_protocol import NodeSession
from numaspec.topology.masks import NumaMask


def _classes(create: dict[str, Any]) -> dict[str, dict[str, str]]:
    """resource -> id -> the id it is renamed to (reversed within each class)."""
    out: dict[str, dict[str, str]] = {}
    for resource, listed in create["node"]["machine"].get("devices", {}).items():
        by_class: dict[tuple[tuple[int, ...], bool], list[str]] = {}
        for device in listed:
            key = (tuple(sorted(device.get("numa", []))), device.get("healthy", True))
            by_class.setdefault(key, []).append(device["id"])
        rename: dict[str, str] = {}
        for ids in by_class.values():
            ordered = sorted(ids)
            rename.update(zip(ordered, reversed(ordered), strict=True))
        out[resource] = rename
    return out


class PermutedDevices:
    """The reference, its device ids renamed within their class."""

    name = "mutant:permuted-devices"

    def __init__(self) -> None:
        self.session = NodeSession()
        self.rename: dict[str, dict[str, str]] = {}

    def _ids(self, resource: str, ids: list[str]) -> list[str]:
        return sorted(self.rename.get(resource, {}).get(i, i) for i in ids)

    def _held(self, held: dict[str, list[str]]) -> dict[str, list[str]]:
        return {r: self._ids(r, ids) for r, ids in held.items()}

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = self.session.answer(json.dumps(request))
        if request.get("op") == "create" and "ok" in answer:
            self.rename = _classes(request)
        if "decision" in answer:
            for container in answer["decision"]["containers"]:
                container["devices"] = self._held(container["devices"])
        if "state" in answer:
            devices = answer["state"]["devices"]
            devices["allocated"] = self._held(devices["allocated"])
            devices["assignments"] = {
                uid: {name: self._held(held) for name, held in containers.items()}
                for uid, containers in devices["assignments"].items()}
        return answer


def _unaligned_first(node: Node) -> None:
    """DEV-4 broken: devices elsewhere are taken before those in the affinity."""
    devices = node.devices
    by_affinity = devices._by_affinity

    def swapped(resource: str, available: frozenset[str], affinity: NumaMask | None
                ) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        aligned, unaligned, none = by_affinity(resource, available, affinity)
        return unaligned, aligned, none
    devices._by_affinity = swapped  # type: ignore[method-assign]


class UnalignedFirst:
    """The reference with :func:`_unaligned_first` applied to every node."""

    name = "mutant:unaligned-first"

    def __init__(self) -> None:
        self.session = NodeSession()

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = self.session.answer(json.dumps(request))
        if request.get("op") == "create" and self.session.node is not None:
            _unaligned_first(self.session.node)
        return answer


__all__ = ["PermutedDevices", "UnalignedFirst"]
