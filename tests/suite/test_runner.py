"""The runner survives any implementation (RUN-1..RUN-9): misbehaving fixture adapters each get
the right verdict, the run completes, and every report is written."""

from __future__ import annotations

import io
import json
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from numaspec.conformance.cli import main
from numaspec.conformance.implementations.strict import schema_registry
from numaspec.conformance.running.reports import BAD_VERDICTS, read_report
from numaspec.conformance.running.runner import RunConfig, run_conformance
from numaspec.protocols.adapter_protocol import REFERENCE_IMPL
from numaspec_tools import ADAPTERS, FIXTURES

SMALL = str(FIXTURES / "vectors-small.json")
PYTHON = shlex.quote(sys.executable)
#: numaspec_tools.adapters.in_process: implementations handed to the runner by name
IN_PROCESS = "numaspec_tools.adapters.in_process:"


def misbehave(mode: str) -> str:
    return f"exec:{PYTHON} {shlex.quote(str(ADAPTERS / 'misbehave.py'))} {mode}"


def run(tmp_path: Path, impl: str, **options: Any) -> tuple[int, dict[str, Any],
                                                          list[dict[str, Any]], dict[str, Any],
                                                          str]:
    options.setdefault("vector_files", (SMALL,))
    options.setdefault("properties", False)
    config = RunConfig(impl=impl, out=str(tmp_path / "out"), timeout=options.pop("timeout", 2.0),
                       **options)
    printed = io.StringIO()
    status = run_conformance(config, stream=printed)
    header, records, footer = read_report(tmp_path / "out" / "report.jsonl")
    return status, header, records, footer, printed.getvalue()


def verdicts(records: list[dict[str, Any]]) -> dict[int, str]:
    return {r["seq"]: r["verdict"] for r in records}


def by_seq(records: list[dict[str, Any]], seq: int) -> dict[str, Any]:
    return next(r for r in records if r["seq"] == seq)


# --- RUN-2: each misbehaviour gets its verdict, and only that case does ------------------------


@pytest.mark.parametrize(("mode", "seq", "verdict", "evidence"), [
    ("crash-third", 3, "crashed", "exit status 3"),
    ("hang", 2, "timeout", "no answer within"),
    ("garbage", 2, "protocol-error", "not JSON"),
    ("flood", 2, "protocol-error", "longer than"),
    ("out-of-order", 2, "protocol-error", "out of order"),
])
def test_one_misbehaving_case_is_recorded_and_the_run_goes_on(
        tmp_path: Path, mode: str, seq: int, verdict: str, evidence: str) -> None:
    status, _, records, footer, _ = run(tmp_path, misbehave(mode))
    assert len(records) == 10
    assert by_seq(records, seq)["verdict"] == verdict
    assert evidence in by_seq(records, seq)["message"]
    assert all(v == "passed" for s, v in verdicts(records).items() if s != seq)
    assert footer["restarts"] == 1
    assert status == 1
    assert footer["exit_status"] == 1
    assert not footer["adapter_probably_broken"]


def test_a_crash_keeps_the_stderr_of_the_crashing_case(tmp_path: Path) -> None:
    _, _, records, footer, _ = run(tmp_path, misbehave("crash-third"))
    assert "crashing on the third case" in by_seq(records, 3)["stderr"]
    assert "crashing on the third case" in footer["stderr_tail"]


def test_protocol_errors_carry_the_offending_bytes_truncated(tmp_path: Path) -> None:
    _, _, garbage, _, _ = run(tmp_path / "g", misbehave("garbage"))
    assert "Traceback (most recent call last)" in by_seq(garbage, 2)["offending"]
    _, _, flood, _, _ = run(tmp_path / "f", misbehave("flood"))
    offending = by_seq(flood, 2)["offending"]
    assert offending.startswith("xxxx")
    assert len(offending) < 400


def test_stderr_is_diagnostics_and_lands_in_the_report(tmp_path: Path) -> None:
    status, _, records, footer, _ = run(tmp_path, misbehave("stderr"))
    assert status == 0
    assert all(r["verdict"] == "passed" for r in records)
    assert "fixture: diagnostics for seq 10" in footer["stderr_tail"]


def test_wrong_answers_fail_with_the_differences(tmp_path: Path) -> None:
    status, _, records, _, printed = run(tmp_path, misbehave("wrong"))
    failed = [r for r in records if r["verdict"] == "failed"]
    assert status == 1
    assert failed
    assert all(r["op"] == "merge" and r["expected"]["admit"] and not r["actual"]["admit"]
               for r in failed)
    assert all(r["differences"] for r in failed)
    assert failed[0]["id"] in printed


def test_skipped_and_errored_answers_are_counted_not_hidden(tmp_path: Path) -> None:
    status, _, records, footer, printed = run(tmp_path / "s", misbehave("skip-node"))
    skipped = [r for r in records if r["verdict"] == "skipped"]
    # RUN-7: skipped inside the claims (it claims every node), so not judged: never green
    assert status == 5
    assert len(skipped) == 2
    assert all(r["skip_source"] == "implementation" and r["issue_url"] for r in skipped)
    assert "2 skipped (2 by implementation)" in printed
    assert "NOT EVERYTHING CLAIMED WAS CHECKED" in printed
    assert {u["id"] for u in footer["unjudged"]} == {r["id"] for r in skipped}
    status, _, records, _, _ = run(tmp_path / "e", misbehave("error-merge"))
    errored = [r for r in records if r["verdict"] == "errored"]
    assert status == 1
    assert len(errored) == 8
    assert errored[0]["context"]["message"] == "the fixture refuses merges"


# --- RUN-3 and RUN-7: the run always finishes; a broken adapter is called one ---------------


def test_an_adapter_that_never_answers_is_given_up_on(tmp_path: Path) -> None:
    status, _, records, footer, printed = run(tmp_path, misbehave("hang-always"), timeout=0.5)
    assert [r["verdict"] for r in records] == ["timeout"] * 5 + ["not-run"] * 5
    assert "5 cases in a row" in footer["gave_up"]
    assert footer["adapter_probably_broken"]
    assert status == 3
    assert "probably broken" in printed


def test_an_adapter_that_stops_reading_cannot_block_the_runner(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    vectors = json.loads(Path(SMALL).read_text())["vectors"]
    merge = next(v for v in vectors if v["op"] == "merge")
    # A case far larger than a pipe's buffer, to an implementation that no longer reads.
    padded = {**merge, "id": "big", "case": {**merge["case"], "feature_gates": {
        f"Gate{i}": True for i in range(20000)}}}
    big.write_text(json.dumps({"vectors": [padded]}))
    status, _, records, _, _ = run(tmp_path, misbehave("deaf"), vector_files=(str(big),),
                                   timeout=0.5)
    assert [r["verdict"] for r in records] == ["timeout"]
    assert status == 1


def test_every_case_failing_flags_the_adapter_as_probably_broken(tmp_path: Path) -> None:
    status, _, _, footer, _ = run(tmp_path, misbehave("all-wrong"))
    assert status == 3
    assert footer["adapter_probably_broken"]
    assert "probably broken" in (tmp_path / "out" / "summary.md").read_text()


def test_an_adapter_that_cannot_start_still_gets_a_report(tmp_path: Path) -> None:
    status, header, records, footer, printed = run(tmp_path, misbehave("no-start"))
    assert status == 4
    assert records == []
    assert header["implementation"] is None
    assert "cannot start: fixture says so" in footer["aborted"]
    assert "aborted" in printed


def test_the_start_timeout_is_a_setting_of_its_own(tmp_path: Path) -> None:  # RUN-2
    status, _, records, footer, _ = run(tmp_path / "short", misbehave("slow-start"),
                                        start_timeout=0.5)
    assert status == 4
    assert records == []
    assert "no answer to start within 0.5s" in footer["aborted"]
    status, header, records, _, _ = run(tmp_path / "long", misbehave("slow-start"),
                                        start_timeout=30.0)
    assert status == 0
    assert header["start_timeout"] == 30.0
    assert {r["verdict"] for r in records} == {"passed"}


def test_strict_mode_turns_schema_violations_into_protocol_errors(tmp_path: Path) -> None:
    # a wrong type inside a result: a normal run judges the answer (it differs), --strict
    # refuses it against the schema, naming the path
    _, _, records, _, _ = run(tmp_path / "lax", misbehave("bad-type"))
    typed = [r for r in records if r["op"] == "merge" and r["verdict"] != "passed"]
    assert typed
    assert not any(r["verdict"] == "protocol-error" for r in records)
    status, _, records, _, _ = run(tmp_path / "strict", misbehave("bad-type"), strict=True)
    strict = [r for r in records if r["verdict"] == "protocol-error"]
    assert strict
    assert all("strict:" in r["message"] and "numa_affinity" in r["message"] for r in strict)
    assert status == 1


@pytest.mark.parametrize("mode", ["bad-schema", "extra-field"])
def test_a_normal_and_a_strict_run_refuse_the_same_fields(tmp_path: Path, mode: str) -> None:
    """PROTO-3, PROTO-6: a field the protocol does not define, in the answer or at the top of
    a result, is a protocol error in every run, not only under --strict (facts for the report
    go in the start answer's implementation.metadata)."""
    for strict in (False, True):
        status, _, records, _, _ = run(tmp_path / str(strict), misbehave(mode), strict=strict)
        merge = [r for r in records if r["op"] == "merge"]
        assert merge
        assert all(r["verdict"] == "protocol-error" for r in merge), (strict, merge[0])
        assert all("'extra'" in r["message"] or "'debug'" in r["message"] for r in merge)
        # bad-schema spoils merge results only; extra-field every answer: probably broken
        assert status == (1 if mode == "bad-schema" else 3)


# --- in-process implementations ------------------------------------------------------------






def test_in_process_exceptions_crash_one_case_and_hangs_stop_the_run(tmp_path: Path) -> None:
    status, _, records, footer, _ = run(tmp_path / "r", IN_PROCESS + "Raising")
    assert [r["verdict"] for r in records] == ["crashed"] * 5 + ["not-run"] * 5
    assert status == 3
    assert "5 cases in a row" in footer["gave_up"]
    assert "RuntimeError: no merge today" in records[0]["context"]["traceback"]
    status, _, records, _, _ = run(tmp_path / "h", IN_PROCESS + "Hanging", timeout=0.5)
    assert [r["verdict"] for r in records][:2] == ["timeout", "not-run"]
    assert status == 3


def test_a_merge_object_gets_node_cases_skipped_as_undeclared(tmp_path: Path) -> None:
    """RUN-4: operations (PROTO-2, PROTO-3) not declared are not sent, and say so."""
    status, _, records, _, printed = run(
        tmp_path, "numaspec.conformance.implementations.adapter:reference")
    undeclared = [r for r in records if r.get("skip_source") == "undeclared"]
    assert status == 0
    assert {r["op"] for r in undeclared} == {"node"}
    assert "does not declare the 'node' operation" in undeclared[0]["message"]
    assert "not claimed (2 operation not served)" in printed
    assert "2 cases of the 'node' operation, which it does not serve" in printed


# --- RUN-5: expectations -------------------------------------------------------------------


def write(tmp_path: Path, entries: list[dict[str, Any]]) -> str:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"implementation": "fixture", "expectations": entries}))
    return str(path)


def test_expected_failures_are_xfailed_and_unexpected_passes_fail_the_run(
        tmp_path: Path) -> None:
    _, _, records, _, _ = run(tmp_path / "first", misbehave("wrong"))
    failing = [r["id"] for r in records if r["verdict"] == "failed"]
    passing = [r["id"] for r in records if r["verdict"] == "passed"]
    manifest = write(tmp_path, [{"vector": i, "outcome": "fail", "reason": "flips admit",
                                 "link": "https://example.invalid/1"} for i in failing])
    status, _, records, _, _ = run(tmp_path / "second", misbehave("wrong"),
                                   expectations=manifest)
    assert status == 0
    assert {r["id"] for r in records if r["verdict"] == "xfailed"} == set(failing)
    manifest = write(tmp_path, [{"vector": passing[0], "outcome": "fail", "reason": "r",
                                 "link": ""}])
    status, _, records, _, printed = run(tmp_path / "third", misbehave("wrong"),
                                         expectations=manifest)
    assert next(r for r in records if r["id"] == passing[0])["verdict"] == "xpassed"
    assert status == 1
    assert "xpassed" in printed


#: ``wrong`` flips admit in every merge answer that admits: its divergence, as a class
_FLIPS_ADMIT = {"op": "merge", "expected.admit": True, "actual.admit": False}


def _class(match: dict[str, Any], finding: str = "FLIP-1") -> dict[str, Any]:
    return {"finding": finding, "match": match, "outcome": "fail",
            "reason": "the fixture flips admit",
             "link": "tools/numaspec_tools/adapters/misbehave.py"}


def test_a_divergence_by_input_class_covers_vectors_and_properties(tmp_path: Path) -> None:
    """RUN-5: one entry by input class, no case named: every vector inside it is xfailed,
    and each property sets the cases inside it aside, explores on and is xfailed naming the
    finding (with how many cases it set aside, and the first)."""
    manifest = write(tmp_path, [_class(_FLIPS_ADMIT)])
    status, _, records, _, printed = run(
        tmp_path, misbehave("wrong"), expectations=manifest, properties=True,
        keyword="seed001,merge-,P-ADMISSION,P-EQUIVALENCE")
    assert status == 0, printed
    vectors = [r for r in records if r["kind"] == "vector" and r["verdict"] == "xfailed"]
    assert vectors
    assert all(r["expectation"]["finding"] == "FLIP-1" for r in vectors)
    properties = [r for r in records if r["kind"] == "property"]
    assert {r["verdict"] for r in properties} == {"xfailed"}
    for record in properties:
        (seen,) = record["divergences"]
        assert seen["finding"] == "FLIP-1"
        assert seen["cases"] >= 1
        assert seen["first"]["policy"] in ("best-effort", "restricted", "single-numa-node",
                                           "none", "")


def test_a_known_class_does_not_stop_a_property_finding_a_new_one(tmp_path: Path) -> None:
    """The same fixture, its class known only under best-effort: the property sets those
    cases aside, explores on, and fails on a case under another policy (anything new)."""
    manifest = write(tmp_path, [_class({**_FLIPS_ADMIT, "policy": "best-effort"})])
    status, _, records, _, _ = run(tmp_path, misbehave("wrong"), expectations=manifest,
                                   properties=True, vectors=False, keyword="P-EQUIVALENCE")
    (record,) = records
    assert record["verdict"] == "failed"
    assert record["counterexample"]["policy"] != "best-effort"
    assert status == 1


@pytest.mark.parametrize(("entry", "message"), [
    (_class({"no.such.fact": 1}), "no fact 'no.such.fact'"),
    (_class({"policy": {"x": 1}}), "a value is a string"),
    ({**_class({"policy": "x"}), "property": "P-NO-SUCH"}, "no property has the ID"),
    ({**_class({"policy": "x"}), "outcome": "skip"}, "outcome 'fail'"),
])
def test_a_bad_class_entry_is_named(tmp_path: Path, entry: dict[str, Any], message: str
                                    ) -> None:
    status, _, records, footer, _ = run(tmp_path, misbehave("wrong"),
                                        expectations=write(tmp_path, [entry]))
    assert status == 4
    assert records == []
    assert message in footer["aborted"]


def test_a_rule_expectation_that_no_longer_fails_is_stale(tmp_path: Path) -> None:
    # The small file's node vectors, citing a rule no property cites: a run without the
    # properties leaves out no case of that rule, so the entry is judged (and stale).
    document = json.loads(Path(SMALL).read_text(encoding="utf-8"))
    for vector in document["vectors"]:
        if vector["op"] == "node":
            vector["rules"] = ["NODE-8"]
    vectors = tmp_path / "vectors.json"
    vectors.write_text(json.dumps(document), encoding="utf-8")
    manifest = write(tmp_path, [{"rule": "NODE-8", "outcome": "fail", "reason": "r",
                                 "link": ""}])
    status, _, _, footer, printed = run(tmp_path, misbehave("wrong"), expectations=manifest,
                                        vector_files=(str(vectors),))
    assert status == 1
    assert "rule NODE-8" in footer["stale_expectations"][0]
    assert "Stale expectation" in printed


def test_skip_entries_keep_a_hanging_case_from_being_sent(tmp_path: Path) -> None:
    _, _, records, _, _ = run(tmp_path / "first", misbehave("hang"))
    hanging = by_seq(records, 2)["id"]
    manifest = write(tmp_path, [{"vector": hanging, "outcome": "skip", "reason": "hangs",
                                 "link": "https://example.invalid/2"}])
    status, _, records, _, printed = run(tmp_path / "second", misbehave("hang"),
                                         expectations=manifest)
    skipped = next(r for r in records if r["id"] == hanging)
    assert skipped["verdict"] == "skipped"
    assert skipped["skip_source"] == "manifest"
    # Not sending it shifts seq 2 to the next case, which the fixture then hangs on: the point
    # is that the manifest's case itself was never sent, and the run still finishes.
    assert status in (0, 1)
    assert "by manifest" in printed


@pytest.mark.parametrize(("entries", "message"), [
    ([{"vector": "no-such-case", "outcome": "fail", "reason": "r", "link": ""}],
     "no case has the ID 'no-such-case'"),
    ([{"rule": "MERGE-99", "outcome": "fail", "reason": "r", "link": ""}],
     "no case cites the rule 'MERGE-99'"),
    ([{"vector": "x", "rule": "MERGE-1", "outcome": "fail", "reason": "r", "link": ""}],
     "exactly one of 'vector' or 'rule'"),
    ([{"vector": "x", "outcome": "maybe", "reason": "r", "link": ""}], "outcome must be"),
    ([{"vector": "x", "outcome": "fail", "reason": " ", "link": ""}], "says why"),
])
def test_a_bad_manifest_stops_the_run_with_a_message(tmp_path: Path,
                                                     entries: list[dict[str, str]],
                                                     message: str) -> None:
    status, _, records, footer, _ = run(tmp_path, misbehave("wrong"),
                                        expectations=write(tmp_path, entries))
    assert status == 4
    assert records == []
    assert message in footer["aborted"]
    assert "manifest.json: expectations[0]" in footer["aborted"]


def test_malformed_manifest_json_is_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_text("{not json")
    status, _, _, footer, _ = run(tmp_path, misbehave("wrong"), expectations=str(path))
    assert status == 4
    assert "not valid JSON" in footer["aborted"]


def test_the_manifest_regenerated_from_a_report_makes_the_run_pass(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(tmp_path / "first", misbehave("crash-third"))
    run(tmp_path / "wrong", misbehave("wrong"))
    report = tmp_path / "wrong" / "out" / "report.jsonl"
    manifest = tmp_path / "regenerated.json"
    assert main(["expectations", str(report), "-o", str(manifest)]) == 0
    entries = json.loads(manifest.read_text())["expectations"]
    assert entries
    assert all(e["outcome"] == "fail" and e["reason"].startswith("failed")
                           for e in entries)
    status, *_ = run(tmp_path / "again", misbehave("wrong"), expectations=str(manifest))
    assert status == 0
    crash_report = tmp_path / "first" / "out" / "report.jsonl"
    assert main(["expectations", str(crash_report)]) == 0
    crash_entries = json.loads(capsys.readouterr().out)["expectations"]
    assert [e["outcome"] for e in crash_entries] == ["skip"]


# --- RUN-6: reports --------------------------------------------------------------------------


def test_reports_match_their_schema_and_agree_with_each_other(tmp_path: Path) -> None:
    status, _, records, _, _ = run(tmp_path, misbehave("wrong"))
    schema = {"$ref": "tag:numaspec,2026:report"}
    validator = jsonschema.Draft202012Validator(schema, registry=schema_registry())
    for line in (tmp_path / "out" / "report.jsonl").read_text().splitlines():
        validator.validate(json.loads(line))
    suite = ET.parse(tmp_path / "out" / "junit.xml").getroot()
    assert int(suite.get("tests", "")) == len(records)
    assert int(suite.get("failures", "")) == sum(r["verdict"] == "failed" for r in records)
    markdown = (tmp_path / "out" / "summary.md").read_text()
    assert "| [POLICY-3](https://numaspec.github.io/numaspec/policies.html#POLICY-3)" in markdown
    assert "small-merge-restricted" in markdown
    assert main(["report", str(tmp_path / "out" / "report.jsonl"), "--format", "markdown"]
                ) == status


# --- RUN-8: replay ---------------------------------------------------------------------------


def test_replay_prints_both_answers_of_a_failed_case(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _, _, records, _, _ = run(tmp_path, misbehave("wrong"))
    failed = next(r for r in records if r["verdict"] == "failed")
    report = str(tmp_path / "out" / "report.jsonl")
    capsys.readouterr()
    assert main(["replay", report, "--id", failed["id"], "--impl", misbehave("wrong")]) == 1
    out = capsys.readouterr().out
    assert "reference (numaspec, now)" in out
    assert "differs from the reference" in out
    assert main(["replay", SMALL, "--id", failed["id"]]) == 0
    assert "agrees with the reference" in capsys.readouterr().out


def test_replay_names_what_is_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", SMALL]) == 4
    assert "name one with --id" in capsys.readouterr().err
    assert main(["replay", SMALL, "--id", "nope"]) == 4
    assert "no case with the ID 'nope'" in capsys.readouterr().err
    assert main(["replay", str(tmp_path / "missing.json")]) == 4


# --- RUN-9: the benchmark runs (its speed is not asserted) -----------------------------------


def test_bench_reports_agreement(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--cases", "300"]) == 0
    assert "0 answers differ from the reference" in capsys.readouterr().out


def test_bench_in_two_processes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--cases", "300", "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    assert "300 merge cases" in out
    assert "2 processes" in out
    assert "0 answers differ from the reference" in out


def test_bench_sizes_table(capsys: pytest.CaptureFixture[str]) -> None:  # FAST-7
    from numaspec.conformance.cli import SERVE_IMPL

    assert main(["bench", "--sizes", "2x2x3,4x3x15,9x2x511", "--against", SERVE_IMPL,
                 "--max-permutations", "1000"]) == 0
    table = capsys.readouterr().out
    merges, _, protocol = table.split("\n\n")[:3]
    rows = [line for line in merges.splitlines() if line.startswith("| ")]
    assert len(rows) == 4
    assert "| 4x3x15 | 3.38e+03 |" in table
    assert "permutations: not sent" in rows[2]  # past --max-permutations
    assert "Fitted growth" in table
    # WIRE-7: each row through numaspec serve beside a bare parse of its line
    served = [line for line in protocol.splitlines() if line.startswith("| ")]
    assert "serve / parse" in served[0]
    assert len(served) == 4
    assert all(row.count("x |") >= 1 and "—" not in row for row in served[1:]), served


@pytest.mark.parametrize("text", ["8x4", "8x4x256", "0x1x1", "axbxc"])
def test_bench_sizes_refuses_bad_shapes(text: str) -> None:
    with pytest.raises(SystemExit, match="--sizes"):
        main(["bench", "--sizes", text])


# --- properties through the protocol ---------------------------------------------------------


def test_a_crash_inside_a_property_is_that_property_s_verdict(tmp_path: Path) -> None:
    status, _, records, _, _ = run(tmp_path, misbehave("crash-third"), vector_files=(),
                                   vectors=False, properties=True, keyword="P-E")
    assert [r["id"] for r in records] == ["P-EQUAL-MASKS", "P-EQUIVALENCE"]
    assert [r["verdict"] for r in records] == ["crashed", "passed"]
    assert status == 1


def test_a_failed_property_carries_a_replayable_counterexample(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, records, _, _ = run(tmp_path, misbehave("wrong"), vectors=False,
                                   properties=True, keyword="P-EQUIVALENCE")
    (record,) = records
    assert status == 1
    assert record["verdict"] == "failed"
    # The shrunk example as protocol JSON, never a Python repr (Hypothesis's own print-out of
    # the drawn objects is left out).
    assert 'request: {"kubelet_version"' in record["message"]
    for repr_ in ("MergeOutcome(", "TopologyHint(", "NumaMask.of(", "KubeletVersion(",
                  "Falsifying example", "Failing test case"):
        assert repr_ not in record["message"], repr_
    assert record["counterexample"]["providers"] is not None
    capsys.readouterr()
    report = str(tmp_path / "out" / "report.jsonl")
    assert main(["replay", report, "--id", "P-EQUIVALENCE", "--impl", misbehave("wrong")]) == 1
    assert '"admit": false' in capsys.readouterr().out


def test_the_progress_bar_draws_only_when_asked_and_after_a_while() -> None:
    from numaspec.conformance.running.reports import Progress

    quiet = io.StringIO()
    Progress(10, quiet).update(5, 0, "x")  # not a terminal: nothing
    assert quiet.getvalue() == ""
    shown = io.StringIO()
    bar = Progress(10, shown, after=0.0, enabled=True)
    bar.update(5, 1, "case-5")
    bar.finish()
    assert "5/10 (1 failing) case-5" in shown.getvalue()


def test_a_run_in_which_every_case_was_skipped_is_not_a_success(tmp_path: Path) -> None:
    """RUN-3, RUN-7: skips are counted; skipping everything checked nothing."""
    status, _, records, footer, printed = run(tmp_path, misbehave("skip-all"))
    assert {r["verdict"] for r in records} == {"skipped"}
    assert footer["nothing_checked"] is True
    assert status == 3
    assert "NOTHING WAS CHECKED" in printed


def test_a_long_skip_list_says_how_many_it_left_out() -> None:
    """RUN-6: the Markdown summary never drops entries silently."""
    from numaspec.conformance.running.reports import markdown_summary

    records = [{"id": f"case-{i}", "rules": ["MERGE-1"], "verdict": "skipped",
                "skip_source": "implementation", "message": "later",
                "issue_url": "https://example.invalid/9"} for i in range(205)]
    text = markdown_summary({"impl": "x", "implementation": None}, records, {})
    assert "… and 5 more, each in report.jsonl" in text
    assert "(https://example.invalid/9)" in text


def test_replay_does_not_send_what_the_implementation_does_not_declare(
        capsys: pytest.CaptureFixture[str]) -> None:
    """RUN-4, RUN-8."""
    assert main(["replay", SMALL, "--id", "small-node-admit", "--impl",
                 misbehave("merge-only")]) == 4
    assert "does not declare the 'node' operation" in capsys.readouterr().err


def test_a_closed_stdout_is_no_traceback() -> None:
    """RUN-8: ``numaspec replay ... | true``: the reader is gone before anything is written."""
    import subprocess

    command = (f"{PYTHON} -m numaspec replay {shlex.quote(SMALL)} --id small-node-admit "
               "| true")
    done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr
    assert "BrokenPipeError" not in done.stderr


# --- numaspec differential -------------------------------------------------------------------


def test_differential_finds_a_wrong_implementation_and_writes_replayable_cases(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "disagreements.jsonl"
    assert main(["differential", "--impl", misbehave("wrong"), "--cases", "200",
                 "--out", str(out), "--shrink", "3"]) == 1
    printed = capsys.readouterr().out
    assert "disagreements with the reference" in printed
    records = [json.loads(line) for line in out.read_text().splitlines()]
    first = records[0]
    assert first["type"] == "case"
    assert first["expected"]["admit"] is True
    assert first["actual"]["admit"] is False
    # Shrunk: no larger than what it was found as, and still a disagreement.
    assert len(json.dumps(first["case"])) <= len(json.dumps(first.get("found_as",
                                                                       first["case"])))
    assert sum("found_as" in r for r in records) <= 3
    assert main(["replay", str(out), "--id", first["id"], "--impl", misbehave("wrong")]) == 1


def test_shrinking_keeps_the_disagreement_and_takes_away_the_rest() -> None:
    from numaspec.conformance.properties.random_cases import shrink_merge_case

    def hint(nodes: list[int]) -> dict[str, object]:
        return {"numa_affinity": nodes, "preferred": True}

    case = {"kubelet_version": "1.30", "numa_nodes": [0, 1, 2, 3], "policy": "restricted",
            "policy_options": {"prefer-closest-numa-nodes": "true"},
            "providers": [{"cpu": [hint([0]), hint([1])], "mem": [hint([2])]},
                          {"gpu": [hint([3])]}]}

    def fails(candidate: dict[str, object]) -> bool:  # "fails" while a gpu resource is left
        return any("gpu" in p for p in candidate["providers"])  # type: ignore[attr-defined]

    # (an empty options table says nothing, and goes too: RUN-22)
    assert shrink_merge_case(case, fails) == {
        "kubelet_version": "1.30", "numa_nodes": [3], "policy": "restricted",
        "providers": [{"gpu": []}]}


def test_differential_against_the_reference_itself_agrees(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["differential", "--cases", "500"]) == 0
    assert "500 agreed; 0 disagreements" in capsys.readouterr().out


def test_random_cases_reach_what_the_differential_promises() -> None:
    """8-NUMA machines, non-contiguous ids, distances, every policy and option, gates."""
    from numaspec.conformance.properties.random_cases import random_merge_cases

    cases = random_merge_cases(2000, seed=1)
    assert any(len(c["numa_nodes"]) == 8 for c in cases)
    assert any(c["numa_nodes"] != list(range(len(c["numa_nodes"]))) for c in cases)
    assert any("numa_distances" in c for c in cases)
    assert {c["policy"] for c in cases} >= {"none", "best-effort", "restricted",
                                             "single-numa-node"}
    options = {name for c in cases for name in c.get("policy_options", {})}
    assert options >= {"prefer-closest-numa-nodes", "max-allowable-numa-nodes"}
    assert any("feature_gates" in c for c in cases)
    assert random_merge_cases(50, seed=3) == random_merge_cases(50, seed=3)




def test_properties_about_later_releases_are_skipped_for_an_older_implementation(
        tmp_path: Path) -> None:
    """RUN-4: a property whose releases the implementation does not declare is not judged."""
    status, _, records, _, _ = run(tmp_path, IN_PROCESS + "Only123", vectors=False,
                                   properties=True, keyword="P-EQUAL-MASKS, P-DISTANCES, P-NONE")
    verdicts = {r["id"]: (r["verdict"], r.get("skip_source")) for r in records}
    assert verdicts["P-EQUAL-MASKS"] == ("skipped", "undeclared")
    assert verdicts["P-DISTANCES-REQUIRED"] == ("skipped", "undeclared")
    assert verdicts["P-NONE"] == ("passed", None)
    assert status == 0


def test_a_narrowed_run_keeps_the_whole_manifest(tmp_path: Path) -> None:
    """RUN-5: with -k, a manifest entry for a case left out is neither unknown nor stale,
    and an entry no case of the whole suite has still stops the run."""
    manifest = tmp_path / "manifest.json"

    def narrowed(*entries: dict[str, str]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        manifest.write_text(json.dumps({"implementation": "wrong", "expectations": [
            {**e, "outcome": "fail", "reason": "r", "link": "l"} for e in entries]}), "utf-8")
        _, _, records, footer, _ = run(tmp_path, misbehave("wrong"), vector_files=(),
                                       ids=("merge-none-ignores-hints",),
                                       expectations=str(manifest))
        return records, footer

    records, footer = narrowed({"vector": "P-ADMISSION"}, {"rule": "POLICY-3"})
    assert "aborted" not in footer
    assert footer["stale_expectations"] == []
    assert [r["id"] for r in records] == ["merge-none-ignores-hints"]
    _, footer = narrowed({"vector": "no-such-case"})
    assert "no case has the ID 'no-such-case'" in footer["aborted"]


def test_a_long_failure_message_keeps_its_end() -> None:  # RUN-6
    """A falsifying call's repr can fill the record: the assertion at the end must stay."""
    from numaspec.conformance.running.runner import MAX_MESSAGE, _bounded

    text = "FlakyFailure: call(" + "x" * 20_000 + ")\nAssertionError: what went wrong"
    kept = _bounded(text)
    assert len(kept) <= MAX_MESSAGE
    assert kept.startswith("FlakyFailure: call(")
    assert kept.endswith("AssertionError: what went wrong")
    assert "characters left out" in kept
    assert _bounded("short") == "short"


def test_a_property_runs_under_the_profile_loaded_when_it_runs() -> None:
    """A @given test keeps the settings of its creation; the runner runs each property under
    the profile it loaded (run_as_loaded), and leaves the test as it was.  Without it, a
    ``ci`` run in a process created under ``dev`` drew dev's random examples (the koordinator
    expectation then passed unexpectedly now and then)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from numaspec.conformance.running.profiles import run_as_loaded

    drawn: list[int] = []

    @given(st.integers())
    def prop(x: int) -> None:
        drawn.append(x)

    created = prop._hypothesis_internal_use_settings  # type: ignore[attr-defined]
    before = settings.default
    settings.register_profile("numaspec-test-seven", max_examples=7, derandomize=True,
                              database=None)
    settings.register_profile("numaspec-test-restore", parent=before)
    settings.load_profile("numaspec-test-seven")
    try:
        run_as_loaded(prop)
        first = list(drawn)
        drawn.clear()
        run_as_loaded(prop)
    finally:
        settings.load_profile("numaspec-test-restore")
    assert len(first) == 7, "the test ran under the settings it was created with"
    assert drawn == first, "the loaded profile's derandomize did not reach the test"
    assert prop._hypothesis_internal_use_settings is created  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="not a Hypothesis test"):
        run_as_loaded(lambda: None)


# --- RUN-6: the suite version names the suite, not the run -----------------------------------


def test_the_suite_version_does_not_change_with_a_run_s_selection(tmp_path: Path) -> None:
    from numaspec.conformance.running.runner import suite_version

    whole = suite_version((SMALL,))
    headers = []
    selections: list[dict[str, Any]] = [
        {}, {"keyword": "best-effort"},
        {"properties": True, "vectors": False, "keyword": "P-EQUIVALENCE"}]
    for n, options in enumerate(selections):
        _, header, _, _, _ = run(tmp_path / str(n), REFERENCE_IMPL,
                                 **options)
        headers.append(header["suite_version"])
    assert headers == [whole, whole, whole]
    assert suite_version() != whole  # the spec's vectors are another suite than SMALL


@pytest.mark.parametrize("mode", ["stderr", "skip-node", "wrong", "hang-always"])
def test_every_report_line_follows_the_report_schema(tmp_path: Path, mode: str) -> None:
    """RUN-6: spec/schemas/report.schema.json describes every line a run writes, whatever
    the run's end: green, unjudged (5), failing (1) or given up on (3)."""
    from numaspec.conformance.implementations.strict import schema_registry

    validator = jsonschema.Draft202012Validator({"$ref": "tag:numaspec,2026:report"},
                                                registry=schema_registry())
    status, _, _, _, _ = run(tmp_path, misbehave(mode), timeout=0.5)
    assert status == {"stderr": 0, "skip-node": 5, "wrong": 1, "hang-always": 3}[mode]
    for number, line in enumerate((tmp_path / "out" / "report.jsonl").read_text(
            encoding="utf-8").splitlines(), 1):
        problems = [e.message for e in validator.iter_errors(json.loads(line))]
        assert not problems, f"line {number}: {problems[:3]}"


def test_the_differential_books_disagreements_on_the_same_classes(tmp_path: Path) -> None:
    """RUN-5: numaspec differential uses the manifest's matcher: a disagreement inside a known
    class is booked on its finding, the rest are unexplained (and the command fails)."""
    from numaspec.conformance.running.differential import differential

    everything = write(tmp_path, [_class(_FLIPS_ADMIT)])
    result = differential(misbehave("wrong"), cases=200, seed=3, shrink=0,
                          expectations=everything)
    assert result.disagreements
    assert not result.unexplained
    assert result.explained == {"FLIP-1": len(result.disagreements)}
    partly = write(tmp_path, [_class({**_FLIPS_ADMIT, "policy": "best-effort"})])
    result = differential(misbehave("wrong"), cases=200, seed=3, shrink=0,
                          expectations=partly)
    assert result.unexplained
    assert all(d["case"]["policy"] != "best-effort" for d in result.unexplained)
    assert "unexplained" in result.summary()


def test_fail_fast_stops_at_the_first_failure(tmp_path: Path) -> None:  # RUN-18
    status, _, records, footer, printed = run(tmp_path / "x", misbehave("wrong"),
                                              fail_fast=True)
    assert status == 1
    assert records[-1]["verdict"] == "failed"
    assert all(r["verdict"] not in BAD_VERDICTS for r in records[:-1])
    assert "--fail-fast" in footer["stopped"]
    assert "stopped at the first failure" in printed
    _, _, everything, _, _ = run(tmp_path / "all", misbehave("wrong"))
    assert len(everything) > len(records)
