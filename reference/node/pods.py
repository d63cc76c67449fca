"""Pods and containers as kubelet sees them, and their QoS class (spec chapter ``pods.md``).

Issue 3 groundwork: the containers' requests and limits and the pod's QoS class, which decide
which containers the CPU and Memory Managers handle.  Sources: ``pkg/apis/core/v1/defaults.go``
(requests default to limits) and ``pkg/apis/core/v1/helper/qos/qos.go`` (``ComputePodQOS``).
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import TypeVar

import attrs

from numaspec.errors import InvalidFieldError, InvalidQuantityError
from numaspec.node.quantity import parse_quantity

__all__ = ["Container", "Pod", "PodResources", "QOSClass", "parse_resources", "per_pod",
           "pod_level_resource", "pod_total", "qos_class"]

#: QOS-1: the only resources the QoS class looks at.
QOS_RESOURCES = ("cpu", "memory")


class QOSClass(enum.Enum):
    GUARANTEED = "Guaranteed"
    BURSTABLE = "Burstable"
    BEST_EFFORT = "BestEffort"


def _to_thousandths(quantity: Fraction) -> Fraction:
    """QOS-3: API defaulting rounds every request and limit up to a thousandth."""
    return Fraction(math.ceil(quantity * 1000), 1000)


def parse_resources(raw: object, *, where: str) -> dict[str, Fraction]:
    """A ``{"cpu": "2", "memory": "1Gi"}`` map → quantities as the API server stores them,
    rounded up to a thousandth (QOS-3); negatives are refused (API validation refuses them,
    QTY-2)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InvalidFieldError("expected an object of resource name to quantity", where=where)
    parsed: dict[str, Fraction] = {}
    for name, text in raw.items():
        quantity = parse_quantity(text, where=f"{where}.{name}")
        if quantity < 0:
            raise InvalidQuantityError(f"{text!r}: a request or limit must not be negative",
                                       where=f"{where}.{name}")
        parsed[str(name)] = _to_thousandths(quantity)
    return parsed


def _defaulted(requests: Mapping[str, Fraction], limits: Mapping[str, Fraction]
               ) -> dict[str, Fraction]:
    """QOS-2: API defaulting: a resource with a limit and no request requests its limit."""
    return {**limits, **requests}


@attrs.frozen
class Container:
    """A container's name, its requests (after defaulting, QOS-2) and limits."""

    name: str
    requests: Mapping[str, Fraction] = attrs.field(factory=dict)
    limits: Mapping[str, Fraction] = attrs.field(factory=dict)
    #: ``"Always"`` on an init container makes it a restartable (sidecar) container.
    restart_policy: str | None = None

    @property
    def restartable(self) -> bool:
        """A restartable init container (a sidecar) runs beside the app containers."""
        return self.restart_policy == "Always"

    @classmethod
    def of(cls, name: str, *, requests: Mapping[str, str] | None = None,
           limits: Mapping[str, str] | None = None, restart_policy: str | None = None,
           where: str = "") -> Container:
        """Build from quantity strings, applying API defaulting (QOS-2)."""
        req = parse_resources(requests, where=f"{where}.requests" if where else "requests")
        lim = parse_resources(limits, where=f"{where}.limits" if where else "limits")
        return cls(name, _defaulted(req, lim), lim, restart_policy)


#: QOS-4: the resources a pod may set at pod level (``spec.resources``).
POD_LEVEL_RESOURCES = ("cpu", "memory")


@attrs.frozen
class PodResources:
    """QOS-4: a pod's own requests and limits (``spec.resources``, KEP-2837), after API
    defaulting (a request defaults to its limit, QOS-2)."""

    requests: Mapping[str, Fraction] = attrs.field(factory=dict)
    limits: Mapping[str, Fraction] = attrs.field(factory=dict)
    #: QOS-5: the requests as the pod states them, before any defaulting (1.37 defaults them
    #: otherwise than QOS-2 does); None when built from already-defaulted requests.
    given_requests: Mapping[str, Fraction] | None = attrs.field(default=None, eq=False)

    @classmethod
    def of(cls, *, requests: Mapping[str, str] | None = None,
           limits: Mapping[str, str] | None = None, where: str = "resources") -> PodResources:
        req = parse_resources(requests, where=f"{where}.requests")
        lim = parse_resources(limits, where=f"{where}.limits")
        return cls(_defaulted(req, lim), lim, req)

    def is_set(self) -> bool:
        """``IsPodLevelResourcesSet``: a request or limit of cpu, memory or hugepages."""
        return any(pod_level_resource(n) for n in (*self.requests, *self.limits))


def pod_level_resource(name: str) -> bool:
    """QOS-4: ``IsSupportedPodLevelResource``: cpu, memory and hugepages."""
    return name in POD_LEVEL_RESOURCES or name.startswith("hugepages-")


@attrs.frozen
class Pod:
    name: str
    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...] = ()
    #: The pod's UID; the node model keys its state by it.  Defaults to the name.
    uid: str = attrs.field(default=attrs.Factory(lambda self: self.name, takes_self=True))
    #: Labels and annotations: kubelet ignores them; NUMA-level inter-pod affinity (spec
    #: chapter ``affinity.md``) reads them when the node runs it.
    labels: Mapping[str, str] = attrs.field(factory=dict)
    annotations: Mapping[str, str] = attrs.field(factory=dict)
    #: QOS-4: ``spec.resources``, or None.  The node drops it where kubelet ignores it
    #: (PodLevelResources off).
    resources: PodResources | None = None

    def all_containers(self) -> tuple[Container, ...]:
        """Init containers, then app containers: the order kubelet admits them in."""
        return (*self.init_containers, *self.containers)

    def is_init(self, name: str) -> bool:
        return any(c.name == name for c in self.init_containers)


_T = TypeVar("_T")

#: How many pods each :func:`per_pod` function remembers (then it starts again).
PER_POD_MEMO = 1024


def per_pod(compute: Callable[[Pod], _T]) -> Callable[[Pod], _T]:
    """``compute``, a pure function of a pod's body, remembered per pod object: a node keeps
    its pods and a session decodes each pod once, so each admission would otherwise work
    out a pod's QoS class and requests again, with Fractions, for every pod on the node.
    Keyed by identity (a pod's maps make it unhashable), each entry holding its pod so that
    no other pod takes its id; the answer is shared, so it must not be changed."""
    memo: dict[int, tuple[Pod, _T]] = {}

    def remembered(pod: Pod) -> _T:
        found = memo.get(id(pod))
        if found is not None and found[0] is pod:
            return found[1]
        answer = compute(pod)
        if len(memo) >= PER_POD_MEMO:
            memo.clear()
        memo[id(pod)] = (pod, answer)
        return answer

    return functools.wraps(compute)(remembered)


@per_pod
def qos_class(pod: Pod) -> QOSClass:
    """QOS-1: the pod's QoS class, as kubelet computes it; QOS-4 with pod-level resources.

    Over all containers, init containers included, only cpu and memory count, and only
    quantities above zero.  No such request or limit at all: BestEffort.  Guaranteed needs
    every container to have both a cpu and a memory limit, and the pod-wide *sums* of requests
    and of limits to be equal per resource.  Anything else: Burstable.
    """
    if pod.resources is not None:
        # QOS-4: an empty pod-level object counts too (BestEffort) where kubelet keeps it.
        return _pod_level_qos(pod.resources)
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    every_container_limited = True
    for container in (*pod.containers, *pod.init_containers):
        for name, quantity in container.requests.items():
            if name in QOS_RESOURCES and quantity > 0:
                requests[name] = requests.get(name, Fraction(0)) + quantity
        limited = {name for name, quantity in container.limits.items()
                   if name in QOS_RESOURCES and quantity > 0}
        for name in limited:
            limits[name] = limits.get(name, Fraction(0)) + container.limits[name]
        if not set(QOS_RESOURCES) <= limited:
            every_container_limited = False
    if not requests and not limits:
        return QOSClass.BEST_EFFORT
    if every_container_limited and requests == limits:
        return QOSClass.GUARANTEED
    return QOSClass.BURSTABLE


def _pod_level_qos(resources: PodResources) -> QOSClass:
    """QOS-4: with pod-level resources the containers do not count: only the pod's cpu and
    memory above zero; Guaranteed when both are limited and every such request equals its
    limit."""
    requests = {n: q for n, q in resources.requests.items() if n in QOS_RESOURCES and q > 0}
    limits = {n: q for n, q in resources.limits.items() if n in QOS_RESOURCES and q > 0}
    if not requests and not limits:
        return QOSClass.BEST_EFFORT
    if set(limits) == set(QOS_RESOURCES) and requests == limits:
        return QOSClass.GUARANTEED
    return QOSClass.BURSTABLE


def pod_total(pod: Pod, amounts: Callable[[Container], Mapping[str, int]]) -> dict[str, int]:
    """What a pod needs at its peak, per resource, with sidecars (``restartPolicy: Always``
    init containers) running for the pod's whole life: the larger of the app containers plus
    every sidecar, and each regular init container plus the sidecars declared before it.

    The one formula behind kubelet's pod-scope requests (CPU-7, MEM-3, DEV-2); ``amounts``
    gives a container's own amounts.
    """
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in pod.init_containers:
        own = amounts(container)
        if container.restartable:
            for name, amount in own.items():
                sidecars[name] = sidecars.get(name, 0) + amount
            continue
        for name, amount in own.items():
            init_peak[name] = max(init_peak.get(name, 0), sidecars.get(name, 0) + amount)
    totals = dict(sidecars)
    for container in pod.containers:
        for name, amount in amounts(container).items():
            totals[name] = totals.get(name, 0) + amount
    for name, amount in init_peak.items():
        totals[name] = max(totals.get(name, 0), amount)
    return totals
