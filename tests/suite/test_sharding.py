"""Campaigns larger than one process: case ``i`` of a seed is drawn on its own, so a campaign
cut into pieces (``--jobs N``, ``--ray``) sends the same cases, finds the same disagreements
under the same IDs and counts the same verdicts as in one piece; and the large shape
(``--shape large``): kubelet's full hint lists on 9 to 16 NUMA nodes."""

from __future__ import annotations

import importlib
import importlib.util
import json
import shlex
import sys
from collections.abc import Iterator
from itertools import chain
from pathlib import Path
from typing import Any

import pytest

from numaspec.conformance.cli import main
from numaspec.conformance.properties.random_cases import (
    CaseShape,
    permutations,
    random_large_case_at,
    random_merge_case_at,
    random_merge_cases,
)
from numaspec.conformance.running.differential import Differential, differential
from numaspec.conformance.running.sharding import Engine, chunk_ranges, shard_ranges
from numaspec.errors import InvalidFieldError
from numaspec.protocols.adapter_protocol import REFERENCE_IMPL, reference_result
from numaspec_tools import ADAPTERS

PYTHON = shlex.quote(sys.executable)
LARGE = CaseShape("large", max_permutations=300)


def misbehave(mode: str) -> str:
    return f"exec:{PYTHON} {shlex.quote(str(ADAPTERS / 'misbehave.py'))} {mode}"


def partial(*flags: str) -> str:
    return f"exec:{PYTHON} {shlex.quote(str(ADAPTERS / 'partial.py'))} {' '.join(flags)}"


# --- the pieces ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("count", "jobs", "start"), [(0, 3, 0), (1, 4, 5), (10, 3, 0),
                                                      (10, 10, 7), (1001, 7, 20)])
def test_shards_cover_the_range_in_order_without_empty_pieces(count: int, jobs: int,
                                                              start: int) -> None:
    pieces = shard_ranges(count, jobs, start)
    assert list(chain.from_iterable(pieces)) == list(range(start, start + count))
    assert all(pieces)
    assert len(pieces) <= jobs
    assert max(map(len, pieces), default=0) - min(map(len, pieces), default=0) <= 1
    chunks = chunk_ranges(count, 3, start)
    assert list(chain.from_iterable(chunks)) == list(range(start, start + count))


def test_case_i_is_the_same_however_the_cases_are_drawn() -> None:
    versions = ["1.23", "1.30", "1.37"]
    whole = random_merge_cases(60, 5, versions)
    assert random_merge_cases(20, 5, versions, start=40) == whole[40:]
    assert random_merge_case_at(5, 17, versions) == whole[17]
    assert random_merge_cases(60, 6, versions) != whole
    large = [LARGE.case_at(5, i, ["1.37"]) for i in range(4)]
    assert LARGE.case_at(5, 3, ["1.37"]) == large[3]


# --- --jobs N is --jobs 1 ---------------------------------------------------------------------


def same(one: Differential, other: Differential) -> None:
    assert one.verdicts == other.verdicts
    assert one.cases == other.cases
    assert one.disagreements == other.disagreements
    assert one.largest == other.largest
    assert one.numa_nodes == other.numa_nodes
    assert all({"id", "case", "expected", "actual", "differences"} <= set(d)
               for d in one.disagreements)


def test_the_reference_in_two_processes_is_the_reference_in_one() -> None:
    alone = differential(REFERENCE_IMPL, cases=300, seed=4)
    sharded = differential(REFERENCE_IMPL, cases=300, seed=4, engine=Engine(jobs=2))
    same(alone, sharded)
    assert sharded.verdicts == {"agreed": 300}


@pytest.mark.slow
def test_disagreements_and_claims_come_out_the_same_in_pieces() -> None:
    """A partial implementation with a bug inside its claim: the cases outside the claim are
    drawn over more than one round, some claimed cases disagree and are shrunk; three
    processes find what one finds, under the same IDs."""
    impl = partial("--bug", "admit-all")
    alone = differential(impl, cases=200, seed=8, shrink=2)
    sharded = differential(impl, cases=200, seed=8, shrink=2, engine=Engine(jobs=3))
    same(alone, sharded)
    assert alone.verdicts["not claimed (not sent)"] > 200  # a second round was drawn
    assert sum("found_as" in d for d in alone.disagreements) == 2
    unshrunk = next(d for d in alone.disagreements if "found_as" not in d)
    index = int(unshrunk["id"].rsplit("-", 1)[1])
    assert unshrunk["case"] == random_merge_case_at(8, index, ["1.30"])  # as drawn


def test_a_large_disagreement_has_its_own_id_and_replays(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    out = tmp_path / "large.jsonl"
    assert main(["differential", "--impl", misbehave("wrong"), "--shape", "large",
                 "--max-permutations", "300", "--cases", "12", "--seed", "2", "--jobs", "2",
                 "--shrink", "1", "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "cases per NUMA node count: " in printed
    assert "largest case sent:" in printed
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(r["id"].startswith("differential-large-2-") for r in records)
    unshrunk = next(r for r in records if "found_as" not in r)
    index = int(unshrunk["id"].rsplit("-", 1)[1])
    assert unshrunk["case"]["numa_nodes"] == random_large_case_at(
        2, index, ["1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37"],
        max_permutations=300)["numa_nodes"]
    assert main(["replay", str(out), "--id", unshrunk["id"], "--impl",
                 misbehave("wrong")]) == 1


# --- the large shape --------------------------------------------------------------------------


def hint_lists(case: dict[str, Any]) -> Iterator[list[dict[str, Any]]]:
    for provider in case["providers"]:
        yield from (provider or {}).values()


def test_large_cases_are_kubelet_shaped() -> None:
    """9 to 16 NUMA nodes allowed by max-allowable-numa-nodes, the cap on permutations, and
    full lists: every superset (within the resource's nodes) of a mask that holds the request
    holds it too, masks in MASK-3's order, preferred exactly at the narrowest width."""
    shape = CaseShape("large", max_permutations=5_000)
    seen = set()
    for i in range(40):
        case = shape.case_at(1, i, ["1.31", "1.37"])
        nodes = case["numa_nodes"]
        seen.add(len(nodes))
        assert 9 <= len(nodes) <= 16
        assert int(case["policy_options"]["max-allowable-numa-nodes"]) >= len(nodes)
        assert permutations(case) <= 5_000
        assert "hint" in reference_result("merge", case)
        for hints in hint_lists(case):
            masks = [tuple(h["numa_affinity"]) for h in hints]
            assert masks == sorted(masks, key=len)
            if not masks:
                continue
            universe = set(masks[-1])  # the whole set the resource sees holds the request
            present = {frozenset(m) for m in masks}
            assert all(frozenset(m) | {n} in present for m in masks for n in universe)
            preferred = {len(h["numa_affinity"]) for h in hints if h["preferred"]}
            assert preferred <= {len(masks[0])}
    assert len(seen) >= 6


def test_large_cases_need_a_release_with_max_allowable_numa_nodes(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InvalidFieldError, match=r"1\.31 or later"):
        LARGE.versions(["1.23", "1.30"], "kubelet")
    assert main(["differential", "--impl", partial(), "--shape", "large", "--cases",
                 "3"]) == 4
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "large cases need kubelet 1.31 or later" in err


@pytest.mark.parametrize(("argv", "what"), [
    (["--shape", "large", "--numa-nodes", "9-x"], "--numa-nodes: must be N or LOW-HIGH"),
    (["--shape", "large", "--numa-nodes", "12-9"], "--numa-nodes: must be LOW-HIGH"),
    (["--shape", "large", "--max-permutations", "0"], "--max-permutations: must be at least"),
])
def test_bad_options_are_one_line(argv: list[str], what: str,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["differential", "--cases", "1", *argv]) == 4
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert what in err


# --- Ray ----------------------------------------------------------------------------------------


def test_without_ray_the_option_names_the_extra(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails, as without the extra
    assert main(["differential", "--cases", "5", "--ray"]) == 4
    err = capsys.readouterr().err.strip()
    assert err == ("numaspec differential: --ray: Ray is not installed here; install the "
                   "extra: pip install 'numaspec[ray]'")


def test_an_unreachable_cluster_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    if importlib.util.find_spec("ray") is None:
        pytest.skip("ray is not installed (pip install 'numaspec[ray]')")
    assert main(["differential", "--cases", "5", "--ray", "127.0.0.1:1"]) == 4
    err = capsys.readouterr().err.strip()
    assert err.startswith("numaspec differential: --ray: cannot connect to Ray at 127.0.0.1:1")
    assert len(err.splitlines()) == 1


@pytest.mark.slow
@pytest.mark.usefixtures("ray_instance")
def test_ray_tasks_give_the_results_of_one_process() -> None:
    impl = partial("--bug", "admit-all")
    alone = differential(impl, cases=120, seed=9, shrink=2)
    on_ray = differential(impl, cases=120, seed=9, shrink=2, engine=Engine(ray="", chunk=50))
    same(alone, on_ray)
    assert alone.disagreements
    reference = differential(REFERENCE_IMPL, cases=200, seed=9, shape=LARGE,
                             engine=Engine(ray="", chunk=40))
    same(differential(REFERENCE_IMPL, cases=200, seed=9, shape=LARGE), reference)
    assert reference.verdicts == {"agreed": 200}
