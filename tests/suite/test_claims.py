"""Capability declarations (PROTO-7): a partial implementation is judged on what it claims.

The fixture tools/numaspec_tools/adapters/partial.py claims restricted and single-numa-node at 1.30,
merge only, no options, gates or refusals, and not numaspec's line format.  With its claims it
passes every case it claims and the rest is reported not claimed (RUN-4), apart from the
implementation's own skips; without them, as before PROTO-7, it fails on cases it never
claimed; and a bug inside the claim is still caught."""

from __future__ import annotations

import io
import shlex
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

from numaspec.conformance.implementations.adapter import MergeAnswer, reference
from numaspec.conformance.implementations.claims import (
    FORMAT_RULES,
    Claims,
    MergeClaims,
    NodeClaims,
)
from numaspec.conformance.properties import PROPERTIES
from numaspec.conformance.running.differential import differential
from numaspec.conformance.running.reports import read_report
from numaspec.conformance.running.runner import RunConfig, run_conformance
from numaspec.errors import AdapterError
from numaspec.protocols.merge_protocol import MergeRequest
from numaspec.rules import parse_rules, spec_dir
from numaspec.topology.policies import MergeOutcome
from numaspec.topology.versions import KubeletVersion
from numaspec_tools import ADAPTERS
from numaspec_tools.adapters.partial import CLAIMS
from numaspec_tools.rotation import ROTATING_PROFILE, commit_seed, rotated
from numaspec_tools.testing.kill import for_kill

PARTIAL = ADAPTERS / "partial.py"
#: Vectors and properties enough to show every kind of verdict, quickly.
SELECTION = ("seed001-container0-restricted-1.30", "merge-empty-resource-restricted",
             "wire-unknown-field", "wire-bool-node-id", "ver-unsupported-1.39",
             "seed001-container1-single-numa-node", "P-ADMISSION", "P-NONE",
             "P-NON-PREFERRED-RANK", "P-PREFERRED-CLOSEST", "P-TOO-MANY-NUMA-NODES")


def partial(*flags: str) -> str:
    return f"exec:{shlex.quote(sys.executable)} {shlex.quote(str(PARTIAL))} {' '.join(flags)}"


def run(tmp_path: Path, impl: str, ids: tuple[str, ...] = SELECTION
        ) -> tuple[int, list[dict[str, Any]], str]:
    printed = io.StringIO()
    # the examples rotate by commit (numaspec_tools.rotation): what is judged here is where a
    # property draws, which every draw shows; the reference's own run keeps the profile's
    config = RunConfig(impl=impl, out=str(tmp_path / "out"), ids=ids, timeout=20.0,
                       profile=ROTATING_PROFILE, seed=commit_seed())
    status = run_conformance(config, stream=printed)
    _, records, _ = read_report(tmp_path / "out" / "report.jsonl")
    return status, records, printed.getvalue()


def outcome(records: list[dict[str, Any]], case_id: str) -> tuple[str, str]:
    record = next(r for r in records if r["id"] == case_id)
    return record["verdict"], record.get("skip_source", "")


def test_a_partial_implementation_passes_what_it_claims(tmp_path: Path) -> None:
    status, records, printed = run(tmp_path, partial())
    assert status == 0, printed
    for case_id in ("seed001-container0-restricted-1.30", "merge-empty-resource-restricted",
                    "seed001-container1-single-numa-node", "P-ADMISSION"):
        assert outcome(records, case_id) == ("passed", ""), case_id
    # Outside the claim: the line format, a policy, an option and a refusal it does not claim.
    for case_id in ("wire-unknown-field", "wire-bool-node-id", "ver-unsupported-1.39",
                    "P-NONE", "P-NON-PREFERRED-RANK", "P-PREFERRED-CLOSEST",
                    "P-TOO-MANY-NUMA-NODES"):
        assert outcome(records, case_id) == ("skipped", "not-claimed"), case_id
    assert "not claimed" in printed
    assert "skipped (" not in printed


def test_without_claims_it_fails_on_what_it_never_claimed(tmp_path: Path) -> None:
    """It ignores feature gates and reads NUMA id 64 leniently: refusals it never made."""
    status, records, _ = run(tmp_path, partial("--no-claims"), (
        "gates-unknown-name@1.30", "mask-machine-node-64-restricted",
        "seed001-container0-restricted-1.30"))
    assert status != 0
    failed = {r["id"] for r in records if r["verdict"] in ("failed", "errored")}
    assert failed == {"gates-unknown-name@1.30", "mask-machine-node-64-restricted"}
    status, records, _ = run(tmp_path, partial(), (
        "gates-unknown-name@1.30", "mask-machine-node-64-restricted"))
    assert status == 3  # nothing checked: both are outside its claims
    assert {r["skip_source"] for r in records} == {"not-claimed"}


class _AdmitAll:
    """The mutant, typed and in-process: the partial fixture's claims, and restricted admits
    every pod (POLICY-3)."""

    name = "partial-admit-all"
    kubelet_versions = (KubeletVersion(30),)
    claims = Claims.from_json(CLAIMS)

    def merge(self, request: MergeRequest) -> MergeAnswer:
        answer = reference.merge(request)
        return attrs.evolve(answer, admit=True) if isinstance(answer, MergeOutcome) else answer


@pytest.mark.parametrize("pid", ["P-ADMISSION", "P-SINGLE-NUMA-NODE", "P-EQUIVALENCE"])
def test_a_bug_inside_the_claim_is_still_caught(pid: str) -> None:
    """The claimed properties draw inside the claim and still reject the mutant."""
    assert PROPERTIES[pid].outside_claims(_AdmitAll()) is None
    with for_kill(PROPERTIES[pid].check) as check, pytest.raises(AssertionError):
        check(_AdmitAll())


def test_the_reference_claims_its_format(tmp_path: Path) -> None:
    ids = ("wire-unknown-field", "wire-bool-node-id", "ver-unsupported-1.39")
    status, records, printed = run(tmp_path, "exec:" + shlex.join(
        [sys.executable, "-m", "numaspec", "serve"]), ids)
    assert status == 0, printed
    assert [r["verdict"] for r in records] == ["passed"] * 3


# --- the claims object -----------------------------------------------------------------------


@pytest.mark.parametrize(("value", "where"), [
    ([], "implementation.claims"),
    ({"format": "yes"}, "implementation.claims.format"),
    ({"merge": {"policies": ["static"]}}, "implementation.claims.merge.policies"),
    ({"merge": {"policies": "restricted"}}, "implementation.claims.merge.policies"),
    ({"merge": {"refusals": [1]}}, "implementation.claims.merge.refusals"),
    ({"node": {"managers": ["gpu"]}}, "implementation.claims.node.managers"),
    ({"node": {"scope": ["pod"]}}, "implementation.claims.node"),
    ({"scheduler": {}}, "implementation.claims"),
])
def test_a_bad_claims_object_is_a_typed_error(value: Any, where: str) -> None:
    with pytest.raises(AdapterError) as info:
        Claims.from_json(value)
    assert info.value.where == where


def test_claims_round_trip() -> None:
    claims = Claims(format=False, merge=MergeClaims(policies=frozenset({"restricted"}),
                                                    policy_options=frozenset(),
                                                    feature_gates=False,
                                                    refusals=frozenset({"unknown-policy"})),
                    node=NodeClaims(managers=frozenset({"cpu"}), scopes=frozenset({"pod"})))
    assert Claims.from_json(claims.to_json()) == claims
    assert Claims.from_json(Claims().to_json()) == Claims()


_CASE = {"kubelet_version": "1.30", "numa_nodes": [0, 1], "policy": "restricted",
         "providers": []}
_ADMIT = {"hint": {"numa_affinity": None, "preferred": True}, "admit": True}


@pytest.mark.parametrize(("claims", "case", "expected", "rules", "word"), [
    (MergeClaims(policies=frozenset({"single-numa-node"})), _CASE, _ADMIT, [], "policy"),
    (MergeClaims(policy_options=frozenset()),
     {**_CASE, "policy_options": {"prefer-closest-numa-nodes": "true"}}, _ADMIT, [], "option"),
    (MergeClaims(feature_gates=False), {**_CASE, "feature_gates": {"X": True}}, _ADMIT, [],
     "gates"),
    (MergeClaims(refusals=frozenset()), {**_CASE, "policy": "static"},
     {"error": {"kind": "unknown-policy"}}, [], "refuses"),
    (MergeClaims(refusals=frozenset({"unknown-policy"})), {**_CASE, "numa_nodes": list(range(9))},
     {"error": {"kind": "too-many-numa-nodes"}}, [], "too-many-numa-nodes"),
    (MergeClaims(), _CASE, _ADMIT, ["MERGE-1", "WIRE-3"], "line format"),
])
def test_merge_cases_outside_a_claim(claims: MergeClaims, case: Any, expected: Any,
                                     rules: list[str], word: str) -> None:
    reason = Claims(merge=claims).outside("merge", case, expected, rules)
    assert reason is not None
    assert word in reason
    assert Claims(format=True).outside("merge", _CASE, _ADMIT, rules) is None


def _session(config: dict[str, Any], devices: bool = False) -> dict[str, Any]:
    machine: dict[str, Any] = {"numaNodes": []}
    if devices:
        machine["devices"] = {"example.com/r": [{"id": "d0", "numa": [0]}]}
    return {"steps": [{"op": "create", "node": {"kubeletVersion": "1.30", "machine": machine,
                                                 "config": config}}]}


@pytest.mark.parametrize(("claims", "session", "word"), [
    (NodeClaims(managers=frozenset({"cpu"})), _session({"memoryManagerPolicy": "Static"}),
     "memory"),
    (NodeClaims(managers=frozenset({"cpu"})), _session({}, devices=True), "device"),
    (NodeClaims(scopes=frozenset({"pod"})), _session({}), "container"),
    (NodeClaims(cpu_policy_options=frozenset()),
     _session({"cpuManagerPolicyOptions": {"full-pcpus-only": "true"}}), "full-pcpus-only"),
    (NodeClaims(feature_gates=False), _session({"featureGates": {"X": True}}), "gates"),
])
def test_node_sessions_outside_a_claim(claims: NodeClaims, session: Any, word: str) -> None:
    reason = Claims(node=claims).outside("node", session, {"answers": [{"ok": True}]}, [])
    assert reason is not None
    assert word in reason
    assert Claims().outside("node", session, {"answers": [{"ok": True}]}, []) is None


def test_format_rules_match_the_spec() -> None:
    """Every rule says how it is judged, and FORMAT_RULES is the set that says format."""
    rules = parse_rules(spec_dir())
    assert all(r.meta.get("Judged") in ("semantics", "format", "protocol") for r in rules), [
        r.id for r in rules if r.meta.get("Judged") not in ("semantics", "format", "protocol")]
    assert {r.id for r in rules if r.meta["Judged"] == "format"} == FORMAT_RULES


def test_the_differential_sends_only_claimed_cases() -> None:
    """``numaspec differential`` against a partial implementation: nothing outside its claim
    is sent, so it agrees; without claims, the same fixture disagrees."""
    claimed = differential(partial(), cases=300, seed=3)
    assert claimed.cases == 300
    assert claimed.disagreements == []
    assert claimed.verdicts["not claimed (not sent)"] > 0
    unclaimed = differential(partial("--no-claims"), cases=300, seed=3)
    assert unclaimed.disagreements


# --- RUN-7 and PROTO-7: a run never goes green on what it did not judge -----------------------

#: Properties whose requests carry NUMA distances now and then, whatever the policy.
_DISTANCE_PROPERTIES = ("P-ADMISSION", "P-EQUAL-MASKS", "P-MERGED-INSIDE", "P-EQUIVALENCE")


def test_an_adapter_that_skips_a_whole_dimension_is_not_green(tmp_path: Path) -> None:
    """Issue 32's false green: an adapter that skips every request with distances, claims
    that do not say so.  The properties cannot be judged, and the run says which and why
    (exit 5), naming the claim that would leave the dimension out."""
    status, records, printed = run(tmp_path, partial("--skip-distances"),
                                   ("seed001-container0-restricted-1.30", *_DISTANCE_PROPERTIES))
    unjudged = [r for r in records if r.get("skip_source") == "implementation"]
    assert unjudged, "no property met a request with distances"
    assert status == 5
    assert "NOT EVERYTHING CLAIMED WAS CHECKED" in printed
    assert "claims.merge.distances: false" in printed
    assert all("models no NUMA distances" in r["message"] for r in unjudged)


def test_claiming_no_distances_draws_none_and_judges_the_properties(tmp_path: Path) -> None:
    """The same adapter, its claims saying it models no distances: nothing with distances is
    drawn, every property is judged, the run is green."""
    status, records, printed = run(tmp_path, partial("--skip-distances", "--claim-no-distances"),
                                   _DISTANCE_PROPERTIES)
    assert status == 0, printed
    assert {r["verdict"] for r in records} == {"passed"}
    assert len(records) == len(_DISTANCE_PROPERTIES)


# A third of the properties a commit (rotated by commit, numaspec_tools.rotation), every one
# over three commits: the draws inside a claim are the property's strategies', which change
# with the commit as any property's do.
@pytest.mark.parametrize("pid", rotated(sorted(PROPERTIES), 3, "the smallest-claim runs"))
@pytest.mark.slow
def test_every_property_is_judged_inside_its_smallest_claim(pid: str, tmp_path: Path) -> None:
    """Every input a property varies is either covered by a claim field or left out when not
    claimed: under the smallest claim it can be judged under (tools/numaspec_tools/adapters/
    minimal.py: one policy, its own options and refusals, no gates, no distances unless
    prefer-closest, kubelet 1.30, a CPU-Manager node in container scope under restricted) it
    is judged, and never asks a request outside that claim.  P-PREDICT is the one exception:
    the reference judges predict answers and does not answer them (PRED-2)."""
    impl = f"numaspec_tools.adapters.minimal:MINIMAL.{pid.replace('-', '_')}"
    status, records, printed = run(tmp_path, impl, (pid,))
    (record,) = records
    if pid == "P-PREDICT":
        assert record["skip_source"] == "undeclared"
        return
    assert record["verdict"] == "passed", printed
    assert status == 0


def test_large_merges_are_drawn_within_the_judged_implementations_reach() -> None:
    """P-MERGE-LARGE spends its draws inside what the judged implementation claims: without
    ``max-allowable-numa-nodes`` or a release from 1.31 on, only the 8-node shape (every
    bigger machine would be set aside), and only releases it models; by default, the 12- and
    24-node shapes too."""
    from hypothesis import HealthCheck, given, settings

    from numaspec.conformance.properties.registry import reach_of
    from numaspec.conformance.properties.strategies import (
        Reach,
        large_merge_requests,
        reaching,
    )

    seen: list[MergeRequest] = []

    @settings(max_examples=60, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=large_merge_requests())
    def draw(case: MergeRequest) -> None:
        seen.append(case)

    draw()
    assert {len(c.numa_nodes) for c in seen} >= {8, 12, 24}
    narrow = Reach(versions=(KubeletVersion(30),), many_nodes=True)
    for reach in (narrow, Reach(many_nodes=False), reach_of(CLAIMS_IMPL)):
        seen.clear()
        with reaching(reach):
            draw()
        assert seen, reach
        assert {len(c.numa_nodes) for c in seen} == {8}, reach
        assert {c.version for c in seen} <= set(reach.versions), reach


class _Claiming:
    """An in-process implementation claiming no policy options, at 1.29-1.30."""
    name = "claiming"
    kubelet_versions = (KubeletVersion(29), KubeletVersion(30))
    claims = Claims(merge=MergeClaims(policy_options=frozenset()))


CLAIMS_IMPL = _Claiming()
