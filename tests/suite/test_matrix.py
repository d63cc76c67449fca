"""``numaspec matrix`` (RUN-16): several implementations compared rule by rule, in
matrix.json (checked against its schema), matrix.md and matrix.html, which must say the same;
a failing cell links to its first counterexample, which replays; whatever an implementation
says is escaped."""

from __future__ import annotations

import json
import re
import shlex
import sys
import urllib.parse
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import numaspec
from numaspec.conformance.cli import main
from numaspec.conformance.implementations.strict import schema_registry
from numaspec.conformance.running.matrix import COUNTS, split_label
from numaspec.conformance.running.reports import read_report
from numaspec_tools import ADAPTERS

PYTHON = shlex.quote(sys.executable)
MISBEHAVE = shlex.quote(str(ADAPTERS / "misbehave.py"))
#: A small selection: merge and node vectors at every release they hold in, no property.
SELECT = ["-k", "POLICY-3", "--no-properties", "--no-progress"]
WORDS = {words: key for key, words, _ in COUNTS}


def misbehave(mode: str) -> str:
    return f"exec:{PYTHON} {MISBEHAVE} {mode}"


def load(out: Path) -> dict[str, Any]:
    matrix: dict[str, Any] = json.loads((out / "matrix.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator({"$ref": "tag:numaspec,2026:matrix"},
                                                registry=schema_registry())
    validator.validate(matrix)
    return matrix


def counts_in(text: str) -> dict[str, int]:
    """The counts a rendered cell states ("3 passed · 2 failed (1 timeout)")."""
    text = re.sub(r"\([^)]*\)", "", text)
    found = {WORDS[w]: int(n) for n, w in re.findall(
        r"(\d+) (passed|failed|xfailed|skipped by manifest|skipped|not claimed)", text)}
    return {key: found.get(key, 0) for key, _, _ in COUNTS}


def cell_counts(cell: dict[str, Any]) -> dict[str, int]:
    return {key: cell[key] for key, _, _ in COUNTS}


def md_rows(markdown: str) -> dict[str, list[str]]:
    """First cell of a table row (up to the first space) -> its other cells."""
    rows = {}
    for line in markdown.splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            rows[cells[0].split(" ")[0].strip("*")] = cells[1:]
    return rows


def html_tree(page: str) -> ET.Element:
    """matrix.html is well-formed XML too, so any unescaped markup would show."""
    return ET.fromstring(page.split("\n", 1)[1])


def html_rows(root: ET.Element) -> dict[str, list[str]]:
    rows = {}
    for tr in root.iter("tr"):
        cells = ["".join(c.itertext()).strip() for c in tr]
        if cells and cells[0]:
            rows[cells[0].split(" ")[0]] = cells[1:]
    return rows


@pytest.fixture(scope="module")
def matrices(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three matrices: the reference alone (the default --impl); that run read back with
    --from beside three misbehaving adapters run now (one with a manifest); and the four
    runs' reports read back."""
    root = tmp_path_factory.mktemp("matrix")
    assert main(["matrix", *SELECT, "--out", str(root / "ref")]) == 0
    (reference,) = (root / "ref" / "runs").iterdir()
    manifest = root / "manifest.json"
    manifest.write_text(json.dumps({"expectations": [
        {"vector": "cex-finding-2-restricted-1.23", "outcome": "fail",
         "reason": "flips admit", "link": "https://example.invalid/1"},
        {"vector": "seed001-container0-restricted-1.30", "outcome": "skip",
         "reason": "not today", "link": "https://example.invalid/2"}]}))
    status = main(["matrix", *SELECT, "--out", str(root / "mixed"), "--from", str(reference),
                   "--impl", f"wrong={misbehave('wrong')}", "--expectations", str(manifest),
                   "--impl", misbehave("skip-node"), "--impl", misbehave("merge-only")])
    assert status == 1  # "wrong" fails
    runs = [f"{i['label']}={root / 'mixed' / i['report']}"
            for i in load(root / "mixed")["implementations"]]
    assert main(["matrix", "--out", str(root / "again"), "--from", *runs]) == 1
    return {"ref": root / "ref", "mixed": root / "mixed", "again": root / "again"}


def test_the_default_is_the_reference_alone(matrices: dict[str, Path]) -> None:
    matrix = load(matrices["ref"])
    (impl,) = matrix["implementations"]
    assert (impl["name"], impl["language"], impl["exit_status"]) == (
        "numaspec-reference", "python", 0)
    assert impl["status"] == "conforms"
    assert impl["totals"]["passed"] == impl["totals"]["cases"] > 0


def test_counts_come_from_each_report(matrices: dict[str, Path]) -> None:
    matrix = load(matrices["mixed"])
    labels = [i["label"] for i in matrix["implementations"]]
    assert labels[:2] == [f"numaspec-reference {numaspec.__version__}", "wrong"]
    assert [i["source"] for i in matrix["implementations"]] == ["report", "run", "run", "run"]
    for impl in matrix["implementations"]:
        _, records, footer = read_report(matrices["mixed"] / impl["report"])
        verdicts = Counter(r["verdict"] for r in records)
        assert impl["totals"]["verdicts"] == dict(verdicts)
        assert impl["exit_status"] == footer["exit_status"]
        sources = Counter(r.get("skip_source") for r in records if r["verdict"] == "skipped")
        assert impl["totals"]["skipped"] == sources["implementation"]
        assert impl["totals"]["skipped_manifest"] == sources["manifest"]
        assert impl["totals"]["not_claimed"] == sources["undeclared"] + sources["not-claimed"]
    reference, wrong, skip_node, merge_only = (i["totals"] for i in matrix["implementations"])
    assert reference["failed"] == 0
    assert (wrong["failed"] > 0, wrong["xfailed"], wrong["skipped_manifest"]) == (True, 6, 21)
    assert (skip_node["skipped"] > 0, skip_node["failed"]) == (True, 0)
    assert (merge_only["not_claimed"] > 0, merge_only["skipped"]) == (True, 0)
    assert matrix["summary"]["failing"] == ["wrong"]
    # skip-node skips node cases inside its claims: not failing, not green either (RUN-7)
    assert matrix["summary"]["unchecked"] == [matrix["implementations"][2]["key"]]
    assert matrix["summary"]["same_suite"]
    # A rule row counts the cases citing the rule; a chapter's totals each case once.
    merge = next(c for c in matrix["chapters"] if c["file"] == "topology/merge.md")
    # (a flipped admission is booked on the policy rule that decides it, RUN-17)
    policies = next(c for c in matrix["chapters"] if c["file"] == "topology/policies.md")
    row = next(r for r in policies["rules"] if r["id"] == "POLICY-3")
    assert row["cells"]["wrong"]["xfailed"] == 6
    assert merge["totals"]["wrong"]["cases"] <= wrong["cases"]
    assert "MERGE-5" in merge["uncited_rules"]
    assert not next(c for c in matrix["chapters"] if c["file"] == "topology/masks.md")["rules"]


def test_markdown_html_and_json_agree(matrices: dict[str, Path]) -> None:
    out = matrices["mixed"]
    matrix = load(out)
    keys = [i["key"] for i in matrix["implementations"]]
    markdown = md_rows((out / "matrix.md").read_text(encoding="utf-8"))
    page = html_rows(html_tree((out / "matrix.html").read_text(encoding="utf-8")))
    compared = 0
    for chapter in matrix["chapters"]:
        for row in chapter["rules"]:
            expected = [cell_counts(row["cells"][k]) for k in keys]
            assert [counts_in(c) for c in markdown[row["id"]]] == expected, row["id"]
            assert [counts_in(c) for c in page[row["id"]]] == expected, row["id"]
            compared += 1
    assert compared == matrix["summary"]["rules_with_cases"] > 5
    totals = [cell_counts(i["totals"]) for i in matrix["implementations"]]
    assert [counts_in(c) for c in markdown["all"]] == totals
    assert [counts_in(c) for c in page["all"]] == totals


def test_a_failing_cell_links_to_its_counterexample_which_replays(
        matrices: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    out = matrices["mixed"]
    matrix = load(out)
    policies = next(c for c in matrix["chapters"] if c["file"] == "topology/policies.md")
    cell = next(r for r in policies["rules"] if r["id"] == "POLICY-3")["cells"]["wrong"]
    first = cell["first_failure"]
    assert (cell["state"], first["verdict"]) == ("failed", "failed")
    wrong = matrix["implementations"][1]
    (example,) = [c for c in wrong["counterexamples"] if c["anchor"] == first["anchor"]]
    assert example["id"] == first["id"] == "preferred-first-finds-1.38"
    # The anchor is there, and the failing cells point at it, in both renderings.
    markdown = (out / "matrix.md").read_text(encoding="utf-8")
    assert f'<a id="{first["anchor"]}"></a>' in markdown
    assert f"](#{first['anchor']})" in md_rows(markdown)["POLICY-3"][1]
    root = html_tree((out / "matrix.html").read_text(encoding="utf-8"))
    assert [e.tag for e in root.iter() if e.get("id") == first["anchor"]] == ["li"]
    assert any(a.get("href") == f"#{first['anchor']}" for a in root.iter("a"))
    # Its line in the implementation's own report is that case.
    report = (out / wrong["report"]).read_text(encoding="utf-8").splitlines()
    assert json.loads(report[example["report_line"] - 1])["id"] == example["id"]
    assert f"{wrong['report']}#L{example['report_line']}" in markdown
    # And the replay command re-runs it against that implementation.
    command = shlex.split(example["replay"])
    assert command[:2] == ["numaspec", "replay"]
    capsys.readouterr()
    assert main(command[1:]) == 1
    assert "differs from the reference" in capsys.readouterr().out


def test_reports_read_back_give_the_same_matrix(matrices: dict[str, Path]) -> None:
    first, again = load(matrices["mixed"]), load(matrices["again"])

    def essence(matrix: dict[str, Any]) -> Any:
        impls = [{k: v for k, v in i.items() if k not in ("source", "report", "summary")}
                 for i in matrix["implementations"]]
        for impl in impls:
            impl["counterexamples"] = [{k: v for k, v in c.items() if k != "replay"}
                                       for c in impl["counterexamples"]]
        return impls, matrix["chapters"], matrix["summary"]

    assert essence(first) == essence(again)


def test_the_terminal_gets_a_short_table(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", *SELECT, "--out", str(tmp_path),
                 "--impl", "ref=numaspec.protocols.adapter_protocol:ReferenceAdapter",
                 "--impl", "same=numaspec.protocols.adapter_protocol:ReferenceAdapter"]) == 0
    printed = capsys.readouterr().out
    header = next(line for line in printed.splitlines() if line.startswith(" " * 10))
    assert header.split() == ["ref", "same"]
    assert re.search(r"^merge\.md · MERGE +\d+p +\d+p$", printed, re.MULTILINE)
    assert "matrix.json" in printed
    assert "matrix.html" in printed
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["ref", "same"]


HOSTILE = '<script>alert("x")</script> | *bold* [link](javascript:alert(1)) & `tick`'


def test_what_an_implementation_says_is_escaped(tmp_path: Path) -> None:
    report = tmp_path / "evil" / "report.jsonl"
    report.parent.mkdir()
    implementation = {"name": HOSTILE, "version": "1 <b>", "language": "<i>go</i>",
                      "homepage": "javascript:alert(1)", "issues": "", "kubelet_versions": [],
                      "operations": ["merge"]}
    lines: list[dict[str, Any]] = [
        {"type": "header", "tool": "numaspec", "tool_version": "0", "suite_version": HOSTILE,
         "protocol_version": 1, "started": "now", "impl": f"exec:{HOSTILE}",
         "implementation": implementation},
        {"type": "case", "seq": 1, "id": f"case-{HOSTILE}", "kind": "vector", "op": "merge",
         "rules": ["MERGE-2", "NOPE-1"], "verdict": "failed", "message": HOSTILE,
         "differences": [HOSTILE]},
        {"type": "case", "seq": 2, "id": "slow", "kind": "vector", "op": "merge",
         "rules": ["MERGE-2"], "verdict": "timeout", "message": "no answer"},
        {"type": "case", "seq": 3, "id": "gone", "kind": "vector", "op": "merge",
         "rules": ["MERGE-2"], "verdict": "crashed", "message": "exit status 3"},
        {"type": "footer", "counts": {}, "adapter_probably_broken": True, "exit_status": 3}]
    report.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "out"
    assert main(["matrix", "--from", str(report.parent), "--out", str(out)]) == 1
    matrix = load(out)
    row = matrix["chapters"][-1]
    assert (row["file"], [r["id"] for r in row["rules"]]) == ("", ["NOPE-1"])
    assert matrix["summary"]["rules_with_cases"] == 1
    assert "cases cite rules the spec lacks: NOPE-1" in matrix["summary"]["notes"]
    cell = next(r for c in matrix["chapters"] for r in c["rules"] if r["id"] == "MERGE-2")
    assert cell["cells"][matrix["implementations"][0]["key"]]["verdicts"] == {
        "crashed": 1, "failed": 1, "timeout": 1}

    page = (out / "matrix.html").read_text(encoding="utf-8")
    root = html_tree(page)  # parses: nothing the implementation said became markup
    tags = {e.tag for e in root.iter()}
    assert not tags & {"script", "b", "i", "img"}
    assert {urllib.parse.urlsplit(a.get("href", "")).scheme for a in root.iter("a")} == {""}
    text = "".join(root.itertext())
    assert HOSTILE in text
    assert "3 failed (1 crashed, 1 timeout)" in text

    markdown = (out / "matrix.md").read_text(encoding="utf-8")
    # Outside code spans (literal text), every "<" and "](" is escaped but the anchors'.
    prose = re.sub(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)", "", markdown)
    assert set(re.findall(r"(?<!\\)<[^ ]*", prose)) == {'<a', "</a>"}
    links = re.findall(r"(?<!\\)\]\((.)", prose)
    assert set(links) == {".", "#"}  # relative paths and anchors only
    rows = md_rows(markdown)
    # The hostile name's "|" does not add a column to the tables.
    assert all(len(cells) == 1 for cells in rows.values())
    assert "3 failed (1 crashed, 1 timeout)" in rows["MERGE-2"][0]


def test_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert split_label("kubelet-1.30=exec:./adapter --x=1") == ("kubelet-1.30",
                                                                "exec:./adapter --x=1")
    assert split_label("exec:./adapter --x=1") == (None, "exec:./adapter --x=1")
    assert split_label("pkg.mod:Impl") == (None, "pkg.mod:Impl")
    with pytest.raises(SystemExit):
        main(["matrix", "--expectations", "m.json", "--impl", "x:y"])
    assert "the --impl just before it" in capsys.readouterr().err
    assert main(["matrix", "--from", str(tmp_path / "nowhere"), "--out",
                 str(tmp_path / "out")]) == 4
    assert "cannot read the report" in capsys.readouterr().err
