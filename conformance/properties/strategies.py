"""Hypothesis strategies for merge cases.

Public, so that people fuzzing merge semantics can reuse them.  The cases are kept small
(the merge walks a cross product), but reach every corner the rules talk about: hints
without an affinity, empty masks, bits of nodes that are not on the machine, non-contiguous
and unsorted node ids, every policy, options and distances, and the version boundaries.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache

import attrs
from hypothesis import strategies as st

from numaspec.protocols.merge_protocol import MergeRequest
from numaspec.topology.hints import ProviderHints, TopologyHint
from numaspec.topology.masks import NumaMask, iterate_masks
from numaspec.topology.options import option_maturity
from numaspec.topology.versions import SUPPORTED_VERSIONS, KubeletVersion

__all__ = [
    "BOUNDARY_MINORS",
    "MAX_PERMUTATIONS",
    "POLICIES",
    "Reach",
    "distances_for",
    "device_hint_list",
    "hints_for",
    "kubelet_hint_list",
    "large_merge_requests",
    "machines",
    "merge_requests",
    "merge_requests_with_faults",
    "provider_like_hints",
    "providers_for",
    "reaching",
    "scored",
    "unscored",
    "versions",
]

POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
#: Releases where a rule changes, drawn more often than the rest.
BOUNDARY_MINORS = (23, 24, 25, 26, 27, 28, 30, 31, 32, 34, 35, 36, 37, 38)
#: HINT-5: scores as kubelet 1.38's providers give them (0: no signal; 1: the floor), and any.
_SCORES = st.one_of(st.sampled_from([0, 0, 1, 1, 40, 81, 100]), st.integers(0, 100))


def versions(allowed: Sequence[KubeletVersion] = SUPPORTED_VERSIONS) -> st.SearchStrategy[
        KubeletVersion]:
    allowed = tuple(allowed)
    boundary = tuple(v for v in allowed if v.minor in BOUNDARY_MINORS) or allowed
    return st.one_of(st.sampled_from(boundary), st.sampled_from(allowed))


@st.composite
def machines(draw: st.DrawFn, min_nodes: int = 1, max_nodes: int = 8) -> tuple[int, ...]:
    """NUMA node ids in topology order: usually 0..n-1, sometimes sparse or unsorted."""
    small = draw(st.integers(min_nodes, min(max_nodes, 4)))
    n = small if draw(st.integers(0, 2)) else draw(st.integers(min_nodes, max_nodes))
    shape = draw(st.sampled_from(["contiguous", "contiguous", "sparse", "shuffled"]))
    if shape == "contiguous":
        return tuple(range(n))
    ids = draw(st.lists(st.integers(0, 15), min_size=n, max_size=n, unique=True))
    return tuple(ids if shape == "shuffled" else sorted(ids))


def _masks(nodes: Sequence[int]) -> st.SearchStrategy[NumaMask]:
    return _masks_of(tuple(nodes))


# Strategies built once per argument, not once per draw: Hypothesis validates each new
# strategy object on its first draw, which cost more than the drawing (the draws are the same).
@lru_cache(maxsize=1024)
def _masks_of(nodes: tuple[int, ...]) -> st.SearchStrategy[NumaMask]:
    on_machine = st.lists(st.sampled_from(list(nodes)), min_size=1, max_size=len(nodes),
                          unique=True).map(NumaMask.of)
    stray = st.lists(st.integers(0, 63), min_size=0, max_size=3).map(NumaMask.of)
    return st.one_of(on_machine, on_machine, on_machine, on_machine, stray)


def hints_for(nodes: Sequence[int], palette: Sequence[NumaMask] = ()
              ) -> st.SearchStrategy[TopologyHint]:
    """A hint: usually a mask from the case's ``palette`` (so that equal, nested and
    overlapping masks are common, which is where the rules differ), sometimes a fresh mask,
    no mask at all, an empty mask or one with bits of nodes not on the machine."""
    return _hints_for(tuple(nodes), tuple(palette))


@lru_cache(maxsize=4096)
def _hints_for(nodes: tuple[int, ...], palette: tuple[NumaMask, ...]
               ) -> st.SearchStrategy[TopologyHint]:
    fresh = _masks(nodes)
    mask = st.one_of(st.none(), st.sampled_from(list(palette)), st.sampled_from(list(palette)),
                     st.sampled_from(list(palette)), fresh) if palette else st.one_of(
        st.none(), fresh, fresh, fresh)
    return st.builds(TopologyHint, mask, st.sampled_from([True, True, False]))


@st.composite
def provider_like_hints(draw: st.DrawFn, nodes: Sequence[int], min_k: int = 1
                        ) -> tuple[TopologyHint, ...]:
    """Hints shaped as kubelet's providers make them: a resource that needs at least ``k``
    nodes offers every ``k``-node mask as preferred and some wider masks as not preferred
    (several preferred masks of one width is where tie-breaks and distances matter)."""
    usable = sorted(nodes)[:4]
    k = draw(st.integers(min(min_k, len(usable)), len(usable)))
    hints = [h for h in kubelet_hint_list(usable, k)
             if h.numa_affinity is not None and h.numa_affinity.count() <= k + 1]
    keep = draw(st.lists(st.sampled_from(range(len(hints))), min_size=1, max_size=6,
                         unique=True))
    return tuple(hints[i] for i in sorted(keep))


#: The most permutations a generated case makes: enough for every shape the rules care about,
#: few enough that each example costs milliseconds.
MAX_PERMUTATIONS = 256


@st.composite
def providers_for(draw: st.DrawFn, nodes: Sequence[int], max_lists: int = 5,
                  max_hints: int = 4) -> tuple[ProviderHints, ...]:
    """Up to 3 providers; each a null map, an empty map, or up to 3 resources mapped to null,
    to [] or to hints (from a shared palette, or shaped like a provider's); at most
    ``max_lists`` resource lists and ``MAX_PERMUTATIONS`` permutations in all."""
    palette = draw(st.lists(_masks(nodes), min_size=1, max_size=4))
    providers: list[ProviderHints] = []
    lists = 0
    product = 1
    for p in range(draw(st.sampled_from([2, 3, 1, 2, 3, 0]))):
        kind = draw(st.sampled_from(["map"] * 6 + ["null", "empty"]))
        if kind == "null":
            providers.append(None)
            continue
        if kind == "empty":
            providers.append({})
            continue
        resources: dict[str, tuple[TopologyHint, ...] | None] = {}
        for r in range(draw(st.sampled_from([1, 2, 1, 3]))):
            if lists >= max_lists:
                break
            lists += 1
            name = f"r{p}{r}"
            shape = draw(st.sampled_from(["palette"] * 6 + ["provider"] * 3 + ["null", "empty"]))
            if shape == "null":
                resources[name] = None
            elif shape == "empty":
                resources[name] = ()
            else:
                room = max(1, MAX_PERMUTATIONS // product)
                if shape == "provider":
                    hints = draw(provider_like_hints(nodes))[:room]
                else:
                    hints = tuple(draw(st.lists(hints_for(nodes, palette), min_size=1,
                                                max_size=min(max_hints, room))))
                product *= len(hints)
                resources[name] = hints
        providers.append(resources)
    return tuple(providers)


@st.composite
def distances_for(draw: st.DrawFn, nodes: Sequence[int], odd_self: bool | None = None
                  ) -> dict[int, tuple[int, ...]]:
    """A row per node, indexed by node id: usually 10 to itself (as sysfs reports) and 11..40
    elsewhere, often symmetric; sometimes odd self-distances, which the spec allows and which
    make single-node masks distinguishable by distance."""
    width = max(nodes) + 1
    symmetric = draw(st.booleans())
    if odd_self is None:
        odd_self = draw(st.integers(0, 3)) == 0
    table: dict[int, list[int]] = {n: [draw(st.integers(11, 40)) for _ in range(width)]
                                   for n in nodes}
    for n in nodes:
        table[n][n] = draw(st.integers(1, 40)) if odd_self else 10
        if symmetric:
            for m in nodes:
                if m < n:
                    table[n][m] = table[m][n]
    return {n: tuple(row) for n, row in table.items()}


@st.composite
def merge_requests(
    draw: st.DrawFn,
    allowed_versions: Sequence[KubeletVersion] = SUPPORTED_VERSIONS,
    policies: Sequence[str] = POLICIES,
    max_nodes: int = 8,
) -> MergeRequest:
    """A valid merge request: kubelet starts and merges (no start-up error)."""
    version = draw(versions(allowed_versions))
    nodes = draw(machines(max_nodes=max_nodes))
    policy = draw(st.sampled_from(list(policies)))
    options: dict[str, str] = {}
    distances = None
    if policy != "none" and version.minor >= 28 and draw(st.booleans()):
        # prefer-closest is beta (on by default) from 1.28 and GA from 1.32.
        options["prefer-closest-numa-nodes"] = draw(
            st.sampled_from(["true", "true", "false", "1", "T", "False"]))
    if policy != "none" and option_maturity("max-allowable-numa-nodes", version) is not None \
            and draw(st.integers(0, 3)) == 0:
        options["max-allowable-numa-nodes"] = str(draw(st.integers(8, 16)))
    if "prefer-closest-numa-nodes" in options or draw(st.integers(0, 4)) == 0:
        distances = draw(distances_for(nodes))
    providers = draw(providers_for(nodes))
    if version.has_hint_scores and draw(st.integers(0, 3)):
        providers = draw(scored(providers))
    return MergeRequest(
        numa_nodes=nodes,
        policy=policy,
        providers=providers,
        version=version,
        numa_distances=distances,
        policy_options=options,
    )


def unscored(providers: Sequence[ProviderHints]) -> tuple[ProviderHints, ...]:
    """The same providers without their hints' scores (HINT-5: a release before 1.38 has
    none)."""
    return tuple(None if provider is None else {
        name: None if hints is None else tuple(
            hint if not hint.score else attrs.evolve(hint, score=0) for hint in hints)
        for name, hints in provider.items()} for provider in providers)


@st.composite
def scored(draw: st.DrawFn, providers: Sequence[ProviderHints]) -> tuple[ProviderHints, ...]:
    """HINT-5 (1.38+): the same providers, each hint with a score drawn as providers give
    them."""
    return tuple(None if provider is None else {
        name: None if hints is None else tuple(
            attrs.evolve(hint, score=draw(_SCORES)) for hint in hints)
        for name, hints in provider.items()} for provider in providers)


@attrs.frozen
class Reach:
    """What the implementation being judged claims, as far as a strategy can use it to spend
    its draws inside the claims rather than on cases the property would set aside (PROTO-7):
    the kubelet releases it models and whether it claims ``max-allowable-numa-nodes`` (a
    merge of more than 8 NUMA nodes is a refusal without it)."""

    versions: tuple[KubeletVersion, ...] = SUPPORTED_VERSIONS
    many_nodes: bool = True


_REACH: ContextVar[Reach | None] = ContextVar("numaspec_reach", default=None)

#: The releases that have ``max-allowable-numa-nodes`` (OPT-5: from 1.31), where a machine
#: may have more than 8 NUMA nodes and both Topology Manager options can be set.
_MANY_NODE_RELEASES = tuple(v for v in SUPPORTED_VERSIONS
                            if option_maturity("max-allowable-numa-nodes", v) is not None)


@contextmanager
def reaching(reach: Reach) -> Iterator[None]:
    """Strategies drawn inside the block draw within ``reach`` (the runner sets it for the
    implementation a property judges; the default is everything the reference models)."""
    token = _REACH.set(reach)
    try:
        yield
    finally:
        _REACH.reset(token)


def kubelet_hint_list(nodes: Sequence[int], k: int) -> tuple[TopologyHint, ...]:
    """The list a kubelet provider states for a resource that fits on any ``k`` of ``nodes``
    and on anything wider: every mask of at least ``k`` nodes, preferred at exactly ``k``
    (HINT-1, as the CPU Manager's generator enumerates them)."""
    return _kubelet_hint_list(tuple(nodes), k)


# The big lists are rebuilt for every draw of P-MERGE-LARGE (thousands of masks, and many
# draws are set aside for an implementation that claims less): a pure function of small
# arguments, kept, so that drawing costs what the case costs and the draws stay the same.
@lru_cache(maxsize=256)
def _kubelet_hint_list(nodes: tuple[int, ...], k: int) -> tuple[TopologyHint, ...]:
    return tuple(TopologyHint(mask, mask.count() == k) for mask in iterate_masks(nodes)
                 if mask.count() >= k)


def device_hint_list(nodes: Sequence[int], holding: Sequence[int]) -> tuple[TopologyHint, ...]:
    """The list kubelet's Device Manager states for a resource whose free devices sit on
    ``holding``: every mask that holds them all, preferred when it is exactly ``holding``
    (DEV-1, HINT-1)."""
    return _device_hint_list(tuple(nodes), tuple(holding))


@lru_cache(maxsize=1024)
def _device_hint_list(nodes: tuple[int, ...], holding: tuple[int, ...]
                      ) -> tuple[TopologyHint, ...]:
    needed = NumaMask.of(holding)
    return tuple(TopologyHint(mask, mask == needed) for mask in iterate_masks(nodes)
                 if mask.bits & needed.bits == needed.bits)


@st.composite
def large_merge_requests(draw: st.DrawFn,
                         allowed_versions: Sequence[KubeletVersion] = SUPPORTED_VERSIONS,
                         ) -> MergeRequest:
    """Merges as large as kubelet's own providers make them on a big machine, where the
    small cases of :func:`merge_requests` never go (issue 33: the fast merge's other regimes,
    FAST-4, and its ranking of many candidates of one width, FAST-5, MERGE-12):

    * ``wide``: 8 NUMA nodes, a device resource stating every mask that holds its devices
      and a CPU or a second device resource stating every mask it fits (128-255 hints each,
      16-33 thousand permutations), best-effort or restricted;
    * ``many``: 12 NUMA nodes (``max-allowable-numa-nodes``, 1.31+), one resource stating
      every mask of 4-6 nodes and more (4,000 hints), one stating a few, prefer-closest on
      with distances that are not regular, a third of the time near or past where a double
      sums them exactly (half of those grouped by fours with a few units of noise, where
      the rounding of kubelet's sequential sum decides, and half of those beside a list
      that prefers one node and takes the machine): hundreds of candidates of one width to
      rank;
    * ``huge``: 24 NUMA nodes (1.31+), a few short lists, half the time beside two of 65-90
      masks: beyond FAST-6's 22 nodes, where the fold runs alone under its stated bounds.
    """
    shape = draw(st.sampled_from(["wide", "many", "many", "huge"]))
    # Within the judged implementation's reach: an implementation that claims neither the
    # option nor a release from 1.31 on gets the 8-node shape, not draws it must set aside.
    reach = _REACH.get() or Reach()
    allowed_versions = tuple(v for v in allowed_versions if v in reach.versions
                             ) or tuple(allowed_versions)
    later = tuple(v for v in allowed_versions if v in _MANY_NODE_RELEASES
                  ) if reach.many_nodes else ()
    if shape == "huge" and later:
        nodes = tuple(range(24))
        lists = draw(st.lists(st.lists(hints_for(nodes), min_size=1, max_size=3),
                              min_size=1, max_size=3))
        if draw(st.booleans()):
            # Two lists of 65-90 wide masks (every node but one to three), beside a third
            # list half the time: the ANDs of wide masks stay distinct in whatever order the
            # fold takes the lists, so a fold step of over 4,096 ANDs leaves the small regime
            # for the sorted one, under FAST-6's bound on ANDs (masks of a few nodes each
            # collapsed to a few ANDs and never left it).
            wide_hint = st.builds(
                lambda gone, preferred: TopologyHint(
                    NumaMask.of([n for n in nodes if n not in gone]), preferred),
                st.lists(st.sampled_from(nodes), min_size=1, max_size=3, unique=True),
                st.booleans())
            lists = [draw(st.lists(wide_hint, min_size=65, max_size=90,
                                   unique_by=lambda h: h.numa_affinity))
                     for _ in range(2)] + lists[:draw(st.integers(0, 1))]
        return MergeRequest(
            numa_nodes=nodes, policy=draw(st.sampled_from(["best-effort", "restricted"])),
            providers=tuple({f"r{i}": tuple(hints)} for i, hints in enumerate(lists)),
            version=draw(st.sampled_from(later)),
            policy_options={"max-allowable-numa-nodes": "24"})
    if shape == "many" and later:
        version = draw(st.sampled_from(later))
        nodes = tuple(range(12))
        distances = draw(distances_for(nodes, odd_self=False))
        one_node_beside = False
        if draw(st.integers(0, 2)) == 0:
            # Around where a sum of a candidate's distances stops being exact in a double.
            shift = draw(st.sampled_from([44, 46, 48, 50]))
            distances = {k: tuple(d << shift for d in row) for k, row in distances.items()}
            if draw(st.booleans()):
                # Nodes in groups of four, near within and far across, plus a few units:
                # candidates of one width tie on the high bits, and how a double rounds
                # each partial sum of kubelet's sequential sum decides between them
                # (MERGE-12; a sum rounded once would pick another candidate).
                near, far = draw(st.integers(11, 20)), draw(st.integers(21, 40))
                # The noise grows with the shift, as the unit a double rounds the sums to
                # does: a few units at 2**44, up to 63 at 2**50.
                noise = draw(st.lists(st.integers(0, (1 << max(2, shift - 44)) - 1),
                                      min_size=144, max_size=144))
                distances = {i: tuple(((10 if i == j else near if i // 4 == j // 4 else far)
                                       << shift) + noise[12 * i + j] for j in nodes)
                             for i in nodes}
                # Half of those with a second list that prefers one node and takes the whole
                # machine too: every mask of the first list's preferred width stays a
                # candidate (MERGE-8's target), 792 or 924 of them, past the 512 that FAST-5
                # ranks one at a time, so the fast merge ranks them as arrays, where
                # MERGE-12's sum in a double decides too.  (Two lists of thousands of masks
                # would reach them as well, at minutes of kubelet's walk per case.)
                one_node_beside = draw(st.booleans())
        k = draw(st.integers(5, 6) if one_node_beside else st.integers(4, 6))
        wide = kubelet_hint_list(nodes, k)
        beside: dict[str, tuple[TopologyHint, ...]] = {"device": (
            TopologyHint(NumaMask.of([draw(st.sampled_from(nodes))]), True),
            TopologyHint(NumaMask.of(nodes), False))} if one_node_beside else {
            "device": tuple(draw(st.lists(hints_for(nodes), min_size=1, max_size=3)))}
        return MergeRequest(
            numa_nodes=nodes, policy=draw(st.sampled_from(["best-effort", "restricted"])),
            providers=({"cpu": wide}, beside), version=version,
            numa_distances=distances, policy_options={
                "prefer-closest-numa-nodes": "true", "max-allowable-numa-nodes": "12"})
    version = draw(versions(allowed_versions))
    nodes = draw(st.sampled_from([tuple(range(8)), (0, 1, 2, 3, 5, 6, 7, 9),
                                  (7, 6, 5, 4, 3, 2, 1, 0)]))
    closest = version.minor >= 28 and draw(st.booleans())
    first = draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=2, unique=True))
    if draw(st.booleans()):
        second = kubelet_hint_list(nodes, draw(st.integers(1, 2)))
    else:
        # A second device, often sharing a NUMA node with the first: what both reach is
        # then every mask holding the shared nodes, not every mask.
        other = draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=2, unique=True))
        second = device_hint_list(nodes, other if draw(st.booleans()) else first[:1])
    return MergeRequest(
        numa_nodes=nodes, policy=draw(st.sampled_from(["best-effort", "restricted"])),
        providers=({"device": device_hint_list(nodes, first)}, {"cpu": second}),
        version=version,
        numa_distances=draw(distances_for(nodes)) if closest else None,
        policy_options={"prefer-closest-numa-nodes": "true"} if closest else {})


_OPTION_NAMES = st.sampled_from(["prefer-closest-numa-nodes", "max-allowable-numa-nodes",
                                 "full-pcpus-only", "prefer-closest-numa-node"])
_OPTION_VALUES = st.sampled_from(["true", "false", "1", "0", "t", "F", "yes", "", " true",
                                  "8", "16", "7", "-8", "+9", "0x10", "1_0", "9" * 25,
                                  # Go's Atoi and Quote on the edges (OPT-3, OPT-4, RUN-11):
                                  # a sign alone, a tab, control and format characters.
                                  "+", "-", "08", "\t8", "8\x01", "\u200b8", "8\U000e0001"])


@st.composite
def merge_requests_with_faults(draw: st.DrawFn) -> MergeRequest:
    """Valid requests, and requests with every kind of start-up fault kubelet knows: unknown
    policies, bad options, too many nodes, missing distances, feature gates."""
    request = draw(merge_requests())
    twist = draw(st.sampled_from(["none"] * 4 + ["closest"] * 2 + [
        "policy", "options", "options", "nodes", "distances", "gates"]))
    if twist == "closest" and request.policy != "none":
        single = request.policy == "single-numa-node"
        wide = draw(provider_like_hints(request.numa_nodes, min_k=1 if single else 2))
        request = attrs.evolve(
            request, providers=({"wide": wide},) if single else ({"wide": wide},
                                                                 *request.providers),
            policy_options={"prefer-closest-numa-nodes": "true"},
            numa_distances=draw(distances_for(request.numa_nodes, odd_self=single or None)))
    if twist == "policy":
        request = attrs.evolve(request, policy=draw(st.sampled_from(
            ["", "Restricted", "single-numa", "static", "none "])))
    elif twist == "options":
        # Mostly the options this release has (a bad value is parsed, and its message is
        # kubelet's, OPT-3, OPT-4), sometimes any name.
        if request.policy != "none" and draw(st.booleans()):
            # Half the time at a release that has both options (OPT-3's integer parsing,
            # OPT-4's messages, RUN-11: where one bad value is kubelet's to word).
            request = attrs.evolve(request, version=draw(st.sampled_from(_MANY_NODE_RELEASES)))
            if not request.version.has_hint_scores:
                request = attrs.evolve(request, providers=unscored(request.providers))
        known = [n for n in ("prefer-closest-numa-nodes", "max-allowable-numa-nodes")
                 if option_maturity(n, request.version) is not None]
        names = st.one_of(st.sampled_from(known), st.sampled_from(known), _OPTION_NAMES) \
            if known else _OPTION_NAMES
        request = attrs.evolve(request, policy_options=draw(st.dictionaries(
            names, _OPTION_VALUES, min_size=1, max_size=2)))
    elif twist == "nodes":
        nodes = tuple(range(draw(st.integers(8, 12))))
        request = attrs.evolve(request, numa_nodes=nodes, numa_distances=None,
                               providers=draw(providers_for(nodes, max_lists=2, max_hints=2)))
    elif twist == "distances":
        request = attrs.evolve(request, numa_distances=None, policy_options={
            "prefer-closest-numa-nodes": "true"})
    elif twist == "gates":
        gate = draw(st.sampled_from(["TopologyManagerPolicyOptions",
                                     "TopologyManagerPolicyAlphaOptions",
                                     "TopologyManagerPolicyBetaOptions"]))
        request = attrs.evolve(request, feature_gates={gate: draw(st.booleans())},
                               policy_options={"prefer-closest-numa-nodes": "true"},
                               numa_distances=draw(distances_for(request.numa_nodes)))
    return request
