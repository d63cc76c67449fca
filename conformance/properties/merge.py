"""The conformance properties, each citing the spec rules it checks.

Two levels (``spec/README.md``):

* **invariant** properties hold for any correct implementation, and are written here
  *independently* of the reference's own algorithm: brute-force candidate lists, an explicit
  ranking key instead of kubelet's pairwise fold, a closed-form answer for single-numa-node;
* **equivalence** properties demand the reference's exact answer for the same version.

A property is a plain function of an implementation; Hypothesis drives it with the active
settings profile.  ``PROPERTIES`` is the registry the suite, the runner and the spec-coverage
test read.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import attrs
from hypothesis import assume, example, given, note, reject
from hypothesis import strategies as st

from numaspec.conformance.cases.agreement import answers_agree, words_agree
from numaspec.conformance.cases.decisions import sent
from numaspec.conformance.cases.divergences import known
from numaspec.conformance.cases.judges import compare
from numaspec.conformance.implementations.adapter import (
    ErrorAnswer,
    MergeAnswer,
    MergeImplementation,
    reference,
    supported_versions,
)
from numaspec.conformance.implementations.claims import MergeClaims, claims_of
from numaspec.conformance.properties.oracle import (
    candidates,
    closest_on,
    non_preferred_key,
    single_numa_expected,
    target_of,
    tie_key,
)
from numaspec.conformance.properties.registry import PROPERTIES, Property, register
from numaspec.conformance.properties.strategies import (
    POLICIES,
    distances_for,
    large_merge_requests,
    machines,
    merge_requests,
    merge_requests_with_faults,
    provider_like_hints,
    unscored,
)
from numaspec.protocols.merge_protocol import MergeRequest, encode_merge_request, encode_outcome
from numaspec.topology.hints import TopologyHint, flatten_provider_hints
from numaspec.topology.masks import NumaMask
from numaspec.topology.options import option_maturity
from numaspec.topology.policies import MergeOutcome
from numaspec.topology.versions import SUPPORTED_VERSIONS, KubeletVersion

#: The registry and the merge judgement are re-exported: they were first defined here.
__all__ = ["PROPERTIES", "Property", "answer_json", "answers_agree", "claimed_options", "fit_to",
           "register"]

_T = TypeVar("_T")


# --- helpers ---------------------------------------------------------------------------------


def fit_to(request: MergeRequest, impl: object, policies: Sequence[str] = POLICIES
           ) -> MergeRequest:
    """The same case at the nearest kubelet version ``impl`` models, moved inside what it
    claims (PROTO-7): an unclaimed policy becomes a claimed one of ``policies`` (the
    property's own), unclaimed options and gates go, and a case whose answer would be a
    refusal it does not claim is not drawn."""
    allowed = supported_versions(impl)
    if request.version not in allowed:
        nearest = min(allowed, key=lambda v: (abs(v.minor - request.version.minor), v.minor))
        request = attrs.evolve(request, version=nearest)
        if not nearest.has_hint_scores:
            request = attrs.evolve(request, providers=unscored(request.providers))
    claims = claims_of(impl).merge
    if claims == MergeClaims():
        return request
    if not claims.claims_policy(request.policy):
        choices = [p for p in policies if claims.claims_policy(p)]
        assume(choices)
        index = POLICIES.index(request.policy) if request.policy in POLICIES else len(
            request.policy)
        request = attrs.evolve(request, policy=choices[index % len(choices)])
    request = attrs.evolve(request, policy_options=claimed_options(impl, request.policy_options),
                           feature_gates=request.feature_gates if claims.feature_gates else {})
    if not claims.distances:
        # no distances: nor prefer-closest-numa-nodes, which reads them (OPT-6)
        request = attrs.evolve(request, numa_distances=None, policy_options={
            k: v for k, v in request.policy_options.items()
            if k != "prefer-closest-numa-nodes"})
    if claims.refusals is not None:
        answer = reference.merge(request)
        assume(not isinstance(answer, ErrorAnswer) or claims.claims_refusal(answer.kind))
    return request


def claimed_options(impl: object, options: Mapping[str, str]) -> dict[str, str]:
    """The policy options ``impl`` claims, of ``options`` (PROTO-7)."""
    claims = claims_of(impl).merge
    return {k: v for k, v in options.items() if claims.claims_option(k)}


def _ask(impl: MergeImplementation, request: MergeRequest) -> MergeAnswer:
    """The one place a property sends a request.  PROTO-7: a request outside the claims is
    never sent (the example is rejected): a property that draws only those is reported
    unjudgeable, never passed on requests the implementation does not claim."""
    body = encode_merge_request(request)
    claims = claims_of(impl).merge
    if claims != MergeClaims():
        assume(claims.outside(body, _expected_json(request)) is None)
    note(f"request: {json.dumps(body, separators=(',', ':'))}")
    answer = impl.merge(request)
    note(f"answer: {answer}")
    sent("merge", body, answer_json(answer))  # RUN-17: what the request reached
    _set_aside_if_known(body, request, answer)
    return answer


def _set_aside_if_known(body: dict[str, Any], request: MergeRequest, answer: MergeAnswer
                        ) -> None:
    """RUN-5: where the implementation's answer differs from the reference's inside a known
    divergence of its manifest, the case is set aside (the example is rejected) and the
    property explores on; anything else it answers is judged as always."""
    expected = answer_json(reference.merge(request))
    actual = answer_json(answer)
    if compare("merge", body, expected, actual):
        finding = known("merge", body, expected, actual)
        if finding is not None:
            note(f"set aside: {finding.finding} ({finding.reason[:120]})")
            reject()


def answer_json(answer: MergeAnswer) -> Any:
    """A merge answer as the protocol writes it."""
    if isinstance(answer, ErrorAnswer):
        return {"error": {"kind": answer.kind, "message": answer.message}}
    if isinstance(answer, MergeOutcome):
        return encode_outcome(answer)
    return answer


def _expected_json(request: MergeRequest) -> Any:
    """The reference's answer as the protocol writes it (what a claim on refusals reads)."""
    answer = reference.merge(request)
    if isinstance(answer, ErrorAnswer):
        return {"error": {"kind": answer.kind}}
    return None


def _outcome(impl: MergeImplementation, request: MergeRequest) -> MergeOutcome:
    """The implementation's answer to a request kubelet accepts; an error is a failure."""
    answer = _ask(impl, request)
    assert not isinstance(answer, ErrorAnswer), (
        f"refused a request kubelet {request.version} accepts: {answer}")
    assert isinstance(answer, MergeOutcome), f"not an answer: {answer!r}"
    return answer


def _placed(outcome: MergeOutcome) -> TopologyHint:
    """The hint's affinity and preference, without its score: what the merge decides (HINT-5:
    the score never decides; the equivalence property judges it)."""
    return attrs.evolve(outcome.hint, score=0) if outcome.hint.score else outcome.hint


def _placement(outcome: MergeOutcome) -> tuple[TopologyHint, bool]:
    """MERGE-11: what no order changes: the hint without its score (MERGE-14), and admission."""
    return _placed(outcome), outcome.admit


def _valid(request: MergeRequest) -> MergeRequest:
    """Skip cases the reference itself refuses (the strategies rarely make them)."""
    assume(not isinstance(reference.merge(request), ErrorAnswer))
    return request


def _mask_of(outcome: MergeOutcome) -> int | None:
    mask = outcome.hint.numa_affinity
    return None if mask is None else mask.bits


_MERGING = ("best-effort", "restricted")
_ALIGNING = ("best-effort", "restricted", "single-numa-node")
#: Releases where prefer-closest-numa-nodes is accepted with default gates.
_CLOSEST_VERSIONS = tuple(v for v in SUPPORTED_VERSIONS if v.minor >= 28)
_NEW_MERGE_VERSIONS = tuple(v for v in SUPPORTED_VERSIONS if v.minor >= 24)


# --- invariants ------------------------------------------------------------------------------


@register("P-PREFERRED-NARROWEST",
           rules=["MASK-2", "MASK-4", "HINT-4", "MERGE-1", "MERGE-2", "MERGE-3", "MERGE-4",
                  "MERGE-5", "MERGE-6"], level="invariant", policies=_MERGING)
@given(case=merge_requests(policies=_MERGING))
def preferred_narrowest(impl: MergeImplementation, case: MergeRequest) -> None:
    """If any merged candidate is preferred, the result is the narrowest preferred one."""
    request = _valid(fit_to(case, impl, _MERGING))
    assume(not closest_on(request))
    preferred = [c for c in candidates(request, flatten_provider_hints(request.providers))
                 if c.preferred]
    assume(preferred)
    outcome = _outcome(impl, request)
    best = min(preferred, key=lambda c: (c.bits.bit_count(), c.bits))
    assert _placed(outcome) == TopologyHint(NumaMask(best.bits), True), (
        f"expected the narrowest preferred candidate {NumaMask(best.bits)}, got {outcome.hint}")


@register("P-PREFERRED-CLOSEST", rules=["MERGE-9", "MERGE-12", "OPT-3"], level="invariant",
           since=28, policies=_MERGING, options=["prefer-closest-numa-nodes"])
@given(case=merge_requests(_CLOSEST_VERSIONS, policies=_MERGING), data=st.data())
def preferred_closest(impl: MergeImplementation, case: MergeRequest, data: st.DataObject) -> None:
    """With prefer-closest-numa-nodes, equal-width preferred candidates go by mean distance."""
    distances = case.numa_distances or data.draw(distances_for(case.numa_nodes))
    # Several preferred masks of one width >= 2: where mean distance decides.
    wide = data.draw(provider_like_hints(case.numa_nodes, min_k=2))
    request = fit_to(attrs.evolve(
        case, numa_distances=distances, providers=({"wide": wide}, *case.providers),
        policy_options={**case.policy_options, "prefer-closest-numa-nodes": "true"}), impl,
        _MERGING)
    assume(request.version.minor >= 28)
    request = _valid(request)
    preferred = [c for c in candidates(request, flatten_provider_hints(request.providers))
                 if c.preferred]
    assume(preferred)
    outcome = _outcome(impl, request)
    best = min(preferred, key=lambda c: (c.bits.bit_count(), *tie_key(request, c.bits)))
    assert _placed(outcome) == TopologyHint(NumaMask(best.bits), True), (
        f"expected the closest preferred candidate {NumaMask(best.bits)}, got {outcome.hint}")


@register("P-NON-PREFERRED-RANK", rules=["MERGE-7", "MERGE-8", "MERGE-10", "MERGE-4"],
           level="invariant", policies=["best-effort"])
@given(case=merge_requests(policies=("best-effort",)), data=st.data())
def non_preferred_rank(impl: MergeImplementation, case: MergeRequest, data: st.DataObject
                       ) -> None:
    """Without a preferred candidate, the best-ranked non-preferred one wins (or the machine)."""
    request = case
    if data.draw(st.booleans()):
        # A resource that cannot be placed keeps every candidate's mask and the target width
        # but makes every candidate non-preferred (HINT-3); a wide resource makes T >= 2.
        wide = data.draw(provider_like_hints(request.numa_nodes, min_k=2))
        request = attrs.evolve(request, providers=(
            {"wide": wide, "unplaceable": ()}, *request.providers))
    request = _valid(fit_to(request, impl, ["best-effort"]))
    lists = flatten_provider_hints(request.providers)
    found = candidates(request, lists)
    assume(not any(c.preferred for c in found))
    outcome = _outcome(impl, request)
    if not found:
        machine = NumaMask.of(request.numa_nodes)
        assert _placed(outcome) == TopologyHint(machine, False), (
            f"no candidate at all: expected the machine mask, not preferred; got {outcome.hint}")
        return
    target = target_of(lists)
    best = min(found, key=lambda c: non_preferred_key(request, target, c.bits))
    assert _placed(outcome) == TopologyHint(NumaMask(best.bits), False), (
        f"target count {target}: expected {NumaMask(best.bits)}, got {outcome.hint}")


@register("P-EQUAL-MASKS", rules=["MERGE-3", "MASK-4"], level="invariant", since=24,
           policies=_MERGING)
@given(case=merge_requests(_NEW_MERGE_VERSIONS, policies=_MERGING))
def equal_masks(impl: MergeImplementation, case: MergeRequest) -> None:
    """From 1.24, a preferred result comes from hints whose affinities are all one mask."""
    request = _valid(fit_to(case, impl, _MERGING))
    assume(request.version.minor >= 24)
    outcome = _outcome(impl, request)
    mask = _mask_of(outcome)
    assume(outcome.hint.preferred and mask is not None)
    machine = NumaMask.of(request.numa_nodes).bits
    lists = flatten_provider_hints(request.providers)
    shared = {h.numa_affinity.bits for hints in lists for h in hints
              if h.numa_affinity is not None} | {machine}
    assert any(
        (x & machine) == mask and all(
            any(h.preferred and (h.numa_affinity is None or h.numa_affinity.bits == x)
                for h in hints) for hints in lists)
        for x in shared
    ), f"preferred {outcome.hint} but no set of equal preferred affinities yields it"


@register("P-MERGED-INSIDE", rules=["MERGE-1", "MERGE-10"], level="invariant")
@given(case=merge_requests())
def merged_inside(impl: MergeImplementation, case: MergeRequest) -> None:
    """The result lies inside the machine and inside some hint of every resource."""
    request = _valid(fit_to(case, impl))
    outcome = _outcome(impl, request)
    mask = _mask_of(outcome)
    machine = NumaMask.of(request.numa_nodes).bits
    if mask is None:
        return
    assert mask & ~machine == 0, f"{outcome.hint} names nodes that are not on the machine"
    if mask == machine and not outcome.hint.preferred:
        return  # MERGE-10: nothing fit; the machine mask is the fallback
    for hints in flatten_provider_hints(request.providers):
        assert any(h.numa_affinity is None or (h.numa_affinity.bits & mask) == mask
                   for h in hints), f"{outcome.hint} is not inside any hint of {hints}"


@register("P-SINGLE-NUMA-NODE", rules=["POLICY-4", "HINT-2", "HINT-3"], level="invariant",
           policies=["single-numa-node"])
@given(case=merge_requests(policies=("single-numa-node",)), data=st.data())
def single_numa_node(impl: MergeImplementation, case: MergeRequest, data: st.DataObject) -> None:
    """single-numa-node: one node or none, admitted iff a single-node alignment exists."""
    request = fit_to(case, impl, ["single-numa-node"])
    if request.version.minor >= 28 and claims_of(impl).merge.claims_option(
            "prefer-closest-numa-nodes") and claims_of(impl).merge.distances \
            and data.draw(st.booleans()):
        # prefer-closest is accepted but must change nothing, even with uneven self-distances.
        anywhere = tuple(TopologyHint(NumaMask.of([n]), True) for n in request.numa_nodes)
        request = attrs.evolve(request, policy_options={"prefer-closest-numa-nodes": "true"},
                               providers=({"anywhere": anywhere}, {"any": None}),
                               numa_distances=data.draw(distances_for(request.numa_nodes,
                                                                      odd_self=True)))
    request = _valid(request)
    outcome = _outcome(impl, request)
    expected = single_numa_expected(request)
    assert _placed(outcome) == expected, f"expected {expected}, got {outcome.hint}"
    assert outcome.admit == expected.preferred, f"admit must be {expected.preferred}"


@register("P-ADMISSION", rules=["POLICY-2", "POLICY-3"], level="invariant", policies=_MERGING)
@given(case=merge_requests(policies=_MERGING))
def admission(impl: MergeImplementation, case: MergeRequest) -> None:
    """restricted admits exactly the preferred hints; best-effort admits everything."""
    request = _valid(fit_to(case, impl, _MERGING))
    outcome = _outcome(impl, request)
    expected = outcome.hint.preferred if request.policy == "restricted" else True
    assert outcome.admit == expected, f"{request.policy} with {outcome.hint}: admit={outcome.admit}"


@register("P-NONE", rules=["POLICY-1", "POLICY-6"], level="invariant", policies=["none"])
@given(case=merge_requests(policies=("none",)), nodes=machines(max_nodes=12),
       options=st.dictionaries(st.sampled_from(["prefer-closest-numa-nodes",
                                                "max-allowable-numa-nodes", "no-such-option"]),
                               st.sampled_from(["true", "maybe", "3", ""]), max_size=2))
def none_policy(impl: MergeImplementation, case: MergeRequest, nodes: tuple[int, ...],
                options: dict[str, str]) -> None:
    """none: no hint, always admitted; node count and option values are never looked at."""
    request = fit_to(attrs.evolve(case, numa_nodes=nodes, providers=case.providers), impl,
                     ["none"])
    if request.version.minor >= 28:  # options exist and their gate is on by default
        request = attrs.evolve(request, policy_options=claimed_options(impl, options))
    outcome = _outcome(impl, request)
    assert outcome == MergeOutcome(TopologyHint(None, False), True), f"got {outcome}"


#: Two permutations reach {0}, one narrower than a hint it came from ({0,1} AND {0}) and one
#: not: an implementation that keeps whichever it meets first answers by its iteration order
#: (Koordinator's KOORD-5; vector merge-order-independent-unsatisfied).  Random requests
#: rarely draw this shape.
_KOORD_5 = MergeRequest(
    numa_nodes=(0, 1), policy="best-effort", version=KubeletVersion(30),
    providers=({"a": (TopologyHint(NumaMask.of([0, 1]), False), TopologyHint(NumaMask.of([0]),
                                                                           False)),
                "b": (TopologyHint(None, False), TopologyHint(NumaMask.of([0]), False))},))


@register("P-ORDER-INDEPENDENT", rules=["MERGE-11", "HINT-2"], level="invariant")
@given(case=merge_requests(), seed=st.integers(0, 2**32 - 1))
@example(case=_KOORD_5, seed=0)
def order_independent(impl: MergeImplementation, case: MergeRequest, seed: int) -> None:
    """Reordering providers, resources or hints never changes the answer."""
    request = _valid(fit_to(case, impl))
    expected = _outcome(impl, request)
    for flip in (_reversed, _shuffled(seed)):
        other = attrs.evolve(request, providers=tuple(
            None if p is None else {k: None if v is None else tuple(flip(list(v)))
                                    for k, v in flip(list(p.items()))}
            for p in flip(list(request.providers))))
        assert _placement(_outcome(impl, other)) == _placement(expected), (
            "the answer depends on order")


def _reversed(items: list[_T]) -> list[_T]:
    return items[::-1]


def _shuffled(seed: int) -> Callable[[list[_T]], list[_T]]:
    rng = random.Random(seed)

    def shuffle(items: list[_T]) -> list[_T]:
        return rng.sample(items, len(items))
    return shuffle


@register("P-NO-PREFERENCE-NEUTRAL", rules=["HINT-2", "HINT-3"], level="invariant")
@given(case=merge_requests(), where=st.integers(0, 3),
       extra=st.sampled_from(["null-provider", "empty-provider", "null-resource"]))
def no_preference_neutral(impl: MergeImplementation, case: MergeRequest, where: int,
                          extra: str) -> None:
    """Adding a provider or resource without a preference never changes the answer."""
    request = _valid(fit_to(case, impl))
    providers = list(request.providers)
    added: dict[str, tuple[TopologyHint, ...] | None] | None
    added = None if extra == "null-provider" else {} if extra == "empty-provider" else {
        "no-preference": None}
    providers.insert(min(where, len(providers)), added)
    other = attrs.evolve(request, providers=tuple(providers))
    assert _outcome(impl, request) == _outcome(impl, other), f"adding {extra} changed the answer"


@register("P-NO-PLACEMENT", rules=["HINT-1", "HINT-3", "MERGE-4"], level="invariant",
           policies=_ALIGNING)
@given(case=merge_requests(policies=_ALIGNING))
def no_placement(impl: MergeImplementation, case: MergeRequest) -> None:
    """A resource mapped to [] makes every placement non-preferred; an empty mask is never
    chosen."""
    request = _valid(fit_to(case, impl, _ALIGNING))
    other = attrs.evolve(request, providers=(*request.providers, {"unplaceable": ()}))
    outcome = _outcome(impl, other)
    assert not outcome.hint.preferred, f"{outcome.hint} preferred despite an unplaceable resource"
    if request.policy != "best-effort":
        assert not outcome.admit, "admitted despite an unplaceable resource"
    mask = outcome.hint.numa_affinity
    assert mask is None or not mask.is_empty(), "chose an empty mask"


@register("P-TOO-MANY-NUMA-NODES", rules=["OPT-5", "POLICY-6"], level="invariant",
           policies=_ALIGNING, refusals=["too-many-numa-nodes"])
@given(case=merge_requests(policies=_ALIGNING), count=st.integers(9, 20),
       raise_limit=st.booleans())
def too_many_nodes(impl: MergeImplementation, case: MergeRequest, count: int,
                   raise_limit: bool) -> None:
    """More NUMA nodes than the limit (8, or max-allowable-numa-nodes) is a start-up error."""
    request = fit_to(attrs.evolve(case, numa_nodes=tuple(range(count)), providers=(),
                                  numa_distances=None, policy_options={}), impl, _ALIGNING)
    has_option = option_maturity("max-allowable-numa-nodes", request.version) is not None \
        and claims_of(impl).merge.claims_option("max-allowable-numa-nodes")
    if raise_limit and has_option:
        request = attrs.evolve(request, policy_options={"max-allowable-numa-nodes": str(count)})
        _outcome(impl, request)
        return
    answer = _ask(impl, request)
    assert isinstance(answer, ErrorAnswer) and answer.kind == "too-many-numa-nodes", (
        f"{count} NUMA nodes under kubelet {request.version}: expected too-many-numa-nodes, "
        f"got {answer}")


@register("P-DISTANCES-REQUIRED", rules=["OPT-6"], level="invariant", since=28,
           policies=_ALIGNING, options=["prefer-closest-numa-nodes"],
           refusals=["missing-numa-distances"])
@given(case=merge_requests(_CLOSEST_VERSIONS, policies=_ALIGNING), data=st.data())
def distances_required(impl: MergeImplementation, case: MergeRequest, data: st.DataObject
                       ) -> None:
    """prefer-closest-numa-nodes without a node's distances is a start-up error, even under
    single-numa-node, which never uses them."""
    rows = dict(data.draw(distances_for(case.numa_nodes)))
    del rows[data.draw(st.sampled_from(case.numa_nodes))]
    request = fit_to(attrs.evolve(case, numa_distances=rows, policy_options={
        "prefer-closest-numa-nodes": "true"}), impl, _ALIGNING)
    assume(request.version.minor >= 28)
    answer = _ask(impl, request)
    assert isinstance(answer, ErrorAnswer) and answer.kind == "missing-numa-distances", (
        f"expected missing-numa-distances, got {answer}")


# --- equivalence -----------------------------------------------------------------------------

@register("P-EQUIVALENCE",
           rules=["MERGE-1", "MERGE-2", "MERGE-3", "MERGE-5", "MERGE-6", "MERGE-7", "MERGE-8",
                  "MERGE-9", "MERGE-10", "POLICY-1", "POLICY-2", "POLICY-3", "POLICY-4",
                  "POLICY-5", "POLICY-6", "POLICY-7", "OPT-1", "OPT-2", "OPT-3", "OPT-4",
                  "OPT-5", "OPT-6", "VER-2", "HINT-5", "MERGE-13", "MERGE-14"],
           level="equivalence")
@given(case=merge_requests_with_faults())
# POLICY-5: an empty policy name is none (kubelet's config defaulting); a start-up the
# random faults draw only now and then, and an implementation that copied the Topology
# Manager without its defaulting refuses (Katalyst's KATALYST-1).
@example(case=MergeRequest(numa_nodes=(0, 1), policy="", version=KubeletVersion(30),
                           providers=()))
# OPT-3, RUN-11: a bad boolean value, refused in kubelet's own words (the bool parser's, not
# the integer one's): the draws reach it only now and then.
@example(case=MergeRequest(numa_nodes=(0, 1), policy="best-effort", version=KubeletVersion(30),
                           policy_options={"prefer-closest-numa-nodes": "yes"}, providers=()))
def equivalence(impl: MergeImplementation, case: MergeRequest) -> None:
    """The implementation answers every case exactly as the reference does."""
    request = fit_to(case, impl)
    expected = reference.merge(request)
    actual = _ask(impl, request)
    assert answers_agree(request, expected, actual), f"reference: {expected}; impl: {actual}"
    # RUN-11: a refusal in kubelet's own words, where both give them.
    words = words_agree(request, expected, actual)
    assert words is None, words


@register("P-MERGE-LARGE", rules=["FAST-1", "FAST-4", "FAST-5", "MERGE-6", "MERGE-8",
                                   "MERGE-9", "MERGE-12"], level="equivalence",
          policies=_MERGING)
@given(case=large_merge_requests())
def large_merges(impl: MergeImplementation, case: MergeRequest) -> None:
    """Merges of kubelet's own size on big machines (every mask each provider fits, up to 12
    NUMA nodes): the implementation answers as the reference does."""
    request = fit_to(case, impl, _MERGING)
    expected = reference.merge(request)
    actual = _ask(impl, request)
    assert answers_agree(request, expected, actual), f"reference: {expected}; impl: {actual}"


@register("P-SUBSETS", rules=["MASK-3"], level="equivalence", requires="subsets")
@given(nodes=machines(max_nodes=6))
def subsets(impl: MergeImplementation, nodes: tuple[int, ...]) -> None:
    """NUMA subsets are enumerated by size, then in the order of the given node list."""
    enumerate_subsets = getattr(impl, "subsets")  # noqa: B009 - an optional capability
    got = [tuple(sorted(s)) for s in enumerate_subsets(list(nodes))]
    expected = [tuple(sorted(s)) for s in reference.subsets(list(nodes))]
    assert got == expected, f"subset order differs for {nodes}: {got} vs {expected}"


# The affinity properties (spec chapter affinity.md) register themselves too; importing them
# here makes PROPERTIES the whole table, merge properties first.
from numaspec.conformance.properties import affinity as _affinity  # noqa: E402,F401
from numaspec.conformance.properties import allocate as _allocate  # noqa: E402,F401
from numaspec.conformance.properties import (  # noqa: E402,F401
    allocate_malformed as _allocate_malformed,
)
from numaspec.conformance.properties import cpus as _cpus  # noqa: E402,F401
from numaspec.conformance.properties import node_corners as _node_corners  # noqa: E402,F401
from numaspec.conformance.properties import node_malformed as _node_malformed  # noqa: E402,F401
from numaspec.conformance.properties import node_sessions as _node_sessions  # noqa: E402,F401
from numaspec.conformance.properties import predict as _predict  # noqa: E402,F401
