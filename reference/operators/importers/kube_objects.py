"""Pods, and a Node's kubelet version, from YAML or JSON as kubectl prints them (spec chapter
``kubelet-config.md``, KCONF-5..KCONF-9).

Accepted: one Pod; a ``List``/``PodList`` (any ``*List``) with ``items``; several YAML
documents (``---``); JSON; and the pod template of a workload (Deployment, StatefulSet,
DaemonSet, ReplicaSet, ReplicationController, Job, PodTemplate: ``spec.template``/``template``;
CronJob: ``spec.jobTemplate.spec.template``), for "what would this pod do".

Lenient where kubectl's output is open (unknown fields, managedFields, statuses of other
things are ignored); strict where numaspec would otherwise guess: every refusal is a typed
error whose ``where`` names the file and the field (``pods.yaml: items[3].spec.containers[1]
.resources.limits.cpu``).
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import attrs
import yaml

from numaspec.errors import (
    InputFileError,
    LimitExceededError,
    NotModelledError,
    NumaspecError,
    NumaspecWarning,
)
from numaspec.limits import MAX_CONTAINERS
from numaspec.node.pods import Container, Pod, PodResources, parse_resources
from numaspec.operators.importers.files import MAX_FILE_BYTES, field_at, read_bytes, type_phrase
from numaspec.operators.importers.known_fields import check_object
from numaspec.topology.versions import KubeletVersion, parse_version

__all__ = ["ImportedPod", "MAX_FILE_BYTES", "load_documents", "read_kubelet_version",
           "read_pods"]

#: KCONF-1: the most objects (mappings and lists) one file may hold.
MAX_OBJECTS = 2_000_000

_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _TwiceError(yaml.constructor.ConstructorError):
    pass


def _loader(twice: list[tuple[str, str]] | None) -> Any:
    """A YAML loader that refuses a key given twice in one mapping (``twice`` None), or notes
    it in ``twice`` (key, line) and keeps the last."""

    class Loader(_BASE):  # type: ignore[misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[object] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if isinstance(key, str) and key in seen:
                    mark = key_node.start_mark
                    if twice is None:
                        raise _TwiceError(None, None, f"the key {key!r} is given twice in one "
                                          "mapping (which one counts is a guess numaspec does "
                                          "not make)", mark)
                    twice.append((key, f"line {mark.line + 1}"))
                if isinstance(key, str):
                    seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return Loader


class _Duplicate(ValueError):
    pass


def _pairs(twice: list[tuple[str, str]] | None) -> Any:
    """The same for JSON (``json.loads``'s ``object_pairs_hook``)."""
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                if twice is None:
                    raise _Duplicate(f"the key {key!r} is given twice in one object (which one "
                                     "counts is a guess numaspec does not make)")
                twice.append((key, "in one object"))
            out[key] = value
        return out
    return hook


#: KCONF-6: the kinds whose pod template is read, and where the template sits.
_TEMPLATES: dict[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
    "PodTemplate": ("template",),
}


# --- reading files (KCONF-1) -----------------------------------------------------------------


def _read_text(path: str | os.PathLike[str]) -> str:
    name = os.fspath(path)
    data = read_bytes(name, limit=MAX_FILE_BYTES)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFileError(f"not UTF-8 text (byte {exc.start})", where=name) from None


def _check_tree(document: object, where: str) -> None:
    """KCONF-1: no YAML alias (the same mapping or list reached twice: kubectl never writes
    one, and a chain of them makes a small file expand beyond memory) and a bounded size."""
    seen: set[int] = set()
    stack = [document]
    while stack:
        item = stack.pop()
        if isinstance(item, dict | list):
            if id(item) in seen:
                raise InputFileError("YAML aliases (*name) are not read; write the object "
                                     "out", where=where)
            seen.add(id(item))
            if len(seen) > MAX_OBJECTS:
                raise LimitExceededError(f"more than {MAX_OBJECTS} objects in one file",
                                         where=where)
            stack.extend(item.values() if isinstance(item, dict) else item)
            if isinstance(item, dict) and not all(isinstance(k, str) for k in item):
                key = next(k for k in item if not isinstance(k, str))
                raise InputFileError(f"a mapping key that is not a string: {key!r}",
                                     where=where)


def load_documents(path: str | os.PathLike[str] | None = None, *, text: str | None = None,
                   source: str = "", keep_last: bool = False) -> list[tuple[str, object]]:
    """KCONF-1: the documents of a YAML (one or several, ``---``) or JSON file, each with its
    location: ``(file, doc)`` for a single document, ``(f"{file}: document {n}", doc)`` (from
    1) when there are several.  Empty documents are dropped.  Every failure is an
    :class:`InputFileError` naming the file (and, for YAML, the line)."""
    if (path is None) == (text is None):
        raise TypeError("give exactly one of path and text")
    name = source or (os.fspath(path) if path is not None else "<text>")
    body = _read_text(path) if path is not None else text
    # KCONF-1: a key given twice in one mapping is an error (the API server's strict field
    # validation, kubectl's default, refuses it), or with ``keep_last`` the last one counts,
    # with a warning (kubelet's lenient decoding of its configuration file keeps the last)
    noted: list[tuple[str, str]] | None = [] if keep_last else None
    assert body is not None
    if body.lstrip()[:1] in ("{", "["):
        try:
            documents: list[object] = [json.loads(body, object_pairs_hook=_pairs(noted))]
        except RecursionError:
            raise LimitExceededError("JSON nested too deeply", where=name) from None
        except _Duplicate as exc:
            raise InputFileError(str(exc), where=name) from None
        except ValueError as exc:
            raise InputFileError(f"not JSON: {exc}", where=name) from None
    else:
        try:
            documents = list(yaml.load_all(body, Loader=_loader(noted)))
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark
            at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            if isinstance(exc, _TwiceError):
                raise InputFileError(f"{at.strip()}: {exc.problem}", where=name) from None
            raise InputFileError(f"not YAML{at}: {exc.problem or exc}", where=name) from None
        except (yaml.YAMLError, RecursionError, ValueError) as exc:
            raise InputFileError(f"not YAML: {exc}", where=name) from None
    for key, line in noted or ():
        warnings.warn(NumaspecWarning(f"the key {key!r} is given twice ({line}): the last one "
                                      "counts, as kubelet reads its configuration", where=name),
                      stacklevel=2)
    several = len(documents) > 1
    out = []
    for number, document in enumerate(documents, start=1):
        where = f"{name}: document {number}" if several else name
        if document is None:
            continue
        _check_tree(document, where)
        out.append((where, document))
    return out


# --- typed field access ----------------------------------------------------------------------


def _mapping(value: object, where: str, field: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputFileError(f"expected an object, got {type_phrase(value)}",
                             where=field_at(where, field))
    return value


def _listed(value: object, where: str, field: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputFileError(f"expected a list, got {type_phrase(value)}",
                             where=field_at(where, field))
    return value


def _string(value: object, where: str, field: str) -> str:
    if not isinstance(value, str):
        raise InputFileError(f"expected a string, got {type_phrase(value)}",
                             where=field_at(where, field))
    return value


def _optional_string(value: object, where: str, field: str) -> str | None:
    return None if value is None else _string(value, where, field)


def _string_map(value: object, where: str, field: str) -> dict[str, str]:
    raw = _mapping(value, where, field)
    for key, item in raw.items():
        if not isinstance(item, str):
            raise InputFileError(f"expected a string, got {type_phrase(item)}",
                                 where=field_at(where, f"{field}.{key}"))
    return dict(raw)


def _quantity_map(value: object, where: str, field: str) -> dict[str, str]:
    """KCONF-7: a resource list as the API server reads it: a string, or a bare YAML/JSON
    number (``cpu: 2``), which the API server's quantity decoding also accepts."""
    raw = _mapping(value, where, field)
    out = {}
    for key, item in raw.items():
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise InputFileError(f"a quantity is a string such as \"500m\" or a number, got "
                                 f"{type_phrase(item)}", where=field_at(where, f"{field}.{key}"))
        if isinstance(item, float) and not math.isfinite(item):
            raise InputFileError(f"{item!r} is not a quantity", where=field_at(where,
            f"{field}.{key}"))
        out[key] = item if isinstance(item, str) else repr(item)
    return out


def _relocated(exc: NumaspecError, where: str, field_prefix: str) -> NumaspecError:
    """The same error, its ``where`` (a field path relative to the object) put under the
    file's location."""
    inner = f"{field_prefix}.{exc.where}" if exc.where else field_prefix
    return exc.relocated(field_at(where, inner))


# --- pods (KCONF-5..KCONF-8) -----------------------------------------------------------------


@attrs.frozen
class ImportedPod:
    """KCONF-5: a pod read from kubectl's output, with what kubectl shows beside it."""

    pod: Pod
    namespace: str
    #: ``status.phase`` (``Running``, ``Pending``...), ``None`` without a status.
    phase: str | None
    #: container name (init containers and sidecars included) -> ``containerID`` as the status
    #: shows it, with its runtime prefix (``containerd://0123abcd...``); see
    #: :attr:`runtime_ids` for the bare ids.  Containers without an id are left out.
    container_ids: Mapping[str, str]
    #: ``spec.nodeName``: the node the pod is bound to.
    node_name: str | None
    #: ``"<file>"``, ``"<file>: items[3]"``, ``"<file>: document 2"``.
    source: str
    #: DEV-8: the names of the pod's DRA resource claims (``spec.resourceClaims``): they take
    #: no part in NUMA alignment.
    resource_claims: tuple[str, ...] = ()
    #: DRA-11: each claim of ``resource_claims``: ``("claim", name)`` for a
    #: ``resourceClaimName``, ``("template", name)`` for a ``resourceClaimTemplateName``.
    claim_sources: Mapping[str, tuple[str, str]] = attrs.field(factory=dict)
    #: DRA-11: the claim made for the pod from a template (``status.resourceClaimStatuses``).
    claim_statuses: Mapping[str, str] = attrs.field(factory=dict)
    #: DRA-11: each container's ``resources.claims``: ``(claim, request)``, ``""`` for all.
    claim_uses: Mapping[str, tuple[tuple[str, str], ...]] = attrs.field(factory=dict)

    @property
    def runtime_ids(self) -> dict[str, str]:
        """The ids without the ``<runtime>://`` prefix (what ``crictl`` prints)."""
        return {name: cid.split("://", 1)[-1] for name, cid in self.container_ids.items()}


def _container(raw: object, where: str, field: str, *, init: bool) -> Container:
    if not isinstance(raw, dict):
        raise InputFileError(f"expected a container object, got {type_phrase(raw)}",
                             where=field_at(where, field))
    body = raw
    name = _string(body.get("name"), where, f"{field}.name")
    resources = _mapping(body.get("resources"), where, f"{field}.resources")
    requests = _quantity_map(resources.get("requests"), where, f"{field}.resources.requests")
    limits = _quantity_map(resources.get("limits"), where, f"{field}.resources.limits")
    restart = _optional_string(body.get("restartPolicy"), where, f"{field}.restartPolicy")
    try:
        return Container.of(name, requests=requests, limits=limits,
                            restart_policy="Always" if init and restart == "Always" else None,
                            where="resources")
    except NumaspecError as exc:
        raise _relocated(exc, where, field) from None


#: KCONF-10: the pod condition kubelet sets while an in-place resize waits (1.33+; before,
#: ``status.resize``).  ``PodResizeInProgress`` alone is an accepted resize: kubelet's
#: allocation is the spec (RESIZE-7), so such a pod is read at its spec.
RESIZE_CONDITIONS = frozenset({"PodResizePending"})


def _no_resize(status: dict[str, Any], where: str, containers: Mapping[str, Container]
               ) -> None:
    """KCONF-10: a pod whose resize waits (or whose allocation differs from its spec) holds
    what kubelet allocated, not what its spec now says: refuse, naming the field.  A resize
    kubelet accepted (PodResizeInProgress, the allocation equal to the spec) is read at its
    spec."""
    resize = status.get("resize")
    if isinstance(resize, str) and resize:
        raise NotModelledError(f"an in-place resize is {resize}: resize is not modelled",
                               where=field_at(where, "status.resize"))
    for i, item in enumerate(_listed(status.get("conditions"), where, "status.conditions")):
        condition = _mapping(item, where, f"status.conditions[{i}]")
        if condition.get("type") in RESIZE_CONDITIONS and condition.get("status") == "True":
            raise NotModelledError(f"the pod is {condition['type']}: what kubelet holds for a "
                                   "waiting in-place resize is not modelled",
                                   where=field_at(where, f"status.conditions[{i}]"))
    for key in ("initContainerStatuses", "containerStatuses"):
        for i, item in enumerate(_listed(status.get(key), where, f"status.{key}")):
            entry = _mapping(item, where, f"status.{key}[{i}]")
            allocated = entry.get("allocatedResources")
            container = containers.get(str(entry.get("name")))
            if not allocated or container is None:
                continue
            at = f"status.{key}[{i}].allocatedResources"
            try:
                amounts = parse_resources(_quantity_map(allocated, where, at), where=at)
            except NumaspecError as exc:
                raise exc.relocated(field_at(where, exc.where)) from None
            if any(container.requests.get(name, 0) != amount for name, amount in amounts.items()):
                raise NotModelledError(
                    "kubelet allocated other resources than the spec asks (an in-place resize "
                    "not yet done): resize is not modelled", where=field_at(where, at))


def _pod_from_spec(meta: dict[str, Any], spec: dict[str, Any], status: dict[str, Any],
                   where: str, *, prefix: str, default_name: str | None) -> ImportedPod:
    """KCONF-5..KCONF-7: one pod from its metadata, spec and status (``prefix``: where the
    pod sits inside the object, ``""`` for a Pod, ``spec.template.`` for a workload)."""
    name = meta.get("name", default_name)
    name = _string(name, where, f"{prefix}metadata.name")
    namespace = _string(meta.get("namespace", "default"), where, f"{prefix}metadata.namespace")
    uid = _optional_string(meta.get("uid"), where, f"{prefix}metadata.uid")
    labels = _string_map(meta.get("labels"), where, f"{prefix}metadata.labels")
    annotations = _string_map(meta.get("annotations"), where, f"{prefix}metadata.annotations")
    if spec.get("overhead"):
        raise NotModelledError("pod overhead (spec.overhead, from a RuntimeClass) is not "
                               "modelled: kubelet's resource fit adds it to the pod's requests",
                               where=field_at(where, f"{prefix}spec.overhead"))
    apps = _listed(spec.get("containers"), where, f"{prefix}spec.containers")
    inits = _listed(spec.get("initContainers"), where, f"{prefix}spec.initContainers")
    if len(apps) + len(inits) > MAX_CONTAINERS:
        raise LimitExceededError(f"{len(apps) + len(inits)} containers: numaspec accepts at "
                                 f"most {MAX_CONTAINERS} in a pod",
                                 where=field_at(where, f"{prefix}spec"))
    if not apps:
        raise InputFileError("a pod needs at least one container",
                             where=field_at(where, f"{prefix}spec.containers"))
    containers = tuple(_container(c, where, f"{prefix}spec.containers[{i}]", init=False)
                       for i, c in enumerate(apps))
    init_containers = tuple(_container(c, where, f"{prefix}spec.initContainers[{i}]", init=True)
                            for i, c in enumerate(inits))
    names = [c.name for c in (*init_containers, *containers)]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise InputFileError(f"two containers are named {duplicate!r}",
                             where=field_at(where, f"{prefix}spec"))
    _no_resize(status, where, {c.name: c for c in (*init_containers, *containers)})
    if status.get("extendedResourceClaimStatus"):
        raise NotModelledError(
            "the pod's extended resources are backed by a DRA claim "
            "(status.extendedResourceClaimStatus): from 1.35 kubelet's Device Manager "
            "allocates nothing for them but still gives hints (DEV-9); not modelled",
            where=field_at(where, "status.extendedResourceClaimStatus"))
    sources = _claim_sources(spec, where, prefix)
    claims = tuple(sources)
    statuses = {}
    for i, item in enumerate(_listed(status.get("resourceClaimStatuses"), where,
                                     "status.resourceClaimStatuses")):
        entry = _mapping(item, where, f"status.resourceClaimStatuses[{i}]")
        made = _optional_string(entry.get("resourceClaimName"), where,
                                f"status.resourceClaimStatuses[{i}].resourceClaimName")
        if made:
            statuses[_string(entry.get("name"), where,
                             f"status.resourceClaimStatuses[{i}].name")] = made
    uses = {}
    for key, listed in (("initContainers", inits), ("containers", apps)):
        for i, raw in enumerate(listed):
            at = f"{prefix}spec.{key}[{i}]"
            field = f"{at}.resources.claims"
            body = _mapping(raw, where, at)
            needs = _mapping(body.get("resources"), where, f"{at}.resources")
            found = []
            for j, item in enumerate(_listed(needs.get("claims"), where, field)):
                entry = _mapping(item, where, f"{field}[{j}]")
                claim = _string(entry.get("name"), where, f"{field}[{j}].name")
                if claim not in sources:
                    raise InputFileError(f"the pod has no claim {claim!r} in "
                                         "spec.resourceClaims", where=field_at(where,
                                                                               f"{field}[{j}]"))
                request = _optional_string(entry.get("request"), where,
                                           f"{field}[{j}].request") or ""
                found.append((claim, request))
            if found:
                uses[str(body.get("name"))] = tuple(found)
    ids: dict[str, str] = {}
    for key in ("initContainerStatuses", "containerStatuses"):
        for i, item in enumerate(_listed(status.get(key), where, f"status.{key}")):
            entry = _mapping(item, where, f"status.{key}[{i}]")
            cname = _string(entry.get("name"), where, f"status.{key}[{i}].name")
            cid = _optional_string(entry.get("containerID"), where,
                                   f"status.{key}[{i}].containerID")
            if cid:
                ids[cname] = cid
    resources = None
    if spec.get("resources") is not None:
        # KCONF-8: read as it is; the node decides (QOS-4).
        raw = _mapping(spec.get("resources"), where, f"{prefix}spec.resources")
        try:
            resources = PodResources.of(
                requests=_quantity_map(raw.get("requests"), where,
                                       f"{prefix}spec.resources.requests"),
                limits=_quantity_map(raw.get("limits"), where, f"{prefix}spec.resources.limits"),
                where="resources")
        except NumaspecError as exc:
            raise _relocated(exc, where, f"{prefix}spec") from None
    pod = Pod(name, containers, init_containers, uid or f"{namespace}/{name}", labels=labels,
              annotations=annotations, resources=resources)
    return ImportedPod(
        pod=pod, namespace=namespace, resource_claims=claims, claim_sources=sources,
        claim_statuses=statuses, claim_uses=uses,
        phase=_optional_string(status.get("phase"), where, "status.phase"),
        container_ids=ids,
        node_name=_optional_string(spec.get("nodeName"), where, f"{prefix}spec.nodeName"),
        source=where)


def _claim_sources(spec: dict[str, Any], where: str, prefix: str
                   ) -> dict[str, tuple[str, str]]:
    """DRA-11: ``spec.resourceClaims``: each claim's name and what backs it."""
    sources: dict[str, tuple[str, str]] = {}
    field = f"{prefix}spec.resourceClaims"
    for i, item in enumerate(_listed(spec.get("resourceClaims"), where, field)):
        entry = _mapping(item, where, f"{field}[{i}]")
        name = _string(entry.get("name"), where, f"{field}[{i}].name")
        claim = _optional_string(entry.get("resourceClaimName"), where,
                                 f"{field}[{i}].resourceClaimName")
        template = _optional_string(entry.get("resourceClaimTemplateName"), where,
                                    f"{field}[{i}].resourceClaimTemplateName")
        if (claim is None) == (template is None):
            raise InputFileError("exactly one of resourceClaimName and "
                                 "resourceClaimTemplateName", where=field_at(where,
                                                                             f"{field}[{i}]"))
        if name in sources:
            raise InputFileError(f"two claims are named {name!r}",
                                 where=field_at(where, f"{field}[{i}].name"))
        sources[name] = ("claim", claim) if claim is not None else ("template", str(template))
    return sources


def _pods_of(obj: object, where: str) -> Iterator[ImportedPod]:
    """KCONF-6: the pods one object stands for."""
    if not isinstance(obj, dict):
        raise InputFileError("expected an object (a Pod, a List, a workload), got "
                             f"{type_phrase(obj)}", where=where)
    body: dict[str, Any] = obj
    kind = body.get("kind")
    if not isinstance(kind, str):
        raise InputFileError("no kind: expected a Pod, a List of them or a workload",
                             where=field_at(where, "kind"))
    # KCONF-12: a misspelled field is named before anything is read
    check_object(body, "List" if kind.endswith("List") else kind, where)
    if kind.endswith("List") and "items" in body:
        for i, item in enumerate(_listed(body["items"], where, "items")):
            yield from _pods_of(item, field_at(where, f"items[{i}]"))
        return
    meta = _mapping(body.get("metadata"), where, "metadata")
    if kind == "Pod":
        yield _pod_from_spec(meta, _mapping(body.get("spec"), where, "spec"),
                             _mapping(body.get("status"), where, "status"), where, prefix="",
                             default_name=None)
        return
    if kind in _TEMPLATES:
        path = _TEMPLATES[kind]
        template: dict[str, Any] = body
        for depth, step in enumerate(path):
            template = _mapping(template.get(step), where, ".".join(path[:depth + 1]))
        prefix = ".".join(path) + "."
        tbody = template
        if not tbody:
            raise InputFileError(f"a {kind} without a pod template",
                                 where=field_at(where, ".".join(path)))
        owner = meta.get("name")
        owner_name = owner if isinstance(owner, str) else kind.lower()
        tmeta = dict(_mapping(tbody.get("metadata"), where, f"{prefix}metadata"))
        tmeta.setdefault("namespace", meta.get("namespace", "default"))
        tmeta.pop("uid", None)
        yield _pod_from_spec(tmeta, _mapping(tbody.get("spec"), where, f"{prefix}spec"), {},
                             where, prefix=prefix, default_name=owner_name)
        return
    raise InputFileError(f"kind {kind!r} holds no pod (read: Pod, a List of them, "
                         f"{', '.join(sorted(_TEMPLATES))})", where=field_at(where, "kind"))


def read_pods(path: str | os.PathLike[str] | None = None, *, text: str | None = None,
              source: str = "") -> list[ImportedPod]:
    """KCONF-5..KCONF-8: every pod of a file (or of ``text``; ``source`` names it in
    errors), in the file's order."""
    pods: list[ImportedPod] = []
    for where, document in load_documents(path, text=text, source=source):
        pods.extend(_pods_of(document, where))
    return pods


# --- a Node's kubelet version (KCONF-4) ------------------------------------------------------


def read_kubelet_version(path: str | os.PathLike[str]) -> KubeletVersion:
    """KCONF-4: the kubelet version of a Node object (``kubectl get node NAME -o yaml`` or
    ``-o json``): ``status.nodeInfo.kubeletVersion`` (``v1.30.14`` is 1.30).  A List must
    hold exactly one Node."""
    documents = load_documents(path)
    nodes: list[tuple[str, dict[str, Any]]] = []
    for where, document in documents:
        if not isinstance(document, dict):
            raise InputFileError(f"expected a Node object, got {type_phrase(document)}",
                                 where=where)
        body: dict[str, Any] = document
        if body.get("kind") == "Node":
            nodes.append((where, body))
        elif isinstance(body.get("kind"), str) and str(body["kind"]).endswith("List"):
            for i, item in enumerate(_listed(body.get("items"), where, "items")):
                if isinstance(item, dict) and item.get("kind", "Node") == "Node":
                    nodes.append((field_at(where, f"items[{i}]"), item))
        else:
            raise InputFileError(f"expected a Node object (kubectl get node NAME -o yaml), "
                                 f"got kind {body.get('kind')!r}", where=field_at(where, "kind"))
    if len(nodes) != 1:
        raise InputFileError(f"{len(nodes)} Node objects: give the one node's (kubectl get "
                             "node NAME -o yaml)", where=os.fspath(path))
    where, node = nodes[0]
    check_object(node, "Node", where)
    info = _mapping(_mapping(node.get("status"), where, "status").get("nodeInfo"), where,
                    "status.nodeInfo")
    field = field_at(where, "status.nodeInfo.kubeletVersion")
    if "kubeletVersion" not in info:
        raise InputFileError("the Node has no status.nodeInfo.kubeletVersion", where=field)
    return parse_version(info["kubeletVersion"], where=field)

