"""RUN-17: a verdict is booked on the rules its case exercised, and only on rules the
implementation claims at the release it ran (conformance/cases/blame.py).

Issue 32's case: a partial implementation (1.30, restricted and single-numa-node, no
options, gates or refusals) with one bug failed P-EQUIVALENCE and P-PREFERRED-NARROWEST, and
the failure showed red on options and refusals it does not claim and on rules that hold
only up to 1.23."""

from __future__ import annotations

import io
import shlex
import sys
from pathlib import Path

import pytest

from numaspec.conformance.cases.blame import booked_rules, claims_rule, holds_at
from numaspec.conformance.implementations.claims import Claims
from numaspec.conformance.properties import PROPERTIES
from numaspec.conformance.running.reports import read_report, rule_rows
from numaspec.conformance.running.runner import RunConfig, run_conformance
from numaspec_tools import ADAPTERS

PARTIAL = ADAPTERS / "partial.py"
PARTIAL_CLAIMS = Claims.from_json({
    "merge": {"policies": ["restricted", "single-numa-node"], "policy_options": [],
              "feature_gates": False, "refusals": False}})


def rule(prefix: str, number: int) -> str:
    """A rule ID, spelt so that the spec cross-check does not take this file for a check of
    the rule: these tests check where verdicts are booked, not the rules themselves."""
    return f"{prefix}-{number}"


EQUIVALENCE_RULES = list(PROPERTIES["P-EQUIVALENCE"].rules)
#: The rules issue 32 saw red for the partial implementation: options and refusals it does
#: not claim, a policy it does not claim, and rules that end at 1.23.
NEVER = {r for r in EQUIVALENCE_RULES if r.startswith(("OPT", "VER"))} | {
    rule("POLICY", n) for n in (1, 2, 5, 6)} | {rule("MERGE", n) for n in (2, 7, 9)}


def test_a_rule_is_claimed_with_the_part_it_speaks_of() -> None:
    assert not claims_rule(rule("OPT", 3), PARTIAL_CLAIMS, "merge")
    assert not claims_rule(rule("POLICY", 2), PARTIAL_CLAIMS, "merge")  # best-effort not claimed
    assert claims_rule(rule("POLICY", 3), PARTIAL_CLAIMS, "merge")
    assert not claims_rule(rule("VER", 2), PARTIAL_CLAIMS, "merge")
    assert not claims_rule(rule("WIRE", 3), PARTIAL_CLAIMS, "merge")  # numaspec's format
    assert claims_rule(rule("MERGE", 8), PARTIAL_CLAIMS, "merge")
    everything = Claims()
    assert all(claims_rule(r, everything, "merge") for r in EQUIVALENCE_RULES)
    node = Claims.from_json({"node": {"managers": ["cpu"]}})
    assert claims_rule(rule("CPU", 4), node, "node")
    assert not claims_rule(rule("MEM", 4), node, "node")
    assert holds_at(rule("MERGE", 2), 23)
    assert not holds_at(rule("MERGE", 2), 30)


def test_a_failed_property_is_booked_on_what_its_counterexample_exercised() -> None:
    record = {"kind": "property", "op": "merge", "verdict": "failed", "rules": EQUIVALENCE_RULES,
              "counterexample": {"kubelet_version": "1.30", "policy": "restricted"},
              "message": "reference: ...; impl: ...",
              "explain": [{"kind": "merge", "kept": [{"rule": rule("MERGE", 8)}],
                           "decided_by": rule("POLICY", 3)}]}
    assert booked_rules(record, PARTIAL_CLAIMS, ["1.30"]) == [rule("MERGE", 8), rule("POLICY", 3)]
    # a case that names none of the property's rules: every claimed one holding at 1.30
    record["explain"] = []
    assert set(booked_rules(record, PARTIAL_CLAIMS, ["1.30"])).isdisjoint(NEVER)
    # a passed property: the claimed rules that hold at some declared release
    passed = {**record, "verdict": "passed"}
    assert rule("MERGE", 2) not in booked_rules(passed, PARTIAL_CLAIMS, ["1.30"])
    assert rule("MERGE", 2) in booked_rules(passed, Claims(), ["1.23", "1.30"])
    # what the run left out is counted on every rule it cites, as not claimed
    left = {**record, "verdict": "skipped", "skip_source": "not-claimed"}
    assert booked_rules(left, PARTIAL_CLAIMS, ["1.30"]) == EQUIVALENCE_RULES


@pytest.mark.slow
def test_a_partial_implementations_bug_is_booked_on_its_own_rules(tmp_path: Path) -> None:
    """The issue's run, end to end: the failures' red cells are only on rules the partial
    implementation claims and that hold at 1.30; the summary names them."""
    impl = f"exec:{shlex.quote(sys.executable)} {shlex.quote(str(PARTIAL))} --bug admit-all"
    printed = io.StringIO()
    status = run_conformance(RunConfig(impl=impl, out=str(tmp_path), timeout=20.0,
                                       ids=("P-EQUIVALENCE", "P-PREFERRED-NARROWEST",
                                            "P-ADMISSION")), stream=printed)
    assert status == 1
    _, records, _ = read_report(tmp_path / "report.jsonl")
    failed = [r for r in records if r["verdict"] == "failed"]
    assert failed
    for record in failed:
        assert record["booked"], record["id"]
        assert set(record["booked"]) <= set(record["rules"])
        assert set(record["booked"]).isdisjoint(NEVER), (record["id"], record["booked"])
    red = {row["rule"] for row in rule_rows(records) if row["failed"]}
    assert red
    assert red.isdisjoint(NEVER)
    assert "it cites" in printed.getvalue()
