"""NUMA-level inter-pod affinity (spec chapter affinity.md, AFF-*, SCHED-*) through the Python
API: seed 003's parameter-server/worker example, one test per divergence from Katalyst PR #347
(the D numbers of the chapter's "Divergences" table), its worked examples W1-W5, bad
annotations, and a node without the extension.

Every node here is "layout L" (the chapter's "Worked examples"), the PR's test machine: 2
sockets, 4 NUMA nodes with 4 CPUs each (one thread per core), socket 0 = NUMA {0, 1}, socket 1 =
NUMA {2, 3}; static CPU policy with 500m kube-reserved (CPU 0 is reserved, so NUMA 0 has 3 free
CPUs); single-numa-node unless a test says otherwise; label keys kept for affinity: role, app,
job.  Pods are Guaranteed with one
container.  The same cases, as protocol sessions, are in spec/vectors/node/affinity-*.json.
"""

from __future__ import annotations

import json

import pytest

from numaspec.errors import InvalidAffinityError, MalformedJSONError, NumaspecError
from numaspec.node.admission import Decision, Node
from numaspec.node.affinity import (
    AFFINITY_ANNOTATION,
    ANTI_AFFINITY_ANNOTATION,
    MEMORY_ENHANCEMENT_ANNOTATION,
    AffinityTerms,
    Placed,
    Selector,
    Zone,
    admissible_region,
    parse_affinity,
)
from numaspec.node.machine import Core, Machine, NumaNode
from numaspec.node.nodeconfig import NodeConfig
from numaspec.node.pods import Container, Pod
from numaspec.node.scheduling import NodeScheduler
from numaspec.topology.versions import parse_version

GI = 1 << 30
KEPT = frozenset({"role", "app", "job"})
TM_ERROR = "TopologyAffinityError"
AFF_ERROR = "NUMAInterPodAffinityError"
ALL_NUMA = (0, 1, 2, 3)
SOCKET_PEERS = {0: frozenset({0, 1}), 1: frozenset({0, 1}),
                2: frozenset({2, 3}), 3: frozenset({2, 3})}

PS = {"role": "ps"}
WORKER = {"role": "worker"}
CACHE = {"app": "cache"}

Mask = tuple[int, ...]


# --- helpers ----------------------------------------------------------------------------------


def layout_l() -> Machine:
    return Machine(tuple(
        NumaNode(n, 16 * GI, cores=tuple(Core(n // 2, (cpu,)) for cpu in range(4 * n, 4 * n + 4)))
        for n in ALL_NUMA))


def make_node(policy: str = "single-numa-node",
              kept: frozenset[str] | None = KEPT) -> Node:
    return Node(layout_l(), NodeConfig(parse_version("1.30"), cpu_manager_policy="static",
                                       kube_reserved={"cpu": "500m"},
                                       topology_manager_policy=policy,
                                       inter_pod_affinity_labels=kept))


def sel(labels: dict[str, str], zone: str | None = None) -> dict[str, object]:
    selector: dict[str, object] = {"matchLabels": labels}
    if zone is not None:
        selector["zone"] = zone
    return selector


def required(*selectors: dict[str, object]) -> str:
    return json.dumps({"required": list(selectors)})


def make_pod(uid: str, cpu: int | str = 2, *, labels: dict[str, str] | None = None,
             affinity: str | None = None, anti: str | None = None,
             exclusive: bool = False, annotations: dict[str, str] | None = None) -> Pod:
    """A Guaranteed pod with one container ``main``; ``affinity``/``anti`` are annotation
    values (see :func:`required`)."""
    notes: dict[str, str] = dict(annotations or {})
    if affinity is not None:
        notes[AFFINITY_ANNOTATION] = affinity
    if anti is not None:
        notes[ANTI_AFFINITY_ANNOTATION] = anti
    if exclusive:
        notes[MEMORY_ENHANCEMENT_ANNOTATION] = json.dumps(
            {"numa_binding": "true", "numa_exclusive": "true"})
    return Pod(uid, (Container.of("main", limits={"cpu": str(cpu), "memory": "1Gi"}),),
               labels=labels or {}, annotations=notes)


def ps(uid: str, cpu: int = 2, anti: str | None = None) -> Pod:
    return make_pod(uid, cpu, labels=PS, anti=anti)


def worker(uid: str, cpu: int = 2, zone: str | None = None) -> Pod:
    """A worker, anti-affine to parameter servers (zone numa unless given)."""
    return make_pod(uid, cpu, labels=WORKER, anti=required(sel(PS, zone)))


def placed_on(decision: Decision) -> Mask:
    """The NUMA nodes of an admitted one-container pod's hint."""
    assert decision.admitted, (decision.reason, decision.message)
    hint = decision.containers[0].hint
    assert hint.numa_affinity is not None
    return hint.numa_affinity.nodes


def admit_on(node: Node, pod: Pod) -> Mask:
    return placed_on(node.admit(pod))


def cpu_hints(node: Node, pod: Pod) -> set[tuple[Mask, bool]]:
    """The pod's CPU hints after the filter (AFF-8), as (NUMA nodes, preferred)."""
    listed = node.provider_hints(pod)["cpu"]
    assert listed is not None
    return {(h.numa_affinity.nodes if h.numa_affinity is not None else ALL_NUMA, h.preferred)
            for h in listed}


def masks(nodes: Mask, free: dict[int, int], request: int) -> set[tuple[Mask, bool]]:
    """What kubelet's CPU Manager offers on layout L for ``request`` <= 4 CPUs, cut to the NUMA
    nodes ``nodes``: every mask whose free CPUs suffice, the one-node masks preferred."""
    found: set[tuple[Mask, bool]] = set()
    for bits in range(1, 16):
        mask = tuple(n for n in ALL_NUMA if bits >> n & 1)
        if set(mask) <= set(nodes) and sum(free[n] for n in mask) >= request:
            found.add((mask, len(mask) == 1))
    return found


def snapshot(node: Node) -> str:
    return json.dumps(node.state(), sort_keys=True)


def region_of(node: Node, pod: Pod) -> frozenset[int]:
    region = node.region(pod)
    assert region is not None
    return region.allowed


# --- seed 003's example -----------------------------------------------------------------------


def test_ps_worker_example() -> None:
    """Seed 003 section 1, worked example W1 (AFF-4, AFF-7, AFF-8, SCHED-1): workers that
    must not share a NUMA node with a parameter server end up on NUMA 2 and 3, and the fifth
    worker fits nowhere, on the node and in the scheduler."""
    node = make_node()
    scheduler = NodeScheduler(node)
    assert admit_on(node, ps("ps-0")) == (0,)
    assert admit_on(node, ps("ps-1")) == (1,)

    # Only masks without a parameter server survive, unchanged.
    assert cpu_hints(node, worker("w-0")) == {((2,), True), ((3,), True), ((2, 3), False)}
    assert [admit_on(node, worker(f"w-{i}")) for i in range(4)] == [(2,), (2,), (3,), (3,)]

    fifth = worker("w-4")
    assert cpu_hints(node, fifth) == set()
    verdict = scheduler.check(fifth)
    assert (verdict.passes, verdict.reason) == (False, TM_ERROR)
    decision = node.admit(fifth)
    assert (decision.admitted, decision.reason) == (False, TM_ERROR)

    # Without the anti-affinity the fifth worker would fit on NUMA 1.
    assert admit_on(node, make_pod("plain", labels=WORKER)) == (1,)


def test_existing_anti_affinity_keeps_ps_off() -> None:
    """Worked example W2, AFF-7 part 1: the workers' anti-affinity, not the new pod's, keeps
    a parameter server off their NUMA nodes."""
    node = make_node()
    assert admit_on(node, worker("w-0")) == (0,)
    assert admit_on(node, worker("w-1")) == (1,)
    assert region_of(node, ps("ps-0")) == {2, 3}
    assert admit_on(node, ps("ps-0")) == (2,)


# --- divergences from PR #347 -----------------------------------------------------------------


def test_d1_selector_keys_are_anded() -> None:
    """D1 (AFF-4, AFF-7): the keys of one matchLabels are ANDed.  A pod labelled only app=a
    satisfies neither an affinity nor an anti-affinity on {app: a, role: ps}: the affinity pod
    is rejected (the PR admits it on NUMA 0), the anti-affinity forbids nothing (the PR forbids
    NUMA 0)."""
    both = {"app": "a", "role": "ps"}
    assert not Selector(both).matches({"app": "a"})
    assert Selector(both).matches({"app": "a", "role": "ps", "job": "j"})

    node = make_node()
    assert admit_on(node, make_pod("e", 1, labels={"app": "a"})) == (0,)
    affine = make_pod("p", 2, affinity=required(sel(both)))
    assert region_of(node, affine) == frozenset()
    assert not NodeScheduler(node).check(affine).passes
    assert node.admit(affine).reason == TM_ERROR

    anti = make_pod("q", 2, anti=required(sel(both)))
    assert region_of(node, anti) == set(ALL_NUMA)
    assert cpu_hints(node, anti) == masks(ALL_NUMA, {0: 2, 1: 4, 2: 4, 3: 4}, 2)
    assert admit_on(node, anti) == (0,)


def test_d1b_every_required_selector_must_hold() -> None:
    """D1b (AFF-4, AFF-7): several required selectors are an AND.  With only a role=ps pod on
    NUMA 0, affinity [{role: ps}, {job: j1}] allows nothing (the PR allows NUMA 0); once a
    job=j1 pod joins it there, each selector holds on its own and NUMA 0 is allowed."""
    node = make_node()
    pod = make_pod("p", 1, affinity=required(sel(PS), sel({"job": "j1"})))
    assert admit_on(node, make_pod("e-1", 1, labels=PS)) == (0,)
    assert region_of(node, pod) == frozenset()
    assert node.admit(pod).reason == TM_ERROR
    assert admit_on(node, make_pod("e-2", 1, labels={"job": "j1"})) == (0,)
    assert region_of(node, pod) == {0}
    assert admit_on(node, pod) == (0,)


def test_d1c_labels_are_never_pooled() -> None:
    """D1c (AFF-4): NUMA 0 holds E1 {app: a} and E2 {role: ps}; the selector {app: a, role: ps}
    matches neither pod, although the union of their labels (what the PR keeps per NUMA node)
    would match."""
    both = {"app": "a", "role": "ps"}
    node = make_node()
    assert admit_on(node, make_pod("e-1", 1, labels={"app": "a"})) == (0,)
    assert admit_on(node, make_pod("e-2", 1, labels=PS)) == (0,)
    assert region_of(node, make_pod("p", 1, affinity=required(sel(both)))) == frozenset()
    assert region_of(node, make_pod("q", 1, anti=required(sel(both)))) == set(ALL_NUMA)
    # Two selectors, each met by a different pod, is fine.
    split = make_pod("r", 1, affinity=required(sel({"app": "a"}), sel(PS)))
    assert region_of(node, split) == {0}


def test_d2_preferred_alone_is_accepted_and_ignored() -> None:
    """D2 (AFF-1, AFF-2): an annotation with only ``preferred`` (the PR indexes Required[0]
    and panics) parses to no required selector and changes no hint."""
    value = json.dumps({"preferred": [sel(PS)]})
    terms = parse_affinity({}, {AFFINITY_ANNOTATION: value, ANTI_AFFINITY_ANNOTATION: value},
                           KEPT)
    assert (terms.affinity, terms.anti_affinity) == ((), ())

    node = make_node()
    assert admit_on(node, ps("ps-0")) == (0,)
    preferring = make_pod("p", 2, labels=WORKER, affinity=value, anti=value)
    assert cpu_hints(node, preferring) == cpu_hints(node, make_pod("plain", 2))
    assert admit_on(node, preferring) == (1,)


def test_d2_preferred_does_not_rewrite_a_required_zone() -> None:
    """D2 (AFF-2, AFF-7): a preferred selector without a zone leaves a required socket zone
    alone (the PR writes its default into Required[0] and the worker would land on NUMA 1)."""
    value = json.dumps({"required": [sel(PS, "socket")], "preferred": [sel({"app": "x"})]})
    terms = parse_affinity(WORKER, {ANTI_AFFINITY_ANNOTATION: value}, KEPT)
    assert terms.anti_affinity == (Selector(PS, Zone.SOCKET),)

    node = make_node()
    assert admit_on(node, ps("ps-0")) == (0,)
    w = make_pod("w", 2, labels=WORKER, anti=value)
    assert region_of(node, w) == {2, 3}
    assert admit_on(node, w) == (2,)


@pytest.mark.parametrize("exclusive_first", [True, False])
def test_d3_a_numa_node_with_any_exclusive_pod_is_out(exclusive_first: bool) -> None:
    """D3 (AFF-6, AFF-7 part 3): exclusivity is "some pod on the NUMA node is exclusive",
    whatever the order the pods are listed in (the PR keeps the last pod's flag, in Go's map
    order)."""
    exclusive = Placed("x", AffinityTerms(exclusive=True), frozenset({0}))
    shared = Placed("y", AffinityTerms(), frozenset({0}))
    others = [exclusive, shared] if exclusive_first else [shared, exclusive]
    region = admissible_region(AffinityTerms(labels={"app": "p"}), others, ALL_NUMA,
                               SOCKET_PEERS)
    assert region.allowed == {1, 2, 3}
    assert 0 in region.excluded
    # A pod without labels or annotations is kept off it as well.
    assert admissible_region(AffinityTerms(), others, ALL_NUMA, SOCKET_PEERS).allowed == {1, 2, 3}


def test_d4_scheduler_counts_resource_fit() -> None:
    """D4 (SCHED-1): NUMA 0 holds a worker and has one free CPU, NUMA 1-3 each hold a PS pod.
    The PR's Filter passes the node for a 2-CPU worker through NUMA 0; numaspec's check is the
    node's own admission, so it fails the node, and the node rejects the pod."""
    node = make_node()
    spread = required(sel(PS))  # one parameter server per NUMA node
    assert admit_on(node, make_pod("w-0", 2, labels=WORKER)) == (0,)
    assert [admit_on(node, ps(f"ps-{i}", anti=spread)) for i in (1, 2, 3)] == [(1,), (2,), (3,)]

    pod = worker("p")
    assert region_of(node, pod) == {0}
    verdict = NodeScheduler(node).check(pod)
    assert (verdict.passes, verdict.reason) == (False, TM_ERROR)
    assert node.admit(pod).reason == TM_ERROR
    # A worker that fits in NUMA 0's last CPU passes.
    assert NodeScheduler(node).check(worker("p-small", 1)).passes


def test_d5_empty_required_is_no_annotation() -> None:
    """D5 (AFF-1, SCHED-1): ``"required": []`` is the same as no annotation, on the node and in
    the scheduler (the PR's scheduler fails every NUMA node for an empty affinity list)."""
    empty = json.dumps({"required": []})
    assert parse_affinity(PS, {AFFINITY_ANNOTATION: empty, ANTI_AFFINITY_ANNOTATION: empty},
                          KEPT) == parse_affinity(PS, {}, KEPT)
    node = make_node()
    assert admit_on(node, ps("ps-0")) == (0,)
    pod = make_pod("p", 2, labels=PS, affinity=empty, anti=empty)
    assert cpu_hints(node, pod) == cpu_hints(node, make_pod("plain", 2, labels=PS))
    assert NodeScheduler(node).check(pod).passes
    assert admit_on(node, pod) == (1,)


def test_d6_selector_on_a_key_not_kept_is_an_error() -> None:
    """D6 (AFF-3, SCHED-1): a selector on a label key outside interPodAffinityLabels is
    invalid-affinity on admit and on the scheduler's check (the PR's scheduler passes it, its
    agent silently never matches it), and changes nothing."""
    node = make_node()
    scheduler = NodeScheduler(node)
    assert admit_on(node, make_pod("ps-0", 2, labels={"role": "ps", "tier": "hot"})) == (0,)
    before = snapshot(node)
    pod = make_pod("p", 2, affinity=required(sel({"tier": "hot"})))
    where = f"pod.annotations[{AFFINITY_ANNOTATION}].required[0].matchLabels.tier"
    with pytest.raises(InvalidAffinityError) as on_node:
        node.admit(pod)
    assert on_node.value.where == where
    with pytest.raises(InvalidAffinityError) as in_scheduler:
        scheduler.check(pod)
    assert in_scheduler.value.where == where
    assert snapshot(node) == before
    # Labels with keys not kept are fine on pods: they are cut off (AFF-3).
    assert parse_affinity({"role": "ps", "tier": "hot"}, {}, KEPT).labels == PS


def test_d7_exclusive_pod_obeys_socket_anti_affinity() -> None:
    """D7 (AFF-6, AFF-7): a new NUMA-exclusive pod still obeys socket-zone anti-affinity (the
    PR skips its filter for exclusive pods without affinity): with a PS pod on NUMA 0, the
    exclusive pod anti-affine to role=ps by socket may use only NUMA 2 and 3."""
    node = make_node()
    assert admit_on(node, ps("x")) == (0,)
    pod = make_pod("e", 2, exclusive=True, anti=required(sel(PS, "socket")))
    assert region_of(node, pod) == {2, 3}
    assert admit_on(node, pod) == (2,)
    # The other direction: a placed pod's socket anti-affinity selects an exclusive new pod.
    assert admit_on(node, make_pod("y", 1, labels={"app": "y"},
                                   anti=required(sel({"app": "db"}, "socket")))) == (0,)
    db = make_pod("d", 2, labels={"app": "db"}, exclusive=True)
    assert region_of(node, db) == {3}  # 0, 1: y's socket; 2: e is exclusive
    assert admit_on(node, db) == (3,)


def test_d8_regenerated_hints_are_not_filtered_against_the_pod_itself() -> None:
    """D8 (AFF-5, AFF-8): a live pod's regenerated hints are judged against the other pods
    only, so self anti-affinity ("one replica per NUMA node") keeps the pod's own hint (the
    PR filters it against a state that includes the pod)."""
    def replica(uid: str) -> Pod:
        return make_pod(uid, 2, labels={"app": "x"}, anti=required(sel({"app": "x"})))

    node = make_node()
    assert admit_on(node, replica("r-0")) == (0,)
    assert ((0,), True) in cpu_hints(node, replica("r-0"))
    assert admit_on(node, replica("r-1")) == (1,)
    assert cpu_hints(node, replica("r-0")) == {((0,), True), ((0, 2), False), ((0, 3), False),
                                               ((0, 2, 3), False)}
    assert region_of(node, replica("r-2")) == {2, 3}


def test_d10_a_rejected_reserved_pod_stops_counting() -> None:
    """D10 (SCHED-3, SCHED-4): the node's rejection ends a reservation.  In the PR the entry
    of a pod the node rejected is never dropped and keeps blocking NUMA nodes."""
    node = make_node()
    assert admit_on(node, make_pod("cache-0", 1, labels=CACHE)) == (0,)
    pod = make_pod("p", 2, labels=WORKER, affinity=required(sel(CACHE)),
                   anti=required(sel(PS)))
    scheduler, leaky = NodeScheduler(node), NodeScheduler(node)
    for s in (scheduler, leaky):
        assert s.check(pod).passes
        s.reserve(pod)
    assert admit_on(node, make_pod("q", 2)) == (0,)  # placed without this scheduler
    assert node.admit(pod).reason == TM_ERROR
    scheduler.settle(pod.uid)
    assert list(scheduler.reserved) == []

    # q goes away: the reservation that never ended would place p on NUMA 0 again, and its
    # anti-affinity would shut a parameter server that needs the cache out of NUMA 0.
    node.remove("q")
    ps_near_cache = make_pod("ps-0", 1, labels=PS, affinity=required(sel(CACHE)))
    assert scheduler.check(ps_near_cache).passes
    assert not leaky.check(ps_near_cache).passes


def test_d11_reserved_pods_are_placed_on_the_view() -> None:
    """D11 (SCHED-2, SCHED-3): reserved pods are admitted on the scheduler's view in
    reservation order, each on the NUMA node the node's admission gives it; a reserved
    anti-affine pod blocks that NUMA node only (the PR puts it on every NUMA node)."""
    node = make_node()
    scheduler = NodeScheduler(node)
    assert admit_on(node, make_pod("f-0", 3)) == (0,)
    assert admit_on(node, make_pod("f-1", 4)) == (1,)
    scheduler.reserve(worker("w-0"))
    scheduler.reserve(worker("w-1"))
    assert scheduler.check(ps("ps-0")).passes  # w-0, w-1 fill NUMA 2; NUMA 3 is free
    scheduler.reserve(worker("w-2"))
    verdict = scheduler.check(ps("ps-0"))
    assert (verdict.passes, verdict.reason) == (False, TM_ERROR)
    scheduler.unreserve("w-1")
    assert scheduler.check(ps("ps-0")).passes
    assert list(scheduler.reserved) == ["w-0", "w-2"]
    assert node.state()["pods"] == ["f-0", "f-1"]  # the checks change nothing

    # A reserved pod counts for affinity only where it is placed.
    fresh = NodeScheduler(make_node())
    fresh.reserve(make_pod("cache-0", 1, labels=CACHE))
    assert not fresh.check(make_pod("p", 3, affinity=required(sel(CACHE)))).passes
    assert fresh.check(make_pod("p-2", 2, affinity=required(sel(CACHE)))).passes


@pytest.mark.parametrize(("value", "error"), [
    ('{"numa_binding": "true", "numa_exclusive": true}', InvalidAffinityError),
    ('{"numa_exclusive": "True"}', InvalidAffinityError),
    ("numa_exclusive=true", MalformedJSONError),
], ids=["json-boolean", "capitalised", "not-json"])
def test_d12_exclusivity_is_never_lost_silently(value: str, error: type[NumaspecError]) -> None:
    """D12 (AFF-6): Katalyst drops a memory_enhancement value it cannot decode into strings and
    makes a pod exclusive only for the exact string "true", so these pods would land beside
    ps-0 as plain pods.  numaspec refuses them and changes nothing; spelled right, the pod is
    exclusive and avoids ps-0's NUMA node."""
    node = make_node()
    scheduler = NodeScheduler(node)
    assert admit_on(node, ps("ps-0")) == (0,)
    before = snapshot(node)
    mistyped = make_pod("x", 1, annotations={MEMORY_ENHANCEMENT_ANNOTATION: value})
    for attempt in (node.admit, scheduler.check):
        with pytest.raises(error):
            attempt(mistyped)
    assert snapshot(node) == before
    assert admit_on(node, make_pod("x", 1, exclusive=True)) == (1,)


# --- the region's other parts -----------------------------------------------------------------


def test_socket_zone_and_numa_zone() -> None:
    """Worked example W3 (AFF-2, AFF-5): zone socket covers both NUMA nodes of a socket,
    zone numa (also "" and a missing zone) one."""
    node = make_node()
    assert admit_on(node, ps("ps-0")) == (0,)
    assert region_of(node, worker("a", zone="socket")) == {2, 3}
    for zone in ("numa", "", None):
        assert region_of(node, worker("b", zone=zone)) == {1, 2, 3}


def test_required_affinity_numa_and_socket_zone() -> None:
    """Worked example W4 (AFF-7 part 4, Q9): affinity allows the matching pod's zone; with no
    matching pod nothing is allowed."""
    node = make_node()
    assert admit_on(node, make_pod("cache-0", 1, labels=CACHE)) == (0,)
    assert region_of(node, make_pod("a", affinity=required(sel(CACHE)))) == {0}
    assert region_of(node, make_pod("b", affinity=required(sel(CACHE, "socket")))) == {0, 1}
    assert region_of(node, make_pod("c", affinity=required(sel({"app": "db"})))) == frozenset()


def test_exclusive_pods() -> None:
    """Worked example W5 (AFF-6): an exclusive pod keeps every pod off its NUMA node, and a
    new exclusive pod takes only NUMA nodes no pod holds."""
    node = make_node()
    assert admit_on(node, make_pod("p-0", 1)) == (0,)
    assert region_of(node, make_pod("x", 2, exclusive=True)) == {1, 2, 3}
    assert admit_on(node, make_pod("x", 2, exclusive=True)) == (1,)
    assert region_of(node, make_pod("p-1", 1)) == {0, 2, 3}


@pytest.mark.parametrize("policy", ["best-effort", "none"])
def test_placement_outside_the_region_is_rejected(policy: str) -> None:
    """AFF-9: under best-effort and none a pod whose region lacks room is rejected with
    NUMAInterPodAffinityError rather than spilling onto other NUMA nodes."""
    node = make_node(policy)
    node.admit(make_pod("cache-0", 2, labels=CACHE))
    before = snapshot(node)
    decision = node.admit(make_pod("p", 2, affinity=required(sel(CACHE))))
    assert (decision.admitted, decision.reason, decision.containers) == (False, AFF_ERROR, ())
    assert snapshot(node) == before
    assert node.admit(make_pod("p-1", 1, affinity=required(sel(CACHE)))).admitted


# --- bad input --------------------------------------------------------------------------------

_AFF = f"pod.annotations[{AFFINITY_ANNOTATION}]"
_ANTI = f"pod.annotations[{ANTI_AFFINITY_ANNOTATION}]"
_MEM = f"pod.annotations[{MEMORY_ENHANCEMENT_ANNOTATION}]"

BAD_ANNOTATIONS: list[tuple[str, dict[str, str], type[NumaspecError], str]] = [
    ("not-json", {ANTI_AFFINITY_ANNOTATION: '{"required": ['}, MalformedJSONError, _ANTI),
    ("null", {AFFINITY_ANNOTATION: "null"}, InvalidAffinityError, _AFF),
    ("array", {ANTI_AFFINITY_ANNOTATION: "[]"}, InvalidAffinityError, _ANTI),
    ("required-not-a-list", {ANTI_AFFINITY_ANNOTATION: json.dumps({"required": sel(PS)})},
     InvalidAffinityError, f"{_ANTI}.required"),
    ("unknown-zone", {AFFINITY_ANNOTATION: required(sel(PS, "rack"))}, InvalidAffinityError,
     f"{_AFF}.required[0].zone"),
    ("unknown-zone-in-preferred",
     {ANTI_AFFINITY_ANNOTATION: json.dumps({"preferred": [sel(PS, "NUMA")]})},
     InvalidAffinityError, f"{_ANTI}.preferred[0].zone"),
    ("empty-match-labels", {AFFINITY_ANNOTATION: required(sel({}))}, InvalidAffinityError,
     f"{_AFF}.required[0].matchLabels"),
    ("missing-match-labels", {ANTI_AFFINITY_ANNOTATION: required({"zone": "numa"})},
     InvalidAffinityError, f"{_ANTI}.required[0].matchLabels"),
    ("unknown-selector-field",
     {ANTI_AFFINITY_ANNOTATION: required({"matchLabels": PS, "topologyKey": "numa"})},
     InvalidAffinityError, f"{_ANTI}.required[0]"),
    ("case-matters", {ANTI_AFFINITY_ANNOTATION: json.dumps({"Required": [sel(PS)]})},
     InvalidAffinityError, _ANTI),
    ("key-not-kept", {ANTI_AFFINITY_ANNOTATION: required(sel(PS), sel({"tier": "hot"}))},
     InvalidAffinityError, f"{_ANTI}.required[1].matchLabels.tier"),
    ("exclusive-not-json", {MEMORY_ENHANCEMENT_ANNOTATION: "numa_exclusive=true"},
     MalformedJSONError, _MEM),
    ("exclusive-not-a-string",
     {MEMORY_ENHANCEMENT_ANNOTATION: json.dumps({"numa_exclusive": True})},
     InvalidAffinityError, f"{_MEM}.numa_exclusive"),
    ("exclusive-yes", {MEMORY_ENHANCEMENT_ANNOTATION: json.dumps({"numa_exclusive": "yes"})},
     InvalidAffinityError, f"{_MEM}.numa_exclusive"),
    ("exclusive-with-affinity",
     {MEMORY_ENHANCEMENT_ANNOTATION: json.dumps({"numa_exclusive": "true"}),
      AFFINITY_ANNOTATION: required(sel(CACHE))},
     InvalidAffinityError, f"{_AFF}.required"),
]


@pytest.mark.parametrize(("annotations", "error", "where"),
                         [case[1:] for case in BAD_ANNOTATIONS],
                         ids=[case[0] for case in BAD_ANNOTATIONS])
def test_bad_annotations(annotations: dict[str, str], error: type[NumaspecError],
                         where: str) -> None:
    """AFF-1, AFF-2, AFF-3, AFF-6, AWIRE-3: a bad annotation is an error naming the annotation
    and field, on admit, hints, the check and reserve; the node and the reservations stay as
    they were."""
    node = make_node()
    scheduler = NodeScheduler(node)
    assert admit_on(node, make_pod("cache-0", 2, labels=CACHE)) == (0,)
    before = snapshot(node)
    pod = make_pod("bad", 2, labels=WORKER, annotations=annotations)

    with pytest.raises(error) as parsed:
        parse_affinity(pod.labels, pod.annotations, KEPT)
    assert parsed.value.where == where
    for attempt in (node.admit, node.provider_hints, scheduler.check, scheduler.reserve):
        with pytest.raises(error) as raised:
            attempt(pod)
        assert type(raised.value) is error
        assert raised.value.where == where
    assert snapshot(node) == before
    assert scheduler.reserved == {}


def test_an_empty_annotation_value_is_no_annotation() -> None:
    """AFF-1, AFF-6: an empty value of any of the three annotations is the same as none (the
    PR parses only non-empty values): no relation, no exclusivity, no error."""
    empty = {AFFINITY_ANNOTATION: "", ANTI_AFFINITY_ANNOTATION: "",
             MEMORY_ENHANCEMENT_ANNOTATION: ""}
    assert parse_affinity(WORKER, empty, KEPT) == AffinityTerms(WORKER)
    node = make_node()
    assert admit_on(node, ps("ps-0")) == (0,)
    pod = make_pod("p", 1, labels=WORKER, annotations=empty)
    assert region_of(node, pod) == set(ALL_NUMA)
    assert NodeScheduler(node).check(pod).passes
    assert admit_on(node, pod) == (0,)


def test_reservation_errors_change_nothing() -> None:
    """AWIRE-2, AWIRE-3, SCHED-3: reserving or checking a reserved pod, and unreserving a uid
    not reserved, are errors and leave the reservations alone."""
    node = make_node()
    scheduler = NodeScheduler(node)
    scheduler.reserve(worker("w-0"))
    with pytest.raises(NumaspecError):
        scheduler.check(worker("w-0"))
    with pytest.raises(NumaspecError):
        scheduler.reserve(worker("w-0"))
    with pytest.raises(NumaspecError) as unknown:
        scheduler.unreserve("nobody")
    assert unknown.value.kind == "unknown-pod"
    assert list(scheduler.reserved) == ["w-0"]


# --- without the extension --------------------------------------------------------------------


def test_annotations_have_no_effect_without_the_extension() -> None:
    """AWIRE-1: a node whose inter_pod_affinity_labels is None is kubelet alone: annotations,
    even malformed ones, change nothing, and there is no region."""
    node = make_node(kept=None)
    assert admit_on(node, make_pod("ps-0", 1, labels=PS)) == (0,)
    w = worker("w-0")
    assert node.region(w) is None
    assert cpu_hints(node, w) == masks(ALL_NUMA, {0: 2, 1: 4, 2: 4, 3: 4}, 2)
    assert admit_on(node, w) == (0,)  # next to the parameter server
    broken = make_pod("broken", 2, affinity="not json",
                      annotations={MEMORY_ENHANCEMENT_ANNOTATION: "[]"})
    assert admit_on(node, broken) == (1,)

    # The same pods on a node with the extension.
    with_extension = make_node()
    assert admit_on(with_extension, make_pod("ps-0", 1, labels=PS)) == (0,)
    assert admit_on(with_extension, worker("w-0")) == (1,)
    with pytest.raises(MalformedJSONError):
        with_extension.admit(broken)
