"""The sampled mutation campaign of the test command (issue 33): a few mutants of the reference,
each served and judged by ``numaspec conformance`` as a peer is
(``tools/numaspec_tools/mutation.py``), so that
a drop in the suite's reach is seen at the next run and not at the next full campaign.

The mutants are enumerated afresh from the current code (cosmic-ray, a few seconds) and drawn
from those the last campaign killed (``tests/fixtures/mutation/results.json``, by key: module,
operator and the line changed), the draw rotated by the commit under test as the kubelet
releases rotate (``git rev-parse HEAD``): each commit judges a different few, one per module in
turn, every run of a commit the same few.  Each must still be killed: a mutant the suite killed
and now lets through is reach lost (a strategy narrowed, a property weakened).  Survivors are
not drawn: the campaign lists them, and the README counts them.  ``NUMASPEC_MUTANTS=N`` draws
N instead of :data:`SAMPLE`.

The measure bites both ways: the unmutated reference passes the judge (else every mutant would
count as killed and the score would mean nothing), and a mutant the judge must kill is killed.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from numaspec_tools import mutation
from numaspec_tools.builds.kubelet import commit_group

pytest.importorskip("cosmic_ray",
                    reason="the dev extra installs cosmic-ray (tools/numaspec_tools/mutation.py)")

#: Mutants judged per run.  A killed mutant costs seconds (the judge stops at the first
#: failing case, RUN-18); one that has lost its killer costs its module's whole selection.
SAMPLE = int(os.environ.get("NUMASPEC_MUTANTS", "3"))
#: The rotation: commits fall into this many groups, each drawing its own mutants.
ROTATION = 1 << 30


@pytest.fixture(scope="module")
def enumerated(tmp_path_factory: pytest.TempPathFactory) -> list[mutation.Mutant]:
    """Every mutant the campaign would judge, from the current code."""
    session = tmp_path_factory.mktemp("mutation") / "session.sqlite"
    assert mutation.init(session) == 0
    return mutation.pending(session)


def drawn(mutants: list[mutation.Mutant], seed: int, count: int) -> list[mutation.Mutant]:
    """``count`` mutants, one module after another, the order fixed by ``seed``."""
    def rank(mutant: mutation.Mutant) -> bytes:
        return hashlib.sha256(f"{seed}:{mutant.module}:{mutant.operator}:{mutant.occurrence}"
                              .encode()).digest()

    by_module: dict[str, list[mutation.Mutant]] = {}
    for mutant in sorted(mutants, key=rank):
        by_module.setdefault(mutant.module, []).append(mutant)
    modules = sorted(by_module, key=lambda m: hashlib.sha256(f"{seed}:{m}".encode()).digest())
    chosen: list[mutation.Mutant] = []
    while len(chosen) < count and any(by_module.values()):
        for module in modules:
            if by_module[module] and len(chosen) < count:
                chosen.append(by_module[module].pop(0))
    return chosen


def judged(mutants: list[mutation.Mutant]) -> Iterator[tuple[mutation.Mutant, dict[str, str]]]:
    results = dict(mutation.Judge()(mutants, lambda *_: None))
    for mutant in mutants:
        yield mutant, results[mutant.job_id]


def killed_before(ordered: list[mutation.Mutant], count: int) -> list[mutation.Mutant]:
    """The first ``count`` mutants of ``ordered`` that the last campaign killed."""
    outcomes = mutation.recorded()
    chosen = []
    for mutant in ordered:
        try:
            known = outcomes.get(mutation.mutant_key(mutant))
        except AttributeError:
            # cosmic-ray 8.7's ExceptionReplacer cannot name a tuple `except` clause's
            # exceptions when applied in memory; such a mutant is not drawn here.
            continue
        if known == "killed":
            chosen.append(mutant)
            if len(chosen) == count:
                break
    return chosen


def test_the_campaign_is_recorded() -> None:
    """results.json holds a campaign: the sample below has something to draw from."""
    outcomes = mutation.recorded()
    assert sum(1 for o in outcomes.values() if o == "killed") >= 100, (
        "tests/fixtures/mutation/results.json records too few killed mutants; run the "
        "campaign and `numaspec-dev mutation report --write`")


def test_the_sampled_mutants_are_still_killed(enumerated: list[mutation.Mutant]) -> None:
    group = commit_group(ROTATION)
    sample = killed_before(drawn(enumerated, group, len(enumerated)), SAMPLE)
    assert len(sample) == SAMPLE, "too few of the current mutants are in results.json"
    lost = []
    for mutant, result in judged(sample):
        if result["test_outcome"] != "killed":
            name = mutation.key(mutant.module, mutant.operator, result["diff"], mutant.start[0])
            lost.append(f"{name} "
                        f"({result['worker_outcome']}, {result['test_outcome']})\n"
                        f"{result['diff']}\n{result['output']}")
    assert not lost, (
        f"{len(lost)} of {len(sample)} mutants the last campaign killed survive the suite now "
        f"(rotation {group}): reach lost.  Find the strategy or property that no longer "
        "reaches the line; `numaspec-dev mutation run --again killed --only MODULE` "
        "judges the module again.\n" + "\n".join(lost))


def test_the_unmutated_reference_passes_its_judge(tmp_path: Path) -> None:
    """Without this the campaign would score every mutant killed: a module's judge, run
    from a snapshot as a campaign runs it, passes the reference served from a copy of that
    snapshot.  (That the reference passes every selection is the whole suite's test,
    tests/suite/test_runner_reference.py; here the trees and the command, on options.py's.)"""
    runner = mutation.package_tree(tmp_path / "runner")
    site = mutation.package_tree(tmp_path, source=runner)
    command = mutation.judge_command("reference/topology/options.py", site, tmp_path / "out",
                                     runner=runner)
    done = subprocess.run(shlex.split(command), capture_output=True, text=True,
                          timeout=mutation.TIMEOUT, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_a_known_mutant_is_killed(enumerated: list[mutation.Mutant]) -> None:
    """The judge bites: the Memory Manager's bookkeeping starting from -1 bytes of hugepages
    instead of 0 on every NUMA node (MEM-1) is killed."""
    wanted = "reference/node/memory.py:core/NumberReplacer:hugepage_total = 0 -> " \
             "hugepage_total = -1"
    mutant = next(m for m in enumerated if m.module == "reference/node/memory.py"
                  and mutation.mutant_key(m) == wanted)
    (result,) = (r for _, r in judged([mutant]))
    assert result["test_outcome"] == "killed", result["output"]


def test_mutant_keys_match_the_judged_diff(enumerated: list[mutation.Mutant]) -> None:
    """mutant_key (the text, in memory) names a mutant as the judge's diff does."""
    mutant = next(m for m in enumerated if m.module == "reference/topology/options.py")
    (result,) = (r for _, r in judged([mutant]))
    assert mutation.mutant_key(mutant) == mutation.key(mutant.module, mutant.operator,
                                                       result["diff"], mutant.start[0])
