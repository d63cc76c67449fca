"""A node's configuration from its KubeletConfiguration file (YAML or JSON) or from the configz
endpoint's JSON, defaulted as kubelet defaults it (spec chapter ``kubelet-config.md``,
KCONF-1..KCONF-4).

Upstream: ``pkg/kubelet/apis/config/v1beta1/defaults.go`` (``SetDefaults_KubeletConfiguration``)
and ``cmd/kubelet/app/server.go`` (``loadConfigFile``: the hard eviction defaults;
``setConfigz``: what configz serves).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from numaspec.errors import InputFileError, NodeStartupError, NotModelledError, NumaspecError
from numaspec.node.nodeconfig import NodeConfig, parse_cpuset
from numaspec.operators.importers.files import field_at, type_phrase
from numaspec.operators.importers.known_fields import check_kubelet_config
from numaspec.operators.importers.kube_objects import load_documents, read_kubelet_version
from numaspec.topology.versions import KubeletVersion, parse_version

__all__ = ["API_VERSION", "DEFAULT_EVICTION_HARD", "KIND", "default_eviction_hard",
           "node_config_from_mapping", "read_kubelet_config", "read_kubelet_version"]

#: KCONF-2: the one group/version and kind kubelet reads its configuration file as.
API_VERSION = "kubelet.config.k8s.io/v1beta1"
KIND = "KubeletConfiguration"
#: KCONF-3: kubelet's hard eviction thresholds when the file sets none (Linux;
#: ``pkg/kubelet/eviction/defaults_linux.go``) from 1.30; 1.29 lacks ``imagefs.inodesFree``
#: (found by tests/upstream/kubelet/test_kubelet_config_go.py: default_eviction_hard).
DEFAULT_EVICTION_HARD: Mapping[str, str] = {
    "memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%",
    "imagefs.available": "15%", "imagefs.inodesFree": "5%"}
#: KCONF-3: the release whose defaults first have ``imagefs.inodesFree``.
_IMAGEFS_INODES_FROM = 30


def default_eviction_hard(version: KubeletVersion) -> dict[str, str]:
    """KCONF-3: kubelet's hard eviction thresholds at ``version`` when the file sets none."""
    defaults = dict(DEFAULT_EVICTION_HARD)
    if version.minor < _IMAGEFS_INODES_FROM:
        del defaults["imagefs.inodesFree"]
    return defaults
#: KCONF-3: ``mergeDefaultEvictionSettings`` exists from 1.33.
_MERGE_EVICTION_FROM = 33


def read_kubelet_config(path: str | os.PathLike[str], *,
                        kubelet_version: KubeletVersion | str | None = None) -> NodeConfig:
    """KCONF-1..KCONF-4: a KubeletConfiguration file (YAML or JSON) or a saved configz answer
    (``kubectl get --raw /api/v1/nodes/NAME/proxy/configz``) → :class:`NodeConfig`.

    The kubelet version is not in either: give it (a string such as ``"v1.30.14"``, or
    :func:`read_kubelet_version` of the Node object)."""
    # KCONF-1: a key given twice: the last counts, with a warning, as kubelet's lenient
    # decoding reads it (checked against kubelet's loader: kconf)
    documents = load_documents(path, keep_last=True)
    name = os.fspath(path)
    if len(documents) != 1:
        raise InputFileError(f"{len(documents)} documents: a kubelet configuration file holds "
                             "one", where=name)
    where, document = documents[0]
    if not isinstance(document, dict):
        raise InputFileError(f"expected a KubeletConfiguration object, got {type_phrase(document)}",
                             where=where)
    return node_config_from_mapping(document, source=where, kubelet_version=kubelet_version)


def node_config_from_mapping(raw: Mapping[str, Any], *, source: str,
                             kubelet_version: KubeletVersion | str | None = None) -> NodeConfig:
    """KCONF-2..KCONF-4: a decoded KubeletConfiguration (or configz answer) → NodeConfig;
    ``source`` (the file) prefixes every error's ``where``."""
    if kubelet_version is None:
        raise InputFileError(
            "the kubelet version is not part of a kubelet configuration: give it (e.g. "
            "\"v1.30.14\", or read it from the Node object: kubectl get node NAME -o yaml, "
            "status.nodeInfo.kubeletVersion)", where=source)
    version = (kubelet_version if isinstance(kubelet_version, KubeletVersion)
               else parse_version(kubelet_version, where="kubeletVersion"))
    body, prefix = _body(raw, source)
    check_kubelet_config(body, source, prefix)
    try:
        return _config(body, version, source, prefix)
    except NumaspecError as exc:
        if exc.where.startswith(source):
            raise
        raise exc.relocated(field_at(source, exc.where) if exc.where else source) from None


def _body(raw: Mapping[str, Any], source: str) -> tuple[dict[str, Any], str]:
    """KCONF-2: the configuration object and its field prefix (``kubeletconfig.`` inside a
    configz answer)."""
    prefix = ""
    body: Any = raw
    if "kubeletconfig" in raw and "kind" not in raw:
        body, prefix = raw["kubeletconfig"], "kubeletconfig."
        if not isinstance(body, dict):
            raise InputFileError(f"expected an object, got {type_phrase(body)}",
                                 where=field_at(source, "kubeletconfig"))
        configz = True
    else:
        configz = False
    kind, api = body.get("kind"), body.get("apiVersion")
    if configz and kind is None and api is None:
        return dict(body), prefix  # configz answers of older releases carry neither
    if kind != KIND or api != API_VERSION:
        raise InputFileError(
            f"kind {kind!r}, apiVersion {api!r}: expected kind {KIND}, apiVersion "
            f"{API_VERSION} (or a configz answer, {{\"kubeletconfig\": {{...}}}})",
            where=field_at(source, f"{prefix}kind" if kind != KIND else f"{prefix}apiVersion"))
    return dict(body), prefix


def _field(body: dict[str, Any], source: str, prefix: str, name: str, kind: type, *,
           default: Any) -> Any:
    """A field of the given JSON type; absent or null: ``default``."""
    value = body.get(name)
    if value is None:
        return default
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected = {str: "a string", int: "an integer", dict: "an object", list: "a list",
                    bool: "a boolean"}[kind]
        raise InputFileError(f"expected {expected}, got {type_phrase(value)}",
                             where=field_at(source, f"{prefix}{name}"))
    return value


def _map(body: dict[str, Any], source: str, prefix: str, name: str, kind: type
         ) -> dict[str, Any] | None:
    raw = _field(body, source, prefix, name, dict, default=None)
    if raw is None:
        return None
    for key, value in raw.items():
        if not isinstance(value, kind) or (kind is str and isinstance(value, bool)):
            expected = "a string (quote it: \"1\")" if kind is str else "a boolean"
            raise InputFileError(f"expected {expected}, got {type_phrase(value)}",
                                 where=field_at(source, f"{prefix}{name}.{key}"))
    return dict(raw)


#: KCONF-9: the eviction signals kubelet 1.29-1.38 accept (``pkg/kubelet/eviction/helpers.go``,
#: ``signalToResource``); any other stops kubelet at start.
EVICTION_SIGNALS = frozenset({
    "memory.available", "allocatableMemory.available", "nodefs.available", "nodefs.inodesFree",
    "imagefs.available", "imagefs.inodesFree", "containerfs.available",
    "containerfs.inodesFree", "pid.available"})


def _eviction_hard(body: dict[str, Any], version: KubeletVersion, source: str,
                   prefix: str) -> dict[str, str] | None:
    """KCONF-3: ``evictionHard`` as kubelet reads its file: absent (or null), kubelet's
    defaults; set, exactly what it says (no memory threshold without ``memory.available``),
    unless ``mergeDefaultEvictionSettings`` (1.33+) fills the thresholds it lacks."""
    eviction = _map(body, source, prefix, "evictionHard", str)
    for signal in sorted(eviction or ()):
        if signal not in EVICTION_SIGNALS:
            message = f"unsupported eviction signal {signal}"
            raise NodeStartupError(f"{message}: kubelet does not start (known: "
                                   f"{', '.join(sorted(EVICTION_SIGNALS))})",
                                   where=field_at(source, f"{prefix}evictionHard.{signal}"),
                                   kubelet_message=message)
    merge = _field(body, source, prefix, "mergeDefaultEvictionSettings", bool, default=False)
    if eviction is None:
        eviction = default_eviction_hard(version)
    elif merge and version.minor >= _MERGE_EVICTION_FROM:
        eviction = {**default_eviction_hard(version), **eviction}
    memory = eviction.get("memory.available")
    if memory is not None and memory.strip().endswith("%"):
        raise NotModelledError(f"a percentage memory eviction threshold ({memory}) is not "
                               "modelled: give a quantity such as \"100Mi\"",
                               where=field_at(source, f"{prefix}evictionHard.memory.available"))
    return eviction


def _config(body: dict[str, Any], version: KubeletVersion, source: str, prefix: str
            ) -> NodeConfig:
    def at(name: str) -> str:
        return field_at(source, f"{prefix}{name}")

    pods_per_core = _field(body, source, prefix, "podsPerCore", int, default=0)
    if pods_per_core > 0:
        raise NotModelledError("podsPerCore is not modelled (kubelet's pod capacity is then "
                               "the smaller of maxPods and podsPerCore x cores)",
                               where=at("podsPerCore"))
    reserved_memory = []
    for i, item in enumerate(_field(body, source, prefix, "reservedMemory", list, default=[])):
        if not isinstance(item, dict):
            raise InputFileError("expected an object {numaNode, limits}, got "
                                 f"{type_phrase(item)}", where=at(f"reservedMemory[{i}]"))
        numa = _field(item, source, f"{prefix}reservedMemory[{i}].", "numaNode", int,
                      default=None)
        if numa is None or numa < 0:
            raise InputFileError("expected a NUMA node id (an integer, 0 or more)",
                                 where=at(f"reservedMemory[{i}].numaNode"))
        limits = _map(item, source, f"{prefix}reservedMemory[{i}].", "limits", str) or {}
        reserved_memory.append((numa, limits))
    def text(name: str) -> str:
        value: str = _field(body, source, prefix, name, str, default="")
        return value

    def strings(name: str) -> dict[str, str]:
        return _map(body, source, prefix, name, str) or {}

    max_pods = _field(body, source, prefix, "maxPods", int, default=0)
    if not -(1 << 31) <= max_pods < (1 << 31):
        raise InputFileError("maxPods is a 32-bit integer", where=at("maxPods"))
    return NodeConfig(
        kubelet_version=version,
        cpu_manager_policy=text("cpuManagerPolicy") or "none",
        cpu_manager_policy_options=strings("cpuManagerPolicyOptions"),
        reserved_system_cpus=parse_cpuset(text("reservedSystemCPUs"),
                                          where=at("reservedSystemCPUs")),
        kube_reserved=strings("kubeReserved"),
        system_reserved=strings("systemReserved"),
        eviction_hard=_eviction_hard(body, version, source, prefix),
        memory_manager_policy=text("memoryManagerPolicy") or "None",
        reserved_memory=tuple(reserved_memory),
        topology_manager_policy=text("topologyManagerPolicy") or "none",
        topology_manager_scope=text("topologyManagerScope") or "container",
        topology_manager_policy_options=strings("topologyManagerPolicyOptions"),
        feature_gates=_map(body, source, prefix, "featureGates", bool) or {},
        max_pods=max_pods or 110,
    )
