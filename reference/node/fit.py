"""The rest of kubelet's admission: what the API server refuses before a pod reaches the node,
the node-allocatable start-up check, and the resource-fit admit handler that runs after the
Topology Manager's (spec chapter ``admission.md``, NODE-9, NODE-10, ADMIT-7..ADMIT-9).

Upstream: ``pkg/apis/core/validation/validation.go`` (``ValidateResourceRequirements``,
``ValidateResourceQuantityValue``), ``pkg/kubelet/cm/node_container_manager_linux.go``
(``GetNodeAllocatableReservation``, ``validateNodeAllocatable``), ``pkg/kubelet/nodestatus``
(``MachineInfo``: allocatable), ``pkg/kubelet/lifecycle/predicate.go`` (``Admit``,
``generalFilter``), ``pkg/scheduler/framework/plugins/noderesources/fit.go`` (``fitsRequest``)
and ``pkg/api/v1/resource/helpers.go`` (``PodRequests``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction

from numaspec.errors import InvalidFieldError, NodeStartupError
from numaspec.node.go_quantity import (
    GoQuantity,
    go_add,
    go_parse,
    go_reserved_cpu,
    go_sub,
    go_text,
)
from numaspec.node.machine import HUGEPAGE_SIZES, Machine
from numaspec.node.nodeconfig import DEFAULT_EVICTION_MEMORY, NodeConfig
from numaspec.node.pods import Container, Pod, per_pod, pod_level_resource
from numaspec.node.quantity import milli_value, value
from numaspec.node.rejection import Rejection

__all__ = ["Allocatable", "DEFAULT_MAX_PODS", "allocatable_reservation",
           "check_node_allocatable", "fit_rejection", "format_quantity", "node_allocatable",
           "node_capacity", "pod_requests", "validate_pod_resources"]

#: ADMIT-8: kubelet's default ``maxPods``.
DEFAULT_MAX_PODS = 110
#: ADMIT-7: resources a request may stay below its limit for (IsOvercommitAllowed: native,
#: not hugepages).
_OVERCOMMIT = frozenset({"cpu", "memory", "ephemeral-storage"})
#: ADMIT-8: the resources the fit checks first, in kubelet's order; every other one is a
#: "scalar" resource (hugepages-*, extended resources).
_FIRST = ("cpu", "memory")
_BINARY_SUFFIXES = ((60, "Ei"), (50, "Pi"), (40, "Ti"), (30, "Gi"), (20, "Mi"), (10, "Ki"))
_DECIMAL_SUFFIXES = ((18, "E"), (15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k"), (0, ""),
                     (-3, "m"), (-6, "u"), (-9, "n"))

Allocatable = dict[str, int]


def format_quantity(amount: Fraction, *, binary: bool) -> str:
    """A quantity as apimachinery's ``Quantity.String`` prints it: BinarySI with the largest
    power-of-1024 suffix that divides it exactly (below 1024, or with a fraction: as
    DecimalSI); DecimalSI with the largest power-of-1000 suffix that keeps it whole (a value
    below a nano rounds up to ``1n``)."""
    sign = "-" if amount < 0 else ""
    amount = abs(amount)
    if binary and amount >= 1024 and amount.denominator == 1:
        whole = int(amount)
        for shift, suffix in _BINARY_SUFFIXES:
            if whole % (1 << shift) == 0:
                return f"{sign}{whole >> shift}{suffix}"
        return f"{sign}{whole}"
    if amount == 0:
        return "0"
    for power, suffix in _DECIMAL_SUFFIXES:
        scaled = amount / Fraction(10) ** power
        if scaled.denominator == 1:
            return f"{sign}{int(scaled)}{suffix}"
    nanos = -(-amount.numerator * 10**9 // amount.denominator)
    return format_quantity(Fraction(nanos, 10**9) if sign == "" else -Fraction(nanos, 10**9),
                           binary=False)


def _binary_resource(name: str) -> bool:
    return name in ("memory", "ephemeral-storage") or name.startswith("hugepages-")


# -- NODE-9: capacity, allocatable and the start-up check -----------------------------------


def node_capacity(machine: Machine) -> dict[str, Fraction]:
    """NODE-9: cAdvisor's capacity: cpu = the logical CPUs, memory = every NUMA node's memory
    (hugepages included), hugepages-<size> = pages x page size, per size the machine reports."""
    capacity: dict[str, Fraction] = {
        "cpu": Fraction(len(machine.cpu_topology().cpus)),
        "memory": Fraction(sum(n.memory for n in machine.numa_nodes)),
    }
    for size in machine.hugepage_sizes:
        capacity[size] = Fraction(sum(n.hugepage_bytes(size) for n in machine.numa_nodes))
    return capacity


def _go_reservation(config: NodeConfig, name: str) -> GoQuantity:
    """NODE-9: the reservation of one resource as kubelet's Go sums it (systemReserved, then
    kubeReserved, then the memory eviction threshold, each parsed by ``ParseQuantity``; from
    1.37 a cpu quantity is first rounded to millicores in int64 arithmetic, which wraps past
    2^63 micro-cores (1.37) or keeps a quantity too large for it as parsed (1.38):
    :func:`~numaspec.node.go_quantity.go_reserved_cpu`; ``reservedSystemCPUs`` replaces the
    cpu reservations by their count, which is parsed, and rounded, like them)."""
    minor = config.kubelet_version.minor
    system = dict(config.system_reserved)
    kube = dict(config.kube_reserved)
    if config.reserved_system_cpus:
        kube.pop("cpu", None)
        system["cpu"] = str(len(config.reserved_system_cpus))
    eviction = config.eviction_hard if config.eviction_hard is not None else {
        "memory.available": DEFAULT_EVICTION_MEMORY}
    addends = [system.get(name), kube.get(name),
               eviction.get("memory.available") if name == "memory" else None]
    total = GoQuantity(format="DecimalSI")
    for position, text in enumerate(addends):
        if text is None:
            total = go_add(total, GoQuantity())  # a missing entry: Go's zero Quantity
            continue
        quantity = go_parse(text, minor=minor)
        if name == "cpu" and position < 2:
            quantity = go_reserved_cpu(quantity, minor=minor)
        total = go_add(total, quantity)
    return total


def allocatable_reservation(config: NodeConfig) -> dict[str, Fraction]:
    """NODE-3: what kubelet reserves per resource (``NodeConfig.allocatable_reservation``,
    which also refuses what kubelet refuses), with the cpu entry as kubelet's int64
    arithmetic leaves it from 1.37: a kubeReserved or systemReserved cpu whose micro-cores
    pass 2^63 wraps at 1.37 (``10000000000000`` reserves -8446744073709.551 CPUs, so the
    start-up check passes and allocatable grows; ``10T`` reserves nothing) and is kept as
    parsed at 1.38.  Zero entries are left out, as kubelet leaves them out."""
    reservation = config.allocatable_reservation()
    if config.kubelet_version.minor >= 37:
        cpu = _go_reservation(config, "cpu").exact
        reservation.pop("cpu", None)
        if cpu != 0:
            reservation["cpu"] = cpu
    return reservation


def _go_capacity(capacity: Fraction, name: str) -> GoQuantity:
    """NODE-9: cAdvisor's capacity as kubelet builds it: cpu in millicores, the rest in bytes
    (BinarySI)."""
    if name == "cpu":
        return GoQuantity(int(capacity * 1000), -3, "DecimalSI", exact=capacity)
    return GoQuantity(int(capacity), 0, "BinarySI", exact=capacity)


def check_node_allocatable(machine: Machine, config: NodeConfig) -> None:
    """NODE-9: ``validateNodeAllocatable``: a reservation (kube + system reserved + the hard
    eviction threshold) above the capacity of a resource the node has stops kubelet when its
    container manager starts, after every manager was created.  Reservations of resources the
    node does not report (and of ephemeral-storage and pids, which the machine model has no
    capacity for) are not checked.  Several failing resources are listed in name order (kubelet
    walks a Go map, so their order varies).

    Kubelet prints the quantity values with ``%v``, so its text shows Go's struct fields
    (:mod:`numaspec.node.go_quantity`; from 1.38 with one more, ``{ 0}``); numaspec's own
    message shows them as quantities.  A cpu reservation that 1.37 wrapped negative passes;
    one it wrapped to another positive amount is shown wrapped.  Where Go
    holds an amount as a decimal its text holds a heap address, and ``kubelet_message`` is
    left out."""
    capacity = node_capacity(machine)
    reservation = allocatable_reservation(config)
    minor = config.kubelet_version.minor
    errors: list[str] = []
    kubelet: list[str | None] = []
    for name in sorted(capacity):
        reserved = reservation.get(name)
        if reserved is None or reserved <= capacity[name]:
            continue
        go_reserved = _go_reservation(config, name)
        go_capacity = _go_capacity(capacity[name], name)
        shown = format_quantity(reserved, binary=go_reserved.format == "BinarySI")
        has = format_quantity(capacity[name], binary=_binary_resource(name))
        if config.kubelet_version.minor <= 29:
            left = format_quantity(capacity[name] - reserved, binary=_binary_resource(name))
            pattern = "Resource {} has an allocatable of {}, capacity of {}"
            errors.append(pattern.format(_go_q(name), shown, left))
            texts = (go_text(go_reserved, minor=minor),
                     go_text(go_sub(go_capacity, go_reserved), minor=minor))
        else:
            pattern = ("Resource {} has a reservation of {} but capacity of {}. Expected "
                       "capacity >= reservation.")
            errors.append(pattern.format(_go_q(name), shown, has))
            texts = (go_text(go_reserved, minor=minor), go_text(go_capacity, minor=minor))
        kubelet.append(None if None in texts else pattern.format(_go_q(name), *texts))
    if errors:
        prefix = "invalid Node Allocatable configuration. "
        msg = prefix + " ".join(errors)
        known = [k for k in kubelet if k is not None]
        exact = prefix + " ".join(known) if len(known) == len(kubelet) else None
        raise NodeStartupError(msg, where="config", kubelet_message=exact)


def _go_q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def node_allocatable(machine: Machine, config: NodeConfig, device_counts: Mapping[str, int]
                     ) -> Allocatable:
    """ADMIT-8: the node's allocatable as the fit handler reads it: capacity minus the
    reservation (never below zero), memory also minus every hugepage byte; cpu in millicores,
    the rest in whole units; an extended resource counts its healthy devices; ``pods`` is
    ``maxPods``."""
    capacity = node_capacity(machine)
    reservation = allocatable_reservation(config)
    out: Allocatable = {}
    for name, amount in capacity.items():
        left = max(amount - reservation.get(name, Fraction(0)), Fraction(0))
        if name == "memory":
            hugepages = sum((capacity[h] for h in capacity if h.startswith("hugepages-")),
                            Fraction(0))
            left = max(left - hugepages, Fraction(0))
        out[name] = milli_value(left) if name == "cpu" else value(left)
    out.update(device_counts)
    out["pods"] = config.max_pods
    return out


# -- ADMIT-8: the pod's requests and the fit ------------------------------------------------


def aggregate_containers(pod: Pod, amounts: Callable[[Container], Mapping[str, Fraction]]
                         ) -> dict[str, Fraction]:
    """The containers' ``amounts`` (their requests, or limits) as the pod uses them: app
    containers and sidecars summed, the largest of that and of each init container's use (its
    own amounts plus the sidecars declared before it, a sidecar's use being every sidecar up
    to it), exactly (``AggregateContainerRequests`` / ``AggregateContainerLimits``)."""
    total: dict[str, Fraction] = {}
    sidecars: dict[str, Fraction] = {}
    init_peak: dict[str, Fraction] = {}

    def add(into: dict[str, Fraction], more: Mapping[str, Fraction]) -> None:
        for name, amount in more.items():
            into[name] = into.get(name, Fraction(0)) + amount

    for container in pod.containers:
        add(total, amounts(container))
    for container in pod.init_containers:
        if container.restartable:
            add(total, amounts(container))
            add(sidecars, amounts(container))
            use = dict(sidecars)
        else:
            use = dict(amounts(container))
            add(use, sidecars)
        for name, amount in use.items():
            init_peak[name] = max(init_peak.get(name, Fraction(0)), amount)
    for name, amount in init_peak.items():
        total[name] = max(total.get(name, Fraction(0)), amount)
    return total


def pod_requests(pod: Pod) -> dict[str, int]:
    """ADMIT-8: the scheduler's ``PodRequests`` (:func:`_pod_requests`), worked out once per
    pod (:func:`numaspec.node.pods.per_pod`); a copy, the caller's to change."""
    return dict(_pod_requests(pod))


@per_pod
def _pod_requests(pod: Pod) -> dict[str, int]:
    """ADMIT-8: the scheduler's ``PodRequests``: the containers' requests aggregated
    (:func:`aggregate_containers`), then cpu in millicores and the rest in whole units, rounded
    up; pod-level requests in their place (ADMIT-11).  No pod overhead (the pod format has
    none)."""
    total = aggregate_containers(pod, lambda c: c.requests)
    if pod.resources is not None:
        # ADMIT-11: pod-level requests replace the containers' cpu, memory and hugepages.
        for name, amount in pod.resources.requests.items():
            if pod_level_resource(name):
                total[name] = amount
    return {name: milli_value(amount) if name == "cpu" else value(amount)
            for name, amount in total.items()}


def fit_rejection(pod: Pod, others: Iterable[Pod], allocatable: Mapping[str, int]
                  ) -> Rejection | None:
    """ADMIT-8: the predicate admit handler's resource fit: the pod count, then cpu, memory,
    then hugepages and extended resources (name order; kubelet walks a Go map, so with two
    failing scalar resources which one it names varies).  A resource the pod asks zero of is
    not checked.  The first failure is the rejection: reason ``OutOf<resource>``, message
    ``Node didn't have enough resource: <resource>, requested: <n>, used: <n>, capacity: <n>``.
    ephemeral-storage is not checked: the machine model has no disk."""
    found = fit_rejections(pod, others, allocatable)
    return found[0] if found else None


def fit_rejections(pod: Pod, others: Iterable[Pod], allocatable: Mapping[str, int]
                   ) -> list[Rejection]:
    """ADMIT-8: every failure of the resource fit, in :func:`fit_rejection`'s order.  When
    the first is a hugepage or extended resource, kubelet names any of the scalar ones among
    them (its Go map order)."""
    placed = list(others)
    used: dict[str, int] = {}
    for other in placed:
        for name, amount in pod_requests(other).items():
            used[name] = used.get(name, 0) + amount
    wanted = pod_requests(pod)
    failures: list[tuple[str, int, int, int]] = []
    if len(placed) + 1 > allocatable["pods"]:
        failures.append(("pods", 1, len(placed), allocatable["pods"]))
    scalars = sorted(n for n in wanted if n not in _FIRST and n != "ephemeral-storage")
    for name in (*_FIRST, *scalars):
        asked = wanted.get(name, 0)
        if asked <= 0:
            continue
        have = allocatable.get(name, 0)
        if asked > have - used.get(name, 0):
            failures.append((name, asked, used.get(name, 0), have))
    return [Rejection(f"OutOf{name}", f"Node didn't have enough resource: {name}, requested: "
                      f"{asked}, used: {taken}, capacity: {have}")
            for name, asked, taken, have in failures]


# -- ADMIT-7: what the API server refuses -----------------------------------------------------


def _where(pod: Pod, index: int) -> str:
    if index < len(pod.init_containers):
        return f"pod.initContainers[{index}].resources"
    return f"pod.containers[{index - len(pod.init_containers)}].resources"


def _page_bytes(name: str) -> int | None:
    return HUGEPAGE_SIZES.get(name)


def validate_container_resources(container: Container, where: str) -> None:
    """ADMIT-7: ``ValidateResourceRequirements`` for one container, first failure only:
    limits (whole hugepages, integral extended resources), then requests (the same, then a
    request above its limit, or unequal to it for a resource that cannot be overcommitted, or
    without a limit there), then hugepages without cpu or memory."""
    def quantity_errors(name: str, amount: Fraction, at: str) -> None:
        binary = _binary_resource(name)
        if "/" in name and "kubernetes.io/" not in name and milli_value(amount) % 1000 != 0:
            raise InvalidFieldError(f"{format_quantity(amount, binary=binary)}: must be an "
                                    "integer", where=at)
        page = _page_bytes(name)
        if page is not None and value(amount) % page != 0:
            raise InvalidFieldError(f"{format_quantity(amount, binary=True)}: "
                                    f"{format_quantity(amount, binary=True)} is not positive "
                                    f"integer multiple of {name}", where=at)

    for name in sorted(container.limits):
        quantity_errors(name, container.limits[name], f"{where}.limits.{name}")
    for name in sorted(container.requests):
        amount = container.requests[name]
        at = f"{where}.requests.{name}"
        quantity_errors(name, amount, at)
        binary = _binary_resource(name)
        limit = container.limits.get(name)
        if limit is not None:
            if amount != limit and name not in _OVERCOMMIT:
                raise InvalidFieldError(
                    f"{format_quantity(amount, binary=binary)}: must be equal to {name} limit "
                    f"of {format_quantity(limit, binary=binary)}", where=at)
            if amount > limit:
                raise InvalidFieldError(
                    f"{format_quantity(amount, binary=binary)}: must be less than or equal to "
                    f"{name} limit of {format_quantity(limit, binary=binary)}", where=at)
        elif name not in _OVERCOMMIT:
            raise InvalidFieldError("Limit must be set for non overcommitable resources",
                                    where=f"{where}.limits.{name}")
    names = {*container.requests, *container.limits}
    if any(n.startswith("hugepages-") for n in names) and not names & {"cpu", "memory"}:
        raise InvalidFieldError("HugePages require cpu or memory", where=where)


def validate_pod_resources(pod: Pod) -> None:
    """ADMIT-7: every container, init containers first, in the pod's order."""
    for index, container in enumerate(pod.all_containers()):
        validate_container_resources(container, _where(pod, index))
