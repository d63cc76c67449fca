"""The suite against a scheduler-side peer: scheduler-plugins' NodeResourceTopologyMatch Filter
(spec chapter predict.md), through adapters/peers/scheduler-plugins (a Go adapter over the
plugin at the pinned tag peer_builds.PREDICT_TAG names, built by the test run).

The whole suite passes with the plugin's expectations manifest; every random predict case on
which the plugin and kubelet disagree is one of the findings of
adapters/peers/scheduler-plugins/FINDINGS.md (PRED-4's failures SCHEDPLUG-1..SCHEDPLUG-4) or a
refusal it explains (SCHEDPLUG-5, SCHEDPLUG-6); an NRT that makes the plugin panic is an
``errored`` answer with the Go stack, never a crash of the adapter.
"""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from numaspec.conformance.cases.predictions import judge
from numaspec.conformance.implementations.connection import connect
from numaspec.conformance.properties.predict import _settled, predict_sessions
from numaspec.conformance.running.reports import read_report
from numaspec.conformance.running.runner import RunConfig, run_conformance
from numaspec.protocols.adapter_protocol import predict_case, reference_predict, scheduler_case
from numaspec_tools.builds.peers import ROOT, VERSIONS, binary, start_answer

PEER = "scheduler-plugins"
CASES = 1_000


def adapter() -> Path:
    return binary(PEER)


def test_the_suite_passes_against_the_plugin(tmp_path: Path) -> None:
    manifest = ROOT / "expectations" / f"{PEER}-{VERSIONS[PEER]}.json"
    printed = io.StringIO()
    status = run_conformance(RunConfig(impl=f"exec:{adapter()}", out=str(tmp_path), strict=True,
                                       expectations=str(manifest), timeout=60.0, profile="ci"),
                             stream=printed)
    assert status == 0, printed.getvalue()[-6000:]
    _, records, _ = read_report(tmp_path / "report.jsonl")
    verdicts = Counter(r["verdict"] for r in records if r["op"] == "predict")
    # PRED-4: it agrees with kubelet, refuses (D5, D6) and fails (the manifest's findings).
    for verdict in ("passed", "refused", "xfailed"):
        assert verdicts[verdict], verdicts


def test_the_plugin_declares_predict_and_its_claims() -> None:
    raw = start_answer(adapter())
    assert raw["name"] == PEER
    assert raw["version"] == VERSIONS[PEER].removeprefix("v")
    assert raw["operations"] == ["predict"]
    assert raw["claims"]["predict"]["policies"] == ["single-numa-node"]
    assert raw["claims"]["predict"]["node_fit"] is False


def test_a_zone_the_plugin_cannot_index_is_an_errored_answer_with_the_go_stack() -> None:
    """The Filter indexes a 64-entry array by zone id and admits ids up to 64 (RESEARCH.md
    3.1 6): ``node-64`` panics inside the plugin.  The adapter recovers and says so."""
    case = scheduler_case(predict_case({"steps": [{"op": "create", "node": {
        "kubeletVersion": "1.33", "machine": {"numaNodes": [{"id": 0, "memory": "4Gi", "cores": [
            {"socket": 0, "threads": [0, 1]}]}]},
        "config": {"topologyManagerPolicy": "single-numa-node", "cpuManagerPolicy": "static",
                   "reservedSystemCPUs": "0"}}}],
        "pod": {"uid": "p", "containers": [{"name": "c", "resources": {
            "limits": {"cpu": "1", "memory": "64Mi"}}}]}}))
    case["nrt"]["zones"][0]["name"] = "node-64"
    connection = connect(f"exec:{adapter()}", timeout=60.0)
    try:
        answer = connection.run("predict", case)
        after = connection.run("predict", {**case, "nrt": {**case["nrt"], "zones": []}})
    finally:
        connection.close()
    assert answer.status == "errored", answer
    assert "index out of range" in json.dumps(answer.context)
    assert "goroutine" in json.dumps(answer.context) or "panic" in json.dumps(answer.context)
    assert after.status == "result"  # the adapter is still there


# ---- random cases: every disagreement is a finding ----


def _quantity(text: str) -> Fraction:
    match = re.fullmatch(r"(\d+)(m|Mi|Gi)?", text)
    assert match is not None, text
    value = Fraction(int(match.group(1)))
    return value / 1000 if match.group(2) == "m" else value


def _containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return [*pod.get("initContainers", []), *pod["containers"]]


def _asked(pod: dict[str, Any]) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    for container in _containers(pod):
        resources = container["resources"]
        for name, text in {**resources.get("limits", {}), **resources.get("requests", {})
                           }.items():
            out[name] = max(out.get(name, Fraction(0)), _quantity(text))
    return out


def explain(stored: dict[str, Any], verdict: str, message: str) -> str | None:
    """The finding of FINDINGS.md a disagreement is, or None."""
    config = stored["steps"][0]["node"]["config"]
    asked = _asked(stored["pod"])
    if verdict == "failed":
        zero = [r for r, v in asked.items() if "/" in r and v == 0]
        if zero and "no healthy devices present" in message:
            return "SCHEDPLUG-4"
        sidecar = any(c.get("restartPolicy") == "Always"
                      for c in stored["pod"].get("initContainers", []))
        if sidecar and config.get("topologyManagerScope") == "pod" and \
                "TopologyAffinityError" in message:
            return "SCHEDPLUG-7"  # a sidecar counted as a regular init container
        held = any(c.get("restartPolicy") != "Always" and _quantity(
            c["resources"].get("limits", {}).get("cpu", "0")).denominator == 1
            for c in stored["pod"].get("initContainers", []))
        if held and config.get("topologyManagerScope") == "container" and \
                "TopologyAffinityError" in message:
            return "SCHEDPLUG-2"  # an app container placed without its init container's node
        if sidecar and config.get("topologyManagerScope") == "container" and \
                "TopologyAffinityError" in message:
            return "SCHEDPLUG-8"  # a sidecar forgotten once aligned
        return None
    native = {r for r, v in asked.items() if v > 0 and "/" not in r}
    if config.get("memoryManagerPolicy") != "Static" and native - {"cpu"}:
        return "SCHEDPLUG-6"  # memory or hugepages listed in no zone
    if config.get("cpuManagerPolicy") != "static" and "cpu" in native:
        return "SCHEDPLUG-6"  # cpu listed in no zone
    limits = [c["resources"].get("limits", {}) for c in _containers(stored["pod"])]
    if any(_quantity(lim.get("cpu", "0")).denominator != 1 for lim in limits):
        return "SCHEDPLUG-5"  # a fraction of a CPU compared with whole exclusive CPUs
    return None


def test_every_random_disagreement_is_a_finding() -> None:
    connection = connect(f"exec:{adapter()}", timeout=60.0, strict=True)
    claims = connection.implementation.claims.predict
    cases: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = []

    @settings(max_examples=CASES, database=None, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(predict_sessions(claims, ("1.30", "1.33", "1.37")))
    def collect(drawn: dict[str, Any]) -> None:
        stored = _settled(drawn)
        case = predict_case(stored)
        expected = reference_predict(case)
        if claims.outside_predict(stored, expected) is None:
            cases.append((stored, case, expected))

    try:
        collect()
        answers = connection.run_many("predict", [scheduler_case(c) for _, c, _ in cases])
    finally:
        connection.close()
    counts: Counter[str] = Counter()
    unexplained = []
    for (stored, _, expected), answer in zip(cases, answers, strict=True):
        assert answer.status == "result", answer  # adapter trouble is no finding
        verdict, message = judge(expected, answer.result)
        if verdict == "passed":
            counts["agreed"] += 1
            continue
        finding = explain(stored, verdict, message)
        if finding is None:
            unexplained.append((stored, message))
        counts[f"{verdict} {finding}"] += 1
    print(f"{len(cases)} claimed cases of {CASES}: {dict(counts)}")
    assert counts["agreed"] > len(cases) // 4, counts
    assert not unexplained, "\n".join(f"{json.dumps(s)}\n  {m}" for s, m in unexplained[:3])


@pytest.mark.parametrize("finding", ["SCHEDPLUG-1", "SCHEDPLUG-2", "SCHEDPLUG-3",
                                     "SCHEDPLUG-4"])
def test_each_failure_finding_is_in_the_manifest(finding: str) -> None:
    manifest = json.loads((ROOT / "expectations" / f"{PEER}-{VERSIONS[PEER]}.json"
                           ).read_text(encoding="utf-8"))
    assert any(finding in e["reason"] for e in manifest["expectations"])
    findings = (ROOT / PEER / "FINDINGS.md").read_text(encoding="utf-8")
    assert f"## {finding}:" in findings
