"""Which free CPUs the static policy hands out (spec chapter ``cpu.md``, CPU-10, CPU-12, CPU-13,
CPU-19, CPU-20).

``pkg/kubelet/cm/cpumanager/cpu_assignment.go``: ``takeByTopologyNUMAPacked`` and
``takeByTopologyNUMADistributed``, with ``takeUncoreCache`` (prefer-align-cpus-by-uncorecache).
Everything here is a pure function of the machine's CPU topology, the CPUs still free and the
number wanted.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Callable, Iterable, Sequence

import attrs

from numaspec.errors import NotModelledError
from numaspec.node.cpu import CPUTopology

__all__ = ["CPUAllocationError", "take_by_topology"]


class CPUAllocationError(Exception):
    """The allocator cannot find the CPUs; ``str()`` is kubelet's message.  Internal: the CPU
    Manager turns it into an admission failure, never an exception of the public API."""


_UNITS = ("numa", "socket", "core", "uncore")


@attrs.frozen
class _From138:
    """What kubelet 1.38 changed in the allocator, one switch each (all off: 1.29 to 1.37):
    ``own_size`` (CPU-10: a socket or core is free when all its own CPUs are), ``uncore_once``
    (CPU-19: each cache listed and taken once, no average gate), ``spread_round_robin``
    (CPU-13: the spread order goes round-robin over each socket's cores) and
    ``whole_groups`` (CPU-12: a remainder subset must hold the remainder in whole groups)."""

    own_size: bool = False
    uncore_once: bool = False
    spread_round_robin: bool = False
    whole_groups: bool = False


_BEFORE_138 = _From138()


class _Accumulator:
    """CPU-10: the CPUs still free (``details``), those taken so far and how many are still
    needed.  Units (NUMA nodes, sockets, cores) are sorted by how few free CPUs they have,
    then by id: the fullest unit is used first, which packs pods together."""

    def __init__(self, topo: CPUTopology, available: Iterable[int], needed: int,
                 spread: bool, v138: _From138) -> None:
        self.topo = topo
        self.free = frozenset(available)
        self.needed = needed
        self.result: set[int] = set()
        self.spread = spread
        self.v138 = v138
        self._by_cpu = topo.by_cpu()
        # NWIRE-5: each unit's CPUs, and its count of free ones kept up to date as CPUs are
        # taken, so that no query walks every CPU of the machine.
        self._members: dict[str, dict[int, frozenset[int]]] = {}
        self._free_count: dict[str, dict[int, int]] = {}
        for attr in _UNITS:
            self._members[attr] = topo.members(attr)
            counts: dict[int, int] = {}
            for cpu in self.free:
                unit = getattr(self._by_cpu[cpu], attr)
                counts[unit] = counts.get(unit, 0) + 1
            self._free_count[attr] = counts
        n_sockets = len(topo.sockets())
        n_cores = len(self._members["core"])
        self.cpus_per_socket = len(topo.cpus) // n_sockets if n_sockets else 0
        self.cpus_per_core = len(topo.cpus) // n_cores if n_cores else 0
        # CPU-10: NUMA nodes are the larger unit unless a socket holds several of them.
        self.numa_first = n_sockets >= len(topo.numa_nodes())

    # -- views of the free CPUs ---------------------------------------------------------------

    def free_in(self, attr: str, unit: int) -> list[int]:
        """The free CPUs of one unit (``attr`` is numa, socket, core or uncore), by id."""
        return sorted(self._members[attr].get(unit, frozenset()) & self.free)

    def _count(self, attr: str, unit: int) -> int:
        return self._free_count[attr].get(unit, 0)

    def _all_in(self, attr: str, unit: int) -> frozenset[int]:
        return self._members[attr].get(unit, frozenset())

    def _sorted(self, attr: str, units: Iterable[int]) -> list[int]:
        return sorted(set(units), key=lambda u: (self._count(attr, u), u))

    def _units(self, attr: str, within: str | None = None, outer: int | None = None
               ) -> set[int]:
        if within is None:
            return {u for u, n in self._free_count[attr].items() if n > 0}
        assert outer is not None
        return {getattr(self._by_cpu[c], attr)
                for c in self._members[within].get(outer, frozenset()) & self.free}

    def sorted_numa(self) -> list[int]:
        if self.numa_first:
            return self._sorted("numa", self._units("numa"))
        return [n for s in self.sorted_sockets() for n in self._sorted(
            "numa", self._units("numa", "socket", s))]

    def sorted_sockets(self) -> list[int]:
        if self.numa_first:
            return [s for n in self.sorted_numa() for s in self._sorted(
                "socket", self._units("socket", "numa", n))]
        return self._sorted("socket", self._units("socket"))

    def sorted_cores(self) -> list[int]:
        if self.numa_first:
            return [k for s in self.sorted_sockets() for k in self._sorted(
                "core", self._units("core", "socket", s))]
        return [k for n in self.sorted_numa() for k in self._sorted(
            "core", self._units("core", "numa", n))]

    def sorted_uncore(self) -> list[int]:
        """CPU-19: NUMA node by NUMA node in CPU-10's order, the caches with a free CPU on that
        node, fewest free CPUs (counted over the whole cache) first, then by id.  A cache
        reaching over several NUMA nodes is listed once for each before 1.38; from 1.38 only
        at the first NUMA node that lists it."""
        order = [u for n in self.sorted_numa() for u in self._sorted(
            "uncore", self._units("uncore", "numa", n))]
        if self.v138.uncore_once:
            return list(dict.fromkeys(order))
        return order

    def sorted_cpus(self) -> list[int]:
        """CPU-10: packed order walks the sorted cores; CPU-13: spread order walks the sorted
        sockets and takes each socket's free CPUs by id (before 1.38), or round-robin over the
        socket's cores, fewest free CPUs first then by id, one free thread of each per round
        (from 1.38, no NUMA ranking inside the socket)."""
        if self.spread and self.v138.spread_round_robin:
            order: list[int] = []
            for s in self.sorted_sockets():
                cores = self._sorted("core", self._units("core", "socket", s))
                threads = [self.free_in("core", k) for k in cores]
                for i in range(max((len(t) for t in threads), default=0)):
                    order += [t[i] for t in threads if i < len(t)]
            return order
        if self.spread:
            return [c for s in self.sorted_sockets() for c in self.free_in("socket", s)]
        return [c for k in self.sorted_cores() for c in self.free_in("core", k)]

    # -- taking -------------------------------------------------------------------------------

    def take(self, cpus: Iterable[int]) -> None:
        taken = set(cpus)
        for cpu in taken & self.free:
            info = self._by_cpu[cpu]
            for attr in _UNITS:
                self._free_count[attr][getattr(info, attr)] -= 1
        self.result |= taken
        self.free = self.free - taken
        self.needed -= len(taken)

    def _take_whole(self, attr: str, order: list[int], is_free: Callable[[int], bool]) -> None:
        for unit in [u for u in order if is_free(u)]:
            cpus = self._all_in(attr, unit)
            if self.needed >= len(cpus):
                self.take(cpus)

    def take_full_numa(self) -> None:
        self._take_whole("numa", self.sorted_numa(),
                         lambda n: self._count("numa", n) == len(self._all_in("numa", n)))

    def _whole_free(self, attr: str, unit: int) -> bool:
        return self._count(attr, unit) == len(self._all_in(attr, unit))

    def take_full_sockets(self) -> None:
        """CPU-10: a socket is free when its free CPUs are as many as the machine's average per
        socket (before 1.38), or all its own CPUs (from 1.38)."""
        if self.v138.own_size:
            self._take_whole("socket", self.sorted_sockets(),
                             lambda s: self._whole_free("socket", s))
            return
        self._take_whole("socket", self.sorted_sockets(),
                         lambda s: self._count("socket", s) == self.cpus_per_socket)

    def take_full_uncore(self) -> None:
        """CPU-19 before 1.38: every wholly free cache (in :meth:`sorted_uncore`'s order, fixed
        before the first is taken) whose size the request still needs.  A cache listed twice
        may be taken twice: its CPUs are counted against the request each time, as kubelet
        does."""
        self._take_whole("uncore", self.sorted_uncore(),
                         lambda u: self._whole_free("uncore", u))

    def take_one_full_uncore(self, cache: int) -> None:
        """CPU-19 from 1.38: ``cache`` whole if all its CPUs are free now and the request still
        needs at least its size."""
        cpus = self._all_in("uncore", cache)
        if self._whole_free("uncore", cache) and self.needed >= len(cpus):
            self.take(cpus)

    def take_partial_uncore(self, cache: int, round_up: bool) -> None:
        """CPU-20: finish the request inside one cache: its free cores by id, as many as the
        request needs (the request over the threads per core, rounded up from 1.34, down
        before), their free CPUs; from 1.34 an odd request on cores of several threads leaves
        out the highest of them when there is one too many.  Taken only when exactly the
        request remains."""
        per_core = self.cpus_per_core
        cores_needed = -(-self.needed // per_core) if round_up else self.needed // per_core
        cores = sorted({self._by_cpu[c].core for c in self.free_in("uncore", cache)})
        cpus = sorted(c for k in cores[:cores_needed] for c in self.free_in("core", k))
        if round_up and self.needed % 2 != 0 and per_core > 1 and len(cpus) > self.needed:
            cpus = cpus[:-1]
        if len(cpus) == self.needed:
            self.take(cpus)

    def take_uncore_caches(self, round_up: bool) -> None:
        """CPU-19: kubelet's ``takeUncoreCache``: walking the caches in :meth:`sorted_uncore`'s
        order (fixed once), take whole caches while the request needs at least the machine's
        CPUs per cache (CPUs over distinct cache ids), then try to finish in the current cache
        (CPU-20)."""
        if self.v138.uncore_once:
            self._take_uncore_caches_once(round_up)
            return
        caches = len(self._members["uncore"])
        per_cache = len(self.topo.cpus) // caches if caches else 0
        for cache in self.sorted_uncore():
            if self.needed >= per_cache:
                self.take_full_uncore()
            if self.needed < 1:
                return
            self.take_partial_uncore(cache, round_up)
            if self.needed < 1:
                return

    def _take_uncore_caches_once(self, round_up: bool) -> None:
        """CPU-19 from 1.38: the caches in :meth:`sorted_uncore`'s order (each once, fixed
        before anything is taken): first every cache that is wholly free when reached and no
        larger than what is still needed, whatever the machine's average; then, walking the
        same list again, the first cache that can finish the request (CPU-20)."""
        caches = self.sorted_uncore()
        for cache in caches:
            self.take_one_full_uncore(cache)
            if self.needed < 1:
                return
        for cache in caches:
            self.take_partial_uncore(cache, round_up)
            if self.needed < 1:
                return

    def take_full_cores(self) -> None:
        """CPU-10: a core is free when its free CPUs are as many as the machine's average
        threads per core (before 1.38), or all its own threads (from 1.38)."""
        if self.v138.own_size:
            self._take_whole("core", self.sorted_cores(),
                             lambda k: self._whole_free("core", k))
            return
        self._take_whole("core", self.sorted_cores(),
                         lambda k: self._count("core", k) == self.cpus_per_core)

    def take_remaining(self) -> None:
        for cpu in self.sorted_cpus():
            self.take([cpu])
            if self.needed < 1:
                return


def _start(topo: CPUTopology, available: frozenset[int], n: int, spread: bool,
           v138: _From138) -> _Accumulator:
    """CPU-10: an accumulator for ``n`` CPUs, refusing a request larger than what is free."""
    if n > len(available):
        raise CPUAllocationError("not enough cpus available to satisfy request: "
                                 f"requested={n}, available={len(available)}")
    return _Accumulator(topo, available, n, spread, v138)


def _packed(topo: CPUTopology, available: Iterable[int], n: int, spread: bool,
            uncore: bool | None = None, *, v138: _From138 = _BEFORE_138) -> set[int]:
    """CPU-10: whole free NUMA nodes and sockets (larger unit first), then (CPU-19, when
    ``uncore`` is not ``None``; ``True`` rounds CPU-20's core count up) uncore caches, then
    whole free cores (not with the spread order, CPU-13), then single CPUs."""
    acc = _start(topo, frozenset(available), n, spread, v138)
    if acc.needed < 1:
        return set()
    steps = ([acc.take_full_numa, acc.take_full_sockets] if acc.numa_first
             else [acc.take_full_sockets, acc.take_full_numa])
    if uncore is not None:
        round_up = uncore
        steps.append(lambda: acc.take_uncore_caches(round_up))
    if not spread:
        steps.append(acc.take_full_cores)
    steps.append(acc.take_remaining)
    for step in steps:
        step()
        if acc.needed < 1:
            return acc.result
    raise CPUAllocationError("failed to allocate cpus")


def _round3(value: float) -> float:
    return math.floor(value * 1000 + 0.5) / 1000 if value >= 0 else -_round3(-value)


def _stddev(values: Sequence[int]) -> float:
    """Go's ``standardDeviation`` in cpu_assignment.go: mean and result rounded to 3 places."""
    mean = _round3(sum(float(v) for v in values) / len(values))
    return _round3(math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)))


def _hand_out(after: dict[int, int], subset: Sequence[int], remainder: int, group: int) -> None:
    """Round-robin ``group`` CPUs at a time over ``subset``.  Kubelet loops until the
    remainder is gone; if every member has fallen below one group first, it loops forever."""
    while remainder > 0:
        progressed = False
        for numa in subset:
            if remainder == 0:
                break
            if after[numa] < group:
                continue
            after[numa] -= group
            remainder -= group
            progressed = True
        if not progressed:
            raise NotModelledError(
                "kubelet's distribute-cpus-across-numa remainder loop never ends here "
                f"(remainder {remainder}, NUMA nodes {list(subset)}, group size {group}); "
                "see spec/findings.md", where="cpuManagerPolicyOptions")


def _shared_tail_start(size: int) -> int:
    """CPU-12, before 1.38: how many leading members of a combination of ``size`` are kept in
    storage of that combination's own by kubelet's walk: one more than the largest of 0, 1, 2,
    4, 8, ... below ``size``.  The walk makes each combination by adding one member to its
    prefix, and its storage for whole numbers has room for 1, 2, 4, 8, ... members: adding to
    full storage copies the prefix into fresh storage (the 1st, 2nd, 3rd, 5th, 9th, 17th, ...
    member), adding to storage with room writes in place (the 4th, the 6th to 8th, the 10th to
    16th, ...).  So all the combinations that agree on this many leading members share the
    places of the members after them."""
    return 1 + (1 << ((size - 1).bit_length() - 1) if size > 1 else 0)


def _as_read_later(kept: tuple[int, ...] | None, current: tuple[int, ...],
                   copies: bool) -> tuple[int, ...] | None:
    """CPU-12: a combination the distributed allocator kept, as it reads once the same walk has
    produced ``current``.  From 1.38 the allocator keeps a copy, which nothing changes.  Before,
    it kept the walk's storage: when ``current`` has the same size and the same leading
    members (:func:`_shared_tail_start`) its later members are written over the kept ones, so
    a kept combination ends up with the tail of the last combination the walk produced with its
    head (the last such one of all, unless the walk stopped early)."""
    if copies or kept is None or len(kept) != len(current):
        return kept
    head = _shared_tail_start(len(kept))
    if kept[:head] != current[:head]:
        return kept
    return kept[:head] + current[head:]


def _distributed(topo: CPUTopology, available: Iterable[int], n: int, group: int, *,
                 spread: bool, align_by_socket: bool, copies: bool = True,
                 caps_share: bool = True, v138: _From138 = _BEFORE_138,
                 min_numas_from_hint: int = 0) -> set[int]:
    """CPU-12: distribute-cpus-across-numa: the fewest NUMA nodes that can share the request
    evenly in groups of ``group`` CPUs, choosing the most balanced leftover; otherwise packed.
    ``copies`` is false before 1.38, where the combination and remainder subset chosen are
    read as :func:`_as_read_later` says, so CPUs may come from NUMA nodes never chosen.
    ``caps_share`` (1.37+) lowers the even share to what the chosen nodes can give in whole
    groups; before 1.37 a node that cannot give it gives nothing (kubelet ignores the packed
    allocator's refusal there), which ends in an accounting error.  ``min_numas_from_hint``
    (1.38+, the affinity's NUMA node count, 0 for none) raises the fewest NUMA nodes tried
    to it when it is above that and no more than the most that can be used; with
    ``v138.whole_groups`` a remainder subset must hold the remainder in whole groups."""
    available = frozenset(available)
    if n % group != 0:
        return _packed(topo, available, n, spread, v138=v138)
    acc = _start(topo, available, n, spread, v138)
    if acc.needed < 1:
        return set()
    numas = acc.sorted_numa()
    total_numa = len(topo.numa_nodes())
    groups = (len(topo.cpus) - 1) // group + 1
    per_numa = (groups - 1) // total_numa + 1
    needed_groups = (n - 1) // group + 1
    min_k = (needed_groups - 1) // per_numa + 1
    max_k = min(needed_groups, len(numas))
    if min_k < min_numas_from_hint <= max_k:
        min_k = min_numas_from_hint
    free = {numa: len(acc.free_in("numa", numa)) for numa in numas}
    for k in range(min_k, max_k + 1):
        best_balance = math.inf
        best_remainder: tuple[int, ...] = ()
        best_combo: tuple[int, ...] | None = None
        best_in_one_socket = False
        for combo in itertools.combinations(numas, k):
            best_combo = _as_read_later(best_combo, combo, copies)
            if best_balance == 0 and (not align_by_socket or best_in_one_socket):
                break
            if sum(free[x] for x in combo) < n:
                continue
            if sum(free[x] // group for x in combo) * group < n:
                continue
            share = (n // k // group) * group
            if align_by_socket:
                share = min([share, *((free[x] // group) * group for x in combo)])
            if any(free[x] < share for x in combo):
                continue
            after = dict(free)
            for x in combo:
                after[x] -= share
            remainder = n - share * k
            candidates = [x for x in combo if after[x] >= group]
            local_best = math.inf
            local_remainder: tuple[int, ...] = ()
            if remainder == 0:
                local_best = _stddev(list(after.values()))
            size = len(candidates)
            while remainder > 0 and size >= 1:
                for subset in itertools.combinations(candidates, size):
                    local_remainder = _as_read_later(local_remainder, subset, copies) or ()
                    trial = dict(after)
                    if v138.whole_groups:
                        if sum(trial[x] // group for x in subset) * group < remainder:
                            continue
                    elif sum(trial[x] for x in subset) < remainder:
                        continue
                    _hand_out(trial, subset, remainder, group)
                    balance = _stddev(list(trial.values()))
                    if balance < local_best:
                        local_best, local_remainder = balance, subset
                size -= 1
            better = local_best < best_balance
            in_one_socket = False
            if align_by_socket:
                in_one_socket = len({c.socket for c in topo.cpus if c.numa in combo}) == 1
                if in_one_socket != best_in_one_socket:
                    better = in_one_socket
            if better:
                best_balance, best_remainder, best_combo = local_best, local_remainder, combo
                best_in_one_socket = in_one_socket
        if best_combo is None:
            continue
        share = (n // len(best_combo) // group) * group
        if caps_share or align_by_socket:  # nothing is taken yet: ``free`` still holds
            share = min([share, *((free[x] // group) * group for x in best_combo)])
        for numa in best_combo:
            # A refusal is ignored: nothing is taken from this node.  Reached only before
            # 1.37, when the combination as read later holds a node with too few free CPUs.
            with contextlib.suppress(CPUAllocationError):
                acc.take(_packed(topo, acc.free_in("numa", numa), share, spread, v138=v138))
        remainder = n - share * len(best_combo)
        while remainder > 0:
            progressed = False
            for numa in best_remainder:
                if remainder == 0:
                    break
                if len(acc.free_in("numa", numa)) < group:
                    continue
                acc.take(_packed(topo, acc.free_in("numa", numa), group, spread, v138=v138))
                remainder -= group
                progressed = True
            if not progressed:
                raise NotModelledError(
                    "kubelet's distribute-cpus-across-numa allocation loop never ends here; "
                    "see spec/findings.md", where="cpuManagerPolicyOptions")
        if acc.needed > 0:
            raise CPUAllocationError("accounting error, not enough CPUs allocated, "
                                     f"remaining: {acc.needed}")
        if acc.needed < 0:
            raise CPUAllocationError("accounting error, too many CPUs allocated, "
                                     f"remaining: {acc.needed}")
        return acc.result
    return _packed(topo, available, n, spread, v138=v138)


def take_by_topology(
    topo: CPUTopology,
    available: Iterable[int],
    n: int,
    *,
    distribute_across_numa: bool = False,
    full_pcpus_only: bool = False,
    spread: bool = False,
    align_by_socket_in_distribution: bool = False,
    prefer_uncore: bool = False,
    uncore_rounds_up: bool = True,
    copies_combinations: bool = True,
    caps_distributed_share: bool = True,
    units_free_by_own_size: bool = False,
    uncore_cache_once: bool = False,
    spread_round_robin: bool = False,
    remainder_in_whole_groups: bool = False,
    min_numas_from_hint: int = 0,
) -> frozenset[int]:
    """CPU-10, CPU-12, CPU-13, CPU-19: ``n`` CPUs out of ``available``, chosen as the static
    policy's ``takeByTopology`` chooses them.  Raises :class:`CPUAllocationError` with
    kubelet's text.  ``prefer_uncore`` adds the uncore-cache step to the packed allocator
    only (kubelet's distributed allocator never takes it); ``uncore_rounds_up`` is CPU-20's
    1.34 change.  ``copies_combinations`` (1.38+) and ``caps_distributed_share`` (1.37+) are
    CPU-12's: false, the distributed allocator reads its chosen NUMA combination as kubelet
    1.29 to 1.37 do (:func:`_as_read_later`), and before 1.37 does not lower its even share.

    Kubelet 1.38's other changes, each off by default (1.29 to 1.37):
    ``units_free_by_own_size`` (CPU-10), ``uncore_cache_once`` (CPU-19),
    ``spread_round_robin`` (CPU-13), ``remainder_in_whole_groups`` (CPU-12) and
    ``min_numas_from_hint`` (CPU-12: the affinity's NUMA node count for the take inside
    the affinity, 0 otherwise; only the distributed allocator reads it)."""
    v138 = _From138(own_size=units_free_by_own_size, uncore_once=uncore_cache_once,
                    spread_round_robin=spread_round_robin,
                    whole_groups=remainder_in_whole_groups)
    if distribute_across_numa:
        n_cores = len({c.core for c in topo.cpus})
        group = len(topo.cpus) // n_cores if full_pcpus_only and n_cores else 1
        return frozenset(_distributed(topo, available, n, group, spread=spread,
                                      align_by_socket=align_by_socket_in_distribution,
                                      copies=copies_combinations,
                                      caps_share=caps_distributed_share, v138=v138,
                                      min_numas_from_hint=min_numas_from_hint))
    return frozenset(_packed(topo, available, n, spread,
                             uncore_rounds_up if prefer_uncore else None, v138=v138))
