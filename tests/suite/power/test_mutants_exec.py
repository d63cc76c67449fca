"""The node and affinity mutants through the command line alone (issue 16): each runs as an
``exec:`` adapter (tools/numaspec_tools/mutants/exec_adapter.py: the reference with one mutation,
behind the
adapter protocol), and ``numaspec conformance --impl exec:...`` rejects it with no in-process
access: the node mutants by P-NODE-SESSION, the node sessions drawn through the protocol
(INV-1..INV-9, ADMIT-10, and every answer the reference's), the affinity mutants by the
properties affinity_mutants.AFFINITY_KILLED_BY names.  The unmutated adapter passes them all.

The mutants include bugs peers really have (../shared/research/peers.md section 2): init
containers' CPUs and devices not reused (kubernetes#56022, #93189), a sidecar's CPUs or
devices shared with app containers (kubernetes#119442, #131379), the preferred width taken
from free CPUs (kubernetes#84597's reading), memory groups not modelled (kubernetes#123443).

The ``triage`` profile (the ci examples and seed, no shrinking) keeps each kill to seconds.
"""

from __future__ import annotations

import io
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from numaspec.conformance.running.reports import read_report
from numaspec_tools.mutants.affinity_mutants import AFFINITY_KILLED_BY
from numaspec_tools.mutants.node_mutants import HINTS_ONLY as HINTS_ONLY_MUTATIONS
from numaspec_tools.mutants.node_mutants import NODE_MUTATIONS
from numaspec_tools.rotation import ROTATING_PROFILE, commit_seed, rotated, this_commits

#: The mutant behind the adapter protocol, run as its own process.
ADAPTER = "-m numaspec_tools.mutants.exec_adapter"
#: The properties that draw node sessions through the protocol.
NODE_SESSION_PROPERTIES = ("P-NODE-SESSION", "P-HINTS-SESSION")
#: Mutants P-HINTS-SESSION must reject too (it asks hints as well as admitting), and the one
#: only it rejects within the budget (a sidecar and an app container of one pod, both with
#: exclusive CPUs, are rare enough in whole sessions).
HINTS_KILLS = ("preferred_by_free_cpus", "init_reuse_ignored", "sidecar_cpus_reused")
HINTS_ONLY = ("sidecar_cpus_reused", *sorted(HINTS_ONLY_MUTATIONS))
#: A third of the node and affinity mutants run on a commit (numaspec_tools.rotation).
GROUPS = 3


def conformance(tmp_path: Path, kind: str, mutation: str, ids: tuple[str, ...],
                profile: tuple[str, ...] = ("--profile", "triage")
                ) -> tuple[int, dict[str, str], str]:
    """``numaspec conformance`` in a process of its own, as a user runs it."""
    impl = f"exec:{shlex.quote(sys.executable)} {ADAPTER} {kind} {mutation}"
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "numaspec", "conformance", "--impl", impl, "-k", ",".join(ids),
         *profile, "--out", str(out), "--timeout", "60"],
        capture_output=True, text=True, timeout=900, cwd=tmp_path)
    _, records, _ = read_report(out / "report.jsonl")
    return done.returncode, {r["id"]: r["verdict"] for r in records}, done.stdout + done.stderr


# A third of the node and affinity mutants run on a commit (rotated by commit,
# numaspec_tools.rotation), every one over the three groups.
@pytest.mark.parametrize("mutation", rotated(sorted(NODE_MUTATIONS), GROUPS,
                                              "the node mutants"))
def test_the_cli_rejects_a_node_mutant(mutation: str, tmp_path: Path) -> None:
    status, verdicts, printed = conformance(tmp_path, "node", mutation, NODE_SESSION_PROPERTIES)
    assert status == 1, printed[-3000:]
    if mutation not in HINTS_ONLY:
        assert verdicts["P-NODE-SESSION"] == "failed", printed[-3000:]
    if mutation in HINTS_KILLS:
        assert verdicts["P-HINTS-SESSION"] == "failed", printed[-3000:]


@pytest.mark.parametrize(("mutation", "properties"),
                         rotated(sorted(AFFINITY_KILLED_BY.items()), GROUPS,
                                 "the affinity mutants"))
def test_the_cli_rejects_an_affinity_mutant(mutation: str, properties: tuple[str, ...],
                                            tmp_path: Path) -> None:
    status, verdicts, printed = conformance(tmp_path, "affinity", mutation, properties)
    assert status == 1, printed[-3000:]
    assert verdicts == dict.fromkeys(properties, "failed"), printed[-3000:]


def test_the_cli_rejects_a_startup_mutant(tmp_path: Path) -> None:
    """P-NODE-STARTUP: a node that reads no feature gate starts where kubelet refuses."""
    status, verdicts, printed = conformance(tmp_path, "startup", "gates_ignored",
                                            ("P-NODE-STARTUP",))
    assert status == 1, printed[-3000:]
    assert verdicts["P-NODE-STARTUP"] == "failed", printed[-3000:]


def test_the_cli_rejects_a_resize_mutant(tmp_path: Path) -> None:
    """P-NODE-RESIZE: a node that accepts every resize without evaluating it."""
    status, verdicts, printed = conformance(tmp_path, "resize", "always_in_progress",
                                            ("P-NODE-RESIZE",))
    assert status == 1, printed[-3000:]
    assert verdicts["P-NODE-RESIZE"] == "failed", printed[-3000:]


@pytest.mark.parametrize(("kind", "mutation", "prop"), [
    ("node", "one_cpu_too_many", "P-CPU-PLACEMENT"),
    ("node", "init_reuse_ignored", "P-INIT-HANDOFF"),
    ("resize", "always_in_progress", "P-RESIZE-POD-SCOPE"),
    ("malformed", "sorted_where", "P-NODE-MALFORMED"),
    ("malformed", "bad_quantity_as_zero", "P-NODE-MALFORMED"),
    ("malformed", "reservation_as_bytes", "P-QUANTITY-SPELLING")])
def test_the_cli_rejects_a_corner_mutant(kind: str, mutation: str, prop: str,
                                         tmp_path: Path) -> None:
    """The sessions aimed at corners (node_corners.py): CPUs placed one too many, init
    containers handing nothing on, a pod-scope resize accepted unevaluated; and the
    malformed requests (node_malformed.py): an error pointing at the wrong NUMA node entry, a
    request that is no quantity read as zero; and a reserved-memory limit read whatever its
    spelling (node_corners.py, P-QUANTITY-SPELLING)."""
    status, verdicts, printed = conformance(tmp_path, kind, mutation, (prop,))
    assert status == 1, printed[-3000:]
    assert verdicts[prop] == "failed", printed[-3000:]


def test_the_unmutated_adapter_passes(tmp_path: Path) -> None:
    """The control: the adapter with no mutation passes every property this commit's kills
    use (the affinity properties of this commit's share of the affinity mutants; all of them
    under NUMASPEC_ROTATION=all), so each kill is the mutation's doing.  It draws the rotating
    examples (the ``quick`` profile from the commit's seed, numaspec_tools.rotation): what it
    adds is the protocol between the suite and the reference, whose answers to the kills'
    own ``ci`` examples tests/suite/test_reference_conforms.py judges in process."""
    affinity = {p for _, ps in this_commits(sorted(AFFINITY_KILLED_BY.items()), GROUPS)
                for p in ps}
    properties = (*NODE_SESSION_PROPERTIES, "P-NODE-STARTUP", "P-NODE-RESIZE",
                  "P-CPU-PLACEMENT", "P-INIT-HANDOFF", "P-RESIZE-POD-SCOPE", "P-NODE-MALFORMED",
                  "P-QUANTITY-SPELLING", *sorted(affinity - set(NODE_SESSION_PROPERTIES)))
    seed = commit_seed()
    status, verdicts, printed = conformance(
        tmp_path, "node", "none", properties,
        ("--profile", ROTATING_PROFILE, "--seed", str(seed)))
    assert verdicts == dict.fromkeys(properties, "passed"), (
        f"{printed[-3000:]}\nseed {seed} (the commit's; --profile {ROTATING_PROFILE})")
    assert status == 0


def test_a_bad_mutation_name_is_a_usage_error() -> None:
    done = subprocess.run([sys.executable, *ADAPTER.split(), "node", "no-such"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode != 0
    assert "usage" in done.stderr
    assert "free_not_decremented" in done.stderr
    assert io.StringIO(done.stdout).read() == ""
