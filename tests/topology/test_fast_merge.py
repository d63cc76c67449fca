"""FAST-1..FAST-7: the fast merge returns exactly what the definitional walk returns.

Three kinds of evidence (spec/topology/fast-merge.md): a Hypothesis property over the whole merge
input space (every release, mode, prefer-closest, distances, stray bits, empty and free hints,
long lists, and the fast merge's regimes); exhaustive enumeration of small domains, each with
its size recorded; and the ranking of FAST-5 against MERGE-8's pairwise fold on every pair of
masks on 5 nodes.  Four wrong fast merges (tools/numaspec_tools/mutants/fast_merge_mutants.py) show
that the
property can fail."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings

from numaspec.conformance.properties.fast_equivalence import (
    FastCase,
    check_fast_equivalence,
    domain_size,
    exhaust,
    fast_cases,
)
from numaspec.conformance.running.profiles import active_profile
from numaspec.topology.fast_merge import Space, Tuning, _choose_count, _Ranker, fast_merge
from numaspec.topology.hints import TopologyHint
from numaspec.topology.masks import NumaMask
from numaspec.topology.merge import Chooser, _better_non_preferred
from numaspec.topology.numa import NumaInfo
from numaspec.topology.options import PolicyOptions
from numaspec.topology.versions import parse_version
from numaspec_tools.mutants.fast_merge_mutants import FAST_MUTANTS

#: FAST-1's property: examples per profile (the nightly profile's is the issue's 100,000).
EXAMPLES = {"dev": 300, "ci": 1000, "triage": 1000, "nightly": 100_000}[active_profile()]

H = TopologyHint


def _case(lists: list[list[TopologyHint]], version: str = "1.37", nodes: tuple[int, ...] = (0, 1),
          closest: bool = False) -> FastCase:
    distances = {n: tuple(10 if n == m else 20 + n + m for m in range(max(nodes) + 1))
                 for n in nodes}
    return FastCase(tuple(map(tuple, lists)), NumaInfo(nodes, distances), parse_version(version),
                    "best-effort", PolicyOptions(prefer_closest_numa_nodes=closest))


# MERGE-3: {0} and {0,1} both preferred are no preferred permutation from 1.24, one up to 1.23.
@example(_case([[H(NumaMask.of([0]), True)], [H(NumaMask.of([0, 1]), True)]]))
@example(_case([[H(NumaMask.of([0]), True)], [H(NumaMask.of([0, 1]), True)]], "1.23"))
# MERGE-8's target counts bits off the machine: {0,5} is 2 wide on a 2-node machine.
@example(_case([[H(NumaMask.of([0, 5]), False), H(NumaMask.of([0, 1]), False)],
                [H(NumaMask.of([0]), False), H(NumaMask.of([0, 1]), False)]]))
# A hint without an affinity is the whole machine, not nothing.
@example(_case([[H(None, False), H(NumaMask.of([1]), False)], [H(NumaMask.of([0]), False)]]))
@example(_case([], "1.20"))
@example(_case([[]]))
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(fast_cases())
def test_fast_merge_is_the_definitional_merge(case: FastCase) -> None:  # FAST-1..5
    # FAST-1, FAST-2, FAST-3 (stray bits, free hints), FAST-4 (the tuning), FAST-5.
    check_fast_equivalence(case)


#: Small domains compared exhaustively (FAST-1), under tunings that force each regime (FAST-4).
DOMAINS = [((2, 2, 2), "sets"), ((2, 2, 2), "sorted"), ((2, 2, 2), "transform"),
           ((1, 3, 2), "sets"), ((2, 3, 1), "sets"), ((3, 2, 1), "transform")]
TUNINGS = {"sets": Tuning(), "sorted": Tuning(small_work=0, zeta_factor=1e12, small_select=0),
           "transform": Tuning(small_work=0, zeta_factor=0.0)}
#: The issue's shape, 3 lists of 2 hints on 2 nodes (4,389,875 merges), in shards.
BIG_SHARDS = 8


@pytest.mark.parametrize(("bounds", "regime"), DOMAINS,
                         ids=[f"{b[0]}n-{b[1]}l-{b[2]}h-{r}" for b, r in DOMAINS])
@pytest.mark.slow
def test_exhaustive_small_domain(bounds: tuple[int, int, int], regime: str,
                                 record_property: Callable[[str, object], None]) -> None:
    result = exhaust(*bounds, tuning=TUNINGS[regime])
    record_property("merges_compared", result.compared)
    assert result.compared == result.domain == domain_size(*bounds)
    assert result.differences == []


@pytest.mark.skipif(active_profile() != "nightly" and not os.environ.get("NUMASPEC_EXHAUSTIVE"),
                    reason="151 s of CPU: runs in the nightly profile or with "
                           "NUMASPEC_EXHAUSTIVE=1 (last run: 4,389,875 merges, 0 differences)")
@pytest.mark.parametrize("shard", range(BIG_SHARDS))
def test_exhaustive_three_lists_of_two_hints(shard: int,
                                            record_property: Callable[[str, object], None]
                                            ) -> None:
    result = exhaust(2, 3, 2, shard=(shard, BIG_SHARDS))
    record_property("merges_compared", result.compared)
    assert result.domain == 4_389_875
    assert result.differences == []


def test_ranking_is_merge_8s_fold_on_every_pair() -> None:  # FAST-2, FAST-5
    """On 5 nodes, for every target 0..6, with and without prefer-closest: the count FAST-5
    chooses and the mask it prefers within it agree with ``_better_non_preferred`` on every
    ordered pair of non-empty masks."""
    nodes = tuple(range(5))
    numa = NumaInfo(nodes, {n: tuple(10 + n if n == m else 11 + (n * 7 + m * 3) % 9
                                     for m in nodes) for n in nodes})
    space = Space(numa)
    masks = list(range(1, 32))
    for closest, target in itertools.product((False, True), range(7)):
        chooser = Chooser(numa, "best-effort", PolicyOptions(prefer_closest_numa_nodes=closest))
        ranker = _Ranker(space, numa, closest, Tuning())
        for a, b in itertools.product(masks, masks):
            fold = _better_non_preferred(H(NumaMask(a), False), H(NumaMask(b), False), target,
                                         chooser).numa_affinity
            pair = {a, b}
            best = ranker.best_of_count(pair, _choose_count({a.bit_count(), b.bit_count()},
                                                            target))
            assert fold == NumaMask(best), (closest, target, a, b)


KILL = settings(max_examples=3000, derandomize=True, database=None, deadline=None,
                phases=[Phase.explicit, Phase.generate], report_multiple_bugs=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("name", sorted(FAST_MUTANTS))
@pytest.mark.slow
def test_equivalence_property_kills_the_mutant(name: str) -> None:
    mutant = FAST_MUTANTS[name]

    @KILL
    @given(fast_cases())
    def against_mutant(case: FastCase) -> None:
        check_fast_equivalence(case, mutant)

    with pytest.raises(AssertionError, match="fast merge"):
        against_mutant()


@pytest.mark.parametrize("name", sorted(FAST_MUTANTS))
@pytest.mark.slow
def test_exhaustion_finds_the_mutant(name: str) -> None:
    assert exhaust(2, 2, 2, fast=FAST_MUTANTS[name]).differences


def test_fast_merge_reports_how() -> None:  # FAST-7
    lists = [[H(NumaMask.of([0]), True), H(NumaMask.of([0, 1]), False)],
             [H(NumaMask.of([1]), False), H(None, True)]]
    numa = NumaInfo((0, 1))
    found = fast_merge(lists, numa, parse_version("1.37"), "best-effort", PolicyOptions(),
                       witness=True)
    assert found.hint == H(NumaMask.of([0]), True)
    assert found.permutations == 4
    assert found.witness == (lists[0][0], lists[1][1])
    assert fast_merge([[], *lists], numa, parse_version("1.37"), "restricted",
                      PolicyOptions()).rule == "MERGE-10"
