"""The explain trace (spec chapter explain.md): EXPLAIN-1, EXPLAIN-2, EXPLAIN-3, EXPLAIN-4.

A trace is recorded by the code that decides, so each test checks a trace against the answer
it explains: the winner is the last kept candidate, the admission's refusal names the rule the
spec gives for it, and every trace validates against schemas/trace.schema.json.
"""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
from typing import Any

import jsonschema
import pytest

from numaspec import explain_admission, explain_case, explain_merge
from numaspec.conformance.implementations.strict import schema_registry
from numaspec.protocols.adapter_protocol import reference_result
from numaspec.protocols.explain import summarize
from numaspec.protocols.node_protocol import decode_node, decode_pod

VALIDATOR = jsonschema.Draft202012Validator({"$ref": "tag:numaspec,2026:trace"},
                                            registry=schema_registry())


def valid(trace: dict[str, Any]) -> dict[str, Any]:
    errors = [e.message for e in VALIDATOR.iter_errors(trace)]
    assert not errors, errors
    return trace


def hint(numa: list[int] | None, preferred: bool = True) -> dict[str, Any]:
    return {"numa_affinity": numa, "preferred": preferred}


REQUEST = {"kubelet_version": "1.30", "numa_nodes": [0, 1], "policy": "restricted",
           "providers": [{"cpu": [hint([0]), hint([1]), hint([0, 1], False)]},
                         {"gpu": [hint([1])]}]}


def test_explain_2_the_winner_is_the_last_kept_candidate() -> None:
    trace = valid(explain_merge(REQUEST))
    answer = reference_result("merge", REQUEST)
    assert trace["kept"][-1]["hint"] == {"numa": answer["hint"]["numa_affinity"],
                                         "preferred": answer["hint"]["preferred"]}
    assert trace["result"]["admit"] is answer["admit"]
    assert trace["decided_by"] == "POLICY-3"
    assert trace["candidates"] == 3
    assert trace["empty_candidates"] == 1
    assert trace["target_width"] == 1


@pytest.mark.parametrize(("policy", "rule"), [("best-effort", "POLICY-2"),
                                              ("single-numa-node", "POLICY-4"),
                                              ("none", "POLICY-1")])
def test_explain_2_the_policy_rule_decides(policy: str, rule: str) -> None:
    trace = valid(explain_merge({**REQUEST, "policy": policy}))
    assert trace["decided_by"] == rule


def test_explain_2_rules_of_the_comparisons() -> None:
    # MERGE-5: a preferred candidate replaces a non-preferred one; MERGE-6: a narrower one.
    request = {"kubelet_version": "1.30", "numa_nodes": [0, 1, 2], "policy": "best-effort",
               "providers": [{"cpu": [hint([0, 1, 2], False), hint([0, 1]), hint([2])]}]}
    rules = [k["rule"] for k in valid(explain_merge(request))["kept"]]
    assert rules == ["MERGE-4", "MERGE-5", "MERGE-6"]
    old = valid(explain_merge({**request, "kubelet_version": "1.23"}))
    assert old["target_width"] is None
    # Up to 1.23 the walk starts from the whole machine, not preferred: the first candidate
    # is that same mask and replaces nothing.
    assert [k["rule"] for k in old["kept"]] == ["MERGE-5", "MERGE-6"]


def test_explain_2_nothing_kept_and_refusals() -> None:
    disjoint = {**REQUEST, "providers": [{"cpu": [hint([0])]}, {"gpu": [hint([1])]}]}
    trace = valid(explain_merge(disjoint))
    assert trace["nothing_kept"] == "MERGE-10"
    assert trace["empty_candidates"] == trace["candidates"] == 1
    refused = valid(explain_merge({**REQUEST, "policy": "no-such"}))
    assert refused["error"]["kind"] == "unknown-policy"


def test_explain_2_a_fast_merge_trace() -> None:  # FAST-7
    """Above the walk's budget the fast merge decides, and its trace says so: the regime,
    the permutations, the distinct candidates and the winner with a permutation giving it."""
    masks = [[n for n in range(8) if b >> n & 1] for b in range(1, 256)]
    lists = [hint(m, len(m) == 2) for m in masks]
    big = {"kubelet_version": "1.37", "numa_nodes": list(range(8)), "policy": "restricted",
           "providers": [{f"r{i}": lists for i in range(4)}]}
    trace = valid(explain_merge(big))
    assert trace["walk"] == "fast"
    assert trace["regime"] == "preferred"
    assert trace["candidates"] == 255 ** 4
    assert trace["distinct_candidates"] == 28  # every 2-node mask, held by all four lists
    [kept] = trace["kept"]
    assert kept["hint"] == {"numa": [0, 1], "preferred": True}
    assert kept["rule"] == "MERGE-6"
    assert kept["permutation"] == [{"numa": [0, 1], "preferred": True}] * 4
    assert trace["result"] == {"hint": kept["hint"], "admit": True}
    assert valid(explain_merge(REQUEST))["walk"] == "definitional"


NODE: dict[str, Any] = {"kubeletVersion": "1.33", "machine": {"numaNodes": [
    {"id": n, "memory": "8Gi", "cores": [{"socket": 0, "threads": [2 * n, 2 * n + 1]}]}
    for n in range(2)]},
    "config": {"topologyManagerPolicy": "single-numa-node", "cpuManagerPolicy": "static",
               "reservedSystemCPUs": "0"}}


def pod(uid: str, cpu: str) -> dict[str, Any]:
    return {"uid": uid, "containers": [{"name": "app0", "resources": {
        "limits": {"cpu": cpu, "memory": "1Gi"}}}]}


def test_explain_3_an_admission_and_a_refusal() -> None:
    node = decode_node(NODE)
    before = copy.deepcopy(node.state())
    admitted = valid(explain_admission(node, decode_pod(pod("a", "2"))))
    assert node.state() == before  # on a copy
    assert admitted["decision"]["admitted"] is True
    assert set(admitted["steps"][0]["hints"]) == {"devices", "cpu"}
    assert "refused" not in admitted
    refused = valid(explain_admission(node, decode_pod(pod("b", "3"))))
    assert refused["refused"]["rule"] == "ADMIT-3"
    assert refused["steps"][0]["merge"]["single_numa_node_filter"] is True
    assert "refused by topology manager (ADMIT-3)" in summarize(refused)


def test_explain_3_the_resource_fit_and_the_none_policy() -> None:
    node = decode_node({**NODE, "config": {**NODE["config"], "maxPods": 1}})
    node.admit(decode_pod(pod("a", "1")))
    trace = valid(explain_admission(node, decode_pod(pod("b", "1"))))
    assert trace["refused"] == {"by": "resource fit", "reason": "OutOfpods",
                                "message": trace["decision"]["message"], "rule": "ADMIT-8"}
    none = decode_node({**NODE, "config": {"topologyManagerPolicy": "none"}})
    trace = valid(explain_admission(none, decode_pod(pod("a", "1"))))
    assert trace["steps"] == [{"container": "app0", "hints": None, "merge": None,
                               "rule": "POLICY-1"}]


def test_explain_4_a_session_has_one_trace_per_admission() -> None:
    steps = [{"op": "create", "node": NODE}, {"op": "admit", "pod": pod("a", "2")},
             {"op": "state"}, {"op": "admit", "pod": pod("b", "3")}]
    traces = [valid(t) for t in explain_case("node", {"steps": steps})]
    assert [t["step"] for t in traces] == [2, 4]
    assert [t["decision"]["admitted"] for t in traces] == [True, False]
    assert next(valid(t) for t in explain_case("merge", REQUEST))["kind"] == "merge"


def test_explain_1_the_command_line() -> None:
    done = subprocess.run([sys.executable, "-m", "numaspec", "merge", "--explain"],
                          input=json.dumps(REQUEST) + "\n", capture_output=True, text=True,
                          timeout=60)
    answer = json.loads(done.stdout)
    assert valid(answer["explain"])["decided_by"] == "POLICY-3"
    lines = "\n".join(json.dumps(s) for s in ({"op": "create", "node": NODE},
                                              {"op": "admit", "pod": pod("a", "2")}))
    done = subprocess.run([sys.executable, "-m", "numaspec", "node", "--explain"],
                          input=lines + "\n", capture_output=True, text=True, timeout=60)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert "explain" not in answers[0]
    assert valid(answers[1]["explain"])["kind"] == "admission"


def test_explain_1_without_the_request_nothing_changes() -> None:
    from numaspec.protocols.serve import answer_merge_line

    assert answer_merge_line(json.dumps(REQUEST)) == reference_result("merge", REQUEST)
    plain = answer_merge_line(json.dumps(REQUEST), explain=True)
    assert {k: v for k, v in plain.items() if k != "explain"} == reference_result("merge",
                                                                                  REQUEST)
    assert io.StringIO().getvalue() == ""
