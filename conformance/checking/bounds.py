"""The finite world the checker explores (spec/conformance/checking.md, CHECK-1): the initial nodes
within the bounds, and the alphabet of pods the steps admit and remove.

Everything here is plain data: ``create`` requests and pod bodies of the node protocol
(spec/protocols/node-protocol.md), so a counterexample is a session ``numaspec node`` replays."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

import attrs

from numaspec.errors import InvalidFieldError
from numaspec.node.affinity import (
    AFFINITY_ANNOTATION,
    ANTI_AFFINITY_ANNOTATION,
    MEMORY_ENHANCEMENT_ANNOTATION,
)

__all__ = ["AFFINITY_LABELS", "MACHINES", "POD_SETS", "Bounds", "initial_nodes", "machine",
           "pod_alphabet"]

POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
SCOPES = ("container", "pod")
#: The CPU Manager configurations explored: none, static, static with full-pcpus-only.
CPU_CONFIGS = ("none", "static", "static+full-pcpus-only")
MEMORY_CONFIGS = ("None", "Static")
#: Some machine shapes, named sockets x NUMA nodes per socket x cores per NUMA node x threads
#: per core (the help's examples).  Any such shape within SHAPE_LIMITS is accepted, with an
#: optional memory size per NUMA node after ``@`` (default 4Gi): ``2x2x4x1@2Gi``.
MACHINES = ("1x2x2x1", "2x1x2x1", "2x2x2x1", "1x2x2x2", "2x2x4x1")
#: The largest of each dimension of a shape.
SHAPE_LIMITS = (2, 4, 8, 2)
#: The memory sizes per NUMA node a shape may ask for, in GiB.
MEMORY_SIZES_GIB = (1, 2, 4, 8, 16, 32, 64)
_SHAPE = re.compile(r"([1-9])x([1-9])x([1-9])x([1-9])(?:@([0-9]+)Gi)?")
#: One device resource with one device on each NUMA node.
DEVICE = "example.com/dev"


@attrs.frozen
class Bounds:
    """CHECK-1: what is explored.  Every combination of release, machine, Topology Manager
    policy and scope, CPU and Memory Manager configuration is an initial node; from each, every
    sequence of up to ``depth`` admits and removes of the ``pods`` alphabet."""

    releases: tuple[str, ...] = ("1.30", "1.37")
    machines: tuple[str, ...] = ("1x2x2x1", "2x2x2x1")
    policies: tuple[str, ...] = POLICIES
    scopes: tuple[str, ...] = SCOPES
    cpu: tuple[str, ...] = CPU_CONFIGS
    memory: tuple[str, ...] = MEMORY_CONFIGS
    pods: str = "default"
    depth: int = 5
    #: Instances of each pod kind that may be on the node at once.
    copies: int = 2
    #: Also ask each pod kind's hints in every state (only a comparison with the reference
    #: judges them: they change nothing, CHECK-4).
    hints: bool = False
    #: Machines with a device per NUMA node, and the pod kinds that ask for one; without,
    #: for an implementation that does not claim the Device Manager (PROTO-7).
    devices: bool = True
    #: The nodes' maxPods (ADMIT-8); None: kubelet's default, 110.
    max_pods: int | None = None
    #: CHECK-11: a state and its renamings (the instances of each pod kind permuted) are one
    #: state; off, every renaming is a state of its own (for the comparison).
    symmetry: bool = True

    def __attrs_post_init__(self) -> None:
        for shape in self.machines:
            _shape(shape)
        for field, known in (("policies", POLICIES),
                             ("scopes", SCOPES), ("cpu", CPU_CONFIGS),
                             ("memory", MEMORY_CONFIGS)):
            for value in getattr(self, field):
                if value not in known:
                    raise InvalidFieldError(f"unknown value {value!r} (known: "
                                            f"{', '.join(known)})", where=f"--{field}")
        if self.pods not in POD_SETS:
            raise InvalidFieldError(f"unknown pod set {self.pods!r} (known: "
                                    f"{', '.join(POD_SETS)})", where="--pods")
        if self.depth < 0 or self.copies < 1:
            raise InvalidFieldError("depth is at least 0 and copies at least 1",
                                    where="--depth")
        if self.max_pods is not None and self.max_pods < 0:
            raise InvalidFieldError("maxPods is at least 0", where="--max-pods")

    @property
    def affinity(self) -> bool:
        """CHECK-7: the nodes run NUMA-level inter-pod affinity (the ``affinity`` alphabet)."""
        return self.pods == "affinity"

    @property
    def op(self) -> str:
        """The session operation each path is run as (PROTO-3)."""
        return "affinity" if self.affinity else "hints" if self.hints else "node"

    def describe(self) -> str:
        return (f"releases {','.join(self.releases)}; machines {','.join(self.machines)}; "
                f"policies {','.join(self.policies)}; scopes {','.join(self.scopes)}; "
                f"CPU Manager {','.join(self.cpu)}; Memory Manager {','.join(self.memory)}; "
                f"pods {self.pods} x{self.copies}; depth {self.depth}"
                + ("; hints asked" if self.hints else "")
                + ("" if self.devices else "; no devices")
                + ("" if self.max_pods is None else f"; maxPods {self.max_pods}")
                + ("" if self.symmetry else "; no symmetry reduction"))


def _shape(text: str) -> tuple[int, int, int, int, int]:
    """A machine shape: sockets, NUMA nodes per socket, cores per NUMA node, threads per
    core, and GiB of memory per NUMA node."""
    found = _SHAPE.fullmatch(text)
    if found is not None:
        sockets, per_socket, cores, threads = (int(d) for d in found.groups()[:4])
        gib = int(found.group(5) or 4)
        if all(d <= top for d, top in zip((sockets, per_socket, cores, threads), SHAPE_LIMITS,
                                          strict=True)) and gib in MEMORY_SIZES_GIB:
            return sockets, per_socket, cores, threads, gib
    raise InvalidFieldError(
        f"unknown machine {text!r}: sockets x NUMA nodes per socket x cores per NUMA node x "
        f"threads per core, at most {'x'.join(map(str, SHAPE_LIMITS))}, optionally @ the "
        f"memory per NUMA node, one of {', '.join(f'{g}Gi' for g in MEMORY_SIZES_GIB)} "
        "(e.g. 2x2x4x1@2Gi)", where="--machines")


def machine(shape: str, devices: bool = True) -> dict[str, Any]:
    """A machine of the node protocol: 4 GiB (or the shape's size) and 256 2-MiB pages per
    NUMA node, one device of ``DEVICE`` per NUMA node (with ``devices``)."""
    sockets, per_socket, cores, threads, gib = _shape(shape)
    count = sockets * per_socket
    total = count * cores
    nodes = []
    for numa in range(count):
        nodes.append({
            "id": numa, "memory": f"{gib}Gi", "hugepages": {"hugepages-2Mi": 256},
            "distances": [10 if other == numa else 20 for other in range(count)],
            "cores": [{"socket": numa // per_socket,
                       "threads": [t * total + numa * cores + c for t in range(threads)]}
                      for c in range(cores)]})
    if not devices:
        return {"numaNodes": nodes}
    return {"numaNodes": nodes,
            "devices": {DEVICE: [{"id": f"dev{n}", "numa": [n]} for n in range(count)]}}


def initial_nodes(bounds: Bounds) -> Iterator[dict[str, Any]]:
    """CHECK-1: every initial node within the bounds, as a ``create`` request."""
    for release, shape, policy, scope, cpu, memory in itertools.product(
            bounds.releases, bounds.machines, bounds.policies, bounds.scopes, bounds.cpu,
            bounds.memory):
        config: dict[str, Any] = {"topologyManagerPolicy": policy,
                                  "topologyManagerScope": scope}
        if cpu != "none":
            config["cpuManagerPolicy"] = "static"
            config["reservedSystemCPUs"] = "0"
            if cpu.endswith("full-pcpus-only"):
                config["cpuManagerPolicyOptions"] = {"full-pcpus-only": "true"}
        if memory == "Static":
            config["memoryManagerPolicy"] = "Static"
            config["systemReserved"] = {"memory": "156Mi"}
            config["reservedMemory"] = [{"numaNode": 0, "limits": {"memory": "256Mi"}}]
        if bounds.max_pods is not None:
            config["maxPods"] = bounds.max_pods
        if bounds.affinity:
            config["interPodAffinityLabels"] = list(AFFINITY_LABELS)
        yield {"op": "create", "node": {"kubeletVersion": release,
                                        "machine": machine(shape, bounds.devices),
                                        "config": config}}


def _guaranteed(cpu: str, memory: str, **extra: str) -> dict[str, Any]:
    return {"limits": {"cpu": cpu, "memory": memory, **extra}}


#: CHECK-7: the label keys the affinity alphabet's nodes keep (AFF-3).
AFFINITY_LABELS = ("role", "app")


def _affine(labels: dict[str, str], **annotations: object) -> dict[str, Any]:
    """A pod of the affinity alphabet: one exclusive CPU and 1 GiB, these labels, and these
    annotations (AFF-1: ``anti`` and ``affinity`` are required selectors, ``exclusive`` the
    NUMA-exclusive flag; a value of ``""`` is the empty annotation, the same as none)."""
    keys = {"anti": ANTI_AFFINITY_ANNOTATION, "affinity": AFFINITY_ANNOTATION,
            "exclusive": MEMORY_ENHANCEMENT_ANNOTATION}
    encoded = {keys[name]: value if isinstance(value, str) else json.dumps(value)
               for name, value in annotations.items()}
    return {"labels": labels, "annotations": encoded,
            "containers": [{"name": "a", "resources": _guaranteed("1", "1Gi")}]}


#: The pod kinds of each alphabet: name -> pod body without its uid.
POD_SETS: dict[str, dict[str, dict[str, Any]]] = {
    "small": {
        "g1": {"containers": [{"name": "a", "resources": _guaranteed("1", "1Gi")}]},
        "b": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "500m",
                                                                      "memory": "256Mi"}}}]},
    },
    "default": {
        # one exclusive CPU and a NUMA node's worth of memory's quarter
        "g1": {"containers": [{"name": "a", "resources": _guaranteed("1", "1Gi")}]},
        # two exclusive CPUs and more memory than one NUMA node has free: a group of two
        "g2": {"containers": [{"name": "a", "resources": _guaranteed("2", "5Gi")}]},
        # shared CPUs only
        "b": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "500m",
                                                                      "memory": "256Mi"}}}]},
        # a device with an exclusive CPU and hugepages
        "d": {"containers": [{"name": "a", "resources": _guaranteed(
            "1", "512Mi", **{DEVICE: "1", "hugepages-2Mi": "64Mi"})}]},
        # an init container larger than the app container, and a sidecar
        "i": {"initContainers": [
            {"name": "init", "resources": _guaranteed("2", "1Gi")},
            {"name": "side", "resources": _guaranteed("1", "256Mi"), "restartPolicy": "Always"}],
            "containers": [{"name": "a", "resources": _guaranteed("1", "512Mi")}]},
        # a sidecar and an app container with a device each
        "s": {"initContainers": [
            {"name": "side", "resources": _guaranteed("1", "256Mi", **{DEVICE: "1"}),
             "restartPolicy": "Always"}],
            "containers": [{"name": "a", "resources": _guaranteed("1", "256Mi",
                                                                  **{DEVICE: "1"})}]},
    },
    # CHECK-7: NUMA-level inter-pod affinity (spec/node/affinity.md), seed 003's training job
    "affinity": {
        # a parameter server; its empty anti-affinity value is no annotation (AFF-1)
        "ps": _affine({"role": "ps", "app": "a"}, anti=""),
        # a worker kept off the parameter servers' NUMA nodes (AFF-7 part 2)
        "w": _affine({"role": "worker", "app": "a"},
                     anti={"required": [{"matchLabels": {"role": "ps"}}]}),
        # a pod that must share a socket with a parameter server of app a: both keys must
        # match (AFF-4), so a worker of app a is not enough
        "n": _affine({"role": "worker", "app": "b"}, affinity={"required": [
            {"matchLabels": {"role": "ps", "app": "a"}, "zone": "socket"}]}),
        # a NUMA-exclusive pod (AFF-6)
        "x": _affine({}, exclusive={"numa_exclusive": "true"}),
    },
}


def pod_alphabet(bounds: Bounds) -> list[tuple[str, dict[str, Any]]]:
    """Every pod the steps may admit: ``copies`` instances of each kind, uid ``KIND-N``."""
    return [(f"{kind}-{n}", {"uid": f"{kind}-{n}", **body})
            for kind, body in POD_SETS[bounds.pods].items()
            if bounds.devices or DEVICE not in json.dumps(body)
            for n in range(1, bounds.copies + 1)]
