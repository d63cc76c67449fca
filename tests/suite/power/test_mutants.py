"""Every property can fail: each is shown failing on a deliberately wrong implementation,
and every mutant is rejected by the suite.  The unmutated brute-force implementation passes
everything, so the failures are the mutations' doing."""

from __future__ import annotations

import pytest

from numaspec.conformance.properties import PROPERTIES
from numaspec_tools import REPO
from numaspec_tools.mutants import KILLED_BY, MUTANTS, MUTATIONS, brute_force
from numaspec_tools.mutants.affinity_mutants import (
    AFFINITY_KILLED_BY,
    AFFINITY_MUTATIONS,
    AffinityMutant,
)
from numaspec_tools.testing.kill import for_kill

PAIRS = [(m, p) for m in MUTATIONS for p in KILLED_BY[m]]
#: NUMA-level inter-pod affinity (spec chapter affinity.md): its own mutants, the reference
#: with one rule broken, since those properties speak of node sessions, not merges.
AFFINITY_PAIRS = [(m, p) for m in AFFINITY_MUTATIONS for p in AFFINITY_KILLED_BY[m]]
MERGE_PROPERTIES = sorted(p for p, prop in PROPERTIES.items() if prop.op == "merge")
AFFINITY_PROPERTIES = sorted(p for p, prop in PROPERTIES.items() if prop.op == "affinity")





#: Properties whose mutants run elsewhere: the node sessions' and start-ups' through the
#: command line (tests/suite/power/test_mutants_exec.py), P-PREDICT's as a scheduler that says
#: every pod fits
#: (tests/node/test_predict.py), the allocator's as in-process allocators (tests/dra/test_dra.py),
#: the
#: CPU allocator's likewise (tests/protocols/test_cpus_op.py).
ELSEWHERE = {"P-NODE-SESSION": "tests/suite/power/test_mutants_exec.py",
             "P-HINTS-SESSION": "tests/suite/power/test_mutants_exec.py",
             "P-NODE-STARTUP": "tests/suite/power/test_mutants_exec.py",
             "P-NODE-RESIZE": "tests/suite/power/test_mutants_exec.py",
             "P-CPU-PLACEMENT": "tests/suite/power/test_mutants_exec.py",
             "P-INIT-HANDOFF": "tests/suite/power/test_mutants_exec.py",
             "P-RESIZE-POD-SCOPE": "tests/suite/power/test_mutants_exec.py",
             "P-NODE-MALFORMED": "tests/suite/power/test_mutants_exec.py",
             "P-QUANTITY-SPELLING": "tests/suite/power/test_mutants_exec.py",
             "P-PREDICT": "tests/node/test_predict.py",
             "P-ALLOCATE": "tests/dra/test_dra.py",
             "P-ALLOCATE-SOUND": "tests/dra/test_dra.py",
             "P-ALLOCATE-MALFORMED": "tests/dra/test_dra.py",
             "P-CPUS": "tests/protocols/test_cpus_op.py",
             "P-CPUS-SOUND": "tests/protocols/test_cpus_op.py"}


def test_every_property_is_shown_to_fail_on_some_mutant() -> None:
    assert {p for _, p in PAIRS} == set(MERGE_PROPERTIES)
    assert {p for _, p in AFFINITY_PAIRS} == set(AFFINITY_PROPERTIES)
    assert set(MERGE_PROPERTIES) | set(AFFINITY_PROPERTIES) | set(ELSEWHERE) == set(PROPERTIES)
    for prop, test in ELSEWHERE.items():
        assert prop in (REPO / test).read_text(encoding="utf-8")
    assert set(KILLED_BY) == set(MUTATIONS)
    assert set(AFFINITY_KILLED_BY) == set(AFFINITY_MUTATIONS)


def test_at_least_eight_mutants() -> None:
    assert len(MUTATIONS) >= 8


@pytest.mark.parametrize(("mutation", "prop_id"), PAIRS)
def test_suite_rejects_mutant(mutation: str, prop_id: str) -> None:
    with for_kill(PROPERTIES[prop_id].check) as check, pytest.raises(
            (AssertionError, ExceptionGroup)):
        check(getattr(MUTANTS, mutation))


@pytest.mark.parametrize("prop_id", MERGE_PROPERTIES)
def test_unmutated_brute_force_passes(prop_id: str) -> None:
    PROPERTIES[prop_id].check(brute_force)


@pytest.mark.parametrize(("mutation", "prop_id"), AFFINITY_PAIRS)
def test_suite_rejects_affinity_mutant(mutation: str, prop_id: str) -> None:
    """AFF-*, SCHED-*: each affinity mutant is caught by the property named for it."""
    with for_kill(PROPERTIES[prop_id].check) as check, pytest.raises(
            (AssertionError, ExceptionGroup)):
        check(AffinityMutant(mutation))



def test_unmutated_affinity_mutant_is_the_reference() -> None:
    """With no mutation the harness answers exactly as the reference, which passes every
    affinity property (tests/suite/test_reference_conforms.py): the failures above are the
    mutations' doing."""
    from numaspec.conformance.properties.affinity import _D1
    from numaspec.protocols.adapter_protocol import reference_result

    case = _D1.case()
    assert AffinityMutant().affinity_session(case) == reference_result("affinity", case)
    assert AffinityMutant("or_keys").affinity_session(case) != reference_result("affinity",
                                                                                 case)
