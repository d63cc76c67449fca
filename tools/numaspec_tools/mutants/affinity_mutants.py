"""Deliberately wrong implementations of NUMA-level inter-pod affinity (spec chapter
``affinity.md``): the reference with one rule broken the way the Katalyst PR or a port might
break it.  ``AFFINITY_KILLED_BY`` names the properties that must reject each one; every
affinity property appears there, so each is shown able to fail.

Each mutant answers ``affinity`` sessions in-process, through the reference with one function
patched for the duration of the session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any
from unittest import mock

import attrs

from numaspec.node.admission import Node
from numaspec.node.affinity import AffinityTerms, Placed, Region, Selector, admissible_region
from numaspec.node.pods import Pod
from numaspec.node.scheduling import NodeScheduler, Verdict
from numaspec.protocols.adapter_protocol import reference_result
from numaspec.topology.hints import ProviderHints, TopologyHint
from numaspec.topology.versions import SUPPORTED_VERSIONS

__all__ = ["AFFINITY_KILLED_BY", "AFFINITY_MUTATIONS", "AffinityMutant"]


def _or_keys(selector: Selector, labels: Any) -> bool:
    """Divergence D1: one matching key is enough."""
    return any(labels.get(key) == value for key, value in selector.match_labels)


def _region_without(strip: Callable[[AffinityTerms], AffinityTerms]
                    ) -> Callable[..., Region]:
    def region(terms: AffinityTerms, others: Sequence[Placed], numa_ids: Any,
               peers: Any) -> Region:
        return admissible_region(strip(terms), [attrs.evolve(o, terms=strip(o.terms))
                                                for o in others], numa_ids, peers)
    return region


def _marks_preferred(hints: ProviderHints, region: Region, numa_ids: Sequence[int]
                     ) -> ProviderHints:
    from numaspec.node.affinity import filter_hints

    kept = filter_hints(hints, region, numa_ids)
    if kept is None or len(region.allowed) == len(numa_ids):
        return kept
    # Survivors of a real filtering re-marked preferred (a tempting "fix" of divergence D9).
    return {r: None if listed is None else [TopologyHint(h.numa_affinity, True) for h in listed]
            for r, listed in kept.items()}


def _check_without_fit(self: NodeScheduler, pod: Pod) -> Verdict:
    """Divergence D4: the node passes when some NUMA node satisfies the rules, fit or not."""
    region = self._view().region(pod)
    return Verdict(bool(region is None or region.allowed))


_ALLOCATE = Node._allocate


def _allocate_unchecked(self: Node, pod: Any, container: Any, hint: Any,
                        region: Any, *args: Any) -> None:  # noqa: ARG001 - AFF-9's check dropped
    _ALLOCATE(self, pod, container, hint, None, *args)


def _empty_is_a_value(annotations: Any, key: str) -> str | None:
    """AFF-1 read literally: an empty annotation value is parsed (and is malformed JSON)."""
    value: str | None = annotations.get(key)
    return value


@contextmanager
def _patched(target: str, replacement: Any) -> Iterator[None]:
    with mock.patch(target, replacement):
        yield


_PATCHES: dict[str, Callable[[], AbstractContextManager[None]]] = {
    "or_keys": lambda: _patched("numaspec.node.affinity.Selector.matches", _or_keys),
    "ignore_existing_anti": lambda: _patched(
        "numaspec.node.admission.admissible_region", _region_without_others_anti()),
    "ignore_exclusive": lambda: _patched(
        "numaspec.node.admission.admissible_region",
        _region_without(lambda t: attrs.evolve(t, exclusive=False))),
    "filter_marks_preferred": lambda: _patched("numaspec.node.admission.filter_hints",
                                               _marks_preferred),
    "scheduler_ignores_fit": lambda: _patched("numaspec.node.scheduling.NodeScheduler.check",
                                              _check_without_fit),
    "no_hard_check": lambda: _patched("numaspec.node.admission.Node._allocate",
                                      _allocate_unchecked),
    "empty_value_malformed": lambda: _patched("numaspec.node.affinity._value", _empty_is_a_value),
}


def _region_without_others_anti() -> Callable[..., Region]:
    """AFF-7 part 1 forgotten: existing pods' anti-affinity no longer keeps the new pod out."""
    def region(terms: AffinityTerms, others: Sequence[Placed], numa_ids: Any,
               peers: Any) -> Region:
        return admissible_region(terms, [attrs.evolve(o, terms=attrs.evolve(
            o.terms, anti_affinity=())) for o in others], numa_ids, peers)
    return region


AFFINITY_MUTATIONS = tuple(_PATCHES)

AFFINITY_KILLED_BY: dict[str, tuple[str, ...]] = {
    "or_keys": ("P-AFF-REQUIRED", "P-AFF-EQUIVALENCE"),
    "ignore_existing_anti": ("P-AFF-ANTI", "P-AFF-EQUIVALENCE"),
    "ignore_exclusive": ("P-AFF-EXCLUSIVE",),
    "filter_marks_preferred": ("P-AFF-FILTER",),
    "scheduler_ignores_fit": ("P-AFF-SCHEDULE",),
    "no_hard_check": ("P-AFF-ANTI",),
    "empty_value_malformed": ("P-AFF-EQUIVALENCE",),
}


@attrs.define
class AffinityMutant:
    """The reference's affinity sessions with ``mutation`` applied (None: unmutated)."""

    mutation: str | None = None
    kubelet_versions: Sequence[object] = SUPPORTED_VERSIONS
    node_kubelet_versions: tuple[str, ...] = ("1.30",)

    @property
    def name(self) -> str:
        return f"affinity-mutant:{self.mutation or 'none'}"

    def affinity_session(self, case: Any) -> Any:
        if self.mutation is None:
            return reference_result("affinity", case)
        with _PATCHES[self.mutation]():
            return reference_result("affinity", case)
