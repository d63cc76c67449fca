"""Vectors reach every release they hold in (RUN-10): a vector's range comes from the rules it
cites, the op and its own ``releases``; the runner sends one instance per declared release,
rewritten to that release, with per-release answers where the reference differs; manifests,
replay and reports know the instances apart."""
# The en dash of "1.24–1.37" is the format under test (as in the spec's "Holds in" lines).
# ruff: noqa: RUF001, RUF003

from __future__ import annotations

import copy
import io
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from numaspec.conformance.cases.expectations import load_manifest, regenerate
from numaspec.conformance.cases.vectors import (
    case_version,
    check_files,
    holds_in,
    instance_at,
    instances,
    load_vector_file,
    load_vectors,
    write_files,
)
from numaspec.conformance.cases.vectors import main as vectors_main
from numaspec.conformance.cli import main
from numaspec.conformance.implementations.connection import Implementation
from numaspec.conformance.running.reports import read_report, terminal_summary
from numaspec.conformance.running.runner import (
    RunConfig,
    for_implementation,
    load_cases,
    run_conformance,
)
from numaspec.errors import InvalidFieldError
from numaspec.node.nodeconfig import NODE_VERSIONS
from numaspec.protocols.adapter_protocol import REFERENCE_IMPL
from numaspec_tools import ADAPTERS, FIXTURES

MISBEHAVE = ADAPTERS / "misbehave.py"

# A best-effort merge whose answer switches at 1.24 (MERGE-2 → MERGE-3): {0,1} and {0,2}
# merge to a preferred {0} before, to a non-preferred {0} from 1.24 on.
DIFFERENT_MASKS = {"kubelet_version": "1.23", "numa_nodes": [0, 1, 2, 3],
                   "policy": "best-effort",
                   "providers": [{"cpu": [{"numa_affinity": [0, 1], "preferred": True}]},
                                 {"gpu": [{"numa_affinity": [0, 2], "preferred": True}]}]}
BEFORE = {"hint": {"numa_affinity": [0], "preferred": True}, "admit": True}
AFTER = {"hint": {"numa_affinity": [0], "preferred": False}, "admit": True}


def vector(**fields: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {"id": "x", "description": "d", "rules": ["POLICY-2"], "op": "merge",
                           "derived": "hand", "case": copy.deepcopy(DIFFERENT_MASKS),
                           "expected": BEFORE}
    raw.update(fields)
    return {k: v for k, v in raw.items() if v is not None}


def load(*raws: dict[str, Any]) -> list[Any]:
    return load_vector_file("t.json", json.dumps({"vectors": list(raws)}))


def save(tmp_path: Path, *raws: dict[str, Any]) -> Path:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"vectors": list(raws)}, indent=1, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    return path


def node_session(version: str, *more: str) -> dict[str, Any]:
    machine = {"numaNodes": [{"id": 0, "cpus": [0, 1, 2, 3], "memory": "4Gi"}]}
    steps: list[dict[str, Any]] = [
        {"op": "create", "node": {"kubeletVersion": v, "machine": machine,
                                  "topologyManagerPolicy": "none"}}
        for v in (version, *more)]
    return {"steps": steps}


# --- the range a vector holds in -------------------------------------------------------------


def test_the_range_is_the_rules_and_the_ops() -> None:
    # POLICY-2 holds in 1.18–1.38, the merge op models 1.18–1.38.
    (merge,) = load(vector())
    assert holds_in(merge) == tuple(f"1.{m}" for m in range(18, 39))
    # MERGE-3 holds from 1.24: intersected, and the vector's own release stays its first.
    (both,) = load(vector(rules=["POLICY-2", "MERGE-3"],
                          case={**DIFFERENT_MASKS, "kubelet_version": "1.30"}))
    assert holds_in(both) == tuple(f"1.{m}" for m in range(24, 39))
    # A node session holds in the node model's releases at most (HINT-3: 1.18–1.38).
    (node,) = load({"id": "n", "description": "d", "rules": ["HINT-3"], "op": "node",
                    "derived": "reference", "case": node_session("1.30"),
                    "expected": {"answers": [{"ok": True}]}})
    assert holds_in(node) == tuple(f"1.{m}" for m in NODE_VERSIONS)


def test_an_explicit_range_states_it() -> None:
    (narrow,) = load(vector(releases="1.22–1.23"))
    assert holds_in(narrow) == ("1.22", "1.23")
    (hyphen,) = load(vector(releases="1.23-1.25"))
    assert holds_in(hyphen) == ("1.23", "1.24", "1.25")
    (one,) = load(vector(releases="1.23"))
    assert [i.id for i in instances(one)] == ["x"]


@pytest.mark.parametrize(("fields", "where", "message"), [
    ({"releases": "1.30"}, "releases", "own release 1.23"),
    ({"releases": "1.25–1.24"}, "releases", "empty range"),
    ({"releases": "v1.30"}, "releases", "release range"),
    ({"releases": 30}, "releases", "release range"),
    ({"expected_by_release": {}}, "expected_by_release", "non-empty"),
    ({"expected_by_release": {"1.23": AFTER}}, "expected_by_release['1.23']",
     "own release 1.23"),
    ({"expected_by_release": {"1.24–1.26": AFTER, "1.26": AFTER}},
     "expected_by_release['1.26']", "overlap"),
    ({"expected_by_release": {"1.24": [1]}}, "expected_by_release['1.24']", "merge response"),
    ({"case": {**DIFFERENT_MASKS, "kubelet_version": "1.17"}, "releases": "1.18"},
     "releases", "about versions"),
])
def test_bad_range_fields_are_typed_errors(fields: dict[str, Any], where: str,
                                           message: str) -> None:
    with pytest.raises(InvalidFieldError) as raised:
        load(vector(**fields))
    assert raised.value.where == f"t.json: vectors[0].{where}"
    assert message in raised.value.message


def test_vectors_about_versions_are_never_retargeted() -> None:
    unmodelled, mixed, garbled = load(
        vector(id="a", case={**DIFFERENT_MASKS, "kubelet_version": "1.17"},
               expected={"error": {"kind": "unsupported-version"}}),
        {"id": "b", "description": "d", "rules": ["HINT-3"], "op": "node",
         "derived": "reference", "case": node_session("1.30", "1.33"),
         "expected": {"answers": [{"ok": True}, {"ok": True}]}},
        {"id": "c", "description": "d", "rules": ["HINT-3"], "op": "node",
         "derived": "reference", "case": node_session("1.x"),
         "expected": {"answers": [{"error": {"kind": "unsupported-version"}}]}})
    assert [[i.id for i in instances(v)] for v in (unmodelled, mixed, garbled)] == [
        ["a"], ["b"], ["c"]]
    assert not unmodelled.retargetable
    assert not mixed.retargetable


# --- instances: the case rewritten, the answer per release -------------------------------------


def test_an_instance_names_its_release_in_the_case_and_the_id() -> None:
    (merge,) = load(vector(case={**DIFFERENT_MASKS, "kubelet_version": "v1.23.17"},
                           releases="1.22–1.24"))
    found = instances(merge)
    assert [(i.id, i.release) for i in found] == [("x", "1.23"), ("x@1.22", "1.22"),
                                                  ("x@1.24", "1.24")]
    assert found[0].case == merge.case  # the own instance is the vector's case, untouched
    assert found[1].case["kubelet_version"] == "v1.22.17"  # the format kept
    assert {k: v for k, v in found[1].case.items() if k != "kubelet_version"} == {
        k: v for k, v in merge.case.items() if k != "kubelet_version"}
    assert [case_version("merge", i.case) for i in found] == ["1.23", "1.22", "1.24"]
    assert instances(merge, ["1.24", "1.30"])[1:] == [found[2]]
    # No kubelet_version (the newest): the others get one.
    (newest,) = load(vector(case={k: v for k, v in DIFFERENT_MASKS.items()
                                  if k != "kubelet_version"}, expected=AFTER,
                            releases="1.36–1.37"))
    assert [i.case.get("kubelet_version") for i in instances(newest)] == [None, "1.36"]


def test_every_create_step_of_a_session_is_rewritten() -> None:
    case = node_session("1.30", "v1.30.2")
    case["steps"].append({"op": "admit", "pod": {"uid": "p"}})
    (session,) = load({"id": "n", "description": "d", "rules": ["HINT-3"], "op": "node",
                       "derived": "reference", "case": case,
                       "expected": {"answers": [{"ok": True}] * 3}})
    moved = instance_at(session, "1.35")
    assert [s["node"]["kubeletVersion"] for s in moved.case["steps"][:2]] == ["1.35",
                                                                               "v1.35.2"]
    assert moved.case["steps"][2] == case["steps"][2]
    assert case["steps"][0]["node"]["kubeletVersion"] == "1.30"  # the vector is untouched


def test_an_instance_expects_its_release_answer() -> None:
    (merge,) = load(vector(expected_by_release={"1.24–1.37": AFTER}))
    assert instance_at(merge, "1.22").expected == BEFORE
    assert instance_at(merge, "1.23").expected == BEFORE
    assert instance_at(merge, "1.24").expected == AFTER
    assert instance_at(merge, "1.37").expected == AFTER


# --- check and write ---------------------------------------------------------------------------


def test_a_hand_vector_that_differs_at_a_release_in_its_range_is_a_problem(
        tmp_path: Path) -> None:
    problems = check_files([save(tmp_path, vector(releases="1.22–1.25"))])
    assert [p.splitlines()[0] for p in problems] == [
        "t.json: x (hand) disagrees with the reference at 1.24 (x@1.24):",
        "t.json: x (hand) disagrees with the reference at 1.25 (x@1.25):"]
    assert "narrow its range" in problems[0]
    # Either fix is accepted: a narrower range, or a hand answer for those releases.
    assert check_files([save(tmp_path, vector(releases="1.22–1.23"))]) == []
    assert check_files([save(tmp_path, vector(releases="1.22–1.25",
                                              expected_by_release={"1.24–1.25": AFTER}))]) == []
    # write never rewrites a hand vector: it reports it.
    path = save(tmp_path, vector(releases="1.22–1.25"))
    before = path.read_bytes()
    changed, problems = write_files([path])
    assert (changed, len(problems)) == (0, 2)
    assert path.read_bytes() == before


def test_write_fills_per_release_answers_of_reference_vectors_idempotently(
        tmp_path: Path) -> None:
    path = save(tmp_path, vector(derived="reference", releases="1.21–1.26", expected=AFTER))
    problems = check_files([path])
    assert any("stale" in p for p in problems)
    assert write_files([path]) == (1, [])
    written = json.loads(path.read_text())["vectors"][0]
    assert written["expected"] == BEFORE
    assert written["expected_by_release"] == {"1.24–1.26": AFTER}
    assert check_files([path]) == []
    once = path.read_bytes()
    assert write_files([path]) == (0, [])
    assert path.read_bytes() == once
    # A stale per-release answer is found, and an answer for a release out of range too.
    raw = {**written, "expected_by_release": {"1.24–1.25": AFTER}}
    assert any("stale" in p for p in check_files([save(tmp_path, raw)]))
    raw = {**written, "releases": "1.21–1.24", "expected_by_release": {"1.24–1.26": AFTER}}
    assert any("outside the releases it holds in" in p
               for p in check_files([save(tmp_path, raw)]))


def test_a_vector_whose_own_release_is_outside_its_rules_must_state_its_range(
        tmp_path: Path) -> None:
    raw = vector(rules=["MERGE-3"], expected=BEFORE)  # MERGE-3 holds from 1.24; this is 1.23
    problems = check_files([save(tmp_path, raw)])
    assert any("own release 1.23 is outside the range its rules hold in (1.24–1.38)" in p
               for p in problems)
    assert check_files([save(tmp_path, {**raw, "releases": "1.23"})]) == []


# --- the runner ----------------------------------------------------------------------------


def implementation(merge: tuple[str, ...], node: tuple[str, ...] = (),
                   operations: tuple[str, ...] = ("merge", "node", "hints")) -> Implementation:
    return Implementation(name="t", version="0", language="x", homepage="", issues="",
                          kubelet_versions=merge, node_kubelet_versions=node,
                          operations=operations if node else ("merge",), raw={})


def received(cases: list[Any], impl: Implementation) -> list[Any]:
    """What the implementation is sent: its cases, less those it does not declare."""
    return [c for c in for_implementation(cases, impl)
            if impl.declares(c.op, c.kubelet_version or None) is None]


def test_an_implementation_gets_the_instances_of_its_releases(tmp_path: Path) -> None:
    path = save(tmp_path, vector(releases="1.22–1.25", expected_by_release={
        "1.24–1.25": AFTER}))
    cases = load_cases(properties=False, vector_files=[str(path)])
    assert [(c.id, c.vector, c.kubelet_version) for c in cases] == [
        ("x", "x", "1.23"), ("x@1.22", "x", "1.22"), ("x@1.24", "x", "1.24"),
        ("x@1.25", "x", "1.25")]
    assert [c.id for c in received(cases, implementation(("1.24",)))] == ["x@1.24"]
    # The vector's own instance is always listed (and skipped when undeclared, RUN-4).
    assert [c.id for c in for_implementation(cases, implementation(("1.24",)))] == [
        "x", "x@1.24"]
    assert [c.id for c in received(cases, implementation(("1.30",)))] == []
    sampled = load_cases(properties=False, vector_files=[str(path)], releases=("1.25",))
    assert [c.id for c in sampled] == ["x", "x@1.25"]


def run(tmp_path: Path, impl: str, **options: Any) -> tuple[int, list[dict[str, Any]], str]:
    options.setdefault("properties", False)
    config = RunConfig(impl=impl, out=str(tmp_path / "out"), timeout=10.0, **options)
    printed = io.StringIO()
    status = run_conformance(config, stream=printed)
    _, records, _ = read_report(tmp_path / "out" / "report.jsonl")
    return status, records, printed.getvalue()


WRONG = f"exec:{shlex.quote(sys.executable)} {shlex.quote(str(MISBEHAVE))} wrong"


def test_every_instance_runs_and_the_manifest_matches_by_vector_or_instance(
        tmp_path: Path) -> None:
    path = str(save(tmp_path, vector(releases="1.22–1.24",
                                     expected_by_release={"1.24": AFTER})))
    status, records, printed = run(tmp_path / "ref", REFERENCE_IMPL, vector_files=(path,))
    assert status == 0
    assert [(r["id"], r["vector"], r["kubelet_version"], r["verdict"]) for r in records] == [
        ("x", "x", "1.23", "passed"), ("x@1.22", "x", "1.22", "passed"),
        ("x@1.24", "x", "1.24", "passed")]
    assert "vectors run per kubelet release: 1.22: 1, 1.23: 1, 1.24: 1" in printed
    # The fixture flips every admit: each instance fails, and names its release.
    status, records, printed = run(tmp_path / "wrong", WRONG, vector_files=(path,))
    assert status == 3  # every case failed: "the adapter is probably broken"
    assert {r["verdict"] for r in records} == {"failed"}
    assert "x@1.22 [failed] (kubelet 1.22)" in printed
    manifest = tmp_path / "m.json"

    def expect(*names: str) -> list[dict[str, Any]]:
        manifest.write_text(json.dumps({"implementation": "t", "expectations": [
            {"vector": n, "outcome": "fail", "reason": "flips", "link": ""} for n in names]}))
        return run(tmp_path / "m", WRONG, vector_files=(path,), expectations=str(manifest))[1]

    assert [r["verdict"] for r in expect("x")] == ["xfailed"] * 3  # the bare ID: every one
    assert [r["verdict"] for r in expect("x@1.22")] == ["failed", "xfailed", "failed"]
    assert [r["expectation"]["vector"] for r in expect("x", "x@1.22")] == ["x", "x@1.22", "x"]
    # An entry for an instance the vector does not have stops the run, as any unknown ID.
    manifest.write_text(json.dumps({"implementation": "t", "expectations": [
        {"vector": "x@1.30", "outcome": "fail", "reason": "r", "link": ""}]}))
    with pytest.raises(InvalidFieldError, match=r"no case has the ID 'x@1\.30'"):
        load_manifest(manifest).check_known(["x", "x@1.22"], [])
    status, records, _ = run(tmp_path / "bad", WRONG, vector_files=(path,),
                             expectations=str(manifest))
    assert (status, records) == (4, [])


def test_a_regenerated_manifest_keeps_a_bare_entry_once() -> None:
    previous = load_manifest_from({"vector": "x", "outcome": "fail", "reason": "known",
                                   "link": "l"})
    records: list[dict[str, Any]] = [
        {"id": i, "vector": "x", "verdict": "failed", "message": "m", "rules": []}
        for i in ("x", "x@1.22", "x@1.24")]
    records.append({"id": "y@1.30", "vector": "y", "verdict": "failed", "message": "m",
                    "rules": []})
    entries = regenerate(records, "t", previous)["expectations"]
    assert [(e["vector"], e["reason"]) for e in entries] == [("x", "known"),
                                                            ("y@1.30", "failed: m")]


def load_manifest_from(*entries: dict[str, str]) -> Any:
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "m.json"
        path.write_text(json.dumps({"implementation": "t", "expectations": list(entries)}))
        return load_manifest(path)


def test_replay_takes_an_instance_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                     ) -> None:
    path = str(save(tmp_path, vector(releases="1.22–1.24",
                                     expected_by_release={"1.24": AFTER})))
    assert main(["replay", path, "--id", "x@1.24"]) == 0
    out = capsys.readouterr().out
    assert "case x@1.24 (merge)" in out
    assert '"kubelet_version": "1.24"' in out
    assert '"preferred": false' in out.split("expected (recorded):")[1]
    assert main(["replay", path, "--id", "x@1.30"]) == 4
    assert "x holds in 1.22, 1.23, 1.24, not '1.30'" in capsys.readouterr().err
    # From a report: the instance's record.
    run(tmp_path / "wrong", WRONG, vector_files=(path,))
    report = str(tmp_path / "wrong" / "out" / "report.jsonl")
    capsys.readouterr()
    assert main(["replay", report, "--id", "x@1.22", "--impl", WRONG]) == 1
    assert '"kubelet_version": "1.22"' in capsys.readouterr().out


# --- what each release receives --------------------------------------------------------------

#: The kubelet adapters (adapters/kubelet): the operations each declares.
KUBELET_ADAPTERS = {"1.23": ("merge",), "1.30": ("merge", "node", "hints"),
                    "1.37": ("merge", "node", "hints")}
#: Vector instances each kubelet adapter received when ranges came in (RUN-10), 248 vectors;
#: before, each vector went to its own release only: 18, 92 and 8 of 222 vectors.  The test
#: fails if a change to ranges or vectors sends fewer.
FLOOR = {"1.23": 78, "1.30": 208, "1.37": 212}


def test_each_release_receives_every_vector_that_holds_for_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    vectors = load_vectors()
    cases = load_cases(properties=False)
    table = []
    for minor in range(18, 38):
        release = f"1.{minor}"
        operations = KUBELET_ADAPTERS.get(release, ("merge", "node", "hints", "affinity"))
        node = (release,) if minor in NODE_VERSIONS and operations != ("merge",) else ()
        impl = implementation((release,), node, operations)
        now = len(received(cases, impl))
        # Before RUN-10: a vector went only to its own release (or to all, about versions).
        before = sum(1 for v in vectors if impl.declares(v.op, v.kubelet_version or None)
                     is None)
        table.append(f"{release}: {before:>4} -> {now:>4}")
        assert now >= before, release
        if release in FLOOR:
            assert now >= FLOOR[release], f"kubelet {release} receives {now} instances"
    with capsys.disabled():
        print(f"\nvector instances per release ({len(vectors)} vectors): before -> now\n  "
              + "\n  ".join(table))


def test_the_report_shows_the_release_of_each_failure() -> None:
    records = [{"type": "case", "id": "x@1.22", "kind": "vector", "kubelet_version": "1.22",
                "verdict": "failed", "message": "m", "rules": []}]
    lines = terminal_summary({"impl": "t"}, records, {}, rules=False)
    assert "  x@1.22 [failed] (kubelet 1.22) m" in lines
    assert "vectors run per kubelet release: 1.22: 1" in "\n".join(lines)


def test_the_spec_vectors_expand_as_stated() -> None:
    """Every committed vector's instances are at distinct releases, its own first."""
    for v in load_vectors():
        found = instances(v)
        assert found[0].id == v.id
        assert len({i.release for i in found}) == len(found), v.id
        assert all(i.id == f"{v.id}@{i.release}" for i in found[1:]), v.id


def test_vectors_check_reports_the_count_of_instances(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    assert vectors_main(["check", str(FIXTURES / "vectors-small.json")]) == 0
    assert "10 vectors (10 instances) in 1 files" in capsys.readouterr().out
