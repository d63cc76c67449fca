"""A node's kubelet configuration, with kubelet's field names (spec chapter ``admission.md``,
NODE-2, NODE-3).

Only the fields that decide NUMA alignment: the CPU, Memory and Topology Manager settings, the
reservations they depend on, and the feature gates.  How kubelet derives what it hands the
managers is in ``cmd/kubelet/app/server.go`` (``reservedSystemCPUs`` overrides the cpu
reservations) and ``pkg/kubelet/cm/node_container_manager_linux.go``
(``GetNodeAllocatableReservation``: kube + system reserved + the hard eviction threshold).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction

import attrs

from numaspec.errors import (
    InvalidFieldError,
    LimitExceededError,
    NodeStartupError,
    NotModelledError,
)
from numaspec.limits import MAX_CPU_ID, MAX_LINE_BYTES
from numaspec.node.go_quantity import go_parse, go_reserved_cpu
from numaspec.node.quantity import milli_value, parse_quantity
from numaspec.topology.gates import default_gates
from numaspec.topology.versions import KubeletVersion

__all__ = ["NODE_VERSIONS", "NodeConfig", "format_cpuset", "parse_cpuset"]

#: NODE-0: the kubelet releases whose node admission numaspec models.
NODE_VERSIONS = range(29, 39)
#: VER-1: what a pre-release minor outside the node model is modelled for.
_MERGE_ONLY = (" (the pre-release is modelled for the Topology Manager's merge only; its CPU, "
               "Memory and Device Manager changes are not yet: spec/releases.md)")
#: kubelet's default ``evictionHard`` memory threshold.
DEFAULT_EVICTION_MEMORY = "100Mi"


def parse_cpuset(text: str, *, where: str) -> frozenset[int]:
    """A Linux cpuset list (``"0-3,8,10-11"``), as ``cpuset.Parse`` reads it.

    NWIRE-5: an id above :data:`~numaspec.limits.MAX_CPU_ID` is refused before a range is
    expanded (``"0-99999999999"`` would otherwise take minutes and gigabytes)."""
    cpus: set[int] = set()
    if text.strip() == "":
        return frozenset()
    if len(text) > MAX_LINE_BYTES:
        raise LimitExceededError("the cpuset is longer than a request line", where=where)
    for part in text.split(","):
        bounds = part.strip().split("-")
        try:
            if any(len(b.strip().lstrip("+0")) > 19 for b in bounds):
                raise LimitExceededError(
                    f"{_short(text)}: a CPU id above {MAX_CPU_ID}, the highest numaspec "
                    "accepts", where=where)
            ids = [int(b) for b in bounds]
            if len(ids) not in (1, 2) or any(i < 0 for i in ids) or ids[0] > ids[-1]:
                raise ValueError
            if ids[-1] > MAX_CPU_ID:
                raise LimitExceededError(
                    f"{_short(text)}: CPU id {ids[-1]} is above {MAX_CPU_ID}, the highest "
                    "numaspec accepts", where=where)
            cpus.update(range(ids[0], ids[-1] + 1))
        except ValueError:
            raise InvalidFieldError(f"{_short(text)} is not a cpuset list such as \"0-3,8\"",
                                    where=where) from None
    return frozenset(cpus)


def format_cpuset(cpus: Iterable[int]) -> str:
    """A cpuset in kubelet's list syntax (``cpuset.CPUSet.String``: ``"0-3,8"``), the inverse
    of :func:`parse_cpuset`."""
    ordered = sorted(cpus)
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def _short(text: str) -> str:
    return repr(text) if len(text) <= 60 else f"{text[:48]!r}... ({len(text)} characters)"


def _quantities(raw: Mapping[str, str], where: str) -> dict[str, Fraction]:
    out = {}
    for name, text in raw.items():
        quantity = parse_quantity(text, where=f"{where}.{name}")
        if quantity < 0:
            raise InvalidFieldError("a reservation must not be negative", where=f"{where}.{name}")
        out[name] = quantity
    return out


@attrs.frozen
class NodeConfig:
    """NODE-2: the configuration fields, defaulted as kubelet defaults them."""

    kubelet_version: KubeletVersion
    cpu_manager_policy: str = "none"
    cpu_manager_policy_options: Mapping[str, str] = attrs.field(factory=dict)
    reserved_system_cpus: frozenset[int] = frozenset()
    kube_reserved: Mapping[str, str] = attrs.field(factory=dict)
    system_reserved: Mapping[str, str] = attrs.field(factory=dict)
    eviction_hard: Mapping[str, str] | None = None
    memory_manager_policy: str = "None"
    reserved_memory: tuple[tuple[int, Mapping[str, str]], ...] = ()
    topology_manager_policy: str = "none"
    topology_manager_scope: str = "container"
    topology_manager_policy_options: Mapping[str, str] = attrs.field(factory=dict)
    feature_gates: Mapping[str, bool] = attrs.field(factory=dict)
    #: ADMIT-8: the most pods the node runs (kubelet's default 110).
    max_pods: int = 110
    #: AFF-3: the label keys kept for NUMA-level inter-pod affinity (Katalyst's agent flag
    #: ``--qos-inter-pod-affinity-labels``).  ``None``: the node does not run the affinity
    #: extension at all, as kubelet alone does not.
    inter_pod_affinity_labels: frozenset[str] | None = None

    def __attrs_post_init__(self) -> None:
        if self.kubelet_version.minor not in NODE_VERSIONS:
            raise NotModelledError(
                f"numaspec models node admission for kubelet 1.{NODE_VERSIONS.start}.."
                f"1.{NODE_VERSIONS.stop - 1}, not {self.kubelet_version.described}"
                f"{_MERGE_ONLY if self.kubelet_version.prerelease else ''}",
                where="kubeletVersion")

    def gates(self) -> dict[str, bool]:
        gates = default_gates(self.kubelet_version)
        gates.setdefault("CPUManagerPolicyAlphaOptions", False)
        gates.setdefault("CPUManagerPolicyBetaOptions", True)
        gates.update(self.feature_gates)
        return gates

    def allocatable_reservation(self) -> dict[str, Fraction]:
        """NODE-3: what kubelet reserves from node allocatable per resource: kube + system
        reserved, plus the hard eviction threshold for memory.  With ``reservedSystemCPUs`` the
        cpu reservation is the number of those CPUs."""
        kube = _quantities(self.kube_reserved, "config.kubeReserved")
        system = _quantities(self.system_reserved, "config.systemReserved")
        minor = self.kubelet_version.minor
        if minor >= 37:
            # From 1.37 kubelet reads a reserved cpu quantity to the nearest millicore through
            # its micro-value, which 1.37 lets wrap past int64 and 1.38 keeps as parsed there
            # (numaspec.node.go_quantity.go_reserved_cpu; finding 49).
            for part, raw in ((kube, self.kube_reserved), (system, self.system_reserved)):
                if "cpu" in part:
                    part["cpu"] = go_reserved_cpu(go_parse(raw["cpu"], minor=minor),
                                                  minor=minor).exact
        if self.reserved_system_cpus:
            kube.pop("cpu", None)
            system["cpu"] = Fraction(len(self.reserved_system_cpus))
        total: dict[str, Fraction] = {}
        for part in (kube, system):
            for name, quantity in part.items():
                total[name] = total.get(name, Fraction(0)) + quantity
        eviction = self.eviction_hard if self.eviction_hard is not None else {
            "memory.available": DEFAULT_EVICTION_MEMORY}
        threshold = eviction.get("memory.available")
        if threshold is not None:
            if threshold.endswith("%"):
                raise NotModelledError("a percentage eviction threshold is not modelled; give "
                                       "a quantity", where="config.evictionHard.memory.available")
            total["memory"] = total.get("memory", Fraction(0)) + parse_quantity(
                threshold, where="config.evictionHard.memory.available")
        return {k: v for k, v in total.items() if v != 0}

    def reserved_cpu_count(self) -> int:
        """NODE-3: the static policy's reserved CPU count: the cpu reservation rounded up."""
        reservation = self.allocatable_reservation()
        if "cpu" not in reservation:
            # Kubelet leaves zero reservations out of the map, so "zero" reads as "missing".
            raise NodeStartupError(
                "the static CPU policy needs a cpu reservation (kubeReserved, systemReserved or "
                "reservedSystemCPUs) above zero", where="config",
                kubelet_message="[cpumanager] unable to determine reserved CPU resources for "
                "static policy")
        return -(-milli_value(reservation["cpu"]) // 1000)
