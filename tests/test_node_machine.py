"""The stateful node test passes on the reference and rejects every node mutant.  Under the
ci profile the reference run is 300 examples of 30 steps.

It checks INV-1, INV-2, INV-3, INV-4, INV-5, INV-6, INV-7, INV-8 and INV-9 after every step
(INV-3 and INV-9 from 1.32, where kubelet guarantees them), over nodes and pods built through
the node protocol (NWIRE-1, NWIRE-2, NWIRE-3), with both scopes and every policy (ADMIT-1,
ADMIT-2, ADMIT-3, ADMIT-4, ADMIT-5, ADMIT-6), and devices (DEV-1, DEV-2, DEV-3, DEV-4, DEV-5,
DEV-6, DEV-7).  The mutants break CPU-8, CPU-15, MEM-4, MEM-7 and NODE-6's neighbours."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from mutants.node_mutants import NODE_MUTATIONS, MutantNode

from numaspec.conformance.node_machine import ReferenceNode, make_node_machine

STEPS = 30


def test_reference_passes_the_node_machine() -> None:
    """The reference against the invariants alone (comparing it with itself proves nothing)."""
    machine = make_node_machine(ReferenceNode, compare=False)
    current = settings()
    run_state_machine_as_test(machine, settings=settings(
        current, max_examples=max(current.max_examples, 200), stateful_step_count=STEPS))


#: Kills are fixed facts: one seed, no shrinking, a fixed budget under every profile.
KILL = settings(max_examples=300, stateful_step_count=STEPS, database=None, derandomize=True,
                phases=[Phase.explicit, Phase.generate], report_multiple_bugs=False,
                deadline=None, suppress_health_check=list(HealthCheck))
#: The mutants the invariants catch without any comparison with the reference.
CAUGHT_BY_INVARIANTS = ("free_not_decremented", "reserved_cpus_handed_out",
                        "sidecar_cpus_reused")


@pytest.mark.parametrize("mutation", sorted(NODE_MUTATIONS))
def test_node_mutant_is_rejected(mutation: str) -> None:
    machine = make_node_machine(lambda: MutantNode(mutation))
    with pytest.raises(AssertionError):
        run_state_machine_as_test(machine, settings=KILL)


@pytest.mark.parametrize("mutation", CAUGHT_BY_INVARIANTS)
def test_node_mutant_breaks_an_invariant(mutation: str) -> None:
    machine = make_node_machine(lambda: MutantNode(mutation), compare=False)
    with pytest.raises(AssertionError, match="INV-"):
        run_state_machine_as_test(machine, settings=KILL)
