"""CrossHair, kept where it is measured to find what enumeration finds
(spec/conformance/checking.md).

CrossHair checks the contracts (PEP 316 docstrings) of the mask and
merge modules (the fast merge's count choice, FAST-5, among them) with a bounded budget, and
(CHECK-8) the contracts of ``numaspec.conformance.checking.contracts``: harnesses that run the
CPU, Memory and Device Managers' allocate and release on a node built from a few small ints
(INV-1, INV-4, INV-5, INV-6, INV-9, CPU-17, DEV-7), each shown able to fail by a wrong manager
in ``tools/numaspec_tools/mutants/crosshair_node_mutants.py`` that CrossHair breaks within the same
budget.
A counterexample to a real contract fails the test; otherwise each condition's verdict is
reported as CrossHair gives it: "confirmed over all paths" or "not confirmed" (no
counterexample within the budget, which is *not* a proof).

CHECK-9: ``crosshair diffbehavior`` is kept only for pairs of functions of a few small ints
where it finds a difference that enumeration of the small domain counts
(``tools/numaspec_tools/mutants/crosshair_diff.py``); on the merge over hint lists it found none
where
enumeration finds hundreds, so there Hypothesis driven by CrossHair is measured instead."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable

import pytest

from numaspec_tools import REPO

MODULES = ["numaspec.topology.masks", "numaspec.topology.merge", "numaspec.topology.fast_merge"]
BUDGET = ["--max_uninteresting_iterations=20", "--per_condition_timeout=10"]
#: CHECK-8: the node harnesses run whole managers on every path, so a condition gets 3 s
#: (a handful of paths each); their mutants are broken within the same budget.
NODE = "numaspec.conformance.checking.contracts"
NODE_BUDGET = ["--max_uninteresting_iterations=20", "--per_condition_timeout=3"]
#: CHECK-8: the mutants' budget.  CrossHair stops at the first counterexample, so a longer
#: timeout costs nothing where it finds one; 3 s per condition was too short on a machine busy
#: building Go modules (a CI run with cold caches met no precondition of one mutant in time).
MUTANT_BUDGET = ["--max_uninteresting_iterations=200", "--per_condition_timeout=60"]
#: CHECK-9: the budget of ``crosshair diffbehavior`` (the FAST-5 pair needs more than 10
#: uninteresting iterations: with 10 it reports no difference).
DIFF_BUDGET = ["--max_uninteresting_iterations=20", "--per_path_timeout=2",
               "--per_condition_timeout=10"]


#: Hypothesis loads its plugins' entry points when imported; trio (which Selenium brings for
#: the site's browser check) is one, and its import runs ``ldconfig``, a side effect CrossHair
#: refuses to import code over.  The contracts need no plugin.
NO_PLUGINS = {**os.environ, "HYPOTHESIS_NO_PLUGINS": "1"}


def crosshair(*targets: str, budget: list[str] = BUDGET) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "crosshair", "check", "--report_all", *budget,
                          *targets], capture_output=True, text=True, timeout=900,
                         cwd=REPO, env=NO_PLUGINS)
    return (out.stdout + out.stderr).splitlines()


def conditions(function: Callable[..., object]) -> list[str]:
    """The PEP 316 lines (``pre:`` and ``post:``) of a function's docstring."""
    return [line.strip() for line in (function.__doc__ or "").splitlines()
            if line.strip().startswith(("pre:", "post:"))]


@pytest.mark.crosshair
@pytest.mark.slow
def test_contracts_hold_within_budget(record_property: Callable[[str, object], None]) -> None:
    lines = crosshair(*MODULES)
    errors = [line for line in lines if ": error:" in line]
    assert errors == [], "\n".join(errors)
    verdicts = Counter(line.split(": info: ", 1)[1].strip().rstrip(".")
                       + " (mask, merge and fast-merge contracts)"
                       for line in lines if ": info: " in line)
    record_property("crosshair_verdicts", dict(verdicts))  # printed in the run's summary
    assert sum(verdicts.values()) >= 10, lines  # the contracts were actually analysed


@pytest.mark.crosshair
@pytest.mark.slow
def test_crosshair_finds_a_broken_contract() -> None:
    lines = crosshair("numaspec_tools.mutants.crosshair_mutant")
    assert any(": error:" in line for line in lines), lines


@pytest.mark.crosshair
@pytest.mark.slow
def test_node_contracts_hold_within_budget(
        record_property: Callable[[str, object], None]) -> None:
    """CHECK-8: no counterexample to the node harnesses' contracts within the budget."""
    lines = crosshair(NODE, budget=NODE_BUDGET)
    errors = [line for line in lines if ": error:" in line]
    assert errors == [], "\n".join(errors)
    verdicts = Counter(line.split(": info: ", 1)[1].strip().rstrip(".") + " (node contracts)"
                       for line in lines if ": info: " in line)
    record_property("crosshair_verdicts", dict(verdicts))  # printed in the run's summary
    assert sum(verdicts.values()) == 6, lines  # two conditions of each of the three harnesses


def test_node_mutants_claim_the_real_contracts() -> None:
    """CHECK-8: each mutant harness carries its real harness's preconditions and one of its
    postconditions, word for word, and every real postcondition has a mutant."""
    from numaspec.conformance.checking import contracts
    from numaspec_tools.mutants import crosshair_node_mutants as mutants

    broken: set[tuple[str, str]] = set()
    for name, real_name in mutants.MUTANT_OF.items():
        mutant, real = conditions(getattr(mutants, name)), conditions(getattr(contracts,
                                                                               real_name))
        assert [c for c in mutant if c.startswith("pre:")] == [
            c for c in real if c.startswith("pre:")], name
        posts = [c for c in mutant if c.startswith("post:")]
        assert len(posts) == 1, name
        assert posts[0] in real, name
        broken.add((real_name, posts[0]))
    assert broken == {(name, c) for name in set(mutants.MUTANT_OF.values())
                      for c in conditions(getattr(contracts, name)) if c.startswith("post:")}


@pytest.mark.crosshair
@pytest.mark.slow
def test_crosshair_breaks_every_node_mutant() -> None:
    """CHECK-8: within the node contracts' budget CrossHair finds a counterexample to every
    mutant harness."""
    from numaspec_tools.mutants import crosshair_node_mutants as mutants

    lines = crosshair("numaspec_tools.mutants.crosshair_node_mutants", budget=MUTANT_BUDGET)
    broken = {line.split("when calling ", 1)[1].split("(", 1)[0] for line in lines
              if ": error: false when calling " in line}
    assert broken == set(mutants.MUTANT_OF), lines


@pytest.mark.crosshair
@pytest.mark.slow
@pytest.mark.parametrize(("pair", "differing"), [
    ("fast-5-count-choice", 36), ("mask-2-narrower", 88), ("dev-3-1.35-vs-1.36", 11)])
def test_diffbehavior_finds_what_enumeration_finds(
        pair: str, differing: int, record_property: Callable[[str, object], None]) -> None:
    """CHECK-9: enumeration of the pair's small domain counts the inputs where the two
    functions differ; ``crosshair diffbehavior`` must report one of them."""
    import ast

    from numaspec_tools.mutants import crosshair_diff

    first, second = (getattr(crosshair_diff, target.rsplit(".", 1)[1])
                     for target in crosshair_diff.PAIRS[pair])
    found = {args for args in crosshair_diff.DOMAINS[pair]()
             if first(*args) != second(*args)}
    assert len(found) == differing
    out = subprocess.run([sys.executable, "-m", "crosshair", "diffbehavior",
                          *crosshair_diff.PAIRS[pair], *DIFF_BUDGET],
                         capture_output=True, text=True, timeout=600, cwd=REPO,
                         env=NO_PLUGINS)
    given = [line for line in out.stdout.splitlines() if line.startswith("Given: (")]
    assert out.returncode == 1, out.stdout + out.stderr
    assert given, out.stdout
    call = ast.parse("f" + given[0].removeprefix("Given: ").rstrip(","), mode="eval").body
    assert isinstance(call, ast.Call)
    args = tuple(ast.literal_eval(keyword.value) for keyword in call.keywords)
    record_property("crosshair_diffbehavior", f"{pair}: {args}")
    assert args in found  # a difference enumeration counts, not one outside the domain


@pytest.mark.crosshair
@pytest.mark.slow
def test_the_crosshair_backend_finds_what_enumeration_finds() -> None:
    """Measured against exhaustion (spec/conformance/checking.md): on 2 NUMA nodes and two lists
    of two hints, enumeration finds every input where 1.24's merge (MERGE-3, MERGE-8) answers
    otherwise than 1.23's; Hypothesis driven by CrossHair (hypothesis-crosshair) must find one
    too within a small budget, where ``crosshair diffbehavior`` was seen to find none."""
    import itertools

    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    from numaspec.topology.hints import TopologyHint
    from numaspec.topology.masks import NumaMask
    from numaspec.topology.merge import best_hint
    from numaspec.topology.numa import NumaInfo
    from numaspec.topology.options import PolicyOptions
    from numaspec.topology.versions import parse_version

    numa = NumaInfo((0, 1))
    masks = [None, NumaMask.of([0]), NumaMask.of([1]), NumaMask.of([0, 1])]
    hints = [TopologyHint(m, p) for m in masks for p in (False, True)]

    def differ(lists: list[list[TopologyHint]]) -> bool:
        return (best_hint(lists, numa, parse_version("1.23"), "restricted", PolicyOptions())
                != best_hint(lists, numa, parse_version("1.24"), "restricted",
                             PolicyOptions()))

    domain = [[list(a), list(b)] for a, b in itertools.product(
        itertools.product(hints, repeat=2), repeat=2)]
    assert sum(differ(lists) for lists in domain) == 936  # of 4,096

    @settings(backend="crosshair", max_examples=100, database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(st.lists(st.lists(st.builds(TopologyHint, st.sampled_from(masks), st.booleans()),
                             min_size=2, max_size=2), min_size=2, max_size=2))
    def same(lists: list[list[TopologyHint]]) -> None:
        assert not differ(lists)

    with pytest.raises(AssertionError, match="assert not True"):
        same()  # a failing example: an input where the two releases differ
