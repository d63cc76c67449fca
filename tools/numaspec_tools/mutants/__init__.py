"""Deliberately wrong merge implementations: the suite must reject every one.

``BruteForce()`` with no mutation is a second, independent implementation: it answers with
the conformance oracle (explicit ranking keys, closed-form single-numa-node) instead of the
reference's fold, and must pass the whole suite.  Each entry of ``MUTANTS`` flips one rule the
way a real port might get it wrong; ``KILLED_BY`` names the property that must catch it, and
every property appears there at least once, so every property is shown to be able to fail.

Use one from the command line, e.g.
``numaspec conformance --impl mutants:MUTANTS.old_preferred_rule`` (with ``tests`` on the path).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import attrs

from numaspec import NumaMask, TopologyHint
from numaspec.conformance.implementations.adapter import ErrorAnswer, MergeAnswer
from numaspec.conformance.properties.oracle import (
    Candidate,
    mean_distance,
    non_preferred_key,
    prefer_closest_set,
    target_of,
)
from numaspec.errors import NumaspecError
from numaspec.protocols.merge_protocol import MergeRequest
from numaspec.topology.hints import flatten_provider_hints, permutations
from numaspec.topology.policies import MergeOutcome, check_startup, filter_single_numa_hints
from numaspec.topology.versions import SUPPORTED_VERSIONS

__all__ = ["KILLED_BY", "MUTANTS", "MUTATIONS", "BruteForce"]

MUTATIONS = (
    "old_preferred_rule",         # 1.24+ still calls a merge preferred when masks differ
    "narrowest_non_preferred",    # 1.24+ still picks the narrowest non-preferred candidate
    "reversed_tiebreak",          # equal-width masks: the numerically larger wins
    "null_as_empty",              # a hint without affinity taken as an empty mask
    "sn_without_null_rule",       # single-numa-node keeps the all-nodes mask instead of nil
    "first_seen_tiebreak",        # equal-width preferred masks: first enumerated wins
    "restricted_admits_non_preferred",
    "closest_under_sn",           # prefer-closest applied under single-numa-node
    "closest_ignored",            # prefer-closest-numa-nodes has no effect
    "union_merge",                # affinities ORed instead of ANDed
    "none_checks_node_count",     # the none policy refuses machines with many nodes
    "empty_as_no_preference",     # a resource mapped to [] taken like one mapped to null
    "node_limit_ignores_option",  # max-allowable-numa-nodes ignored: always 8
    "distances_optional",         # prefer-closest runs without distances
    "subsets_sorted",             # subsets enumerated in id order, not the given order
    "option_words_swapped",       # a bad option value worded as the other option's parser
)


@attrs.define
class BruteForce:
    mutation: str | None = None
    kubelet_versions: Sequence[object] = SUPPORTED_VERSIONS

    @property
    def name(self) -> str:
        return f"mutant:{self.mutation}" if self.mutation else "brute-force"

    def _m(self, mutation: str) -> bool:
        return self.mutation == mutation

    def subsets(self, nodes: Sequence[int]) -> list[tuple[int, ...]]:
        from itertools import combinations

        ordered = sorted(nodes) if self._m("subsets_sorted") else list(nodes)
        return [c for k in range(1, len(ordered) + 1) for c in combinations(ordered, k)]

    def merge(self, request: MergeRequest) -> MergeAnswer:
        try:
            return self._merge(request)
        except NumaspecError as exc:
            words = exc.kubelet_message
            if self._m("option_words_swapped") and words is not None:
                # OPT-4, RUN-11: the kind is right, the words are the other parser's.
                boolean, integer = "bad value for option ", \
                    "unable to convert policy option to integer "
                words = words.replace(boolean, integer) if boolean in words else \
                    words.replace(integer, boolean)
            return ErrorAnswer(exc.kind, exc.describe(), words)

    def _startup(self, request: MergeRequest) -> None:
        options = dict(request.policy_options)
        numa = request.numa_info()
        if self._m("node_limit_ignores_option"):
            options.pop("max-allowable-numa-nodes", None)
        if self._m("distances_optional"):
            options.pop("prefer-closest-numa-nodes", None)
        if self._m("none_checks_node_count") and request.policy == "none" \
                and len(request.numa_nodes) > 8:
            check_startup("best-effort", numa, request.version, {}, request.feature_gates)
        check_startup(request.policy, numa, request.version, options, request.feature_gates)

    def _lists(self, request: MergeRequest) -> list[Sequence[TopologyHint]]:
        providers = request.providers
        if self._m("empty_as_no_preference"):
            providers = tuple(p if not p else {k: v or None for k, v in p.items()}
                              for p in providers)
        lists = flatten_provider_hints(providers)
        if self._m("null_as_empty"):
            lists = [tuple(TopologyHint(NumaMask(0), h.preferred) if h.numa_affinity is None
                           else h for h in hints) for hints in lists]
        return lists

    def _candidates(self, request: MergeRequest, lists: Sequence[Sequence[TopologyHint]],
                    *, keep_empty: bool = False) -> list[Candidate]:
        machine = NumaMask.of(request.numa_nodes).bits
        out = []
        for perm in permutations(lists):
            masks = [h.numa_affinity.bits for h in perm if h.numa_affinity is not None]
            bits = machine
            for m in masks:
                bits = (bits | m) & machine if self._m("union_merge") else bits & m
            preferred = all(h.preferred for h in perm)
            if request.version.minor >= 24 and len(set(masks)) > 1 \
                    and not self._m("old_preferred_rule"):
                preferred = False
            if bits or keep_empty:
                out.append(Candidate(bits, preferred))
        return out

    def _tie(self, request: MergeRequest, bits: int, order: int) -> tuple[float, int]:
        closest = (prefer_closest_set(request) and not self._m("closest_ignored")
                   and (request.policy != "single-numa-node" or self._m("closest_under_sn")))
        avg, raw = (mean_distance(request, bits) if closest else 0.0), bits
        if self._m("reversed_tiebreak"):
            raw = -raw
        if self._m("first_seen_tiebreak"):
            raw = order
        return avg, raw

    def _merge(self, request: MergeRequest) -> MergeOutcome:
        self._startup(request)
        if not request.policy:  # POLICY-5: the configuration's defaulting makes it none
            request = attrs.evolve(request, policy="none")
        if self._m("distances_optional"):  # ... and then runs without prefer-closest
            request = attrs.evolve(request, policy_options={
                k: v for k, v in request.policy_options.items()
                if k != "prefer-closest-numa-nodes"})
        scored = request.version.minor >= 38  # HINT-5: every answer has a score from 1.38
        if request.policy == "none":
            return MergeOutcome(TopologyHint(None, False), True,
                                frozenset({0}) if scored else None)
        lists = self._lists(request)
        if request.policy == "single-numa-node":
            lists = filter_single_numa_hints(lists)
        machine = NumaMask.of(request.numa_nodes)
        found = self._candidates(request, lists)
        order = {c.bits: i for i, c in reversed(list(enumerate(found)))}
        preferred = [c for c in found if c.preferred]
        if preferred:
            best = min(preferred, key=lambda c: (c.bits.bit_count(),
                                                 *self._tie(request, c.bits, order[c.bits])))
            hint = TopologyHint(NumaMask(best.bits), True)
        elif found:
            target = target_of(lists)
            if self._m("narrowest_non_preferred"):
                target = 0

            def rank(c: Candidate) -> tuple[int, int, float, int]:
                band, width, _, _ = non_preferred_key(request, target, c.bits)
                return (band, width, *self._tie(request, c.bits, order[c.bits]))

            hint = TopologyHint(NumaMask(min(found, key=rank).bits), False)
        else:
            hint = TopologyHint(machine, False)
        if scored:
            hint = attrs.evolve(hint, score=self._first_score(request, lists, hint))
        scores = frozenset({hint.score}) if scored else None
        if request.policy == "single-numa-node":
            if hint.numa_affinity == machine and not self._m("sn_without_null_rule"):
                hint = TopologyHint(None, hint.preferred)
                scores = frozenset({0}) if scored else None
            return MergeOutcome(hint, hint.preferred, scores)
        admit = request.policy == "best-effort" or hint.preferred or self._m(
            "restricted_admits_non_preferred")
        return MergeOutcome(hint, admit, scores)

    def _first_score(self, request: MergeRequest, lists: Sequence[Sequence[TopologyHint]],
                     hint: TopologyHint) -> int:
        """MERGE-13, MERGE-14, by brute force: the mean of the positive scores of the hints
        with an affinity, in the first permutation (in walking order) that merges to ``hint``."""
        assert hint.numa_affinity is not None
        for perm, found in zip(permutations(lists), self._candidates(request, lists,
                                                                      keep_empty=True),
                               strict=True):
            if found.bits == hint.numa_affinity.bits and found.preferred == hint.preferred:
                scores = [h.score for h in perm if h.numa_affinity is not None and h.score > 0]
                return sum(scores) // len(scores) if scores else 0
        return 0  # MERGE-10: the machine, which no permutation gave


MUTANTS = SimpleNamespace(**{m: BruteForce(m) for m in MUTATIONS})
brute_force = BruteForce()

#: For every mutant, the properties that must reject it; every property appears at least once.
KILLED_BY = {
    "old_preferred_rule": ("P-EQUAL-MASKS", "P-EQUIVALENCE", "P-PREFERRED-NARROWEST"),
    "narrowest_non_preferred": ("P-NON-PREFERRED-RANK",),
    "reversed_tiebreak": ("P-PREFERRED-NARROWEST", "P-MERGE-LARGE"),
    "null_as_empty": ("P-NO-PREFERENCE-NEUTRAL",),
    "sn_without_null_rule": ("P-SINGLE-NUMA-NODE",),
    "first_seen_tiebreak": ("P-ORDER-INDEPENDENT",),
    "restricted_admits_non_preferred": ("P-ADMISSION",),
    "closest_under_sn": ("P-SINGLE-NUMA-NODE",),
    "closest_ignored": ("P-PREFERRED-CLOSEST", "P-MERGE-LARGE"),
    "union_merge": ("P-MERGED-INSIDE",),
    "none_checks_node_count": ("P-NONE",),
    "empty_as_no_preference": ("P-NO-PLACEMENT",),
    "node_limit_ignores_option": ("P-TOO-MANY-NUMA-NODES",),
    "distances_optional": ("P-DISTANCES-REQUIRED",),
    "subsets_sorted": ("P-SUBSETS",),
    "option_words_swapped": ("P-EQUIVALENCE",),
}
