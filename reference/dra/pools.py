"""DRA-2: which devices one node's allocation can draw from: the pools of the slices that
target the node, at their newest generation, and whether each is complete and valid.

Upstream: ``structured`` ``GatherPools`` (``pools.go`` at 0.33, ``internal/*/pools_*.go``
from 0.34).  Upstream collects pools in a Go map and walks it, so the order in which pools
are searched is not defined (DRA-2, finding 35); :func:`gather_pools` takes the order as an
argument and the allocator's judges accept an answer under any order.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from attrs import frozen

from numaspec.dra.objects import CounterSet, Device, NodeInfo, Slice

__all__ = ["Counters", "Gathering", "Pool", "consumption", "counters_left", "duplicate_name",
           "gather_pools", "node_matches", "over", "pool_ids"]

#: DRA-19: an amount per counter, keyed by (counter set, counter).
Counters = dict[tuple[str, str], Fraction]


@frozen
class Gathering:
    """DRA-19: how a release's variant gathers partitionable pools.  ``partitionable``: the
    ``PartitionableDevices`` feature is on (off: a slice of counter sets is skipped, as if it
    were another node's); ``counters_anywhere``: a slice of counter sets is gathered whatever
    node it names (1.36, and 1.37's stable variant); else it follows its node selection like
    any slice and, where that leaves the pool short, is found again with the rest of the pool
    (1.37's incubating and experimental variants, every variant from 1.38)."""

    partitionable: bool = False
    counters_anywhere: bool = False

    @classmethod
    def of(cls, minor: int, variant: str, partitionable: bool) -> Gathering:
        return cls(partitionable, minor == 36 or (minor == 37 and variant == "stable"))

    def gathers(self, node: NodeInfo, slice_: Slice) -> bool:
        if slice_.counter_sets:
            if not self.partitionable:
                return False
            if self.counters_anywhere:
                return True
        return node_matches(node, slice_)


@frozen
class Pool:
    """DRA-2: one pool as the allocator sees it.  ``slices`` are the node's slices of the
    pool's newest generation, in the order they were given; ``incomplete``: not every slice of
    that generation is published; ``invalid``: two of its devices share a name, or (DRA-19) two
    of its counter sets do, or a device consumes from a counter set or counter it does not
    have.  DRA-19: ``counter_sets``: every counter set of the pool; ``elsewhere``: the devices
    of its slices for other nodes (their consumption counts, they are not candidates)."""

    driver: str
    name: str
    slices: tuple[Slice, ...]
    incomplete: bool = False
    invalid: bool = False
    counter_sets: tuple[CounterSet, ...] = ()
    elsewhere: tuple[Device, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"


def node_matches(node: NodeInfo, slice_: Slice) -> bool:
    """DRA-2: a slice targets the node by name, by ``allNodes``, or by a node selector (its
    terms ORed, each term's expressions ANDed)."""
    if slice_.node_name is not None:
        return slice_.node_name == node.name
    if slice_.all_nodes:
        return True
    assert slice_.node_selector is not None
    return any(term and all(_expression(node, e) for e in term)
               for term in slice_.node_selector)


def _expression(node: NodeInfo, expr: dict[str, object]) -> bool:
    key = str(expr["key"])
    op = expr["operator"]
    values = expr["values"]
    assert isinstance(values, list)
    present = key in node.labels
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op == "In":
        return present and node.labels[key] in values
    return not present or node.labels[key] not in values  # NotIn


def pool_ids(slices: Sequence[Slice], node: NodeInfo,
             gathering: Gathering = Gathering()) -> list[tuple[str, str]]:
    """The pools the node's slices belong to, in the order they are first listed."""
    seen: dict[tuple[str, str], None] = {}
    for s in slices:
        if gathering.gathers(node, s):
            seen.setdefault((s.driver, s.pool), None)
    return list(seen)


def gather_pools(slices: Sequence[Slice], node: NodeInfo,
                 order: Sequence[tuple[str, str]] | None = None, *, minor: int = 37,
                 slices_by_name: bool = False,
                 gathering: Gathering = Gathering()) -> list[Pool]:
    """DRA-2: the node's pools, in ``order`` (default: first listed first).

    For each pool, the node's slices are kept at the highest generation among them (a slice
    of a lower generation is dropped).  The pool is complete when the node has as many of
    them as ``resourceSliceCount`` says.  Until 1.34 that is all; from 1.35 a pool short of
    slices is looked at across every node: if any of its slices has a higher generation the
    pool is left out altogether (it is being replaced); if those of the same generation are
    as many as the count, it is complete; else it is incomplete.  A pool with two devices of
    one name is invalid.  ``slices_by_name``: a pool's slices in name order (the incubating and
    experimental variants from 1.36) instead of the order given.  ``gathering``: which slices of
    counter sets are gathered, and whether counters are read at all (DRA-19).
    """
    by_pool: dict[tuple[str, str], list[Slice]] = {}
    for s in slices:
        if not gathering.gathers(node, s):
            continue
        key = (s.driver, s.pool)
        held = by_pool.get(key)
        if held is None or s.generation > held[0].generation:
            by_pool[key] = [s]
        elif s.generation == held[0].generation:
            held.append(s)
    keys = list(by_pool) if order is None else [k for k in order if k in by_pool]
    pools = []
    for key in keys:
        held = by_pool[key]
        if slices_by_name:
            held = sorted(held, key=lambda s: s.name)
        generation, count = held[0].generation, held[0].slice_count
        incomplete = False
        rest: list[Slice] = []
        if len(held) != count:
            if minor <= 34:
                incomplete = True
            else:
                same = [s for s in slices if (s.driver, s.pool) == key]
                if any(s.generation > generation for s in same):
                    continue
                if sum(1 for s in same if s.generation == generation) != count:
                    pools.append(Pool(key[0], key[1], (), incomplete=True))
                    continue
                names = {s.name for s in held}
                rest = [s for s in same if s.generation == generation and s.name not in names]
        pools.append(_build(key, held, rest, incomplete, gathering))
    return pools


def _build(key: tuple[str, str], held: list[Slice], rest: list[Slice], incomplete: bool,
           gathering: Gathering) -> Pool:
    """DRA-2, DRA-19: one pool from the node's slices (``held``) and, when the node's were
    not all of it, the rest of the pool's slices of that generation (``rest``)."""
    if not gathering.partitionable:
        return Pool(key[0], key[1], tuple(held), incomplete=incomplete,
                    invalid=duplicate_name(held) is not None)
    devices = [s for s in held if not s.counter_sets]
    counters = [c for s in held for c in s.counter_sets]
    elsewhere: list[Device] = []
    for s in rest:
        if s.counter_sets:
            counters.extend(s.counter_sets)
        else:
            elsewhere.extend(s.devices)
    pool = Pool(key[0], key[1], tuple(devices), incomplete=incomplete,
                counter_sets=tuple(counters), elsewhere=tuple(elsewhere))
    if duplicate_name(devices) is not None or _counters_invalid(pool):
        return Pool(key[0], key[1], tuple(devices), incomplete=incomplete, invalid=True)
    return pool


def _counters_invalid(pool: Pool) -> bool:
    """DRA-19: two counter sets of one name, or a device (for this node or another) that
    consumes from a counter set or a counter the pool does not have."""
    sets: dict[str, frozenset[str]] = {}
    for counter_set in pool.counter_sets:
        if counter_set.name in sets:
            return True
        sets[counter_set.name] = frozenset(name for name, _ in counter_set.counters)
    devices = [d for s in pool.slices for d in s.devices] + list(pool.elsewhere)
    return any(use.name not in sets or any(name not in sets[use.name]
                                           for name, _ in use.counters)
               for device in devices for use in device.consumes)


def duplicate_name(slices: Sequence[Slice]) -> str | None:
    """DRA-2: the first device name a pool's slices list twice, or None."""
    seen: set[str] = set()
    for s in slices:
        for d in s.devices:
            if d.name in seen:
                return d.name
            seen.add(d.name)
    return None


def counters_left(pool: Pool, allocated: frozenset[str]) -> Counters:
    """DRA-19: each counter of the pool's sets, less what its allocated devices (for this node
    or another) consume; it may be below zero."""
    held = {(c.name, name): value for c in pool.counter_sets for name, value in c.counters}
    for device in [d for s in pool.slices for d in s.devices] + list(pool.elsewhere):
        if f"{pool.id}/{device.name}" in allocated:
            for key, value in consumption((device,)).items():
                if key in held:
                    held[key] -= value
    return held


def consumption(devices: Sequence[Device]) -> Counters:
    """DRA-19: what the devices consume together (a device listed twice, twice)."""
    total: Counters = {}
    for device in devices:
        for use in device.consumes:
            for name, value in use.counters:
                total[use.name, name] = total.get((use.name, name), Fraction(0)) + value
    return total


def over(left: Counters, consumed: Counters) -> list[str]:
    """DRA-19: the counters (``SET/COUNTER``) consumed past what is left of them."""
    return sorted(f"{k[0]}/{k[1]}" for k, v in left.items() if v < consumed.get(k, 0))
