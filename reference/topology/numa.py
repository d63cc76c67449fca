"""The machine as the Topology Manager sees it: NUMA node ids and their distances.

Mirrors ``NUMAInfo`` in ``pkg/kubelet/cm/topologymanager/numa_info.go`` (1.26+); before 1.26
only the node ids exist.  Spec chapters ``merge.md`` (MERGE-9, MERGE-12) and ``options.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import attrs

from numaspec.errors import InvalidNumaDistancesError, InvalidNumaIdError, MissingNumaDistancesError
from numaspec.topology.masks import MAX_NUMA_ID, NumaMask

__all__ = ["NumaInfo"]

_UINT64_MAX = (1 << 64) - 1


def _int_tuple(value: Iterable[int]) -> tuple[int, ...]:
    return tuple(value)


def _freeze_distances(
    value: Mapping[int, Sequence[int]] | None,
) -> tuple[tuple[int, tuple[int, ...]], ...] | None:
    if value is None:
        return None
    return tuple(sorted((int(k), tuple(v)) for k, v in value.items()))


@attrs.frozen
class NumaInfo:
    """NUMA node ids in topology order, and optionally a distance row per node id.

    A distance row is indexed by node id (entry *j* of row *i* is the distance from node *i* to
    node *j*), as kubelet indexes it.
    """

    nodes: tuple[int, ...] = attrs.field(converter=_int_tuple)
    distances: tuple[tuple[int, tuple[int, ...]], ...] | None = attrs.field(
        default=None, converter=_freeze_distances
    )

    @nodes.validator
    def _check_nodes(self, _attribute: object, value: tuple[int, ...]) -> None:
        if len(set(value)) == len(value) and all(
                type(node) is int and 0 <= node <= MAX_NUMA_ID for node in value):
            return  # the common case, checked in one pass
        seen: set[int] = set()
        for index, node in enumerate(value):
            NumaMask.of([node], where=f"numa_nodes[{index}]")
            if node in seen:
                raise InvalidNumaIdError(f"NUMA node id {node} is listed twice",
                                         where=f"numa_nodes[{index}]")
            seen.add(node)

    @distances.validator
    def _check_distances(
        self, _attribute: object, value: tuple[tuple[int, tuple[int, ...]], ...] | None
    ) -> None:
        if value is None:
            return
        if all(not row or (set(map(type, row)) == {int} and min(row) >= 0
                           and max(row) <= _UINT64_MAX) for _, row in value):
            return  # the common case, checked row by row in C
        for node, row in value:
            for column, entry in enumerate(row):
                if isinstance(entry, bool) or not isinstance(entry, int) or not (
                    0 <= entry <= _UINT64_MAX
                ):
                    raise InvalidNumaDistancesError(
                        f"a distance is an unsigned 64-bit integer, got {entry!r}",
                        where=f"numa_distances.{node}[{column}]",
                    )

    @classmethod
    def _trusted(cls, nodes: tuple[int, ...],
                 distances: tuple[tuple[int, tuple[int, ...]], ...] | None) -> NumaInfo:
        """A machine whose ids and rows are already known to be valid (distinct ids in
        0..63, sorted rows of non-negative entries below 2**64): the checks are not run
        again (WIRE-7 reads them so)."""
        info = object.__new__(cls)
        object.__setattr__(info, "nodes", nodes)
        object.__setattr__(info, "distances", distances)
        return info

    def default_affinity(self) -> NumaMask:
        """The mask of every node on the machine (kubelet's ``DefaultAffinityMask``); the
        ids were checked when the machine was made."""
        word = 0
        for node in self.nodes:
            word |= 1 << node
        return NumaMask._trusted(word)

    def distance_row(self, node: int) -> tuple[int, ...] | None:
        for key, row in self.distances or ():
            if key == node:
                return row
        return None

    def require_distances(self) -> None:
        """OPT-6: with prefer-closest-numa-nodes on, every machine node needs a distance row,
        long enough to be indexed by every machine node id."""
        for node in self.nodes:
            row = self.distance_row(node)
            if row is None:
                raise MissingNumaDistancesError(
                    f"prefer-closest-numa-nodes needs a distance row for NUMA node {node}",
                    where=f"numa_distances.{node}",
                )
            highest = max(self.nodes)
            if len(row) <= highest:
                raise InvalidNumaDistancesError(
                    f"the row has {len(row)} entries but is indexed by node id up to {highest}",
                    where=f"numa_distances.{node}",
                )

    def average_distance(self, mask: NumaMask) -> float:
        """MERGE-12: the mean distance over all ordered pairs of nodes in ``mask``, each node
        paired with itself too; 0.0 for the empty mask.

        Summed as IEEE doubles in ascending node order, as kubelet's ``CalculateAverageFor``
        sums them, so the float is identical bit for bit.
        """
        nodes = mask.nodes
        if not nodes:
            return 0.0
        total = 0.0
        pairs = 0.0
        for i in nodes:
            row = self.distance_row(i)
            if row is None or len(row) <= nodes[-1]:
                # Unreachable after require_distances(); kubelet would index out of range.
                raise MissingNumaDistancesError(
                    f"no usable distance row for NUMA node {i}", where=f"numa_distances.{i}"
                )
            for j in nodes:
                total += float(row[j])
                pairs += 1.0
        return total / pairs

    def closest(self, first: NumaMask, second: NumaMask) -> NumaMask:
        """MERGE-9: of two masks, the one with fewer nodes; with as many nodes, the one with the
        lower average distance; with equal averages, the numerically smaller."""
        if first.count() != second.count():
            return narrowest(first, second)
        a, b = self.average_distance(first), self.average_distance(second)
        if a == b:
            return first if first.is_less_than(second) else second
        return first if a < b else second


def narrowest(first: NumaMask, second: NumaMask) -> NumaMask:
    """MASK-2 as a choice: ``first`` if it is narrower, else ``second``."""
    return first if first.is_narrower_than(second) else second
