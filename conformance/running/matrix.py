"""``numaspec matrix``: several implementations side by side, rule by rule.

The conformance suite runs against each implementation in turn (``--impl``, each optionally
followed by its own ``--expectations``), or the matrix is built from reports already written
(``--from DIR``, a ``numaspec conformance --out`` directory or its ``report.jsonl``), or both.
The output directory gets:

* ``matrix.json``: the data (schema ``spec/schemas/matrix.schema.json``); the other two are
  rendered from it and from nothing else, so the three always agree;
* ``matrix.md``: Markdown (for ``$GITHUB_STEP_SUMMARY`` or a pull request);
* ``matrix.html``: one static page, no script, no external asset, everything escaped;
* ``runs/<key>/``: the reports of the runs the matrix made (``report.jsonl``, ``summary.md``,
  ``junit.xml``), which the matrix links to.

Rows are the spec's rules grouped by chapter (``spec/README.md`` gives the chapters and their
order), columns the implementations (name, version and language from the ``start`` answer in
each report's header).  A cell counts the cases that cite the rule, by what happened to them:
``passed``; ``failed`` (every verdict that fails a run: failed, xpassed, errored, crashed,
timeout, protocol-error, not-run, each also counted on its own); ``xfailed``; ``skipped`` by
the implementation; skipped by its expectations manifest; and ``not claimed`` (outside what
the implementation declares or claims: ``skip_source`` ``undeclared`` or ``not-claimed``).  A
cell with a failure links to its first counterexample: the case, its line in that
implementation's ``report.jsonl``, and the ``numaspec replay`` command that re-runs it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import html
import io
import json
import os
import posixpath
import re
import shlex
import sys
import urllib.parse
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from numaspec.conformance.implementations.claims import Claims
from numaspec.conformance.running.reports import NOT_CLAIMED, booked
from numaspec.errors import NumaspecError

__all__ = ["Column", "add_parser", "build_matrix", "load_column", "main", "render_html",
           "render_markdown", "render_terminal"]

MATRIX_VERSION = 1

#: Verdicts that fail a run (as ``numaspec.conformance.running.reports.BAD_VERDICTS``), in the order
#: a cell names them.
FAILING = ("failed", "xpassed", "errored", "crashed", "timeout", "protocol-error", "not-run")
#: The counts of a cell, in display order, with their words and terminal codes.
COUNTS = (("passed", "passed", "p"), ("refused", "refused (PRED-4)", "r"),
          ("failed", "failed", "F"), ("xfailed", "xfailed", "xf"),
          ("skipped", "skipped", "s"), ("skipped_manifest", "skipped by manifest", "m"),
          ("not_claimed", "not claimed", "nc"))
_REPORT_FILES = ("report.jsonl", "summary.md", "junit.xml")


# --- the command line --------------------------------------------------------------------------


class _ImplAction(argparse.Action):
    """``--impl [NAME=]IMPL`` and ``--from PATH...`` append columns, in command-line order."""

    def __call__(self, _parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        columns = list(getattr(namespace, "columns", None) or [])
        if option_string == "--from":
            for value in map(str, values):
                label, path = split_label(value)
                if label is not None and not Path(path).exists() and Path(value).exists():
                    label, path = None, value  # a file whose name has an "=" in it
                columns.append({"from": path, "label": label})
        else:
            label, impl = split_label(str(values))
            columns.append({"impl": impl, "label": label, "expectations": None})
        namespace.columns = columns


class _ExpectationsAction(argparse.Action):
    """``--expectations MANIFEST`` belongs to the ``--impl`` just before it."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, _option_string: str | None = None) -> None:
        columns = list(getattr(namespace, "columns", None) or [])
        if not columns or "impl" not in columns[-1] or columns[-1]["expectations"]:
            parser.error("--expectations names the manifest of the --impl just before it "
                         "(one per --impl)")
        columns[-1] = {**columns[-1], "expectations": str(values)}
        namespace.columns = columns


_LABEL = re.compile(r"([^=:/\\\s][^=:/\\]{0,63})=(.+)", re.DOTALL)


def split_label(value: str) -> tuple[str | None, str]:
    """``"kubelet-1.30=exec:./a"`` is (``"kubelet-1.30"``, ``"exec:./a"``); an ``exec:`` or
    ``module:object`` implementation or a path alone has no label (an ``=`` inside a command
    is not one: a label has no ``:`` and no ``/``, and an implementation always has a ``:``)."""
    match = _LABEL.fullmatch(value)
    return (match.group(1), match.group(2)) if match else (None, value)


def add_parser(sub: Any) -> Any:
    """``numaspec matrix`` on the ``numaspec`` command's subparsers; the group its run
    options go in (``numaspec.conformance.cli.run_options``, shared with ``numaspec
    conformance``)."""
    from numaspec.protocols.adapter_protocol import REFERENCE_IMPL

    matrix = sub.add_parser(
        "matrix", help="run the suite against several implementations (or read their "
                       "reports) and compare them rule by rule",
        description="Compare implementations rule by rule: run the conformance suite against "
                    "each --impl (in turn), read each --from report, and write matrix.json, "
                    "matrix.md and matrix.html to --out.  Without --impl and --from the "
                    f"reference ({REFERENCE_IMPL}) is run.")
    matrix.add_argument("--impl", action=_ImplAction, metavar="[NAME=]IMPL",
                        help="an implementation to run the suite against, as for numaspec "
                             "conformance (exec:COMMAND or module:object); NAME= labels its "
                             "column.  Repeatable")
    matrix.add_argument("--expectations", action=_ExpectationsAction, metavar="MANIFEST",
                        help="the expectations manifest of the --impl just before it")
    matrix.add_argument("--from", action=_ImplAction, nargs="+", metavar="[NAME=]REPORT",
                        help="a report already written: a numaspec conformance --out "
                             "directory, or its report.jsonl; NAME= labels its column.  "
                             "Repeatable")
    matrix.add_argument("--out", default="numaspec-matrix", metavar="DIR",
                        help="where matrix.json, matrix.md, matrix.html and the runs' reports "
                             "(runs/) go (default: numaspec-matrix)")
    runs = matrix.add_argument_group("options of the runs (as for numaspec conformance; not "
                                     "applied to --from reports)")
    matrix.set_defaults(columns=None)
    return runs


# --- one column: an implementation's report ------------------------------------------------------


class Column:
    """One implementation: its report (header, case records and their lines, footer)."""

    def __init__(self, report: Path, header: dict[str, Any], records: list[dict[str, Any]],
                 lines: list[int], footer: dict[str, Any], *, label: str | None = None,
                 source: str = "report") -> None:
        self.report = report
        self.header = header
        self.records = records
        self.lines = lines
        self.footer = footer
        self.given_label = label
        self.source = source

    @property
    def implementation(self) -> dict[str, Any]:
        impl = self.header.get("implementation")
        return impl if isinstance(impl, dict) else {}

    def default_label(self) -> str:
        impl = self.implementation
        if impl.get("name"):
            return " ".join(filter(None, [str(impl["name"]), str(impl.get("version", ""))]))
        return str(self.header.get("impl") or self.report)[:60]


def load_column(path: str | Path, *, label: str | None = None, source: str = "report"
                ) -> Column:
    """A report: ``path`` is a ``numaspec conformance --out`` directory or a JSON Lines
    report.  Typed errors (naming the file and line) otherwise."""
    from numaspec.conformance.running.reports import read_report

    report = Path(path)
    if report.is_dir():
        report = report / "report.jsonl"
    header, records, footer = read_report(report)
    lines = []
    for number, text in enumerate(report.read_text(encoding="utf-8").splitlines(), 1):
        item = json.loads(text)
        if isinstance(item, dict) and item.get("type") == "case":
            lines.append(number)
    return Column(report, header, records, lines, footer, label=label, source=source)


# --- building the matrix -----------------------------------------------------------------------


def _chapters(spec: Path) -> list[dict[str, Any]]:
    """The chapters with rules, in spec/README.md's order: file (the chapter's path under
    spec/, ``topology/merge.md``), prefixes, what it covers."""
    from numaspec.rules import parse_rules

    # | [name](path) | prefixes | what it covers | (modules, where the table has them) |
    row = re.compile(r"^\| \[[\w./-]+\.md\]\(([\w./-]+\.md)\) \| (.*?) \| (.*?) \|"
                     r"(?: .*? \|)?\s*$")
    listed: list[dict[str, Any]] = []
    readme = spec / "README.md"
    if readme.is_file():
        for line in readme.read_text(encoding="utf-8").splitlines():
            match = row.match(line)
            if match:
                listed.append({"file": match.group(1),
                               "prefixes": re.findall(r"`([A-Z]+)`", match.group(2)),
                               "title": match.group(3).strip()})
    rules = parse_rules(spec) if spec.is_dir() else []
    by_file: dict[str, list[dict[str, str]]] = {}
    for rule in rules:
        by_file.setdefault(rule.file, []).append({"id": rule.id, "title": rule.title})
    known = {c["file"] for c in listed}
    for name in sorted(set(by_file) - known):  # a chapter the README does not list yet
        prefixes = sorted({r["id"].rsplit("-", 1)[0] for r in by_file[name]})
        listed.append({"file": name, "prefixes": prefixes, "title": name})
    return [{**c, "rules": by_file[c["file"]]} for c in listed if by_file.get(c["file"])]


def _empty_cell() -> dict[str, Any]:
    return {"cases": 0, "passed": 0, "refused": 0, "failed": 0, "xfailed": 0, "skipped": 0,
            "skipped_manifest": 0, "not_claimed": 0, "verdicts": {}, "state": "none",
            "first_failure": None}


def _count(cell: dict[str, Any], record: Mapping[str, Any]) -> bool:
    """Add one case to a cell; whether it is a failure."""
    verdict = str(record.get("verdict", ""))
    cell["cases"] += 1
    cell["verdicts"][verdict] = cell["verdicts"].get(verdict, 0) + 1
    if verdict == "skipped":
        source = record.get("skip_source")
        key = ("not_claimed" if source in NOT_CLAIMED else
               "skipped_manifest" if source == "manifest" else "skipped")
        cell[key] += 1
        return False
    if verdict in ("passed", "xfailed"):
        cell[verdict] += 1
        return False
    if verdict == "refused":  # PRED-4: conservative, not a failure
        cell["refused"] += 1
        return False
    cell["failed"] += 1
    return True


def _settle(cell: dict[str, Any]) -> dict[str, Any]:
    cell["verdicts"] = dict(sorted(cell["verdicts"].items()))
    cell["state"] = ("failed" if cell["failed"] else
                     "partial" if cell["xfailed"] or cell["skipped"] or cell["skipped_manifest"]
                     or cell["refused"]
                     else "passed" if cell["passed"] else
                     "not-claimed" if cell["not_claimed"] else "none")
    return cell


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48] or "x"


def _unique(wanted: str, taken: set[str], sep: str) -> str:
    candidate, n = wanted, 1
    while candidate in taken:
        n += 1
        candidate = f"{wanted}{sep}{n}"
    taken.add(candidate)
    return candidate


def _first_line(text: str, limit: int = 200) -> str:
    stripped = text.strip()
    line = stripped.splitlines()[0] if stripped else ""
    return line if len(line) <= limit else line[:limit] + "…"


def _status(footer: Mapping[str, Any], header: Mapping[str, Any], totals: Mapping[str, Any]
            ) -> str:
    if not header.get("implementation"):
        return "did not start" + (f": {footer['aborted']}" if footer.get("aborted") else "")
    if footer.get("aborted"):
        return f"aborted: {footer['aborted']}"
    if footer.get("adapter_probably_broken"):
        return "adapter probably broken: no case passed"
    if footer.get("nothing_checked"):
        return "nothing checked: every case was skipped"
    if footer.get("gave_up"):
        return f"given up on: {footer['gave_up']}"
    if totals["failed"]:
        return f"fails {totals['failed']} of {totals['cases']} cases"
    if footer.get("stale_expectations"):
        return f"{len(footer['stale_expectations'])} stale expectations"
    if footer.get("unjudged"):
        return (f"not everything claimed was checked: {len(footer['unjudged'])} claimed cases "
                "not judged")
    if footer.get("exit_status", 0):
        return f"exit status {footer['exit_status']}"
    return "conforms"


def _relative(path: Path, out: Path) -> str:
    return Path(os.path.relpath(path.resolve(), out.resolve())).as_posix()


class _Counterexamples:
    """The cases an implementation's cells name as their first failure, each once, with an
    anchor, its line in the report and the command that replays it."""

    def __init__(self, column: Column, key: str) -> None:
        self.column = column
        self.key = key
        self.anchors: dict[str, str] = {}
        self.found: list[dict[str, Any]] = []

    def __call__(self, record: Mapping[str, Any], line: int) -> dict[str, Any]:
        case_id = str(record.get("id", ""))
        if case_id not in self.anchors:
            self.anchors[case_id] = _unique(f"cx-{self.key}-{_slug(case_id)}",
                                            set(self.anchors.values()), "-")
            replay = ["numaspec", "replay", str(self.column.report), "--id", case_id]
            if self.column.header.get("impl"):
                replay += ["--impl", str(self.column.header["impl"])]
            self.found.append({
                "anchor": self.anchors[case_id], "id": case_id,
                "verdict": str(record.get("verdict", "")),
                "kind": str(record.get("kind", "")), "op": str(record.get("op", "")),
                "rules": [str(r) for r in record.get("rules", ())],
                "kubelet_version": str(record.get("kubelet_version") or ""),
                "message": _first_line(str(record.get("message", "")), 500),
                "differences": [str(d)[:300] for d in record.get("differences", ())[:5]],
                "report_line": line,
                "replay": shlex.join(replay)})
        return {"id": case_id, "verdict": str(record.get("verdict", "")),
                "anchor": self.anchors[case_id]}


def build_matrix(columns: Sequence[Column], out: str | Path, *, spec: Path | None = None,
                 notes: Sequence[str] = ()) -> dict[str, Any]:
    """The matrix (``matrix.json``) of ``columns``; paths in it are relative to ``out``."""
    from numaspec import __version__
    from numaspec.rules import spec_dir

    out = Path(out)
    chapters = _chapters(spec or spec_dir())
    chapter_of: dict[str, int] = {}
    prefix_of: dict[str, int] = {}
    for index, chapter in enumerate(chapters):
        for rule in chapter["rules"]:
            chapter_of[rule["id"]] = index
        for prefix in chapter["prefixes"]:
            prefix_of.setdefault(prefix, index)
    other: dict[str, Any] = {"file": "", "prefixes": [], "rules": [],
                             "title": "rules the spec lacks" if chapters else
                                      "rules (the spec's chapters were not found)"}

    def where(rule: str) -> int:
        if rule in chapter_of:
            return chapter_of[rule]
        index = prefix_of.get(rule.rsplit("-", 1)[0], len(chapters))
        if index == len(chapters) and rule not in {r["id"] for r in other["rules"]}:
            other["rules"].append({"id": rule, "title": ""})
        return index

    labels: set[str] = set()
    keys: set[str] = set()
    implementations: list[dict[str, Any]] = []
    # per implementation: rule -> cell, chapter index -> cell
    rule_cells: list[dict[str, dict[str, Any]]] = []
    chapter_cells: list[dict[int, dict[str, Any]]] = []
    for column in columns:
        label = _unique(column.given_label or column.default_label(), labels, " #")
        key = _unique(_slug(label), keys, "-")
        impl = column.implementation
        report = _relative(column.report, out)
        reference = _Counterexamples(column, key)
        totals = _empty_cell()
        rules: dict[str, dict[str, Any]] = {}
        by_chapter: dict[int, dict[str, Any]] = {}
        lines = column.lines if len(column.lines) == len(column.records) else \
            [0] * len(column.records)
        for record, line in zip(column.records, lines, strict=True):
            failing = _count(totals, record)
            if failing and totals["first_failure"] is None:
                totals["first_failure"] = reference(record, line)
            touched: set[int] = set()
            for booked_rule in booked(record):
                cell = rules.setdefault(booked_rule, _empty_cell())
                if _count(cell, record) and cell["first_failure"] is None:
                    cell["first_failure"] = reference(record, line)
                touched.add(where(booked_rule))
            for index in touched:
                cell = by_chapter.setdefault(index, _empty_cell())
                if _count(cell, record) and cell["first_failure"] is None:
                    cell["first_failure"] = reference(record, line)
        _settle(totals)
        for cell in [*rules.values(), *by_chapter.values()]:
            _settle(cell)
        rule_cells.append(rules)
        chapter_cells.append(by_chapter)
        summary = column.report.parent / "summary.md"
        implementations.append({
            "key": key, "label": label, "source": column.source,
            "name": str(impl.get("name", "")), "version": str(impl.get("version", "")),
            "language": str(impl.get("language", "")),
            "homepage": str(impl.get("homepage", "")),
            "impl": str(column.header.get("impl", "")),
            "expectations": column.header.get("expectations"),
            "report": report,
            "summary": _relative(summary, out) if summary.is_file() else None,
            "suite_version": str(column.header.get("suite_version", "")),
            "tool_version": str(column.header.get("tool_version", "")),
            "started": str(column.header.get("started", "")),
            "exit_status": int(column.footer.get("exit_status", 4)),
            "status": _status(column.footer, column.header, totals),
            "declared": _declared(impl),
            "claims": claims_text(impl.get("claims")),
            "divergences": _divergences(column.records),
            "totals": totals,
            "counterexamples": reference.found})

    rows: list[dict[str, Any]] = []
    for index, chapter in enumerate([*chapters, other]):
        cited = [r for r in chapter["rules"] if any(r["id"] in cells for cells in rule_cells)]
        rows.append({
            "file": chapter["file"], "prefixes": chapter["prefixes"], "title": chapter["title"],
            "rule_count": len(chapter["rules"]),
            "totals": {impl["key"]: chapter_cells[n].get(index) or _empty_cell()
                       for n, impl in enumerate(implementations)},
            "rules": [{"id": r["id"], "title": r["title"],
                       "cells": {impl["key"]: rule_cells[n].get(r["id"]) or _empty_cell()
                                 for n, impl in enumerate(implementations)}}
                      for r in cited],
            "uncited_rules": [r["id"] for r in chapter["rules"] if r not in cited]})
    if not other["rules"]:
        rows.pop()

    suites = Counter(i["suite_version"] for i in implementations)
    notes = list(notes)
    if len(suites) > 1:
        notes.append("the implementations ran different suites (another numaspec version or "
                     "another case selection): " + "; ".join(
                         f"{i['label']}: {i['suite_version'] or '?'}" for i in implementations)
                     + ".  Counts compare rule by rule, not case by case.")
    notes += [f"{i['label']}: {i['status']}" for i in implementations
              if i["status"] != "conforms" and not i["totals"]["failed"]]
    if other["rules"] and chapters:
        notes.append("cases cite rules the spec lacks: "
                     + ", ".join(r["id"] for r in other["rules"]))
    spec_rows = [c for c in rows if c["file"]]
    return {
        "type": "matrix", "matrix_version": MATRIX_VERSION, "tool": "numaspec",
        "tool_version": __version__,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "implementations": implementations,
        "summary": {
            "implementations": len(implementations),
            "conforming": [i["key"] for i in implementations if i["exit_status"] == 0],
            "failing": [i["key"] for i in implementations if i["exit_status"] not in (0, 5)],
            "unchecked": [i["key"] for i in implementations if i["exit_status"] == 5],
            "same_suite": len(suites) <= 1,
            "chapters_with_cases": sum(1 for c in spec_rows if c["rules"]),
            "rules_with_cases": sum(len(c["rules"]) for c in spec_rows),
            "rules": sum(c["rule_count"] for c in spec_rows),
            "notes": notes},
        "chapters": rows}


# --- rendering: words shared by Markdown, HTML and the terminal -----------------------------------


def cell_parts(cell: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(count key, words) of a cell's non-zero counts, in display order: ``"3 failed (1
    timeout)"`` names every failing verdict other than ``failed`` itself."""
    parts = []
    for key, words, _ in COUNTS:
        if not cell[key]:
            continue
        text = f"{cell[key]} {words}"
        if key == "failed":
            others = [f"{cell['verdicts'][v]} {v}" for v in FAILING[1:]
                      if cell["verdicts"].get(v)]
            if others:
                text += f" ({', '.join(others)})"
        parts.append((key, text))
    return parts


def _chapter_name(chapter: Mapping[str, Any]) -> str:
    """How a row names its chapter: the chapter's name (its page's, whatever its part's
    folder: ``merge.md``) and its prefixes; ``file`` keeps the path."""
    prefixes = ", ".join(chapter["prefixes"])
    return " · ".join(filter(None, [posixpath.basename(chapter["file"]), prefixes])) or "other"


def _declared(impl: Mapping[str, Any]) -> str:
    """RUN-16: the releases and operations the implementation was judged at, in words."""
    operations = [str(o) for o in impl.get("operations") or ()]
    merge = ", ".join(str(v) for v in impl.get("kubelet_versions") or ())
    node = ", ".join(str(v) for v in impl.get("node_kubelet_versions")
                     or impl.get("kubelet_versions") or ())
    parts = []
    if "merge" in operations:
        parts.append(f"merge at kubelet {merge or 'none'}")
    others = [o for o in operations if o != "merge"]
    if others:
        parts.append(f"{', '.join(others)} at kubelet {node or 'none'}")
    return "; ".join(parts) or "nothing"


def claims_text(raw: Any) -> str:
    """RUN-16: what an implementation claims (PROTO-7), in words: only what it leaves out."""
    try:
        claims = Claims.from_json(raw)
    except NumaspecError:
        return "claims numaspec cannot read"
    parts = ["numaspec's format" if claims.format else ""]
    merge = claims.merge
    every = {"none", "best-effort", "restricted", "single-numa-node"}
    merge_parts = [
        f"policies {', '.join(sorted(merge.policies))}"
        if merge.policies is not None and set(merge.policies) != every else "",
        ("no options" if not merge.policy_options else
         f"options {', '.join(sorted(merge.policy_options))}")
        if merge.policy_options is not None else "",
        "" if merge.feature_gates else "no gates",
        ("no refusals" if not merge.refusals else f"refusals {', '.join(sorted(merge.refusals))}")
        if merge.refusals is not None else "",
        "" if merge.distances else "no distances"]
    if any(merge_parts):
        parts.append("merge: " + ", ".join(filter(None, merge_parts)))
    for name, part in (("node", claims.node), ("predict", claims.predict)):
        node_parts = [
            f"managers {', '.join(sorted(part.managers)) or 'none'}"
            if part.managers is not None else "",
            f"scopes {', '.join(sorted(part.scopes))}" if part.scopes is not None else "",
            f"policies {', '.join(sorted(part.policies))}" if part.policies is not None else "",
            f"CPU Manager options {', '.join(sorted(part.cpu_policy_options)) or 'none'}"
            if part.cpu_policy_options is not None else "",
            "" if part.feature_gates else "no gates",
            "no node fit" if name == "predict" and not getattr(part, "node_fit", True) else ""]
        if any(node_parts):
            parts.append(f"{name}: " + ", ".join(filter(None, node_parts)))
    if claims.cpus.options is not None:
        parts.append("cpus: always " + ", ".join(
            f"{k}={v}" for k, v in sorted(claims.cpus.options.items())))
    return "; ".join(filter(None, parts)) or "everything numaspec specifies but its format"


def _divergences(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """RUN-5, RUN-16: the known divergences the run met, each with its owner (the
    implementation, kubelet, or numaspec's model), how many cases, and the manifest's reason:
    expected failures and manifest skips by case or by class, and the cases properties set
    aside."""
    found: dict[str, dict[str, Any]] = {}
    for record in records:
        entry = record.get("expectation")
        if isinstance(entry, dict) and record["verdict"] in ("xfailed", "skipped"):
            key = str(entry.get("finding") or entry.get("vector") or f"rule {entry.get('rule')}")
            item = found.setdefault(key, {"finding": key, "owner": entry.get(
                "owner", "implementation"), "cases": 0, "reason": str(entry.get("reason", ""))})
            item["cases"] += 1
        for seen in record.get("divergences") or ():
            item = found.setdefault(str(seen["finding"]), {
                "finding": str(seen["finding"]), "owner": seen.get("owner", "implementation"),
                "cases": 0, "reason": ""})
            item["cases"] += int(seen.get("cases", 0))
    return sorted(found.values(), key=lambda d: (OWNER_ORDER.index(d["owner"])
                                                 if d["owner"] in OWNER_ORDER else 9,
                                                 d["finding"]))


#: How the owners of divergences are listed.
OWNER_ORDER = ("implementation", "kubelet", "numaspec")
_OWNER_WORDS = {"implementation": "the implementation's own", "kubelet": "kubelet's",
                "numaspec": "numaspec's model"}


def _impl_line(impl: Mapping[str, Any]) -> str:
    who = " ".join(filter(None, [impl["name"], impl["version"]])) or impl["impl"]
    return who + (f" ({impl['language']})" if impl["language"] else "")


def _who(impl: Mapping[str, Any]) -> str:
    """What a label stands for, when the label does not say it already."""
    who = " ".join(filter(None, [impl["name"], impl["version"]]))
    language = f"({impl['language']})" if impl["language"] else ""
    return " ".join(filter(None, [f"= {who}" if who and who != impl["label"] else "",
                                  language]))


def _totals_text(cell: Mapping[str, Any]) -> str:
    return ", ".join(text for _, text in cell_parts(cell)) or "no case"


# --- Markdown ----------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")


def md_text(value: object) -> str:
    """Text safe in a Markdown table cell: Markdown and HTML both inert, one line."""
    text = " ".join(str(value).split())
    return _MD_SPECIAL.sub(r"\\\1", text.replace("&", "&amp;"))


def md_code(value: object, *, table: bool = False) -> str:
    """A code span holding ``value`` whatever backticks it has (one line); in a table cell a
    ``|`` is escaped, as GFM reads the cell's bounds before the code span."""
    text = " ".join(str(value).split())
    if table:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def href(path: str, fragment: str = "") -> str:
    """A relative link: percent-encoded, so that no path can read as a scheme."""
    link = urllib.parse.quote(path, safe="/") if path else ""
    if link and not link.startswith(("/", ".")):
        link = "./" + link
    return link + (f"#{urllib.parse.quote(fragment)}" if fragment else "")


def _md_cell(cell: Mapping[str, Any]) -> str:
    parts = []
    for key, text in cell_parts(cell):
        if key == "failed" and cell["first_failure"]:
            parts.append(f"[**{md_text(text)}**]({href('', cell['first_failure']['anchor'])})")
        elif key == "failed":
            parts.append(f"**{md_text(text)}**")
        else:
            parts.append(md_text(text))
    return " · ".join(parts) or "—"


def _facts(cx: Mapping[str, Any]) -> str:
    """A counterexample's verdict, operation and kind, release and rules, in one phrase (the
    Markdown and the HTML say the same)."""
    return ", ".join(filter(None, [
        cx["verdict"], f"{cx['op']} {cx['kind']}",
        f"kubelet {cx['kubelet_version']}" if cx["kubelet_version"] else "",
        "rules " + ", ".join(cx["rules"]) if cx["rules"] else ""]))


def render_markdown(matrix: Mapping[str, Any]) -> str:
    impls = matrix["implementations"]
    summary = matrix["summary"]
    head = "| | " + " | ".join(f"**{md_text(i['label'])}**" for i in impls) + " |"
    rule = "|---|" + "---|" * len(impls)
    out = ["# numaspec conformance matrix", "",
           f"{len(impls)} implementation{'s' * (len(impls) != 1)}, "
           f"{summary['rules_with_cases']} of {summary['rules']} spec rules cited by a case; "
           f"numaspec {md_text(matrix['tool_version'])}, {md_text(matrix['created'])}.", ""]
    for impl in impls:
        out.append(f"- **{md_text(impl['label'])}** {md_text(_who(impl))}: "
                   f"{md_text(impl['status'])}; {md_text(_totals_text(impl['totals']))}")
    out += [f"- Note: {md_text(note)}" for note in summary["notes"]]
    out += ["", head, rule,
            "| implementation | " + " | ".join(md_text(_impl_line(i)) for i in impls) + " |",
            "| run by | " + " | ".join(md_code(i["impl"], table=True) if i["impl"] else "—"
                                      for i in impls) + " |",
            "| report | " + " | ".join(
                " · ".join([f"[report.jsonl]({href(i['report'])})"]
                           + ([f"[summary.md]({href(i['summary'])})"] if i["summary"] else []))
                for i in impls) + " |",
            "| judged at | " + " | ".join(md_text(i.get("declared", "")) for i in impls) + " |",
            "| claims | " + " | ".join(md_text(i.get("claims", "")) for i in impls) + " |",
            "| status | " + " | ".join(
                (f"**{md_text(i['status'])}**" if i["exit_status"] else md_text(i["status"]))
                + f" (exit {i['exit_status']})" for i in impls) + " |",
            "| all cases | " + " | ".join(_md_cell(i["totals"]) for i in impls) + " |",
            "", "## By chapter and rule", "",
            "A cell counts the cases citing the rule: passed; failed (failed, xpassed, "
            "errored, crashed, timeout, protocol-error, not-run, the others named); xfailed "
            "(an expected failure of the implementation's manifest); skipped by the "
            "implementation; skipped by its manifest; not claimed (outside the operations, "
            "releases or capabilities it declares).  A failure links to its first "
            "counterexample.", "",
            "| rule | " + " | ".join(md_text(i["label"]) for i in impls) + " |", rule]
    empty = []
    for chapter in matrix["chapters"]:
        if not chapter["rules"]:
            empty.append(chapter)
            continue
        out.append(f"| **{md_text(_chapter_name(chapter))}**: {md_text(chapter['title'])} | "
                   + " | ".join(_md_cell(chapter["totals"][i["key"]]) for i in impls) + " |")
        for row in chapter["rules"]:
            out.append(f"| {md_text(row['id'])} {md_text(row['title'])} | "
                       + " | ".join(_md_cell(row["cells"][i["key"]]) for i in impls) + " |")
        if chapter["uncited_rules"]:
            out.append(f"| *{len(chapter['uncited_rules'])} more without a case: "
                       f"{md_text(', '.join(chapter['uncited_rules']))}* |"
                       + " |" * len(impls))
    if empty:
        out += ["", "Chapters without a case in this matrix: " + "; ".join(
            f"{md_text(_chapter_name(c))} ({c['rule_count']} rules)" for c in empty) + "."]
    known = [(i, d) for i in impls for d in i.get("divergences") or ()]
    if known:
        out += ["", "## Known divergences, by owner", "",
                "What each implementation's manifest explains (RUN-5), and whose behaviour it is: "
                "the implementation's own, kubelet's (a gap of an API it reads, a quirk it "
                "inherits), or numaspec's model (the bounds of its node model, its reading of "
                "the resource-topology-exporter).", "",
                "| implementation | finding | owner | cases | why |", "|---|---|---|---:|---|"]
        out += [f"| {md_text(i['label'])} | {md_text(d['finding'])} | "
                f"{md_text(_OWNER_WORDS.get(d['owner'], d['owner']))} | {d['cases']} | "
                f"{md_text(d['reason'][:300])} |" for i, d in known]
    counterexamples = [i for i in impls if i["counterexamples"]]
    if counterexamples:
        out += ["", "## First counterexamples", ""]
    for impl in counterexamples:
        out += [f"### {md_text(impl['label'])}", ""]
        for cx in impl["counterexamples"]:
            facts = _facts(cx)
            line = f"#L{cx['report_line']}" if cx["report_line"] else ""
            out += [f'- <a id="{cx["anchor"]}"></a>{md_code(cx["id"])} ({md_text(facts)}): '
                    f"{md_code(cx['message'])}",
                    *(f"  - {md_code(d)}" for d in cx["differences"] if d != cx["message"]),
                    f"  - [report.jsonl line {cx['report_line']}]"
                    f"({href(impl['report'])}{line}); replay: {md_code(cx['replay'])}"]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


# --- HTML --------------------------------------------------------------------------------------

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:.3em .5em;vertical-align:top;text-align:left}
thead th{background:#f4f4f4}
tr.chapter th,tr.chapter td{background:#eef2f8;border-top:2px solid #888}
td.passed{background:#e6f4e6}td.failed{background:#fbe3e3}td.partial{background:#fdf3d8}
td.not-claimed,td.none{color:#777}
td.rule{white-space:nowrap}
.muted{color:#777}code{font-size:90%;word-break:break-all}
li{margin:.3em 0}
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _html_cell(cell: Mapping[str, Any], tag: str = "td") -> str:
    parts = []
    for key, text in cell_parts(cell):
        if key == "failed" and cell["first_failure"]:
            parts.append(f'<a href="{_e(href("", cell["first_failure"]["anchor"]))}">'
                         f"<strong>{_e(text)}</strong></a>")
        elif key == "failed":
            parts.append(f"<strong>{_e(text)}</strong>")
        else:
            parts.append(_e(text))
    return f'<{tag} class="{_e(cell["state"])}">{" · ".join(parts) or "—"}</{tag}>'


def render_html(matrix: Mapping[str, Any]) -> str:
    impls = matrix["implementations"]
    summary = matrix["summary"]
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8"/>',
           "<title>numaspec conformance matrix</title>", f"<style>{_CSS}</style>", "</head>",
           "<body>", "<h1>numaspec conformance matrix</h1>",
           f"<p>{len(impls)} implementation{'s' * (len(impls) != 1)}, "
           f"{summary['rules_with_cases']} of {summary['rules']} spec rules cited by a case; "
           f"numaspec {_e(matrix['tool_version'])}, {_e(matrix['created'])}.</p>", "<ul>"]
    for impl in impls:
        out.append(f"<li><strong>{_e(impl['label'])}</strong> {_e(_who(impl))}: "
                   f"{_e(impl['status'])}; {_e(_totals_text(impl['totals']))}</li>")
    out += [f"<li>Note: {_e(note)}</li>" for note in summary["notes"]]
    out += ["</ul>", "<table>", "<thead>",
            "<tr><th>rule</th>" + "".join(f"<th>{_e(i['label'])}</th>" for i in impls)
            + "</tr>",
            "<tr><th>implementation</th>" + "".join(
                f"<th>{_e(_impl_line(i))}"
                + (f'<br/><a href="{_e(i["homepage"])}">homepage</a>'
                   if i["homepage"].startswith(("https://", "http://")) else "")
                + "</th>" for i in impls) + "</tr>",
            "<tr><th>run by</th>" + "".join(
                f"<th><code>{_e(i['impl'])}</code></th>" for i in impls) + "</tr>",
            "<tr><th>report</th>" + "".join(
                f'<th><a href="{_e(href(i["report"]))}">report.jsonl</a>'
                + (f' · <a href="{_e(href(i["summary"]))}">summary.md</a>' if i["summary"]
                   else "") + "</th>" for i in impls) + "</tr>",
            "<tr><th>judged at</th>" + "".join(
                f"<th>{_e(i.get('declared', ''))}</th>" for i in impls) + "</tr>",
            "<tr><th>claims</th>" + "".join(
                f"<th>{_e(i.get('claims', ''))}</th>" for i in impls) + "</tr>",
            "<tr><th>status</th>" + "".join(
                f"<th>{_e(i['status'])} (exit {_e(i['exit_status'])})</th>" for i in impls)
            + "</tr>",
            "<tr><th>all cases</th>" + "".join(_html_cell(i["totals"], "th") for i in impls)
            + "</tr>", "</thead>"]
    empty = []
    for chapter in matrix["chapters"]:
        if not chapter["rules"]:
            empty.append(chapter)
            continue
        out += ["<tbody>", f'<tr class="chapter"><th>{_e(_chapter_name(chapter))}<br/>'
                f'<span class="muted">{_e(chapter["title"])}</span></th>'
                + "".join(_html_cell(chapter["totals"][i["key"]]) for i in impls) + "</tr>"]
        for row in chapter["rules"]:
            out.append(f'<tr><td class="rule" title="{_e(row["title"])}">{_e(row["id"])} '
                       f'<span class="muted">{_e(row["title"])}</span></td>'
                       + "".join(_html_cell(row["cells"][i["key"]]) for i in impls) + "</tr>")
        if chapter["uncited_rules"]:
            out.append(f'<tr><td class="muted" colspan="{len(impls) + 1}">'
                       f"{len(chapter['uncited_rules'])} more without a case: "
                       f"{_e(', '.join(chapter['uncited_rules']))}</td></tr>")
        out.append("</tbody>")
    out.append("</table>")
    if empty:
        out.append("<p>Chapters without a case in this matrix: " + _e("; ".join(
            f"{_chapter_name(c)} ({c['rule_count']} rules)" for c in empty)) + ".</p>")
    known = [(i, d) for i in impls for d in i.get("divergences") or ()]
    if known:
        out += ["<h2>Known divergences, by owner</h2>",
                "<p>What each implementation's manifest explains (RUN-5), and whose behaviour "
                "it is: the implementation's own, kubelet's, or numaspec's model.</p>",
                "<table><thead><tr><th>implementation</th><th>finding</th><th>owner</th>"
                "<th>cases</th><th>why</th></tr></thead><tbody>"]
        out += [f"<tr><td>{_e(i['label'])}</td><td>{_e(d['finding'])}</td>"
                f"<td>{_e(_OWNER_WORDS.get(d['owner'], d['owner']))}</td>"
                f"<td>{_e(d['cases'])}</td><td>{_e(d['reason'][:300])}</td></tr>"
                for i, d in known]
        out.append("</tbody></table>")
    if any(i["counterexamples"] for i in impls):
        out.append("<h2>First counterexamples</h2>")
    for impl in impls:
        if not impl["counterexamples"]:
            continue
        out += [f"<h3>{_e(impl['label'])}</h3>", "<ul>"]
        for cx in impl["counterexamples"]:
            facts = _facts(cx)
            line = f"L{cx['report_line']}" if cx["report_line"] else ""
            differences = "".join(f"<li><code>{_e(d)}</code></li>" for d in cx["differences"]
                                  if d != cx["message"])
            out.append(f'<li id="{_e(cx["anchor"])}"><code>{_e(cx["id"])}</code> '
                       f"({_e(facts)}): <code>{_e(cx['message'])}</code>"
                       + (f"<ul>{differences}</ul>" if differences else "<br/>")
                       + f'<a href="{_e(href(impl["report"], line))}">report.jsonl line '
                       f"{_e(cx['report_line'])}</a>; replay: <code>{_e(cx['replay'])}</code>"
                       "</li>")
        out.append("</ul>")
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


# --- the terminal ------------------------------------------------------------------------------


def _printable(text: str) -> str:
    """No control character of an implementation's reaches the terminal."""
    return "".join(c if c.isprintable() else "?" for c in text)


def _short(cell: Mapping[str, Any]) -> str:
    return " ".join(f"{cell[key]}{code}" for key, _, code in COUNTS if cell[key]) or "-"


def render_terminal(matrix: Mapping[str, Any], *, width: int = 28) -> list[str]:
    """A short table: one row per chapter with cases, one column per implementation."""
    impls = matrix["implementations"]
    first = max([len("all cases"), *(len(_chapter_name(c)) for c in matrix["chapters"])])
    first = min(first, 34)
    columns = [min(max(len(i["label"]), len(_short(i["totals"])), 8), width) for i in impls]

    def row(name: str, cells: Iterable[str]) -> str:
        return "  ".join([f"{name[:first]:<{first}}",
                          *(f"{c[:w]:<{w}}" for c, w in zip(cells, columns, strict=True))]
                         ).rstrip()

    lines = ["", f"numaspec matrix: {len(impls)} implementation"
                 f"{'s' * (len(impls) != 1)}"]
    lines += [f"  {i['label']}: {_impl_line(i)}, {i['status']} (exit {i['exit_status']})"
              for i in impls]
    lines += [f"  note: {n}" for n in matrix["summary"]["notes"]]
    lines += ["", row("", [i["label"] for i in impls]),
              row("all cases", [_short(i["totals"]) for i in impls])]
    empty = []
    for chapter in matrix["chapters"]:
        if chapter["rules"]:
            lines.append(row(_chapter_name(chapter),
                             [_short(chapter["totals"][i["key"]]) for i in impls]))
        else:
            empty.append(posixpath.basename(chapter["file"]) or "other")
    if empty:
        lines.append(f"(no case: {', '.join(empty)})")
    lines.append("p passed, r refused what kubelet admits (predict), F failed, xf xfailed, "
                 "s skipped by the implementation, "
                 "m skipped by manifest, nc not claimed")
    return [_printable(line) for line in lines]


# --- the command -------------------------------------------------------------------------------


def _move_run(work: Path, target: Path) -> Path:
    """A run's reports from its working directory to ``runs/<key>``, replacing an earlier
    matrix's reports there (and nothing else: a directory with other files stays)."""
    if target.exists():
        if not target.is_dir() or any(p.name not in _REPORT_FILES for p in target.iterdir()):
            return work
        for path in target.iterdir():
            path.unlink()
        target.rmdir()
    work.rename(target)
    return target


def _run_column(entry: Mapping[str, Any], args: argparse.Namespace, runs: Path, *,
                index: int, total: int, taken: set[str]) -> tuple[Column, int]:
    from numaspec.conformance.implementations.connection import (
        DEFAULT_MAX_LINE,
        DEFAULT_START_TIMEOUT,
        DEFAULT_TIMEOUT,
    )
    from numaspec.conformance.running.runner import RunConfig, run_conformance

    work = runs / f"{index}.running"
    print(f"numaspec matrix: [{index}/{total}] {entry['impl']}", file=sys.stderr, flush=True)
    config = RunConfig(
        impl=entry["impl"], out=str(work), expectations=entry.get("expectations"),
        timeout=args.timeout or DEFAULT_TIMEOUT, max_line=args.max_line or DEFAULT_MAX_LINE,
        start_timeout=args.start_timeout or DEFAULT_START_TIMEOUT,
        strict=args.strict, properties=not args.no_properties, vectors=not args.no_vectors,
        vector_files=tuple(args.vector_files), profile=args.profile, keyword=args.keyword,
        progress=args.progress, rule_table=False, fail_fast=args.fail_fast, seed=args.seed)
    if args.differential is not None:
        config.differential = args.differential
    if args.differential_seconds is not None:
        config.differential_seconds = args.differential_seconds
    status = run_conformance(config, stream=io.StringIO())
    column = load_column(work, label=entry.get("label"), source="run")
    name = _unique(_slug(column.given_label or column.default_label()), taken, "-")
    column.report = _move_run(work, runs / name) / "report.jsonl"
    counts = Counter(str(r.get("verdict")) for r in column.records)
    print(f"numaspec matrix: [{index}/{total}] exit {status}: "
          + (", ".join(f"{n} {v}" for v, n in sorted(counts.items())) or "no case")
          + f" ({column.report.parent})", file=sys.stderr, flush=True)
    return column, status


def write_matrix(matrix: Mapping[str, Any], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "matrix.json", out / "matrix.md", out / "matrix.html"]
    paths[0].write_text(json.dumps(matrix, indent=1, ensure_ascii=False) + "\n",
                        encoding="utf-8")
    paths[1].write_text(render_markdown(matrix), encoding="utf-8")
    paths[2].write_text(render_html(matrix), encoding="utf-8")
    return paths


def main(args: argparse.Namespace, *, stream: Any = None) -> int:
    """``numaspec matrix``.  Exit status: 0 when every implementation's run exits 0, 1 when
    some does not, 4 when the matrix cannot be made (a report that cannot be read, an
    output directory that cannot be written), 130 / 143 when a run was interrupted (the
    matrix of what ran is still written)."""
    from numaspec.errors import InvalidFieldError
    from numaspec.protocols.adapter_protocol import REFERENCE_IMPL

    out_stream = stream if stream is not None else sys.stdout
    entries = list(args.columns or [{"impl": REFERENCE_IMPL, "label": None,
                                     "expectations": None}])
    out = Path(args.out)
    runs = out / "runs"
    try:
        runs.mkdir(parents=True, exist_ok=True) if any("impl" in e for e in entries) else \
            out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidFieldError(f"cannot write the matrix: {exc.strerror or exc}",
                                where=str(out)) from None
    columns: list[Column] = []
    taken: set[str] = set()
    interrupted = 0
    skipped: list[str] = []
    to_run = sum(1 for e in entries if "impl" in e)
    ran = 0
    for entry in entries:
        if "from" in entry:
            columns.append(load_column(entry["from"], label=entry.get("label")))
            continue
        if interrupted:
            skipped.append(entry["impl"])
            continue
        ran += 1
        column, status = _run_column(entry, args, runs, index=ran, total=to_run,
                                     taken=taken)
        columns.append(column)
        if status in (130, 143):
            interrupted = status
    notes = [f"interrupted: not run: {', '.join(skipped)}"] if skipped else []
    matrix = build_matrix(columns, out, notes=notes)
    paths = write_matrix(matrix, out)
    try:
        for line in render_terminal(matrix):
            print(line, file=out_stream)
        print(f"\nmatrix: {', '.join(str(p) for p in paths)}", file=out_stream)
        out_stream.flush()
    except BrokenPipeError:  # the reader (| head) has gone; the matrix is written
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - so that exit does not complain
    if interrupted:
        return interrupted
    return 0 if all(i["exit_status"] == 0 for i in matrix["implementations"]) else 1
