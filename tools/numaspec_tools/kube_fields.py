"""The field names of the Kubernetes objects numaspec imports, for strict reading (KCONF-12):
``spec/data/kube-fields.json`` (installed as ``numaspec.data``).

For every pinned kubelet release (``adapters/kubelet/releases.json``) the step reads, from the
Go module cache, the API's OpenAPI document of that release (``api/openapi-spec/swagger.json``
of ``k8s.io/kubernetes``) and the KubeletConfiguration type of ``k8s.io/kubelet``
(``config/v1beta1/types.go``, its fields' JSON names), and writes the union: a field any of
those releases has is not a typo.  Only the types reachable from the kinds numaspec imports are
kept (a Pod, the workloads whose pod template it reads, a Node), each as its fields and, for a
field holding an object or a list of objects, that object's type; maps (labels, resource lists)
and opaque objects are not looked into.

``numaspec-dev regenerate --only kube-fields`` (needs Go, to find the modules).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from numaspec_tools import REPO
from numaspec_tools.builds.kubelet import TABLE_RELEASES
from numaspec_tools.builds.modules import ModuleUnavailable, download

__all__ = ["OUT", "generate"]

OUT = REPO / "spec" / "data" / "kube-fields.json"

#: The kinds whose objects numaspec reads, and their types in the OpenAPI document.
KINDS = {
    "Pod": "io.k8s.api.core.v1.Pod",
    "PodTemplate": "io.k8s.api.core.v1.PodTemplate",
    "ReplicationController": "io.k8s.api.core.v1.ReplicationController",
    "Deployment": "io.k8s.api.apps.v1.Deployment",
    "StatefulSet": "io.k8s.api.apps.v1.StatefulSet",
    "DaemonSet": "io.k8s.api.apps.v1.DaemonSet",
    "ReplicaSet": "io.k8s.api.apps.v1.ReplicaSet",
    "Job": "io.k8s.api.batch.v1.Job",
    "CronJob": "io.k8s.api.batch.v1.CronJob",
    "Node": "io.k8s.api.core.v1.Node",
}
_LIST_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
_PREFIXES = ("io.k8s.api.", "io.k8s.apimachinery.pkg.apis.", "io.k8s.apimachinery.pkg.")
_REF = "#/definitions/"


def _short(name: str) -> str:
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def _module_dir(module: str, version: str, toolchain: str | None) -> Path:
    try:
        return download(module, version, toolchain=toolchain)
    except ModuleUnavailable as exc:
        raise SystemExit(f"kube-fields: {exc}") from None


def _object_type(schema: dict[str, Any]) -> str | None:
    """The type a field holds when it is an object or a list of objects, else None."""
    if "$ref" in schema:
        return str(schema["$ref"]).removeprefix(_REF)
    if schema.get("type") == "array" and "$ref" in schema.get("items", {}):
        return str(schema["items"]["$ref"]).removeprefix(_REF)
    if "allOf" in schema and len(schema["allOf"]) == 1:
        return _object_type(schema["allOf"][0])
    return None


def _api_types(swagger: dict[str, Any], types: dict[str, dict[str, str | None]]) -> None:
    """The fields of every type reachable from :data:`KINDS`, added to ``types``."""
    definitions = swagger["definitions"]
    todo = [name for name in (*KINDS.values(), _LIST_META) if name in definitions]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        properties = definitions[name].get("properties")
        if not properties:
            continue  # a scalar (Quantity, Time) or an opaque object (RawExtension, FieldsV1)
        fields = types.setdefault(_short(name), {})
        for field, schema in properties.items():
            inner = _object_type(schema)
            if inner is not None and definitions.get(inner, {}).get("properties"):
                fields[field] = _short(inner)
                todo.append(inner)
            else:
                fields.setdefault(field, None)


_STRUCT = re.compile(r"^type KubeletConfiguration struct \{(.*?)^\}", flags=re.M | re.S)
_JSON_NAME = re.compile(r'`json:"([A-Za-z0-9]+)[,"]')


def _kubelet_fields(types_go: str) -> set[str]:
    """The JSON names of KubeletConfiguration's fields (the struct's own; TypeMeta's are
    ``kind`` and ``apiVersion``)."""
    found = _STRUCT.search(types_go)
    if found is None:
        raise SystemExit("kube-fields: no KubeletConfiguration struct in config/v1beta1")
    return set(_JSON_NAME.findall(found.group(1))) | {"kind", "apiVersion"}


def generate() -> dict[str, Any]:
    releases = list(TABLE_RELEASES.values())
    versions = [release.version for release in releases]
    types: dict[str, dict[str, str | None]] = {}
    kubelet: set[str] = set()
    for release in releases:
        version, toolchain = release.version, release.toolchain
        root = _module_dir("k8s.io/kubernetes", version, toolchain)
        swagger = json.loads((root / "api" / "openapi-spec" / "swagger.json")
                             .read_text(encoding="utf-8"))
        _api_types(swagger, types)
        staging = "v0." + version.removeprefix("v1.")
        go = _module_dir("k8s.io/kubelet", staging, toolchain) / "config" / "v1beta1" / "types.go"
        kubelet |= _kubelet_fields(go.read_text(encoding="utf-8"))
    # a List's items are the objects of its kind, read one by one; its metadata a ListMeta
    types["meta.v1.List"] = {"apiVersion": None, "kind": None, "metadata": "meta.v1.ListMeta",
                             "items": None}
    return {
        "comment": "Generated by numaspec-dev regenerate --only kube-fields "
                   "(tools/numaspec_tools/kube_fields.py): the union of the fields of the "
                   "Kubernetes releases numaspec pins, for strict reading (KCONF-12).",
        "releases": versions,
        "kinds": {**{kind: _short(name) for kind, name in KINDS.items()},
                  "List": "meta.v1.List"},
        "types": {name: dict(sorted(fields.items())) for name, fields in sorted(types.items())},
        "KubeletConfiguration": sorted(kubelet),
    }


def write() -> None:
    OUT.write_text(json.dumps(generate(), indent=1, sort_keys=False) + "\n", encoding="utf-8")
