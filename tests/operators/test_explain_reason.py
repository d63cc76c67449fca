"""The reason in plain words (OPS-12) and the rule that decided a merge (EXPLAIN-2's
``chosen_by``), on the operator fixtures and on merge requests.

The rule that decided is the one ranking the winner above the runner-up: a merge with two or
more distinct non-empty candidate affinities is never decided by MERGE-4 (an empty affinity is
never chosen), which the trace used to name because the walk's first kept candidate is
recorded under it.  ``_old_naming`` keeps that mistake as a mutant, and the sweep shows the
check catches it.
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from numaspec import explain_merge
from numaspec.conformance.cli import main
from numaspec.operators.render import DEFAULT_WIDTH, width
from numaspec.protocols.explain import chosen_by, summarize
from numaspec_tools import FIXTURES

OPERATOR = FIXTURES / "operator"
KUBE = FIXTURES / "kube"


def hint(numa: list[int] | None, preferred: bool = True) -> dict[str, Any]:
    return {"numa_affinity": numa, "preferred": preferred}


def request(providers: list[dict[str, Any]], *, version: str = "1.30",
            nodes: int = 2, policy: str = "best-effort") -> dict[str, Any]:
    return {"kubelet_version": version, "numa_nodes": list(range(nodes)), "policy": policy,
            "providers": providers}


# --- the rule that decided (EXPLAIN-2) ------------------------------------------------------


@pytest.mark.parametrize(("providers", "version", "nodes", "rule"), [
    # {1} preferred against {1} not preferred: preferred wins ({0} & {1} is empty)
    ([{"cpu": [hint([0]), hint([1]), hint([0, 1], False)]}, {"gpu": [hint([1])]}], "1.30", 2,
     "MERGE-5"),
    # {2} against {0,1}, both preferred: the narrower; {0,1,2} not preferred is further down
    ([{"cpu": [hint([0, 1, 2], False), hint([0, 1]), hint([2])]}], "1.30", 3, "MERGE-6"),
    ([{"cpu": [hint([0, 1, 2], False), hint([0, 1]), hint([2])]}], "1.23", 3, "MERGE-6"),
    # two non-preferred of one width: MERGE-8's ranking from 1.24, the narrowest up to 1.23
    ([{"cpu": [hint([0], False), hint([1], False)]}], "1.30", 2, "MERGE-8"),
    ([{"cpu": [hint([0], False), hint([0, 1], False)]}], "1.23", 2, "MERGE-7"),
    # one candidate: MERGE-1; one left after the empty ones: MERGE-4; none: MERGE-10
    ([{"cpu": [hint([0])]}], "1.30", 2, "MERGE-1"),
    ([{"cpu": [hint([0]), hint([1])]}, {"gpu": [hint([1])]}], "1.30", 2, "MERGE-4"),
    ([{"cpu": [hint([0])]}, {"gpu": [hint([1])]}], "1.30", 2, "MERGE-10"),
])
def test_the_rule_that_decided_is_named(providers: list[dict[str, Any]], version: str,
                                        nodes: int, rule: str) -> None:
    trace = explain_merge(request(providers, version=version, nodes=nodes))
    assert trace["chosen_by"] == rule
    assert chosen_by(trace) == rule
    line = summarize(trace)
    assert f"chosen by {rule}" in line, line  # the suite's why: lines (EXPLAIN-4)


def _distinct_masks(providers: list[dict[str, Any]], nodes: int) -> set[frozenset[int]]:
    """Every non-empty AND of one hint per list (MERGE-1, MERGE-4), by brute force."""
    lists = [listed or [hint(None)] for p in providers for listed in p.values()]
    found: set[frozenset[int]] = set()

    def walk(i: int, acc: frozenset[int]) -> None:
        if i == len(lists):
            if acc:
                found.add(acc)
            return
        for h in lists[i]:
            numa = h["numa_affinity"]
            walk(i + 1, acc if numa is None else acc & frozenset(numa))

    walk(0, frozenset(range(nodes)))
    return found


def _random_providers(rng: random.Random, nodes: int) -> list[dict[str, Any]]:
    out = []
    for name in ("cpu", "gpu")[:rng.randint(1, 2)]:
        listed = []
        for _ in range(rng.randint(1, 3)):
            mask = sorted(rng.sample(range(nodes), rng.randint(1, nodes)))
            listed.append(hint(mask, rng.random() < 0.6))
        out.append({name: listed})
    return out


def _new_naming(trace: dict[str, Any]) -> str:
    return chosen_by(trace)


def _old_naming(trace: dict[str, Any]) -> str:
    """The mutant: the last kept candidate's rule, as the trace was read before."""
    kept = trace.get("kept") or []
    return str(kept[-1]["rule"]) if kept else str(trace.get("nothing_kept", ""))


def _misnamed(naming: Callable[[dict[str, Any]], str]) -> list[str]:
    """The merges of a seeded sweep where MERGE-4 (or MERGE-1, MERGE-10) is named though two
    distinct non-empty candidates were ranked."""
    rng = random.Random(38)
    wrong = []
    for index in range(300):
        nodes = rng.randint(2, 4)
        version = rng.choice(["1.23", "1.30"])
        providers = _random_providers(rng, nodes)
        trace = explain_merge(request(providers, version=version, nodes=nodes))
        rule = naming(trace)
        if len(_distinct_masks(providers, nodes)) >= 2 and \
                rule in ("MERGE-1", "MERGE-4", "MERGE-10"):
            wrong.append(f"#{index} {version} {providers}: {rule}")
    return wrong


def test_merge_4_is_never_named_where_a_ranking_decided() -> None:
    assert _misnamed(_new_naming) == []


def test_the_old_naming_is_caught() -> None:
    """The mutant names MERGE-4 for winners met first: the sweep finds it."""
    assert _misnamed(_old_naming)


# --- the reason in plain words (OPS-12) -----------------------------------------------------


def two_socket(pod: Path) -> list[str]:
    return ["explain", "--sysfs", str(FIXTURES / "sysfs" / "two-socket-4numa"),
            "--devices", str(FIXTURES / "sysfs" / "two-socket-4numa.devices.yaml"),
            "--kubelet-config", str(KUBE / "kubelet-config.yaml"),
            "--node", str(KUBE / "node.yaml"),
            "--state-dir", str(OPERATOR / "two-socket" / "state"),
            "--pods", str(KUBE / "pods.yaml"), "--pod", str(pod)]


def seed(name: str) -> list[str]:
    here = OPERATOR / name
    return ["explain", "--machine", str(here / "machine.json"),
            "--kubelet-config", str(here / "kubelet-config.yaml"),
            "--kubelet-version", "1.30.14", "--state-dir", str(here / "state"),
            "--pods", str(here / "running.yaml"), "--pod", str(here / "pod.yaml")]


def answer_of(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    import json

    main([*args, "--json"])
    found: dict[str, Any] = json.loads(capsys.readouterr().out)
    return found


def text_of(args: list[str], capsys: pytest.CaptureFixture[str],
            monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.delenv("COLUMNS", raising=False)
    main(args)
    return capsys.readouterr().out


GPU_VERDICT = "Rejected (TopologyAffinityError): no single NUMA node has room for all of it"
GPU_REFUSAL = (
    "Across resources: 8 exclusive CPUs are free only on NUMA node 3, no NUMA node has 16Gi "
    "of memory free (the most is 15.73Gi, on NUMA node 3) and 1 nvidia.com/gpu is free only "
    "on NUMA node 2. The pod needs 8 exclusive CPUs, 16Gi of memory and 1 nvidia.com/gpu on "
    "one NUMA node (single-numa-node, pod scope); the most any NUMA node has free is 8 CPUs: "
    "node 0 3, node 1 4, node 2 7, node 3 8; the most any NUMA node has free is 15.73Gi of "
    "memory: node 0 3.44Gi, node 1 12.25Gi, node 2 15.25Gi, node 3 15.73Gi; the most any NUMA "
    "node has free is 1 nvidia.com/gpu: node 0 0, node 1 0, node 2 1, node 3 0")


def test_a_refusal_s_reason_word_for_word(capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 57: the verdict first, then the split across resources, then the figures."""
    args = two_socket(OPERATOR / "two-socket" / "gpu-pod.yaml")
    answer = answer_of(args, capsys)
    assert answer["verdict"] == GPU_VERDICT
    assert answer["reason"] == GPU_REFUSAL
    assert list(answer)[:2] == ["verdict", "reason"]
    assert answer["asked"] == [{"container": None, "amounts": {
        "cpu": 8, "memory": 16 << 30, "nvidia.com/gpu": 1}}]
    text = text_of(args, capsys, monkeypatch)
    assert text.startswith(GPU_VERDICT + ".\nWhy: Across resources: 8 exclusive CPUs")
    assert " ".join(text.split()).count(" ".join(GPU_REFUSAL.split())) == 1
    assert "Free for exclusive use, per NUMA node, before admission" in text
    assert "(chosen by MERGE-10: no set holds every resource" in text


def test_restricted_refusal_reason(capsys: pytest.CaptureFixture[str]) -> None:
    answer = answer_of(seed("seed001"), capsys)
    assert answer["verdict"] == (
        "Rejected (TopologyAffinityError): no set of NUMA nodes has room for all of it where "
        "every resource prefers to be")
    # no NUMA node has any GPU or NIC free: said, across resources, before the figures
    assert answer["reason"] == (
        "Across resources: 2 exclusive CPUs are free only on NUMA node 1, no gpu-vendor.com/gpu "
        "is free on any NUMA node and no nic-vendor.com/nic is free on any NUMA node. "
        "Container numa-aligned-container2 needs 2 exclusive CPUs, 1 "
        "gpu-vendor.com/gpu and 1 nic-vendor.com/nic (restricted, container scope); the most "
        "any NUMA node has free is 2 CPUs: node 0 1, node 1 2; the most any NUMA node has free "
        "is 0 gpu-vendor.com/gpu: node 0 0, node 1 0; the most any NUMA node has free is 0 "
        "nic-vendor.com/nic: node 0 0, node 1 0")


def test_an_admission_says_where_and_why_that_set(capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    args = two_socket(KUBE / "pod.yaml")
    answer = answer_of(args, capsys)
    assert answer["verdict"] == "Admitted on NUMA node 2"
    assert answer["reason"] == (
        "The pod needs 6 exclusive CPUs and 4Gi of memory on one NUMA node (single-numa-node, "
        "pod scope); the most any NUMA node has free is 8 CPUs: node 0 3, node 1 4, node 2 7, "
        "node 3 8; the most any NUMA node has free is 15.73Gi of memory: node 0 3.44Gi, "
        "node 1 12.25Gi, node 2 15.25Gi, node 3 15.73Gi; the NUMA set is the narrowest set "
        "every resource prefers (MERGE-6)")
    assert "MERGE-4" not in answer["rules"]
    text = text_of(args, capsys, monkeypatch)
    assert text.startswith("Admitted on NUMA node 2.\nWhy: The pod needs 6 exclusive CPUs")
    assert "merged hint: NUMA 2 (chosen by MERGE-6: the narrowest set every resource prefers)" \
        in text
    assert "devices   -         no preference: it manages nothing this asks (no device)" in text


def test_no_hints_said_by_case(capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The Memory Manager's empty answer (nothing passes its check), the Device Manager's (no
    device asked), a manager switched off, and no answer (nothing it manages is asked)."""
    text = text_of(seed("seed004"), capsys, monkeypatch)
    assert "memory    -         nothing fits: no set of NUMA nodes passes its check" in text
    assert "devices   -         no preference: it manages nothing this asks (no device)" in text
    assert "cpu       -         off (policy none): gives no hints" in text
    assert "nothing it manages, or nothing fits" not in text
    burstable = tmp_path / "burstable.yaml"
    burstable.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default}\n"
        "spec:\n  containers:\n  - name: web\n    image: web\n    resources:\n"
        "      requests: {cpu: 500m, memory: 1Gi}\n", "utf-8")
    text = text_of(two_socket(burstable), capsys, monkeypatch)
    assert "no preference: it manages nothing this asks (no exclusive CPUs)" in text
    assert "no preference: it manages nothing this asks (not a Guaranteed pod" in text
    assert " ".join(text.split()).startswith(
        "Admitted on any NUMA node. Why: The pod asks for nothing the managers place on NUMA "
        "nodes (single-numa-node, pod scope)")


# --- the width ------------------------------------------------------------------------------


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        raise OSError("no descriptor")


def test_the_width_follows_columns_then_the_terminal() -> None:
    assert width(io.StringIO(), {}) == DEFAULT_WIDTH == 100
    assert width(io.StringIO(), {"COLUMNS": "160"}) == 160
    assert width(io.StringIO(), {"COLUMNS": "junk"}) == DEFAULT_WIDTH
    assert width(_Tty(), {"COLUMNS": "72"}) == 72
    assert width(_Tty(), {}) == DEFAULT_WIDTH  # a terminal whose size cannot be read


def test_wide_output_is_not_wrapped(capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    args = two_socket(OPERATOR / "two-socket" / "gpu-pod.yaml")
    monkeypatch.setenv("COLUMNS", "1000")
    main(args)
    wide = capsys.readouterr().out
    assert GPU_REFUSAL in wide  # one line
    monkeypatch.setenv("COLUMNS", "60")
    main(args)
    narrow = capsys.readouterr().out.splitlines()
    assert max(len(line.rstrip()) for line in narrow) <= 60
    # a rule's link is never broken: at 50 columns it loses its indent, and stays whole
    monkeypatch.setenv("COLUMNS", "50")
    main(args)
    links = [line for line in capsys.readouterr().out.splitlines() if "://" in line]
    assert links
    assert all(line.startswith("https://") for line in links if len(line) > 50)
    assert all(len(line.split()) == 1 for line in links)


def test_a_dra_claim_away_from_the_cpus_is_said_first(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 57: the DRA answer's why says where the claim's devices landed against the CPUs
    (DEV-8), before the figures."""
    here = OPERATOR / "dra-mixed"
    answer = answer_of(["explain", "--machine", str(here / "machine.json"),
                        "--kubelet-config", str(here / "kubelet-config.yaml"),
                        "--node", str(here / "node.yaml"), "--pod", str(here / "pod.yaml"),
                        "--dra", str(here / "dra.yaml")], capsys)
    assert answer["verdict"] == "Admitted: container app on NUMA node 0"
    assert answer["reason"].startswith(
        "Not aligned: container app has CPUs and intel.com/sriov_vf on NUMA node 0 and claim "
        "gpu-nic/gpu and claim gpu-nic/nic on NUMA node 1: nothing aligns DRA's devices with "
        "what the Topology Manager places (DEV-8). Container app needs")


def test_the_dra_table_says_memory_as_every_table_does() -> None:
    """Issue 57: a memory block the Topology Manager placed reads 16Gi, not 17179869184."""
    from numaspec.operators.render import render

    out = io.StringIO()
    render({"kind": "explanation", "dra": {"release": "1.35", "node": "n", "claims": [],
                                           "containers": [{"name": "app", "placed": [
                                               {"name": "memory", "by": "topology-manager",
                                                "numa": [0], "items": [str(16 << 30)]}],
                                               "pairs": []}]}}, out)
    assert "16Gi" in out.getvalue()
    assert str(16 << 30) not in out.getvalue()
