"""Topology hints and the shape in which providers hand them over (spec chapter ``hints.md``).

Source: ``TopologyHint`` in ``pkg/kubelet/cm/topologymanager/topology_manager.go`` and
``filterProvidersHints`` / ``iterateAllProviderTopologyHints`` in ``policy.go``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence

import attrs

from numaspec.topology.masks import NumaMask

__all__ = [
    "NO_POSSIBLE_PLACEMENT",
    "NO_PREFERENCE",
    "ProviderHints",
    "TopologyHint",
    "flatten_provider_hints",
    "permutations",
]


@attrs.frozen
class TopologyHint:
    """HINT-1: a NUMA affinity (or none at all) and whether it is a preferred placement.

    ``numa_affinity is None`` ("nil" in kubelet) means *no constraint*; it is not the same as
    an empty mask, which means *no node at all* and can never be satisfied.
    """

    numa_affinity: NumaMask | None
    preferred: bool

    def __repr__(self) -> str:
        mask = "None" if self.numa_affinity is None else repr(self.numa_affinity)
        return f"TopologyHint({mask}, {self.preferred})"

    def __str__(self) -> str:
        """As the merge protocol writes a hint (WIRE-1): what failure messages show."""
        mask = "null" if self.numa_affinity is None else str(self.numa_affinity)
        return f'{{"numa_affinity":{mask},"preferred":{"true" if self.preferred else "false"}}}'


#: HINT-2/HINT-3: what a provider without an opinion contributes.
NO_PREFERENCE = TopologyHint(None, True)
#: HINT-3: what a resource that cannot be placed anywhere contributes.
NO_POSSIBLE_PLACEMENT = TopologyHint(None, False)

#: One provider's answer: resource name → hints.  ``None`` for the map (a provider that
#: returned no map) and ``{}`` are the same; for a resource, ``None`` and ``[]`` differ (HINT-3).
ProviderHints = Mapping[str, Sequence[TopologyHint] | None] | None


def flatten_provider_hints(
    providers: Sequence[ProviderHints],
) -> list[tuple[TopologyHint, ...]]:
    """HINT-2, HINT-3: one list of hints per (provider, resource), providers in order.

    * a provider with no map or an empty map contributes one list ``[NO_PREFERENCE]``;
    * a resource mapped to ``None`` contributes ``[NO_PREFERENCE]``;
    * a resource mapped to an empty list contributes ``[NO_POSSIBLE_PLACEMENT]``;
    * any other list is taken as it is: same order, duplicates kept.

    kubelet walks a provider's resources in Go's random map order; here they are walked in the
    mapping's own order, which is one of the orders kubelet may use.  The merged result does
    not depend on it (MERGE-11).
    """
    flat: list[tuple[TopologyHint, ...]] = []
    for provider in providers:
        if not provider:
            flat.append((NO_PREFERENCE,))
            continue
        for hints in provider.values():
            if hints is None:
                flat.append((NO_PREFERENCE,))
            elif len(hints) == 0:
                flat.append((NO_POSSIBLE_PLACEMENT,))
            else:
                flat.append(tuple(hints))
    return flat


def permutations(lists: Sequence[Sequence[TopologyHint]]) -> Iterator[tuple[TopologyHint, ...]]:
    """HINT-4: every way of taking one hint from each list, first list outermost.

    No lists at all gives exactly one, empty, permutation; any empty list gives none.
    """
    return itertools.product(*lists)
