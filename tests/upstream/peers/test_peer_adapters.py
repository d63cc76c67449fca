"""The suite against three peer implementations of the merge (issue 15): adapters/peers builds,
for Koordinator, Katalyst and Volcano, a Go adapter over the peer's own merge code (a Go module
dependency) that speaks the adapter protocol and declares what it claims.

For each peer: the whole suite passes with the peer's expectations manifest of explained
divergences (adapters/peers/expectations/); every finding of adapters/peers/<peer>/findings.json
still holds (numaspec's answer is the vector's, the peer's the one its notes record); and on
random merge cases every disagreement with the reference is one the peer's FINDINGS.md
explains, or lies outside what the peer claims."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from numaspec.conformance.cases.judges import compare
from numaspec.conformance.implementations.connection import connect
from numaspec.conformance.running.differential import differential
from numaspec.conformance.running.reports import read_report
from numaspec.conformance.running.runner import RunConfig, run_conformance
from numaspec.protocols.adapter_protocol import reference_result
from numaspec_tools.builds import peers
from numaspec_tools.builds.peers import MODULES, ROOT, VERSIONS, binary, start_answer
from numaspec_tools.rotation import rotated

PEERS = sorted(MODULES)
CASES = 10_000
#: the marker that starts the peer's own answer in a finding's notes
ANSWER = "peer answer ("
#: evaluations per case when a finding's answer is nondeterministic (the default 8 may miss it)
REPEAT = 64


def manifest(peer: str) -> str:
    return str(ROOT / "expectations" / f"{peer}-{VERSIONS[peer]}.json")


# One merge peer a commit is built and run (rotated by commit: numaspec_tools.builds.peers
# and numaspec_tools.rotation), every peer over three commits: each peer's code is pinned, so
# what a commit can change is numaspec's side, which every peer's run judges alike.  The tests
# of the other two skip, saying so.
@pytest.mark.parametrize("peer", rotated(PEERS, peers.MERGE_PEER_GROUPS, "the peers' whole suites"))
def test_the_suite_passes_against_the_peer(peer: str, tmp_path: Path) -> None:
    adapter = binary(peer)
    printed = io.StringIO()
    # The ci profile whatever the environment: the manifest lists the properties that fail
    # under it, and they must fail the same way on every run.
    status = run_conformance(RunConfig(impl=f"exec:{adapter}", out=str(tmp_path), strict=True,
                                       expectations=manifest(peer), timeout=60.0,
                                       profile="ci"),
                             stream=printed)
    assert status == 0, printed.getvalue()[-6000:]
    _, records, _ = read_report(tmp_path / "report.jsonl")
    assert any(r["verdict"] == "passed" and r["op"] == "merge" for r in records)
    # RUN-5: no expectation names a whole property, so no property's exploration is stopped
    # by a pinned divergence: each one judged either passed, or xfailed having set aside the
    # cases of known findings (by input class) and found nothing else
    entries = json.loads(Path(manifest(peer)).read_text(encoding="utf-8"))["expectations"]
    assert not [e for e in entries if str(e.get("vector", "")).startswith("P-")]
    judged = [r for r in records if r["kind"] == "property" and r["verdict"] != "skipped"]
    assert judged
    for record in judged:
        assert record["verdict"] in ("passed", "xfailed"), (record["id"], record["verdict"])
        if record["verdict"] == "xfailed":
            assert record["divergences"], record["id"]


def _peer_answer(notes: str) -> str:
    assert ANSWER in notes, f"a finding's notes end with '{ANSWER}<peer> <version>): <answer>'"
    return notes[notes.index(ANSWER):].split("): ", 1)[1].strip()


@pytest.mark.parametrize("peer", PEERS)
def test_the_findings_still_hold(peer: str) -> None:
    vectors = json.loads((ROOT / peer / "findings.json").read_text(encoding="utf-8"))["vectors"]
    assert vectors, f"adapters/peers/{peer}/findings.json has no findings"
    adapter = binary(peer)
    connection = connect(f"exec:{adapter} --repeat {REPEAT}", timeout=60.0, strict=True)
    try:
        answers = connection.run_many("merge", [v["case"] for v in vectors])
    finally:
        connection.close()
    for vector, answer in zip(vectors, answers, strict=True):
        # numaspec's answer is the one recorded, and the peer's is not it
        assert not compare("merge", vector["case"], vector["expected"],
                           reference_result("merge", vector["case"])), vector["id"]
        recorded = _peer_answer(vector["notes"])
        if recorded.startswith("nondeterministic"):
            assert answer.status == "errored", (vector["id"], answer)
            assert str(answer.context.get("message", "")).startswith("nondeterministic:")
            continue
        assert answer.status == "result", (vector["id"], answer)
        assert answer.result == json.loads(recorded), (vector["id"], answer.result)
        assert compare("merge", vector["case"], vector["expected"], answer.result), vector["id"]


# ---- the differential: every disagreement explained ----

#: claims.merge.refusals of each adapter (the error kinds it answers)
REFUSALS = {"koordinator": frozenset[str](), "katalyst": frozenset({"unknown-policy",
                                                                    "too-many-numa-nodes"}),
            "volcano": frozenset[str]()}


@pytest.mark.parametrize("peer", rotated(PEERS, peers.MERGE_PEER_GROUPS,
                                          "the peers' random disagreements"))
def test_every_random_disagreement_is_explained(peer: str) -> None:
    """Every disagreement on random cases falls in a known divergence of the peer's manifest,
    booked by the matcher the suite uses (RUN-5), not by classifiers of this test's own."""
    adapter = binary(peer)
    result = differential(f"exec:{adapter}", cases=CASES, seed=15,
                          expectations=manifest(peer))
    print(result.summary())
    assert result.verdicts.get("agreed", 0) > CASES // 10, result.summary()
    # adapter trouble (a crash, a timeout, a protocol error) is no finding
    assert {v for v in result.verdicts if not v.startswith("not claimed")} <= {
        "agreed", "disagreed", "skipped", "errored"}, result.summary()
    print(f"{peer}: disagreements explained: {result.explained}")
    assert not result.unexplained, "\n".join(
        f"{d['id']}: {json.dumps(d['case'])}\n  {d['differences']}"
        for d in result.unexplained[:5])


@pytest.mark.parametrize("peer", PEERS)
def test_each_adapter_declares_its_claims(peer: str) -> None:
    raw = start_answer(binary(peer))
    assert raw["name"] == peer
    assert raw["version"] == VERSIONS[peer].removeprefix("v")
    merge = raw["claims"]["merge"]
    assert raw["claims"]["format"] is False
    assert merge["policy_options"] == []
    assert merge["feature_gates"] is False
    assert frozenset(merge["refusals"] or ()) == REFUSALS[peer]
