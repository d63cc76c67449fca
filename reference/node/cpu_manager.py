"""The CPU Manager's static policy as a stateful hint provider (spec chapter ``cpu.md``,
CPU-6..CPU-9, CPU-14..CPU-17 and CPU-19..CPU-20).

Upstream: ``pkg/kubelet/cm/cpumanager/policy_static.go`` (``NewStaticPolicy``,
``guaranteedCPUs``, ``podGuaranteedCPUs``, ``GetTopologyHints``, ``GetPodTopologyHints``,
``Allocate``, ``allocateCPUs``, ``updateCPUsToReuse``, ``RemoveContainer``) and
``policy_options.go``.  Hint generation itself is
:func:`numaspec.node.cpu.generate_cpu_topology_hints` and the choice of CPUs
:func:`numaspec.node.cpu_assignment.take_by_topology`.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from numaspec.errors import NodeStartupError
from numaspec.node.cpu import CPUTopology, generate_cpu_topology_hints
from numaspec.node.cpu_assignment import CPUAllocationError, take_by_topology
from numaspec.node.pods import Container, Pod, QOSClass, pod_total, qos_class
from numaspec.node.quantity import milli_value, value
from numaspec.node.rejection import Rejection, unexpected
from numaspec.topology.gates import Maturity, maturity_in
from numaspec.topology.golang import go_parse_bool, go_quote
from numaspec.topology.hints import ProviderHints
from numaspec.topology.masks import NumaMask
from numaspec.topology.versions import KubeletVersion

__all__ = ["CPUManagerOptions", "StaticCPUManager", "cpu_option_maturity", "guaranteed_cpus",
           "parse_cpu_manager_options", "pod_guaranteed_cpus", "take_by_policy"]

FULL_PCPUS_ONLY = "full-pcpus-only"
DISTRIBUTE_ACROSS_NUMA = "distribute-cpus-across-numa"
ALIGN_BY_SOCKET = "align-by-socket"
DISTRIBUTE_ACROSS_CORES = "distribute-cpus-across-cores"
STRICT_RESERVATION = "strict-cpu-reservation"
UNCORE = "prefer-align-cpus-by-uncorecache"

# CPU-14: (first minor, maturity) steps per option, from policy_options.go of each release.
_MATURITY: Mapping[str, tuple[tuple[int, Maturity], ...]] = {
    FULL_PCPUS_ONLY: ((22, Maturity.BETA), (33, Maturity.GA)),
    DISTRIBUTE_ACROSS_NUMA: ((23, Maturity.ALPHA), (33, Maturity.BETA)),
    ALIGN_BY_SOCKET: ((25, Maturity.ALPHA),),
    DISTRIBUTE_ACROSS_CORES: ((31, Maturity.ALPHA),),
    STRICT_RESERVATION: ((32, Maturity.ALPHA), (33, Maturity.BETA), (35, Maturity.GA)),
    UNCORE: ((32, Maturity.ALPHA), (34, Maturity.BETA), (36, Maturity.GA)),
}
_EXCLUSIVE = (
    (FULL_PCPUS_ONLY, DISTRIBUTE_ACROSS_CORES),
    (DISTRIBUTE_ACROSS_NUMA, DISTRIBUTE_ACROSS_CORES),
    (UNCORE, DISTRIBUTE_ACROSS_CORES),
    (UNCORE, DISTRIBUTE_ACROSS_NUMA),
)


def cpu_option_maturity(name: str, version: KubeletVersion) -> Maturity | None:
    """CPU-14: the option's maturity in ``version``, or ``None`` for an option it lacks."""
    return maturity_in(_MATURITY, name, version)


@attrs.frozen
class CPUManagerOptions:
    full_pcpus_only: bool = False
    distribute_across_numa: bool = False
    align_by_socket: bool = False
    distribute_across_cores: bool = False
    strict_reservation: bool = False
    prefer_align_by_uncore_cache: bool = False


#: cpumanager.NewManager wraps every error of the static policy's constructor (its options,
#: their check against the machine, the reservation) in this prefix (1.29 to 1.38).
STATIC_POLICY_ERROR = "new static policy error: "


def _startup(message: str, where: str = "cpuManagerPolicyOptions") -> NodeStartupError:
    return NodeStartupError(message, where=where, kubelet_message=STATIC_POLICY_ERROR + message)


def parse_cpu_manager_options(raw: Mapping[str, str], version: KubeletVersion,
                              gates: Mapping[str, bool]) -> CPUManagerOptions:
    """CPU-14: ``NewStaticPolicyOptions``: names, maturity gates, boolean values, then the
    pairs that exclude each other.  Options are checked in name order (kubelet walks a Go map,
    so with several bad options which one it names first varies)."""
    values: dict[str, bool] = {}
    for name in sorted(raw):
        level = cpu_option_maturity(name, version)
        if level is None:
            raise _startup(f"unknown CPU Manager Policy option: {go_quote(name)}")
        if level is Maturity.ALPHA and not gates.get("CPUManagerPolicyAlphaOptions", False):
            raise _startup("CPU Manager Policy Alpha-level Options not enabled, but option "
                           f"{go_quote(name)} provided")
        if level is Maturity.BETA and not gates.get("CPUManagerPolicyBetaOptions", True):
            raise _startup("CPU Manager Policy Beta-level Options not enabled, but option "
                           f"{go_quote(name)} provided")
        try:
            values[name] = go_parse_bool(raw[name])
        except ValueError as exc:
            raise _startup(f"bad value for option {go_quote(name)}: {exc}") from None
    if version.minor >= 31:
        for first, second in _EXCLUSIVE:
            if values.get(first) and values.get(second):
                raise _startup(f"static policy options {first} and {second} can not be used "
                               "at the same time")
    return CPUManagerOptions(
        full_pcpus_only=values.get(FULL_PCPUS_ONLY, False),
        distribute_across_numa=values.get(DISTRIBUTE_ACROSS_NUMA, False),
        align_by_socket=values.get(ALIGN_BY_SOCKET, False),
        distribute_across_cores=values.get(DISTRIBUTE_ACROSS_CORES, False),
        strict_reservation=values.get(STRICT_RESERVATION, False),
        prefer_align_by_uncore_cache=values.get(UNCORE, False),
    )


def guaranteed_cpus(pod: Pod, container: Container) -> int:
    """CPU-6: exclusive CPUs for ``container``: its CPU request if the pod is Guaranteed and
    the request is a whole number of CPUs, else 0 (the shared pool).  CPU-18: a pod with
    pod-level resources (kept by the node only where kubelet reads them) gets none."""
    if qos_class(pod) is not QOSClass.GUARANTEED or pod.resources is not None:
        return 0
    cpu = container.requests.get("cpu")
    if cpu is None:
        return 0
    if value(cpu) * 1000 != milli_value(cpu):
        return 0
    return value(cpu)


def pod_guaranteed_cpus(pod: Pod) -> int:
    """CPU-7: the pod's exclusive CPUs for the pod scope: :func:`numaspec.node.pods.pod_total` over
    the containers that have a cpu request (a sidecar keeps its CPUs for the pod's life)."""
    return pod_total(pod, lambda c: {"cpu": guaranteed_cpus(pod, c)} if "cpu" in c.requests
                     else {}).get("cpu", 0)


def take_by_policy(topology: CPUTopology, version: KubeletVersion, options: CPUManagerOptions,
                   available: frozenset[int], n: int, *, min_numas_from_hint: int = 0
                   ) -> frozenset[int]:
    """The static policy's ``takeByTopology``: the allocator its options select (CPU-10,
    CPU-12, CPU-13, CPU-19).  Kubelet uses it both to allocate and to pick the reserved CPUs.
    ``min_numas_from_hint``: the affinity's NUMA node count for the take inside the
    affinity (CPU-12, read from 1.38 on), 0 for the rest and for the reserved CPUs."""
    return take_by_topology(
        topology, available, n,
        distribute_across_numa=options.distribute_across_numa,
        full_pcpus_only=options.full_pcpus_only,
        spread=options.distribute_across_cores,
        align_by_socket_in_distribution=options.align_by_socket and version.minor >= 37,
        prefer_uncore=options.prefer_align_by_uncore_cache,
        uncore_rounds_up=version.uncore_partial_rounds_up,
        copies_combinations=version.copies_numa_combinations,
        caps_distributed_share=version.minor >= 37,
        units_free_by_own_size=version.frees_units_by_own_size,
        uncore_cache_once=version.takes_each_uncore_cache_once,
        spread_round_robin=version.spreads_round_robin_over_cores,
        remainder_in_whole_groups=version.checks_remainder_in_whole_groups,
        min_numas_from_hint=(min_numas_from_hint if version.distributes_over_affinity_width
                             else 0))


class StaticCPUManager:
    """CPU-8..CPU-9, CPU-15..CPU-17: the static policy and its state (the shared pool, the
    exclusive assignments and the CPUs a pod's finished init containers left for reuse)."""

    name = "cpu"

    def __init__(self, topology: CPUTopology, version: KubeletVersion,
                 options: CPUManagerOptions, reserved: frozenset[int]) -> None:
        self.topology = topology
        self.version = version
        self.options = options
        self.reserved = reserved
        self._core_of = {c.cpu: c.core for c in topology.cpus}
        self.reserved_physical = frozenset(
            c.cpu for c in topology.cpus if c.core in {self._core_of[r] for r in reserved})
        all_cpus = frozenset(c.cpu for c in topology.cpus)
        # CPU-17: with strict-cpu-reservation the shared pool never holds reserved CPUs.
        self.default: frozenset[int] = all_cpus - reserved if options.strict_reservation \
            else all_cpus
        self.assignments: dict[str, dict[str, frozenset[int]]] = {}
        self.to_reuse: dict[str, frozenset[int]] = {}

    def snapshot(self) -> StaticCPUManager:
        """NODE-6: what a deep copy gives, at the cost of the assignments alone: the
        topology, options and reserved CPUs are never changed after start-up, and the CPU
        sets are frozen."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.assignments = {uid: dict(ctrs) for uid, ctrs in self.assignments.items()}
        twin.to_reuse = dict(self.to_reuse)
        return twin

    # -- helpers -----------------------------------------------------------------------------

    def _take(self, available: frozenset[int], n: int) -> frozenset[int]:
        return take_by_policy(self.topology, self.version, self.options, available, n)

    def _take_aligned(self, aligned: frozenset[int], n: int, affinity: NumaMask
                      ) -> frozenset[int]:
        """CPU-16: the take inside the affinity.  CPU-12 (1.38+): with
        distribute-cpus-across-numa it spreads over at least the affinity's width (its NUMA
        node count, as kubelet's ``allocateCPUs`` passes it); the rest of the request and the
        reserved CPUs are taken with no such floor."""
        if self.options.distribute_across_numa and self.version.distributes_over_affinity_width:
            return take_by_policy(self.topology, self.version, self.options, aligned, n,
                                  min_numas_from_hint=affinity.count())
        return self._take(aligned, n)

    def _hints(self, available: frozenset[int], reusable: frozenset[int], n: int) -> ProviderHints:
        """CPU-1..CPU-5 over ``available`` (the free CPUs, or those already held when hints are
        regenerated) and ``reusable``; CPU-22 (1.38+): each hint scored on the free pool."""
        return {"cpu": generate_cpu_topology_hints(
            self.topology, available, reusable, n, version=self.version,
            align_by_socket=self.options.align_by_socket, free=self.available(),
            reserved=self.reserved)}

    def available(self) -> frozenset[int]:
        return self.default - self.reserved

    @property
    def cpus_per_core(self) -> int:
        cores = len(set(self._core_of.values()))
        return len(self.topology.cpus) // cores if cores else 0

    # -- the provider interface ---------------------------------------------------------------

    def container_hints(self, pod: Pod, container: Container) -> ProviderHints:
        """CPU-8: container-scope hints."""
        n = guaranteed_cpus(pod, container)
        if n == 0:
            return None
        held = self.assignments.get(pod.uid, {}).get(container.name)
        if held is not None:
            if len(held) != n:
                return {"cpu": []}
            return self._hints(held, frozenset(), n)
        return self._hints(self.available(), self.to_reuse.get(pod.uid, frozenset()), n)

    def pod_hints(self, pod: Pod) -> ProviderHints:
        """CPU-8: pod-scope hints."""
        n = pod_guaranteed_cpus(pod)
        if n == 0:
            return None
        assigned: frozenset[int] = frozenset()
        for container in pod.all_containers():
            held = self.assignments.get(pod.uid, {}).get(container.name)
            if held is not None:
                if len(held) != guaranteed_cpus(pod, container):
                    return {"cpu": []}
                assigned |= held
        if len(assigned) == n:
            return self._hints(assigned, frozenset(), n)
        return self._hints(self.available(),
                           self.to_reuse.get(pod.uid, frozenset()) | assigned, n)

    def _update_reuse(self, pod: Pod, container: Container, cpus: frozenset[int]) -> None:
        """CPU-15: only the pod being admitted keeps reusable CPUs; a regular init container
        adds its CPUs, an app container or a sidecar takes its CPUs out."""
        self.to_reuse = {pod.uid: self.to_reuse.get(pod.uid, frozenset())}
        regular_init = pod.is_init(container.name) and not container.restartable
        if regular_init:
            self.to_reuse[pod.uid] |= cpus
        else:
            self.to_reuse[pod.uid] -= cpus

    def allocate(self, pod: Pod, container: Container, affinity: NumaMask | None) -> None:
        """CPU-9, CPU-16: exclusive CPUs for the container, inside ``affinity`` first."""
        n = guaranteed_cpus(pod, container)
        if n == 0:
            return
        if self.options.full_pcpus_only:
            self._enforce_smt(n)
        held = self.assignments.get(pod.uid, {}).get(container.name)
        if held is not None:
            self._update_reuse(pod, container, held)
            return
        reusable = self.to_reuse.get(pod.uid, frozenset())
        allocatable = self.available() | reusable
        result: frozenset[int] = frozenset()
        try:
            if affinity is not None:
                aligned = self._aligned(affinity, allocatable)
                result = self._take_aligned(aligned, min(n, len(aligned)), affinity)
            result |= self._take(allocatable - result, n - len(result))
        except CPUAllocationError as exc:
            raise unexpected(str(exc)) from None
        self.default -= result
        self.assignments.setdefault(pod.uid, {})[container.name] = result
        self._update_reuse(pod, container, result)

    def _aligned(self, affinity: NumaMask, allocatable: frozenset[int]) -> frozenset[int]:
        """CPU-16: the allocatable CPUs of the affinity's NUMA nodes, or with align-by-socket
        of every socket those NUMA nodes touch."""
        nodes = set(affinity.nodes)
        if self.options.align_by_socket:
            sockets = {c.socket for c in self.topology.cpus if c.numa in nodes}
            return frozenset(c.cpu for c in self.topology.cpus
                             if c.socket in sockets and c.cpu in allocatable)
        return frozenset(c.cpu for c in self.topology.cpus
                         if c.numa in nodes and c.cpu in allocatable)

    def _enforce_smt(self, n: int) -> None:
        """CPU-9: full-pcpus-only: whole cores only, and (from 1.28) no more than the free
        CPUs outside the reserved CPUs' cores.  Up to 1.31 kubelet words the second failure as
        the first when no such CPU is left at all."""
        per_core = self.cpus_per_core
        odd = Rejection("SMTAlignmentError", f"SMT Alignment Error: requested {n} cpus not "
                        f"multiple cpus per core = {per_core}")
        if n % per_core != 0:
            raise odd
        physical = len(self.default - self.reserved_physical)
        if n > physical:
            if physical == 0 and self.version.minor <= 31:
                raise odd
            raise Rejection("SMTAlignmentError",
                            "SMT Alignment Error: not enough free physical CPUs: available "
                            f"physical CPUs = {physical}, requested CPUs = {n}, CPUs per core "
                            f"= {per_core}")

    def remove_container(self, pod_uid: str, name: str) -> None:
        """CPU-17: release the container's CPUs, except those a sibling still holds."""
        held = self.assignments.get(pod_uid, {}).pop(name, None)
        if held is None:
            return
        siblings = frozenset().union(*self.assignments.get(pod_uid, {}).values())
        if not self.assignments.get(pod_uid):
            self.assignments.pop(pod_uid, None)
        self.default |= held - siblings

    def remove_pod(self, pod_uid: str) -> None:
        for name in list(self.assignments.get(pod_uid, {})):
            self.remove_container(pod_uid, name)
        self.to_reuse.pop(pod_uid, None)

    def cpus_of(self, pod_uid: str, name: str) -> frozenset[int]:
        return self.assignments.get(pod_uid, {}).get(name, frozenset())

    def state(self) -> dict[str, object]:
        return {
            "defaultCpuSet": sorted(self.default),
            "reservedCpuSet": sorted(self.reserved),
            "assignments": {uid: {name: sorted(cpus) for name, cpus in sorted(ctrs.items())}
                            for uid, ctrs in sorted(self.assignments.items())},
        }


def check_static_policy(topology: CPUTopology, options: CPUManagerOptions,
                        tm_policy: str) -> None:
    """CPU-14: ``ValidateStaticPolicyOptions``: align-by-socket needs a Topology Manager
    policy other than single-numa-node and no more sockets than NUMA nodes with CPUs."""
    if options.align_by_socket:
        if tm_policy == "single-numa-node":
            raise _startup("Topolgy manager single-numa-node policy is incompatible with "
                           "CPUManager align-by-socket policy option")
        if len(topology.sockets()) > len(topology.numa_nodes()):
            raise _startup("Align by socket is not compatible with hardware where number of "
                           "sockets are more than number of NUMA")
