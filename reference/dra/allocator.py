"""DRA-5 to DRA-9: the structured allocator's search, as upstream's stable variant does it
(``structured`` ``Allocator.Allocate``: ``allocator.go`` at 0.33,
``internal/stable/allocator_stable.go`` from 0.34).

Claims are allocated one after the other, each claim's requests in order, each request one
device at a time.  For each device the node's pools are walked in order, each pool's slices
in order, each slice's devices in order; the first device that is not in use, that every
selector accepts and that keeps every constraint is taken, and the search goes on from there;
when the rest cannot be completed the device is given back and the next one tried.  The first
complete assignment is the answer (DRA-7).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from attrs import define, field, frozen

from numaspec.dra.capacity import Consumed, fits, for_status, keyed, total
from numaspec.dra.constraints import (
    ConstraintState,
    UnsupportedValue,
    constraint_state,
)
from numaspec.dra.objects import (
    Claim,
    Device,
    DeviceClass,
    Request,
    Taint,
    Toleration,
)
from numaspec.dra.pools import Counters, Pool, consumption, counters_left, duplicate_name, over
from numaspec.dra.selectors import SelectorError, device_matches
from numaspec.errors import LimitExceededError

__all__ = [
    "MAX_DEVICES_PER_CLAIM",
    "MAX_SEARCH_STEPS",
    "Allocation",
    "Features",
    "Picked",
    "Share",
    "allocate",
    "tolerates",
    "untolerated_taint",
]

#: DRA-5: ``AllocationResultsMaxSize``, the devices one claim's result can hold.
MAX_DEVICES_PER_CLAIM = 32
#: The reference's own bound on the search (allocation steps); upstream has none but the
#: scheduler's context.  A search longer than this is refused with ``limit-exceeded``.
MAX_SEARCH_STEPS = 2_000_000


@frozen
class Features:
    """The allocator features a case enables (DRA-8) that change a pick within the chapter's
    scope: the prioritized list (DRA-4), admin access (DRA-17), device taints (DRA-16)."""

    prioritized_list: bool = False
    admin_access: bool = False
    device_taints: bool = False
    list_type_attributes: bool = False
    #: DRA-19: shared counters (partitionable devices)
    partitionable: bool = False
    #: DRA-20: consumable capacity (shares of devices that allow multiple allocations)
    consumable: bool = False

    @classmethod
    def named(cls, names: frozenset[str]) -> Features:
        """From the names of the module's ``Features`` fields."""
        return cls(prioritized_list="PrioritizedList" in names,
                   admin_access="AdminAccess" in names, device_taints="DeviceTaints" in names,
                   list_type_attributes="ListTypeAttributes" in names,
                   partitionable="PartitionableDevices" in names,
                   consumable="ConsumableCapacity" in names)


@frozen
class Picked:
    """One device of a claim's result: the request (``request/subrequest`` for a
    ``firstAvailable`` pick) and the device's driver, pool and name."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool = False
    #: DRA-20: a share (the result has a share ID), and what it consumes, named as the slice
    #: names the capacities (None: the result records none)
    shared: bool = False
    consumed: tuple[tuple[str, Fraction], ...] | None = None

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


@frozen
class Allocation:
    """DRA-9: the allocator's answer.  ``outcome``: ``allocated`` (``claims`` holds one list
    of picks per claim, in the claims' order), ``unschedulable`` (nothing fits on this node;
    ``message`` only when invalid pools were seen) or ``error`` (the input cannot be
    allocated anywhere: ``message`` says why, in the allocator's words)."""

    outcome: str
    claims: tuple[tuple[Picked, ...], ...] = ()
    message: str = ""


#: DRA-20: an allocated share: its device (``driver/pool/device``) and what it consumes, by
#: capacity name as its result records it (None: the result records nothing).
Share = tuple[str, Mapping[str, Fraction] | None]


class _Fatal(Exception):
    """DRA-9: an error the allocator returns."""


class _NodeFailure(Exception):
    """DRA-9: an error the allocator marks as this node's alone (``ErrFailedAllocationOnNode``,
    from 1.35): the node is unschedulable, with the allocator's words."""


class _MaxSize(Exception):
    """DRA-5: the claim's result would pass MAX_DEVICES_PER_CLAIM (backtracked over)."""


@frozen
class _Candidate:
    pool: Pool
    driver: str
    device: Device

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.pool.name}/{self.device.name}"


@define
class _RequestData:
    request: Request
    parent: Request | None
    device_class: DeviceClass
    num_devices: int
    all_devices: list[_Candidate] | None = None
    selected: int = 0

    @property
    def name(self) -> str:
        return f"{self.parent.name}/{self.request.name}" if self.parent else self.request.name

    @property
    def names(self) -> tuple[str, str]:
        """DRA-6: the request's name and the subrequest's (``""`` for a plain request), as a
        constraint reads them."""
        return (self.parent.name, self.request.name) if self.parent else (self.request.name, "")


@define
class _Search:
    claims: Sequence[Claim]
    pools: Sequence[Pool]
    classes: Mapping[str, DeviceClass]
    allocated: frozenset[str]
    features: Features
    minor: int
    variant: str
    #: DRA-20: allocated shares: per device, what each share with a recorded consumption
    #: consumes (by :func:`capacity_key`), and the devices with any share
    shares: Mapping[str, Sequence[Consumed]] = field(factory=dict)
    shared: frozenset[str] = frozenset()
    data: dict[tuple[int, int, int], _RequestData] = field(factory=dict)
    constraints: list[list[ConstraintState]] = field(factory=list)
    allocating: dict[str, set[int]] = field(factory=dict)
    results: list[list[Picked]] = field(factory=list)
    selectable_cache: dict[tuple[str, int, int, int], bool] = field(factory=dict)
    failed: set[tuple[object, ...]] = field(factory=set)
    steps: int = 0
    #: DRA-19: per pool, what each counter holds before the search (its counter sets less
    #: what allocated devices consume), and what the devices taken in it consume
    available: dict[str, Counters] = field(factory=dict)
    consumed: dict[str, Counters] = field(factory=dict)
    #: DRA-20: the shares taken in this allocation, per device, what each consumes
    sharing: dict[str, list[Consumed]] = field(factory=dict)

    # --- DRA-4, DRA-5: what each request needs ------------------------------------------

    def validate(self) -> None:
        for ci, claim in enumerate(self.claims):
            per_claim = 0
            for ri, request in enumerate(claim.requests):
                if request.subrequests and not self.features.prioritized_list:
                    raise _Fatal(f"claim {claim.key}, request {request.name}: has "
                                 "subrequests, but the DRAPrioritizedList feature is disabled")
                self._capacity_feature(claim, request)
                if request.subrequests:
                    least = None
                    for si, sub in enumerate(request.subrequests):
                        # DRA-4: until 1.35 subrequest i is judged under subrequest i-1's
                        # key, so their selector results are shared
                        key = (ci, ri, si if self.minor >= 36 else max(si - 1, 0))
                        data = self._request_data(ci, key, sub, request)
                        self.data[(ci, ri, si)] = data
                        least = data.num_devices if least is None else min(least,
                                                                           data.num_devices)
                    needed = least or 0
                else:
                    data = self._request_data(ci, (ci, ri, 0), request, None)
                    self.data[(ci, ri, 0)] = data
                    needed = data.num_devices
                if self.minor >= 36 and needed > MAX_DEVICES_PER_CLAIM - per_claim:
                    raise _Fatal(f"claim {claim.key}, request {request.name}: adding {needed} "
                                 "devices exceeds the claim limit of "
                                 f"{MAX_DEVICES_PER_CLAIM}, with {per_claim} already "
                                 "accounted for")
                per_claim += needed
            if self.minor <= 35 and per_claim > MAX_DEVICES_PER_CLAIM:
                raise _Fatal(f"claim {claim.key}: number of requested devices {per_claim} "
                             f"exceeds the claim limit of {MAX_DEVICES_PER_CLAIM}")
            for i, constraint in enumerate(claim.constraints):
                if (constraint.match_attribute is None and self.variant == "stable"
                        and self.minor <= 37):
                    # DRA-21: stable has no distinct constraint until 1.38
                    raise _Fatal(f"claim {claim.key}, constraint #{i}: empty constraint "
                                 "(unsupported constraint type?)")
            lists = self.features.list_type_attributes
            self.constraints.append([constraint_state(c, lists, self.minor)
                                     for c in claim.constraints])
            self.results.append([])

    def _capacity_feature(self, claim: Claim, request: Request) -> None:
        """DRA-20: without ConsumableCapacity, a request (or subrequest) with a ``capacity``
        field is an error, except to 1.36's and 1.37's stable allocator, which ignores it."""
        if self.features.consumable or (self.variant == "stable" and self.minor <= 37):
            return
        if request.capacity is not None:
            raise _Fatal(f"claim {claim.key}, request {request.name}: has capacity requests, "
                         "but the DRAConsumableCapacity feature is disabled")
        for sub in request.subrequests:
            if sub.capacity is not None:
                raise _Fatal(f"claim {claim.key}, subrequest {sub.name}: has capacity "
                             "requests, but the DRAConsumableCapacity feature is disabled")

    def _request_data(self, ci: int, key: tuple[int, int, int], request: Request,
                      parent: Request | None) -> _RequestData:
        claim = self.claims[ci]
        if request.admin_access is not None and not self.features.admin_access:
            raise _Fatal(f"claim {claim.key}, request {request.name}: admin access is "
                         "requested, but the feature is disabled")
        device_class = self.classes.get(request.class_name)
        if device_class is None:
            raise _Fatal(f"claim {claim.key}, request {request.name}: could not retrieve "
                         f"device class {request.class_name}: deviceclass.resource.k8s.io "
                         f'"{request.class_name}" not found')
        data = _RequestData(request, parent, device_class, request.count)
        if request.mode == "All":
            data.all_devices = []
            for pool in self.pools:
                state = ("being updated" if pool.incomplete else
                         "invalid" if pool.invalid else None)
                if state is not None:
                    message = (f"claim {claim.key}, request {request.name}: asks for all "
                               f"devices, but resource pool {pool.id} is currently {state}")
                    # DRA-4: from 1.38 this is the node's failure alone (the scheduler tries
                    # other nodes); before, an error for the pod
                    raise (_NodeFailure if self.minor >= 38 else _Fatal)(message)
                for candidate in _candidates(pool):
                    if self.selectable(key, data, candidate) and self.room_for_all(
                            data.request, candidate):
                        data.all_devices.append(candidate)
            data.num_devices = len(data.all_devices)
        return data

    # --- DRA-3: selectors ------------------------------------------------------------------

    def selectable(self, key: tuple[int, int, int], data: _RequestData,
                   candidate: _Candidate) -> bool:
        cache_key = (candidate.id, *key)
        if cache_key in self.selectable_cache:
            return self.selectable_cache[cache_key]
        claim = self.claims[key[0]]
        result = True
        for owner, selectors in ((f"class {data.device_class.name}",
                                  data.device_class.selectors),
                                 (f"claim {claim.key}", data.request.selectors)):
            for i, expression in enumerate(selectors):
                try:
                    ok = device_matches(expression, candidate.device, candidate.driver,
                                        self.minor,
                                        lists=self.features.list_type_attributes)
                except SelectorError as exc:
                    on = f" on device {candidate.id}" if self.minor >= 37 else ""
                    raise _Fatal(f"{owner}: selector #{i}{on}: CEL runtime error: "
                                 f"{exc}") from None
                if not ok:
                    result = False
                    break
            if not result:
                break
        self.selectable_cache[cache_key] = result
        return result

    # --- DRA-7: the search -----------------------------------------------------------------

    def in_use(self, device_id: str) -> bool:
        return device_id in self.allocated or bool(self.allocating.get(device_id))

    def blocked(self, device_id: str, ci: int, request: Request) -> bool:
        """DRA-7, DRA-17: whether the request may not take the device: in use; for a request
        with admin access, taken for its own claim (from 1.34; at 1.33 nothing blocks it)."""
        if request.admin_access:
            return self.minor >= 34 and ci in self.allocating.get(device_id, ())
        return self.in_use(device_id)

    def shares_block(self, candidate: _Candidate, request: Request) -> bool:
        """DRA-20: from 1.38 a device that does not allow multiple allocations but has shares
        is not taken (but with admin access); checked as the device is taken, after its
        selectors."""
        return (self.minor >= 38 and not request.admin_access
                and not self.multiple(candidate.device)
                and self.capacity_in_use(candidate.id))

    # --- DRA-20: consumable capacity -------------------------------------------------------

    def multiple(self, device: Device) -> bool:
        """DRA-20: whether the device is shared out: it allows multiple allocations and the
        feature is on."""
        return self.features.consumable and device.multiple

    def capacity_in_use(self, device_id: str) -> bool:
        """DRA-20: whether the device has shares: allocated with a recorded consumption, or
        taken in this allocation; from 1.37 also allocated without one."""
        return (bool(self.shares.get(device_id)) or bool(self.sharing.get(device_id))
                or (self.minor >= 37 and device_id in self.shared))

    def room(self, request: Request, candidate: _Candidate) -> Consumed | None:
        """DRA-20: what the request would consume of the device beside its allocated shares
        and those taken in this allocation (None: passed over); every device is checked with
        the feature on, not only those that can be shared."""
        held = [*self.shares.get(candidate.id, ()), *self.sharing.get(candidate.id, ())]
        return fits(request.capacity, candidate.device, candidate.driver, self.minor, held)

    def room_for_all(self, request: Request, candidate: _Candidate) -> bool:
        """DRA-20: whether an All request counts the device: at 1.36 it must have room beside
        the allocated shares (a device without is left out, and All takes the rest); from 1.37
        it must have room when empty (a device without stays in, and All fails on it)."""
        if not self.features.consumable:
            return True
        held = self.shares.get(candidate.id, ()) if self.minor <= 36 else ()
        return fits(request.capacity, candidate.device, candidate.driver, self.minor,
                    held) is not None

    def _marks(self, request: Request) -> bool:
        """DRA-17: whether taking a device marks it as taken (at 1.33 not with admin access)."""
        return not (request.admin_access and self.minor <= 33)

    def tainted(self, device: Device, request: Request) -> bool:
        """DRA-16: whether the device has a taint that keeps the request off it."""
        return self.features.device_taints and untolerated_taint(
            device, request, minor=self.minor) is not None

    def take(self, r: tuple[int, int, int, int], candidate: _Candidate,
             must: bool, checked: Consumed | None = None) -> int | None:
        """DRA-6: put a device in a claim's result if it is free and keeps every constraint,
        and say how long the result was before (None: not taken); ``must`` (an ``All``
        request): a constraint it breaks is an error; ``checked``: what the request would
        consume of the device, as the search found it before (DRA-20; None: not checked
        yet)."""
        ci = r[0]
        data = self.data[r[:3]]
        if self.blocked(candidate.id, ci, data.request) or self.shares_block(candidate,
                                                                             data.request):
            return None
        counted = self.counts_counters(candidate)
        if counted and not self.reserve(candidate):
            return None
        before = self._take(r, candidate, must, checked)
        if before is None and counted:
            self.release(candidate)
        return before

    def counts_counters(self, candidate: _Candidate) -> bool:
        """DRA-19, DRA-20: whether taking the device reserves its counters: it consumes some,
        and it is not a device shared out that already has shares (its counters are counted
        once)."""
        return bool(candidate.device.consumes) and not (
            self.multiple(candidate.device) and self.capacity_in_use(candidate.id))

    def reserve(self, candidate: _Candidate) -> bool:
        """DRA-19: take the device's counters if, with them, no counter of its pool (whichever
        set, whichever device uses it) is consumed past what it holds; a device that consumes
        counters is never taken without the feature."""
        if not self.features.partitionable:
            return False
        pool = candidate.pool
        if pool.id not in self.available:
            self.available[pool.id] = counters_left(pool, self.allocated | self.shared)
        consumed = self.consumed.setdefault(pool.id, {})
        for key, value in consumption((candidate.device,)).items():
            consumed[key] = consumed.get(key, Fraction(0)) + value
        if over(self.available[pool.id], consumed):
            self.release(candidate)
            return False
        return True

    def release(self, candidate: _Candidate) -> None:
        """DRA-19: give back what :meth:`reserve` took."""
        consumed = self.consumed[candidate.pool.id]
        for key, value in consumption((candidate.device,)).items():
            consumed[key] -= value

    def _take(self, r: tuple[int, int, int, int], candidate: _Candidate,
              must: bool, checked: Consumed | None) -> int | None:
        ci = r[0]
        data = self.data[r[:3]]
        if self.tainted(candidate.device, data.request):
            return None
        base, sub = data.names
        added: list[ConstraintState] = []
        for match in self.constraints[ci]:
            try:
                kept = match.add(base, sub, candidate.device, candidate.driver)
            except UnsupportedValue as exc:
                # DRA-18 (1.38): stable names the claim and request before the error
                claim = (f"claim {self.claims[ci].key}, request {data.request.name}: "
                         if self.variant == "stable" else "")
                raise _Fatal(f"{claim}device {candidate.id}: unsupported attribute value "
                             f"for {exc.attribute}") from None
            if not kept:
                for done in reversed(added):
                    done.remove(base, sub)
                if must:
                    raise _Fatal(f"claim {self.claims[ci].key}, request {data.request.name}: "
                                 f"cannot add device {candidate.id} because a claim "
                                 "constraint would not be satisfied")
                return None
            added.append(match)
        shared = self.multiple(candidate.device)
        consumed: Consumed | None = None
        if self.features.consumable:
            # DRA-20: an All request's device is checked here, after the constraints (what
            # it meets first); an exact count's was checked before it was taken, and nothing
            # taking it does since changes the answer
            consumed = checked if checked is not None else self.room(data.request, candidate)
            if consumed is None:
                for done in reversed(added):
                    done.remove(base, sub)
                return None
        if self._marks(data.request) and not shared:
            self.allocating.setdefault(candidate.id, set()).add(ci)
        recorded = None
        if shared and consumed is not None:
            self.sharing.setdefault(candidate.id, []).append(consumed)
            if candidate.device.capacity:
                status = for_status(consumed, candidate.device, candidate.driver, self.minor)
                recorded = tuple(sorted(status.items()))
        before = len(self.results[ci])
        self.results[ci].append(Picked(data.name, candidate.driver, candidate.pool.name,
                                       candidate.device.name,
                                       bool(data.request.admin_access), shared, recorded))
        return before

    def give_back(self, r: tuple[int, int, int, int], candidate: _Candidate,
                  before: int) -> None:
        """Undo :meth:`take`: the result cut back to its length before (at 1.33 that also
        drops what a failed All branch left in it, DRA-4)."""
        ci = r[0]
        data = self.data[r[:3]]
        shared = self.multiple(candidate.device)
        if shared:
            self.sharing[candidate.id].pop()
        if self.counts_counters(candidate):
            self.release(candidate)
        del self.results[ci][before:]
        if self._marks(data.request) and not shared:
            self.allocating[candidate.id].discard(ci)
        base, sub = data.names
        for match in reversed(self.constraints[ci]):
            match.remove(base, sub)

    def allocate_one(self, r: tuple[int, int, int, int], in_sub: bool, start: int = 0
                     ) -> bool:
        """:meth:`search_from`, remembering where it failed: the rest of the search depends
        only on where it is, what is in use, which of it the claim being allocated holds
        (a request with admin access may take a device another claim holds, not one its own
        claim holds, DRA-17), what each claim's constraints hold and how long each result
        is, so a place it failed from fails again (it raised nothing there, and selectors are
        judged once), and upstream's answer is found without walking it twice (DRA-7)."""
        key = (r, in_sub, start, frozenset(self.allocated_now()),
               frozenset(d for d, claims in self.allocating.items() if r[0] in claims),
               tuple(m.state() for matches in self.constraints for m in matches),
               tuple(len(result) for result in self.results),
               tuple(sorted((pool, key, value) for pool, held in self.consumed.items()
                            for key, value in held.items() if value)),
               tuple(sorted((device, len(held), tuple(sorted(total(held).items())))
                            for device, held in self.sharing.items() if held)))
        if key in self.failed:
            return False
        done = self.search_from(r, in_sub, start)
        if not done:
            self.failed.add(key)
        return done

    def allocated_now(self) -> list[str]:
        return [device for device, claims in self.allocating.items() if claims]

    def search_from(self, r: tuple[int, int, int, int], in_sub: bool, start: int = 0
                    ) -> bool:
        """DRA-7: fill device ``r`` and everything after it.  ``start``: the position in the
        walk where the request's previous device was taken, plus one.  Upstream's stable
        variant walks from the first device for every device of a request, which tries each
        set of devices in every order; an order is tried only after its sorted one, which
        leads to the same rest of the search (what is in use and what the constraints hold
        depend on the set, and every selector was judged for the devices before it), so
        walking on from the previous device finds the same first answer, and the same
        errors, with fewer steps (the incubating and experimental variants do so from
        1.36).  Not at 1.33, where a failed All branch leaves its devices in use (DRA-4), so
        what is in use depends on the path and not only on the set: every order is walked."""
        self.steps += 1
        if self.steps > MAX_SEARCH_STEPS:
            raise LimitExceededError(f"the allocation search passed {MAX_SEARCH_STEPS} steps",
                                     where="claims")
        ci, ri, si, di = r
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.requests):
            try:
                return self.allocate_one((ci + 1, 0, 0, 0), False)
            except _MaxSize:
                return False
        data = self.data[(ci, ri, si)]
        if not in_sub and data.parent is not None:
            # DRA-4: a firstAvailable request: its subrequests in order, the first that
            # completes the search wins.
            all_exceeded = True
            for index in range(len(claim.requests[ri].subrequests)):
                try:
                    done = self.allocate_one((ci, ri, index, di), True)
                except _MaxSize:
                    continue
                all_exceeded = False
                if done:
                    self.data[(ci, ri, 0)].selected = index
                    return True
            if all_exceeded:
                raise _MaxSize
            return False
        if data.all_devices is not None and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self.allocate_one((ci, ri + 1, 0, 0), False)
        if data.num_devices - di > MAX_DEVICES_PER_CLAIM - len(self.results[ci]):
            # DRA-5: until 1.35 this branch of the search just fails; from 1.36 the search
            # backtracks past the requests before it (to a firstAvailable that needs fewer)
            if self.minor <= 35:
                return False
            raise _MaxSize
        if data.all_devices is not None:
            candidate = data.all_devices[di]
            before = self.take(r, candidate, True)
            if before is None:
                return False
            # DRA-4: until 1.35 the next device of an All subrequest is looked up as the
            # first subrequest's; at 1.33 a failed All branch keeps what it took
            nxt = si if self.minor >= 36 else 0
            try:
                done = self.allocate_one((ci, ri, nxt, di + 1), in_sub)
            except BaseException:
                if self.minor >= 34:
                    self.give_back(r, candidate, before)
                raise
            if not done and self.minor >= 34:
                self.give_back(r, candidate, before)
            return done
        position = -1
        for pool in self.pools:
            candidates = _candidates(pool)
            if position + len(candidates) < start:
                position += len(candidates)
                continue
            if self.minor <= 34 and pool.invalid:
                # DRA-2: until 1.34 reaching an invalid pool stops the allocation
                raise _Fatal(f"pool {pool.name} is invalid: duplicate device name "
                             f"{duplicate_name(pool.slices)}")
            if pool.invalid or (pool.incomplete and self.minor >= 35):
                position += len(candidates)
                continue
            for candidate in candidates:
                position += 1
                if position < start or self.blocked(candidate.id, ci, data.request):
                    continue
                if not self.selectable((ci, ri, si), data, candidate):
                    continue
                checked = None
                if self.features.consumable:
                    # DRA-20: capacity after the selectors, before the rest of the checks
                    checked = self.room(data.request, candidate)
                    if checked is None:
                        continue
                before = self.take(r, candidate, False, checked)
                if before is None:
                    continue
                try:
                    done = self.allocate_one((ci, ri, si, di + 1), in_sub,
                                             position + 1 if self.minor >= 34 else 0)
                except BaseException:
                    self.give_back(r, candidate, before)
                    raise
                if done:
                    return True
                self.give_back(r, candidate, before)
        return False


def _candidates(pool: Pool) -> list[_Candidate]:
    return [_Candidate(pool, s.driver, d) for s in pool.slices for d in s.devices]


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """DRA-16: upstream's ``ToleratesTaint``: the effect and the key match where the
    toleration names them, and the value under ``Equal`` (any under ``Exists``)."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    return toleration.operator == "Exists" or toleration.value == taint.value


def untolerated_taint(device: Device, request: Request, *, minor: int) -> Taint | None:
    """DRA-16: the first taint of the device that counts and that no toleration of the
    request tolerates: every taint at 1.33 and 1.34, else only NoSchedule and NoExecute ones.
    Every variant that can look at taints agrees at each release (1.35's stable variant,
    which still counts every taint, supports no DeviceTaints), so the variant is not asked."""
    every = minor <= 34
    for taint in device.taints:
        if (every or taint.effect in ("NoSchedule", "NoExecute")) and not any(
                tolerates(t, taint) for t in request.tolerations):
            return taint
    return None


def allocate(claims: Sequence[Claim], pools: Sequence[Pool],
             classes: Mapping[str, DeviceClass], allocated: frozenset[str], *,
             features: Features, minor: int, variant: str = "stable",
             shares: Sequence[Share] = ()) -> Allocation:
    """DRA-5 to DRA-9, DRA-16 to DRA-21: the release's allocator's answer for one node, its
    pools searched in the order given (which, but for the words of one error from 1.38
    (DRA-18) and the features a variant has, is all the variant changes, DRA-8);
    ``shares``: the allocated shares (DRA-20), which without ConsumableCapacity are devices
    allocated like any other, as the scheduler gathers them."""
    held: dict[str, list[Consumed]] = {}
    if features.consumable:
        for device_id, consumed in shares:
            driver = device_id.partition("/")[0]
            entry = held.setdefault(device_id, [])
            if consumed is not None:
                entry.append(keyed(consumed.items(), driver, minor))
    else:
        allocated = allocated | {device_id for device_id, _ in shares}
    search = _Search(claims, pools, classes, allocated, features, minor, variant,
                     shares={d: c for d, c in held.items() if c}, shared=frozenset(held))
    try:
        search.validate()
        # DRA-3: what the requests' checks found selectable is forgotten before the search
        # (only All's lists are kept)
        search.selectable_cache.clear()
        done = search.allocate_one((0, 0, 0, 0), False)
    except _Fatal as exc:
        return Allocation("error", message=str(exc))
    except _NodeFailure as exc:
        return Allocation("unschedulable", message=str(exc))
    except _MaxSize:
        # DRA-5: the first claim's requests cannot fit in a result, whichever subrequest.
        return Allocation("error", message="allocation max size exceeded")
    if not done:
        if minor >= 35 and any(pool.invalid for pool in pools):
            return Allocation("unschedulable", message="invalid resource pools were "
                                                       "encountered")
        return Allocation("unschedulable")
    return Allocation("allocated", tuple(tuple(r) for r in search.results))

