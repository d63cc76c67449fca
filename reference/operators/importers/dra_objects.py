"""The node's DRA objects from YAML or JSON as kubectl prints them (spec chapter
``kubelet-config.md``, KCONF-11): ResourceSlices, DeviceClasses, ResourceClaims and
ResourceClaimTemplates (``kubectl get resourceslices,deviceclasses -o yaml``, ``kubectl get
resourceclaims,resourceclaimtemplates -A -o yaml``), and a Node's name and labels.

Only ``resource.k8s.io/v1`` is read (what an API server of 1.34 or later serves); the objects
are kept as their JSON, which :mod:`numaspec.dra.objects` decodes.  Every refusal is an
:class:`~numaspec.errors.InputFileError` naming the file and the object.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from numaspec.dra.allocator import Share
from numaspec.dra.objects import DeviceClass, Slice, decode_class, decode_slice
from numaspec.errors import InputFileError, InvalidFieldError, NotModelledError
from numaspec.operators.importers.files import field_at, type_phrase
from numaspec.operators.importers.kube_objects import load_documents
from numaspec.protocols.allocate_protocol import decode_share

__all__ = ["DraObjects", "allocation_of", "claim_from_template", "node_of", "read_dra_objects",
           "read_node_identity"]

#: KCONF-11: the kinds read, and the field of :class:`DraObjects` each goes to.
_KINDS = {"ResourceSlice": "slices", "DeviceClass": "classes", "ResourceClaim": "claims",
          "ResourceClaimTemplate": "templates"}
_API = "resource.k8s.io/v1"


@attrs.frozen
class DraObjects:
    """KCONF-11: the objects read, each as ``(where, object)``; claims and templates by
    ``(namespace, name)``."""

    slices: tuple[tuple[str, dict[str, Any]], ...] = ()
    classes: tuple[tuple[str, dict[str, Any]], ...] = ()
    claims: Mapping[tuple[str, str], tuple[str, dict[str, Any]]] = attrs.field(factory=dict)
    templates: Mapping[tuple[str, str], tuple[str, dict[str, Any]]] = attrs.field(factory=dict)

    def decoded(self) -> tuple[tuple[Slice, ...], dict[str, DeviceClass]]:
        """DRA-1, DRA-3: the slices and the classes by name, decoded (a class given twice is
        an error naming the second)."""
        slices = tuple(decode_slice(body, at) for at, body in self.slices)
        classes: dict[str, DeviceClass] = {}
        for at, body in self.classes:
            device_class = decode_class(body, at)
            if device_class.name in classes:
                raise InputFileError(f"DeviceClass {device_class.name!r} given twice",
                                     where=at)
            classes[device_class.name] = device_class
        return slices, classes

    def allocated(self) -> list[str]:
        """DRA-11: the devices in use: every device of an allocated claim,
        ``driver/pool/device``, except those allocated with admin access, which the
        scheduler does not count as allocated, and shares (:meth:`shares`)."""
        return [f"{result['driver']}/{result['pool']}/{result['device']}"
                for _, claim in self.claims.values() for result in _results(claim)
                if result.get("adminAccess") is not True and result.get("shareID") is None]

    def shares(self) -> tuple[Share, ...]:
        """DRA-20: the allocated shares: the results with a ``shareID`` (not those with admin
        access, which the scheduler does not count), each with its ``consumedCapacity``."""
        found: list[Share] = []
        for at, claim in self.claims.values():
            for i, result in enumerate(_results(claim)):
                if result.get("adminAccess") is True or result.get("shareID") is None:
                    continue
                device = f"{result['driver']}/{result['pool']}/{result['device']}"
                found.append(decode_share(device, result.get("consumedCapacity"),
                                          f"{at}.status.allocation.devices.results[{i}]"))
        return tuple(found)


def _results(claim: Mapping[str, Any]) -> list[dict[str, Any]]:
    status = claim.get("status")
    allocation = status.get("allocation") if isinstance(status, dict) else None
    devices = allocation.get("devices") if isinstance(allocation, dict) else None
    results = devices.get("results") if isinstance(devices, dict) else None
    return [r for r in results or [] if isinstance(r, dict)
            and all(isinstance(r.get(k), str) for k in ("driver", "pool", "device"))]


def claim_from_template(template: Mapping[str, Any], namespace: str, name: str
                        ) -> dict[str, Any]:
    """DRA-11: the claim a ResourceClaimTemplate makes: its ``spec.spec``, named."""
    spec = template.get("spec")
    return {"metadata": {"name": name, "namespace": namespace},
            "spec": (spec.get("spec") if isinstance(spec, dict) else None) or {}}


def allocation_of(claim: Mapping[str, Any]) -> list[dict[str, str]] | None:
    """DRA-11: an allocated claim's devices as ``{"request", "driver", "pool", "device"}``,
    or ``None`` when it is not allocated."""
    status = claim.get("status")
    if not isinstance(status, dict) or not status.get("allocation"):
        return None
    return [{"request": str(r.get("request", "")), "driver": r["driver"], "pool": r["pool"],
             "device": r["device"]} for r in _results(claim)]


def _objects(document: object, where: str) -> Iterable[tuple[str, dict[str, Any]]]:
    if not isinstance(document, dict):
        raise InputFileError(f"expected an object, got {type_phrase(document)}", where=where)
    kind = document.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in document:
        items = document["items"]
        if not isinstance(items, list):
            raise InputFileError(f"expected a list, got {type_phrase(items)}",
                                 where=field_at(where, "items"))
        for i, item in enumerate(items):
            yield from _objects(item, field_at(where, f"items[{i}]"))
        return
    yield where, document


def read_dra_objects(paths: Iterable[str | os.PathLike[str]]) -> DraObjects:
    """KCONF-11: every DRA object of the files, in the files' order."""
    found: dict[str, Any] = {"slices": [], "classes": [], "claims": {}, "templates": {}}
    for path in paths:
        for where, document in load_documents(path):
            for at, body in _objects(document, where):
                kind = body.get("kind")
                if kind == "DeviceTaintRule":
                    raise NotModelledError(
                        "DeviceTaintRule: numaspec does not apply the taints a rule adds to "
                        "devices (DRA-0); leave the rule out only if it selects no device of "
                        "this node", where=field_at(at, "kind"))
                if kind not in _KINDS:
                    raise InputFileError(f"kind {kind!r} is not a DRA object (read: "
                                         f"{', '.join(_KINDS)}, or a List of them)",
                                         where=field_at(at, "kind"))
                if body.get("apiVersion") != _API:
                    raise InputFileError(
                        f"{kind} of apiVersion {body.get('apiVersion')!r}: only {_API} is read "
                        "(an API server of 1.34 or later serves it: kubectl get "
                        f"{kind.lower()}s.v1.resource.k8s.io -o yaml)",
                        where=field_at(at, "apiVersion"))
                target = _KINDS[str(kind)]
                if target in ("slices", "classes"):
                    found[target].append((at, body))
                    continue
                meta = body.get("metadata")
                if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
                    raise InputFileError("a claim needs metadata.name",
                                         where=field_at(at, "metadata.name"))
                namespace = meta.get("namespace") or "default"
                found[target][(str(namespace), meta["name"])] = (at, body)
    return DraObjects(tuple(found["slices"]), tuple(found["classes"]), found["claims"],
                      found["templates"])


def read_node_identity(path: str | os.PathLike[str]) -> tuple[str, dict[str, str]]:
    """DRA-2: a Node object's name and labels, which decide the slices that are its."""
    for where, document in load_documents(path):
        for at, body in _objects(document, where):
            if body.get("kind", "Node") != "Node":
                continue
            meta = body.get("metadata")
            if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
                raise InputFileError("a Node needs metadata.name",
                                     where=field_at(at, "metadata.name"))
            labels = meta.get("labels") or {}
            if not isinstance(labels, dict) or not all(isinstance(v, str)
                                                       for v in labels.values()):
                raise InputFileError("labels are strings", where=field_at(at,
                                                                          "metadata.labels"))
            return str(meta["name"]), {str(k): str(v) for k, v in labels.items()}
    raise InputFileError("no Node object", where=os.fspath(path))


def node_of(objects: DraObjects, node: str | os.PathLike[str] | None, *,
            flag: str = "--node") -> tuple[str, dict[str, str]]:
    """DRA-2: the node asked about: the Node object's name and labels when given, else the one
    node the slices name (an error naming ``flag`` when they name none or several)."""
    if node:
        return read_node_identity(node)
    named = {str(body["spec"]["nodeName"]) for _, body in objects.slices
             if isinstance(body.get("spec"), dict) and body["spec"].get("nodeName")}
    if len(named) != 1:
        raise InvalidFieldError(
            f"which node is this? give its Node object with {flag} (kubectl get node NAME "
            f"-o yaml): the slices name {len(named)} nodes"
            + (f" ({', '.join(sorted(named))})" if named else ""), where=flag)
    return named.pop(), {}
