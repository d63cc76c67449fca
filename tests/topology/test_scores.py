"""Hint scores and the preferred-first search, from kubelet 1.38 (HINT-5, MERGE-13, MERGE-14,
POLICY-7).

Each property is shown to fail on a mutant of the code it checks (``_MUTANTS``), so none of
them holds vacuously.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator, Sequence
from typing import Any
from unittest import mock

import attrs
import pytest
from hypothesis import example, given, settings

from numaspec.conformance.properties.strategies import merge_requests
from numaspec.errors import InvalidFieldError
from numaspec.protocols.merge_protocol import (
    MergeRequest,
    decode_merge_request,
    encode_outcome,
    evaluate_request,
)
from numaspec.protocols.merge_wire import read_merge_request
from numaspec.topology import merge as merge_module
from numaspec.topology import policies as policies_module
from numaspec.topology import scores as scores_module
from numaspec.topology.hints import TopologyHint, flatten_provider_hints
from numaspec.topology.masks import NumaMask
from numaspec.topology.merge import MergeMode, best_hint, merged_score
from numaspec.topology.policies import Policy, check_startup, filter_single_numa_hints
from numaspec.topology.preferred_first import preferred_first
from numaspec.topology.versions import KubeletVersion

V138 = KubeletVersion(38)
_AT_138 = merge_requests(allowed_versions=(V138,),
                         policies=("best-effort", "restricted", "single-numa-node"))


def _hint(nodes: Sequence[int] | None, preferred: bool, score: int = 0) -> TopologyHint:
    return TopologyHint(None if nodes is None else NumaMask.of(nodes), preferred, score)


# --- MERGE-13 ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("scores", "expected"), [
    ((40, 81), 60),            # the figure kubelet's own comment gives: rounded toward zero
    ((1, 0, 0), 1),            # a 0 is no signal: one hint scoring 1 sets the mean
    ((0, 0), 0),
    ((100, 99, 98), 99),
])
def test_the_merged_score_is_the_truncated_mean_of_the_positive_scores(
        scores: tuple[int, ...], expected: int) -> None:
    assert merged_score([_hint([0], True, s) for s in scores]) == expected


def test_a_hint_without_an_affinity_is_not_averaged_in() -> None:
    assert merged_score([_hint(None, True, 90), _hint([0], True, 30)]) == 30


# --- MERGE-14: the fast merge's score is the walk's --------------------------------------------


def _lists(request: MergeRequest) -> list[Sequence[TopologyHint]]:
    lists = flatten_provider_hints(request.providers)
    if request.policy == "single-numa-node":
        lists = filter_single_numa_hints(lists)
    return lists


def _fast_is_the_walk(request: MergeRequest) -> None:
    fast = evaluate_request(request)
    walked = evaluate_request(request, definitional=True)
    assert fast == walked, (fast, walked)  # the score is part of the hint's equality
    assert fast.scores is not None
    assert fast.hint.score in fast.scores


_SCORED_EXAMPLE = MergeRequest(
    numa_nodes=(0, 1), policy="best-effort", version=V138,
    providers=({"a": (_hint([0], True, 40), _hint([0, 1], False, 30)),
                "b": (_hint([1], True, 20), _hint([0, 1], False, 90))},
               {"c": (_hint([0], True, 81),), "d": (_hint(None, True, 90),)}))


@settings(max_examples=300, deadline=None)
@given(_AT_138)
@example(_SCORED_EXAMPLE)
def test_the_fast_merge_carries_the_walks_score(request: MergeRequest) -> None:
    """MERGE-14: the fast merge finds the first permutation that merges to the winner."""
    _fast_is_the_walk(request)


def _orders(request: MergeRequest) -> Iterator[MergeRequest]:
    each = [itertools.permutations(list((p or {}).items())) for p in request.providers]
    for choice in itertools.islice(itertools.product(*each), 24):
        yield attrs.evolve(request, providers=tuple(
            dict(items) if request.providers[i] else request.providers[i]
            for i, items in enumerate(choice)))


# One provider, two resources, three nodes, nothing preferred; the target width is 1, so {0}
# wins (narrower than {2} at one node).  Two permutations reach it: a{0,1} with b{0,2}
# ((10+90)//2 = 50) and a{0,2} with b{0,1} ((20+30)//2 = 25).  Walking a first, the first of
# them is the former; walking b first, the latter.
_ORDER_EXAMPLE = MergeRequest(
    numa_nodes=(0, 1, 2), policy="best-effort", version=V138,
    providers=({"a": (_hint([0, 1], False, 10), _hint([0, 2], False, 20), _hint([2], False)),
                "b": (_hint([0, 1], False, 30), _hint([0, 2], False, 90), _hint([2], False))},))


# Two resources walked in either order: the free hint of b has no affinity, so it is not
# averaged in (MERGE-13) and every order scores 90.  Found by a mutant of the search over
# orders that shared the ANDs reachable after a position between orders ending differently.
_SUFFIX_EXAMPLE = MergeRequest(
    numa_nodes=(0, 1), policy="best-effort", version=V138,
    providers=({"a": (_hint([1], False, 90),), "b": (_hint(None, False, 30),)},))


@settings(max_examples=200, deadline=None)
@given(_AT_138)
@example(_ORDER_EXAMPLE)
@example(_SUFFIX_EXAMPLE)
def test_every_order_of_the_resources_gives_one_of_the_stated_scores(
        request: MergeRequest) -> None:
    """MERGE-11, MERGE-14: reordering a provider's resources keeps the affinity, preference and
    admission, and the walk's score in that order is one the answer states; where every order
    was walked (at most 24), the stated scores are exactly the walks' scores."""
    stated = evaluate_request(request)
    assert stated.scores is not None
    walked_scores = set()
    for reordered in _orders(request):
        walked = evaluate_request(reordered, definitional=True)
        assert (walked.hint.numa_affinity, walked.hint.preferred, walked.admit) == (
            stated.hint.numa_affinity, stated.hint.preferred, stated.admit)
        assert not stated.scores or walked.hint.score in stated.scores, (
            walked.hint.score, stated.scores)
        walked_scores.add(walked.hint.score)
    orders = math.prod(math.factorial(len(p or {})) for p in request.providers)
    if orders <= 24:
        assert stated.scores == walked_scores, (stated.scores, walked_scores)


def test_a_non_preferred_winners_score_depends_on_the_order() -> None:
    """Finding 47: one request, two scores, as Go map order falls."""
    outcome = evaluate_request(_ORDER_EXAMPLE)
    assert outcome.hint == _hint([0], False, 50)
    first = _ORDER_EXAMPLE.providers[0]
    assert first is not None
    reordered = attrs.evolve(_ORDER_EXAMPLE, providers=({"b": first["b"], "a": first["a"]},))
    assert evaluate_request(reordered).hint == _hint([0], False, 25)
    assert evaluate_request(reordered, definitional=True).hint == _hint([0], False, 25)
    assert outcome.scores == frozenset({25, 50})
    assert encode_outcome(outcome)["hint"] == {"numa_affinity": [0], "preferred": False,
                                               "score": 50, "scores": [25, 50]}


# --- POLICY-7 ------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(merge_requests(allowed_versions=(V138,), policies=("best-effort", "restricted")))
@example(_SCORED_EXAMPLE)
def test_the_preferred_first_search_answers_as_the_merge(request: MergeRequest) -> None:
    """POLICY-7: where kubelet's preferred-first search finds a hint it is the full merge's
    (score included); where it finds none, the merge's answer is not preferred."""
    numa = request.numa_info()
    policy, options = check_startup(request.policy, numa, V138, request.policy_options)
    mode: MergeMode = "best-effort" if policy is Policy.BEST_EFFORT else "restricted"
    lists = _lists(request)
    found = preferred_first(lists, numa, V138, mode, options)
    full = best_hint(lists, numa, V138, mode, options)
    if found is None:
        assert not full.preferred
    else:
        assert found == full


# --- HINT-5 on the wire ------------------------------------------------------------------------


def _line(version: str, score: object) -> bytes:
    return json.dumps({"kubelet_version": version, "numa_nodes": [0, 1],
                       "policy": "best-effort", "providers": [{"cpu": [
                           {"numa_affinity": [0], "preferred": True, "score": score}]}]}
                      ).encode()


@pytest.mark.parametrize(("version", "score", "message"), [
    ("1.37", 40, "a hint has a score from kubelet 1.38"),
    ("1.38", 101, "an integer from 0 to 100"),
    ("1.38", -1, "an integer from 0 to 100"),
    ("1.38", True, "an integer from 0 to 100"),
    ("1.38", 40.0, "an integer from 0 to 100"),
    ("1.38", "40", "an integer from 0 to 100"),
])
def test_a_bad_score_is_refused_naming_the_hint(version: str, score: object,
                                                 message: str) -> None:
    line = _line(version, score)
    assert read_merge_request(line) is None  # the fast reading leaves it to the strict one
    with pytest.raises(InvalidFieldError, match=message) as raised:
        decode_merge_request(json.loads(line))
    assert raised.value.where == "providers[0].cpu[0].score"


@settings(max_examples=200, deadline=None)
@given(_AT_138)
def test_both_readings_of_a_scored_line_agree(request: MergeRequest) -> None:
    """WIRE-7: a scored request reads the same whole and strictly (long lists as arrays)."""
    from numaspec.protocols.merge_protocol import encode_merge_request

    body = encode_merge_request(request)
    line = json.dumps(body, separators=(",", ":")).encode()
    fast = read_merge_request(line)
    strict = decode_merge_request(json.loads(line))
    assert fast is not None
    assert evaluate_request(fast) == evaluate_request(strict)
    assert encode_outcome(evaluate_request(fast)) == encode_outcome(evaluate_request(strict))


def test_long_scored_lists_are_read_as_arrays_with_their_scores() -> None:
    hints = [{"numa_affinity": [i % 2], "preferred": i % 3 == 0, "score": i % 101}
             for i in range(40)]
    line = json.dumps({"kubelet_version": "1.38", "numa_nodes": [0, 1], "policy": "restricted",
                       "providers": [{"cpu": hints}, {"gpu": hints[::-1]}]}).encode()
    fast = read_merge_request(line)
    strict = decode_merge_request(json.loads(line))
    assert fast is not None
    assert fast == strict
    assert evaluate_request(fast) == evaluate_request(strict, definitional=True)


def test_before_138_an_answer_has_no_score() -> None:
    request = attrs.evolve(_SCORED_EXAMPLE, version=KubeletVersion(37), providers=tuple(
        {name: tuple(attrs.evolve(h, score=0) for h in hints or ())
         for name, hints in (p or {}).items()} for p in _SCORED_EXAMPLE.providers))
    assert "score" not in encode_outcome(evaluate_request(request))["hint"]


# --- the properties fail on mutants ------------------------------------------------------------


def _last_not_first(self: object, current: TopologyHint, candidate: TopologyHint
                    ) -> TopologyHint:
    """A mutant: of equal candidates the *last* is kept (MERGE-14 broken in the walk)."""
    cur, cand = current.numa_affinity, candidate.numa_affinity
    if cur == cand:
        return candidate
    return _ORIGINAL_MASKS(self, current, candidate)  # type: ignore[arg-type]


_ORIGINAL_MASKS = merge_module.Chooser.masks


def _zeros_averaged(permutation: Sequence[TopologyHint]) -> int:
    """A mutant: zeros and free hints averaged in (MERGE-13 broken)."""
    return sum(h.score for h in permutation) // max(1, len(permutation))


def _listed_only(providers: object, numa: object, winner: TopologyHint,  # noqa: ARG001
                 filtered: object = None) -> frozenset[int]:  # noqa: ARG001
    """A mutant: the order the request lists is the only one tried (MERGE-14 broken)."""
    return frozenset({winner.score})


def _suffixes_by_length(self: Any, labels: tuple[int, ...]) -> set[int] | None:
    """A mutant: the ANDs reachable after a position kept by how many lists follow, not by
    which (MERGE-14's search over orders shares them wrongly)."""
    key = (len(labels),)
    if key not in self.reach:
        rest = {self.full} if not labels else _suffixes_by_length(self, labels[1:])
        assert rest is not None
        self.reach[key] = rest if not labels else {
            r & m for r in rest for m in self.distinct[labels[0]]}
    found: set[int] | None = self.reach[key]
    return found


_MUTANTS: dict[str, tuple[Any, Any, MergeRequest]] = {
    "last-not-first": (mock.patch.object(merge_module.Chooser, "masks", _last_not_first),
                       test_the_fast_merge_carries_the_walks_score, _SCORED_EXAMPLE),
    "zeros-averaged": (mock.patch.object(scores_module, "merged_score", _zeros_averaged),
                       test_the_fast_merge_carries_the_walks_score, _SCORED_EXAMPLE),
    "one-order-only": (mock.patch.object(policies_module, "possible_scores", _listed_only),
                       test_every_order_of_the_resources_gives_one_of_the_stated_scores,
                       _ORDER_EXAMPLE),
    "suffixes-by-length": (mock.patch.object(scores_module._Suffixes, "_reach",
                                             _suffixes_by_length),
                           test_every_order_of_the_resources_gives_one_of_the_stated_scores,
                           _SUFFIX_EXAMPLE),
}


@pytest.mark.parametrize("name", sorted(_MUTANTS))
def test_each_property_fails_on_its_mutant(name: str) -> None:
    patch, check, case = _MUTANTS[name]
    with patch, pytest.raises(AssertionError):
        check.hypothesis.inner_test(case)
