"""An independent statement of the merge rules, for the invariant properties.

Nothing here reuses the reference's fold: candidates are enumerated directly from the rules'
text, the best one is chosen with an explicit ranking key (a total order) rather than
kubelet's pairwise comparison, and single-numa-node has a closed form.  If the reference
and this module ever disagree, one of them misreads the spec, and the properties say where.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from numaspec.protocols.merge_protocol import MergeRequest
from numaspec.topology.hints import TopologyHint, flatten_provider_hints, permutations
from numaspec.topology.masks import NumaMask

__all__ = [
    "Candidate",
    "candidates",
    "closest_on",
    "mean_distance",
    "non_preferred_key",
    "prefer_closest_set",
    "single_numa_expected",
    "target_of",
    "tie_key",
]

_GO_TRUE = ("1", "t", "T", "TRUE", "true", "True")


@attrs.frozen
class Candidate:
    bits: int
    preferred: bool


def candidates(request: MergeRequest, lists: Sequence[Sequence[TopologyHint]]
                ) -> list[Candidate]:
    """Every non-empty merged candidate, computed directly from the rules' text."""
    machine = NumaMask.of(request.numa_nodes).bits
    out = []
    for perm in permutations(lists):
        bits = machine
        masks = [h.numa_affinity.bits for h in perm if h.numa_affinity is not None]
        for m in masks:
            bits &= m
        preferred = all(h.preferred for h in perm)
        if request.version.minor >= 24 and len(set(masks)) > 1:
            preferred = False
        if bits:
            out.append(Candidate(bits, preferred))
    return out


def mean_distance(request: MergeRequest, bits: int) -> float:
    """MERGE-12: the mean distance over all ordered pairs of the mask's nodes, self included."""
    nodes = NumaMask(bits).nodes
    rows = request.numa_distances or {}
    total = 0.0
    for i in nodes:
        for j in nodes:
            total += float(rows[i][j])
    return total / float(len(nodes) ** 2)


def prefer_closest_set(request: MergeRequest) -> bool:
    """The request turns prefer-closest-numa-nodes on (it exists from 1.26)."""
    value = request.policy_options.get("prefer-closest-numa-nodes", "false")
    return request.version.minor >= 26 and value in _GO_TRUE


def closest_on(request: MergeRequest) -> bool:
    """MERGE-9: prefer-closest is set and the policy is not single-numa-node."""
    return prefer_closest_set(request) and request.policy != "single-numa-node"


def tie_key(request: MergeRequest, bits: int) -> tuple[float, int]:
    return (mean_distance(request, bits), bits) if closest_on(request) else (0.0, bits)


def target_of(lists: Sequence[Sequence[TopologyHint]]) -> int:
    counts = [min(h.numa_affinity.bits.bit_count() for h in hints if h.numa_affinity is not None)
              for hints in lists if any(h.numa_affinity is not None for h in hints)]
    return max(counts, default=0)


def non_preferred_key(request: MergeRequest, target: int, bits: int
                       ) -> tuple[int, int, float, int]:
    count = bits.bit_count()
    if request.version.minor < 24:
        band, width = 0, count
    elif count == target:
        band, width = 0, 0
    elif count < target:
        band, width = 1, -count
    else:
        band, width = 2, count
    return (band, width, *tie_key(request, bits))


def single_numa_expected(request: MergeRequest) -> TopologyHint:
    """POLICY-4 in closed form: the lowest machine node that every resource can take as a
    preferred single-node (or unconstrained) hint; unconstrained if nobody names a node."""
    lists = flatten_provider_hints(request.providers)
    machine = sorted(request.numa_nodes)

    def takes(hints: Sequence[TopologyHint], node: int | None) -> bool:
        return any(h.preferred and (h.numa_affinity is None or (
            node is not None and h.numa_affinity.bits == 1 << node)) for h in hints)

    named = {h.numa_affinity.nodes[0] for hints in lists for h in hints
             if h.preferred and h.numa_affinity is not None
             and h.numa_affinity.count() == 1}
    fits = [n for n in machine if n in named and all(takes(hints, n) for hints in lists)]
    if fits and len(machine) != 1:
        return TopologyHint(NumaMask.of([fits[0]]), True)
    if fits or all(takes(hints, None) for hints in lists):
        return TopologyHint(None, True)
    return TopologyHint(None, False)


