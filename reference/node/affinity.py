"""NUMA-level inter-pod affinity and anti-affinity, Katalyst's design (spec chapter
``affinity.md``, AFF-*).

A pod names, in two annotations, the labels of pods it must (affinity) or must not
(anti-affinity) share a NUMA node or a socket with; a pod may also ask to hold its NUMA nodes
alone (NUMA-exclusive).  From the pods already placed, each new pod gets an *admissible
region*: the NUMA nodes it may use.  The node's hint providers drop every hint that leaves the
region (:func:`filter_hints`), before the Topology Manager merges them.

Sources: seed 003 (the design, by the author of the Katalyst PR); kubewharf/katalyst-core PR
#347 at 4b6dcdd2 (never merged: ``pkg/util/affinity/inter_pod_affinity.go``, the hint
handlers of the cpu and memory QRM plugins) and kubewharf/katalyst-api PR #47 at ca918603
(``pkg/consts/qos.go``: the annotation keys).  Where numaspec departs from the PR, the chapter's
"Divergences" section says why.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping, Sequence

import attrs

from numaspec.errors import InvalidAffinityError, MalformedJSONError, NumaspecError
from numaspec.strict_json import bounded_int, finite_float
from numaspec.topology.hints import ProviderHints, TopologyHint
from numaspec.topology.masks import NumaMask

__all__ = [
    "AFFINITY_ANNOTATION",
    "ANTI_AFFINITY_ANNOTATION",
    "MEMORY_ENHANCEMENT_ANNOTATION",
    "AffinityTerms",
    "Placed",
    "Region",
    "Selector",
    "Zone",
    "admissible_region",
    "filter_hints",
    "parse_affinity",
]

#: AFF-1: the annotation keys (katalyst-api ``pkg/consts/qos.go``).
AFFINITY_ANNOTATION = "katalyst.kubewharf.io/microtopology_affinity"
ANTI_AFFINITY_ANNOTATION = "katalyst.kubewharf.io/microtopology_antiaffinity"
#: AFF-6: Katalyst's memory enhancement annotation; numaspec reads its ``numa_exclusive``.
MEMORY_ENHANCEMENT_ANNOTATION = "katalyst.kubewharf.io/memory_enhancement"


class Zone(enum.Enum):
    """AFF-2: the topology domain a selector speaks of."""

    NUMA = "numa"
    SOCKET = "socket"


def _frozen_labels(value: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(value.items()))


@attrs.frozen
class Selector:
    """AFF-2: ``{"matchLabels": {...}, "zone": "numa" | "socket"}``."""

    match_labels: tuple[tuple[str, str], ...] = attrs.field(converter=_frozen_labels)
    zone: Zone = Zone.NUMA

    def matches(self, labels: Mapping[str, str]) -> bool:
        """AFF-4: Kubernetes label-selector semantics: every key must be present with its
        value (an AND over the keys, never an OR)."""
        return all(labels.get(key) == value for key, value in self.match_labels)


@attrs.frozen
class AffinityTerms:
    """What one pod brings to the analysis: its kept labels (AFF-3), its required selectors
    and whether it is NUMA-exclusive (AFF-6)."""

    labels: Mapping[str, str] = attrs.field(factory=dict)
    affinity: tuple[Selector, ...] = ()
    anti_affinity: tuple[Selector, ...] = ()
    exclusive: bool = False


@attrs.frozen
class Placed:
    """AFF-5: a pod on the node, with the NUMA nodes it holds resources on."""

    uid: str
    terms: AffinityTerms
    numa: frozenset[int]


@attrs.frozen
class Region:
    """AFF-7: the NUMA nodes a new pod may hold resources on, and why each other one is out."""

    allowed: frozenset[int]
    #: NUMA node → the reasons it is out, in words (for rejection messages).
    excluded: Mapping[int, tuple[str, ...]] = attrs.field(factory=dict)

    def admits(self, numa: Iterable[int]) -> bool:
        return set(numa) <= self.allowed


# --- parsing (AFF-1, AFF-2, AFF-3, AFF-6) ------------------------------------------------------


def _where(key: str, path: str = "") -> str:
    return f"pod.annotations[{key}]{path}"


def _load(raw: str, key: str) -> object:
    """An annotation's JSON value (duplicate keys allowed, the last one kept, as Go reads
    them); WIRE-5's bounds on numbers apply."""
    try:
        return json.loads(raw, parse_int=bounded_int, parse_float=finite_float)
    except (json.JSONDecodeError, RecursionError) as exc:
        detail = getattr(exc, "msg", "too deeply nested")
        raise MalformedJSONError(f"the annotation's value is not JSON: {detail}",
                                 where=_where(key)) from None
    except NumaspecError as exc:
        raise type(exc)(f"the annotation's value: {exc.message}", where=_where(key)) from None


def _selectors(raw: object, key: str, part: str, kept: frozenset[str]) -> tuple[Selector, ...]:
    if not isinstance(raw, list):
        raise InvalidAffinityError(f"{part!r} must be a list of selectors",
                                   where=_where(key, f".{part}"))
    found = []
    for index, item in enumerate(raw):
        where = _where(key, f".{part}[{index}]")
        if not isinstance(item, dict):
            raise InvalidAffinityError('a selector is {"matchLabels": {...}, "zone": ...}',
                                       where=where)
        unknown = set(item) - {"matchLabels", "zone"}
        if unknown:
            raise InvalidAffinityError(
                f"unknown field(s) {sorted(unknown)} (a selector has matchLabels and zone)",
                where=where)
        labels = item.get("matchLabels")
        if not isinstance(labels, dict) or not labels:
            raise InvalidAffinityError(
                "matchLabels must be a non-empty object of label key to value: an empty "
                "selector would match every pod under Kubernetes' rules and none under the "
                "Katalyst PR's, so numaspec refuses it", where=f"{where}.matchLabels")
        for name, value in labels.items():
            if not isinstance(value, str):
                raise InvalidAffinityError("a label value is a string",
                                           where=f"{where}.matchLabels.{name}")
            if name not in kept:
                raise InvalidAffinityError(
                    f"label key {name!r} is not one the node keeps for affinity "
                    f"(interPodAffinityLabels: {', '.join(sorted(kept)) or 'none'}); the "
                    "selector could never match", where=f"{where}.matchLabels.{name}")
        zone = item.get("zone", "")
        if zone == "":
            zone = Zone.NUMA.value
        if zone not in ("numa", "socket"):
            raise InvalidAffinityError(f"zone {zone!r} is not one of \"numa\" or \"socket\"",
                                       where=f"{where}.zone")
        found.append(Selector(labels, Zone(zone)))
    return tuple(found)


def _value(annotations: Mapping[str, str], key: str) -> str | None:
    """AFF-1, AFF-6: the annotation's value, or ``None`` when it is missing or empty (an
    empty value is the same as none: the PR parses only non-empty values)."""
    return annotations.get(key) or None


def _required(annotations: Mapping[str, str], key: str, kept: frozenset[str]
              ) -> tuple[Selector, ...]:
    raw = _value(annotations, key)
    if raw is None:
        return ()
    body = _load(raw, key)
    if not isinstance(body, dict):
        raise InvalidAffinityError('the value is a JSON object {"required": [...]}',
                                   where=_where(key))
    unknown = set(body) - {"required", "preferred"}
    if unknown:
        raise InvalidAffinityError(
            f"unknown field(s) {sorted(unknown)} (known: required, preferred)", where=_where(key))
    # AFF-2: preferred selectors are checked as required ones are, and have no effect.
    _selectors(body.get("preferred", []), key, "preferred", kept)
    return _selectors(body.get("required", []), key, "required", kept)


def _exclusive(annotations: Mapping[str, str]) -> bool:
    key = MEMORY_ENHANCEMENT_ANNOTATION
    raw = _value(annotations, key)
    if raw is None:
        return False
    body = _load(raw, key)
    if not isinstance(body, dict):
        raise InvalidAffinityError("the value is a JSON object of enhancement name to "
                                   "string", where=_where(key))
    value: object = body.get("numa_exclusive", "false")
    if value not in ("true", "false"):
        raise InvalidAffinityError('numa_exclusive is the string "true" or "false"',
                                   where=_where(key, ".numa_exclusive"))
    return value == "true"


def parse_affinity(labels: Mapping[str, str], annotations: Mapping[str, str],
                   kept: Iterable[str]) -> AffinityTerms:
    """AFF-1..AFF-3, AFF-6: a pod's labels and annotations → its :class:`AffinityTerms`.

    ``kept`` is the node's list of label keys kept for affinity (Katalyst's agent flag
    ``--qos-inter-pod-affinity-labels``).  Raises :class:`~numaspec.errors.MalformedJSONError`
    or :class:`~numaspec.errors.InvalidAffinityError` naming the annotation and the field.
    """
    keep = frozenset(kept)
    affinity = _required(annotations, AFFINITY_ANNOTATION, keep)
    anti = _required(annotations, ANTI_AFFINITY_ANNOTATION, keep)
    exclusive = _exclusive(annotations)
    if exclusive and affinity:
        raise InvalidAffinityError(
            "a NUMA-exclusive pod holds its NUMA nodes alone, so a required affinity to other "
            "pods could never hold", where=_where(AFFINITY_ANNOTATION, ".required"))
    return AffinityTerms({k: v for k, v in labels.items() if k in keep}, affinity, anti,
                         exclusive)


# --- the region (AFF-5, AFF-7) ----------------------------------------------------------------


def _zone_of(selector: Selector, numa: frozenset[int], socket_peers: Mapping[int, frozenset[int]]
             ) -> frozenset[int]:
    """AFF-5: the NUMA nodes a selector's zone covers around a pod on ``numa``."""
    if selector.zone is Zone.NUMA:
        return numa
    return frozenset().union(*(socket_peers.get(n, frozenset({n})) for n in numa))


def admissible_region(terms: AffinityTerms, others: Sequence[Placed], numa_ids: Iterable[int],
                      socket_peers: Mapping[int, frozenset[int]]) -> Region:
    """AFF-7: the NUMA nodes a pod with ``terms`` may use beside the pods ``others``.

    A node is out when (a) a placed pod's anti-affinity selects the new pod (zone of the placed
    pod's selector), (b) the new pod's anti-affinity selects a placed pod (zone of the new
    pod's selector), (c) it holds a NUMA-exclusive pod, or the new pod is exclusive and the
    node holds any pod, or (d) the new pod has required affinity and, for some selector, no
    matching pod's zone covers the node.  Each test is per pod: labels of different pods are
    never pooled.
    """
    everything = frozenset(numa_ids)
    excluded: dict[int, list[str]] = {}

    def out(nodes: Iterable[int], why: str) -> None:
        for node in nodes:
            if node in everything:
                excluded.setdefault(node, []).append(why)

    for other in others:
        if not other.numa:
            continue
        for selector in other.terms.anti_affinity:
            if selector.matches(terms.labels):
                out(_zone_of(selector, other.numa, socket_peers),
                    f"pod {other.uid!r} is anti-affine to this pod ({selector.zone.value})")
        for selector in terms.anti_affinity:
            if selector.matches(other.terms.labels):
                out(_zone_of(selector, other.numa, socket_peers),
                    f"this pod is anti-affine to pod {other.uid!r} ({selector.zone.value})")
        if other.terms.exclusive:
            out(other.numa, f"pod {other.uid!r} holds it exclusively")
        elif terms.exclusive:
            out(other.numa, f"this pod is NUMA-exclusive and pod {other.uid!r} is there")
    for index, selector in enumerate(terms.affinity):
        covered = frozenset().union(*(_zone_of(selector, o.numa, socket_peers)
                                      for o in others if o.numa
                                      and selector.matches(o.terms.labels)))
        out(everything - covered, f"no pod matching required affinity [{index}] is in its "
                                  f"{selector.zone.value}")
    return Region(everything - set(excluded),
                  {n: tuple(reasons) for n, reasons in sorted(excluded.items())})


# --- the hint filter (AFF-8) ------------------------------------------------------------------


def filter_hints(hints: ProviderHints, region: Region, numa_ids: Sequence[int]) -> ProviderHints:
    """AFF-8: drop every hint whose NUMA nodes leave ``region``; keep the rest unchanged and in
    order.  No preference (``None``) stays no preference; a list can become empty ("no
    possible placement").  A hint without an affinity stands for every NUMA node."""
    if hints is None:
        return None
    if len(region.allowed) == len(numa_ids):
        return hints
    everything = NumaMask.of(numa_ids)
    out: dict[str, list[TopologyHint] | None] = {}
    for resource, listed in hints.items():
        if listed is None:
            out[resource] = None
            continue
        out[resource] = [h for h in listed
                         if region.admits((h.numa_affinity or everything).nodes)]
    return out
