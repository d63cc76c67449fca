"""Every property can fail: each is shown failing on a deliberately wrong implementation,
and every mutant is rejected by the suite.  The unmutated brute-force implementation passes
everything, so the failures are the mutations' doing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import Phase, settings
from mutants import KILLED_BY, MUTANTS, MUTATIONS, brute_force

from numaspec.conformance.properties import PROPERTIES

PAIRS = [(m, p) for m in MUTATIONS for p in KILLED_BY[m]]


def test_every_property_is_shown_to_fail_on_some_mutant() -> None:
    assert {p for _, p in PAIRS} == set(PROPERTIES)
    assert set(KILLED_BY) == set(MUTATIONS)


def test_at_least_eight_mutants() -> None:
    assert len(MUTATIONS) >= 8


@pytest.fixture
def no_shrinking() -> Iterator[None]:
    """A mutant only has to be caught: no shrinking, and at most 100 examples (under pytest
    Hypothesis keeps generating after the first failure; the targeted strategies make the
    first failure come early).  Derandomized under every profile, so whether the suite
    rejects a mutant is a fixed, reproducible fact rather than a property of the seed."""
    active = settings.default
    assert active is not None
    settings.register_profile("numaspec-mutants", settings(
        active, phases=[Phase.explicit, Phase.reuse, Phase.generate], report_multiple_bugs=False,
        max_examples=min(active.max_examples, 100), derandomize=True, database=None))
    settings.load_profile("numaspec-mutants")
    yield
    settings.register_profile("numaspec-restore", active)
    settings.load_profile("numaspec-restore")


@pytest.mark.usefixtures("no_shrinking")
@pytest.mark.parametrize(("mutation", "prop_id"), PAIRS)
def test_suite_rejects_mutant(mutation: str, prop_id: str) -> None:
    prop = PROPERTIES[prop_id]
    with pytest.raises((AssertionError, ExceptionGroup)):
        prop.check(getattr(MUTANTS, mutation))


@pytest.mark.parametrize("prop_id", sorted(PROPERTIES))
def test_unmutated_brute_force_passes(prop_id: str) -> None:
    PROPERTIES[prop_id].check(brute_force)
