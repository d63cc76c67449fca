"""Reports of a conformance run (RUN-6): JSON Lines, Markdown, JUnit XML, the terminal.

The JSON Lines report is the source of truth; the others are views of it, so that
``numaspec report FILE.jsonl`` can render them again later.  Its lines, each an object with a
``type`` (schema ``spec/schemas/report.schema.json``):

* ``header``: tool, tool version, suite version, protocol version, start time, the command,
  the implementation's ``start`` metadata, the Hypothesis profile, strictness, the manifest;
* ``case``: one per vector or property, with its verdict (below), rules, the expected and the
  actual answers, the differences, what the implementation wrote on stderr meanwhile, and for
  protocol errors the offending bytes (truncated);
* ``footer``: counts per verdict, restarts, whether the adapter is probably broken, stale
  expectations, the exit status, and the stderr tail.

Verdicts: ``passed``, ``failed``, ``xfailed`` (failed as the manifest expects), ``xpassed``
(passed although the manifest expects a failure), ``skipped`` (with ``skip_source``: the
implementation, the manifest, ``undeclared`` when it does not declare the operation or
kubelet version, or ``not-claimed`` when the case lies outside its capability claims,
PROTO-7; the last two are counted apart, as "not claimed"; ``unjudgeable`` when no case
inside the claims could be drawn for a property; a skip by the implementation or an
unjudgeable property inside the claims keeps the run from going green, RUN-7), ``errored`` (the
implementation reported its own error), ``crashed``, ``timeout``, ``protocol-error``,
``not-run`` (the run gave up on the implementation); and for ``predict`` cases ``refused``: a
scheduler kept a pod off a node whose kubelet would admit it (PRED-4: conservative, counted
apart, never a failure; in the rule table it counts with ``passed``).
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from numaspec.errors import InvalidFieldError, MalformedJSONError
from numaspec.rules import rule_link

__all__ = [
    "BAD_VERDICTS",
    "VERDICTS",
    "booked",
    "Progress",
    "ReportWriter",
    "junit_xml",
    "markdown_summary",
    "read_report",
    "rule_rows",
    "terminal_summary",
]

VERDICTS = ("passed", "refused", "failed", "xfailed", "xpassed", "skipped", "errored",
            "crashed", "timeout", "protocol-error", "not-run")
#: Verdicts that make a run fail.
BAD_VERDICTS = frozenset({"failed", "xpassed", "errored", "crashed", "timeout",
                          "protocol-error", "not-run"})


class ReportWriter:
    """Writes the JSON Lines report as the run goes, one flushed line per record."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = self.path.open("w", encoding="utf-8")

    def write(self, record: Mapping[str, Any]) -> None:
        self._file.write(json.dumps(record, separators=(",", ":"), sort_keys=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def read_report(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """(header, case records, footer) of a JSON Lines report; typed errors otherwise."""
    name = str(path)
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InvalidFieldError(f"cannot read the report: {exc.strerror or exc}",
                                where=name) from None
    header: dict[str, Any] | None = None
    footer: dict[str, Any] = {}
    records: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MalformedJSONError(f"not JSON: {exc.msg}", where=f"{name}:{number}") from None
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "header":
            header = item
        elif kind == "case":
            records.append(item)
        elif kind == "footer":
            footer = item
        else:
            raise InvalidFieldError(f"a report line has type header, case or footer, not "
                                    f"{kind!r}", where=f"{name}:{number}")
    if header is None:
        raise InvalidFieldError("the report has no header line", where=name)
    return header, records, footer


# --- per rule --------------------------------------------------------------------------------


def _rule_key(rule: str) -> tuple[str, int]:
    match = re.fullmatch(r"([A-Z]+)-(\d+)", rule)
    return (match.group(1), int(match.group(2))) if match else (rule, 0)


def _first_line(text: str, limit: int = 160) -> str:
    """The first line of ``text``, shortened at a word boundary outside any JSON value (never
    in the middle of one: a cut JSON object reads as a different one)."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    if len(line) <= limit:
        return line
    depth, quoted, escaped, cut = 0, False, False, -1
    for index, char in enumerate(line[:limit]):
        if quoted:
            escaped = not escaped and char == "\\"
            if char == '"' and not escaped:
                quoted = False
            continue
        if char == '"':
            quoted = True
        elif char in "{[":
            if depth == 0:
                cut = max(cut, index)
            depth += 1
        elif char in "}]":
            depth = max(depth - 1, 0)
        elif char == " " and depth == 0:
            cut = index
    return (line[:cut].rstrip(" :,") if cut > 0 else line[:limit]) + " …"


#: Skip sources that mean "outside what the implementation declares or claims" (RUN-4,
#: PROTO-7), counted apart from the skips the implementation or the manifest chose.
NOT_CLAIMED = ("undeclared", "not-claimed")


def column_of(record: Mapping[str, Any]) -> str:
    """The summary column of a case record: passed, failed, xfailed, skipped or not-claimed."""
    verdict = record["verdict"]
    if verdict == "skipped":
        return "not-claimed" if record.get("skip_source") in NOT_CLAIMED else "skipped"
    if verdict == "refused":  # PRED-4: not a failure; the headline counts it apart
        return "passed"
    return verdict if verdict in ("passed", "xfailed") else "failed"


def rule_rows(records: Iterable[Mapping[str, Any]], *, claimed_only: bool = False
              ) -> list[dict[str, Any]]:
    """Per rule: passed / failed / xfailed / skipped / not-claimed and the first
    counterexample; ``claimed_only``: only the rules some case of which the implementation
    was asked (a rule whose every case was not claimed says nothing about it)."""
    rows: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"cases": 0, "passed": 0, "failed": 0, "xfailed": 0, "skipped": 0,
                 "not-exercised": 0, "not-claimed": 0, "first": ""})
    for record in records:
        column = column_of(record)
        reached = record.get("reached")
        for rule in booked(record):
            row = rows[rule]
            row[column] += 1
            if column in ("passed", "failed", "xfailed"):
                row["cases"] += _cases_reaching(record, rule, reached)
            if column == "failed" and not row["first"]:
                message = _first_line(record.get("message", ""))
                row["first"] = f"{record['id']} ({record['verdict']}): {message}"
        for rule in record.get("not_exercised") or ():
            rows[str(rule)]["not-exercised"] += 1
    return [{"rule": rule, **rows[rule]} for rule in sorted(rows, key=_rule_key)
            if not claimed_only or any(rows[rule][c] for c in (
                "passed", "failed", "xfailed", "skipped", "not-exercised"))]


def _cases_reaching(record: Mapping[str, Any], rule: str, reached: Any) -> int:
    """RUN-17: how many judged cases of a record reached ``rule``: a vector one; a property
    or the differential as its tally says (every case it judged, for a rule any merge goes
    through); a record without a tally one."""
    if record.get("kind") == "vector" or not isinstance(reached, dict):
        return 1
    from numaspec.conformance.cases.decisions import CONDITIONAL

    if rule in reached:
        return int(reached[rule])
    return int(record.get("drawn") or 1) if rule not in CONDITIONAL else 0


def booked(record: Mapping[str, Any]) -> list[str]:
    """RUN-17: the rules a record's verdict is booked on (its cited rules in a report written
    before booking existed)."""
    return [str(r) for r in record.get("booked", record.get("rules", ()))]


def _release(record: Mapping[str, Any]) -> str:
    """`` (kubelet 1.N)`` for a vector instance that names its release (RUN-10), else ``""``."""
    version = record.get("kubelet_version")
    return f" (kubelet {version})" if record.get("kind") == "vector" and version else ""


def _by_release(records: Iterable[Mapping[str, Any]]) -> str:
    """``"1.23: 18, 1.30: 250"``: vector instances that ran, per release (RUN-10)."""
    ran = Counter(str(r["kubelet_version"]) for r in records
                  if r.get("kind") == "vector" and r.get("kubelet_version")
                  and r["verdict"] != "skipped")
    order = sorted(ran, key=lambda v: [int(p) if p.isdigit() else 0 for p in v.split(".")])
    return ", ".join(f"{v}: {ran[v]}" for v in order)


def _counts(records: Iterable[Mapping[str, Any]]) -> Counter[str]:
    return Counter(r["verdict"] for r in records)


def _headline(header: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
              footer: Mapping[str, Any]) -> list[str]:
    impl = header.get("implementation") or {}
    counts = _counts(records)
    skipped_by = Counter(r.get("skip_source", "") for r in records if r["verdict"] == "skipped"
                         and r.get("skip_source") not in NOT_CLAIMED)
    declared = set(impl.get("operations") or ())
    not_claimed = Counter(
        ("not-claimed" if r.get("skip_source") == "not-claimed"
         else "undeclared" if r.get("op") in declared else "operation not served")
        for r in records if r["verdict"] == "skipped" and r.get("skip_source") in NOT_CLAIMED)
    parts = [f"{counts[v]} {v}" for v in VERDICTS if counts[v] and v != "skipped"]
    if skipped_by:
        parts.append(f"{sum(skipped_by.values())} skipped ("
                     + ", ".join(f"{n} by {s}" for s, n in sorted(skipped_by.items())) + ")")
    if not_claimed:
        parts.append(f"{sum(not_claimed.values())} not claimed ("
                     + ", ".join(f"{n} {s}" for s, n in sorted(not_claimed.items())) + ")")
    who = (f"{impl.get('name', '?')} {impl.get('version', '')} ({impl.get('language', '?')}) "
           f"via {header.get('impl', '?')}" if impl
           else f"{header.get('impl', '?')} (did not start)")
    lines = [who, f"{len(records)} cases: " + (", ".join(parts) or "none")]
    seeded = _seed_line(header)
    if seeded:
        lines.append(seeded)
    releases = _by_release(records)
    if releases:
        lines.append(f"vectors run per kubelet release: {releases}")
    lines += _not_served(impl, records)
    if footer.get("adapter_probably_broken"):
        lines.append("EVERY CASE FAILED: the adapter is probably broken (check its start-up, "
                     "its stdout discipline and the stderr below), not the implementation.")
    if footer.get("nothing_checked"):
        lines.append("NOTHING WAS CHECKED: every case was skipped.  Declare the operations and "
                     "kubelet versions you implement, and skip only known gaps.")
    unjudged = footer.get("unjudged") or []
    if unjudged:
        by_impl = [u for u in unjudged if "drawn" not in u.get("why", "")]
        lines.append(
            f"NOT EVERYTHING CLAIMED WAS CHECKED: {len(unjudged)} cases inside the "
            "implementation's claims were not judged"
            + (f" ({len(by_impl)} skipped by the implementation)" if by_impl else "")
            + ", so the run is not green (exit status 5).  Answer them, or narrow the claims "
              "(PROTO-7) to what it models:")
        for item in unjudged[:_UNJUDGED_LISTED]:
            hint = _claim_hint(item.get("case"))
            lines.append(f"  {item['id']}: {_first_line(str(item.get('why', '')), 160)}"
                         + (f" [{hint}]" if hint else ""))
        if len(unjudged) > _UNJUDGED_LISTED:
            lines.append(f"  … and {len(unjudged) - _UNJUDGED_LISTED} more in the report")
    if footer.get("gave_up"):
        lines.append(f"The run gave up on the implementation: {footer['gave_up']}")
    if footer.get("stopped"):
        lines.append(f"The run {footer['stopped']}")
    for stale in footer.get("stale_expectations", ()):
        lines.append(f"Stale expectation: {stale}")
    if footer.get("aborted"):
        lines.append(f"The run was aborted: {footer['aborted']}")
    return lines


def _seed_line(header: Mapping[str, Any]) -> str:
    """RUN-21: the run's seed, and how to draw the same cases again."""
    if "seed" not in header:
        return ""
    seed = header["seed"]
    if header.get("derandomized"):
        return (f"seed {seed} (profile {header.get('profile')}: every property draws its own "
                f"fixed examples; --seed N draws anew)")
    return f"seed {seed}: --seed {seed} draws exactly these cases again"


def drawn_lines(header: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> list[str]:
    """RUN-21, RUN-22: how much each property and the differential drew, and what a stronger
    run adds."""
    judged = [r for r in records if r.get("kind") in ("property", "differential")
              and r.get("drawn")]
    if not judged:
        return []
    profile = header.get("profile") or "dev"
    parts = [f"{r['id']} {r['drawn']:,}" for r in judged]
    lines = textwrap.wrap(f"Drawn (requests judged, profile {profile}): " + ", ".join(parts),
                          width=_WIDTH, subsequent_indent="  ")
    differential = (header.get("differential") or {}).get("cases", 0)
    stronger = []
    if profile == "quick":
        stronger.append("--profile dev (100 examples a property)")
    if profile not in ("ci", "nightly"):
        stronger.append("--profile ci (300 examples a property)")
    if profile != "nightly":
        stronger.append("--profile nightly (5,000)")
    stronger.append(f"--differential {max(differential * 10, 50_000):,}")
    stronger.append("numaspec differential --impl ... --cases 100000 (--jobs, --ray; "
                    "--shape large)")
    lines += textwrap.wrap("A stronger run: " + "; ".join(stronger), width=_WIDTH,
                           subsequent_indent="  ")
    return lines


_WIDTH = 100


def _not_served(impl: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> list[str]:
    """PROTO-2: cases of an operation the implementation does not declare, per operation, with
    the reason it gives in ``metadata.not_served`` (the reference: it judges predict answers,
    it does not give them)."""
    declared = set(impl.get("operations") or ())
    left = Counter(str(r.get("op")) for r in records if r["verdict"] == "skipped"
                   and r.get("skip_source") == "undeclared" and r.get("op") not in declared)
    metadata = impl.get("metadata")
    reasons = metadata.get("not_served") if isinstance(metadata, dict) else None
    reasons = reasons if isinstance(reasons, dict) else {}
    return [f"{n} cases of the {op!r} operation, which it does not serve"
            + (f": {reasons[op]}" if isinstance(reasons.get(op), str) else "")
            for op, n in sorted(left.items())] + _unmodelled_node(impl)


def _unmodelled_node(impl: Mapping[str, Any]) -> list[str]:
    """NODE-0, VER-1: node releases it declares that numaspec does not model (a pre-release
    read for the merge only): not judged, and said."""
    from numaspec.node.nodeconfig import NODE_VERSIONS
    from numaspec.topology.versions import KubeletVersion

    if not {"node", "hints"} & set(impl.get("operations") or ()):
        return []
    declared = impl.get("node_kubelet_versions", impl.get("kubelet_versions"))
    if not isinstance(declared, list):
        return []
    left = [str(v) for v in declared if isinstance(v, str) and v.count(".") == 1
            and v.split(".")[1].isdigit() and int(v.split(".")[1]) not in NODE_VERSIONS]
    return [f"node and hints at kubelet {KubeletVersion(int(v.split('.')[1])).described}, "
            "which it declares, are not judged: numaspec models node admission at "
            f"1.{NODE_VERSIONS.start}-1.{NODE_VERSIONS.stop - 1}" for v in left]


_UNJUDGED_LISTED = 10
#: lines of a failure's message the terminal shows (each whole)
_MESSAGE_LINES = 14


def unjudged_rules(header: Mapping[str, Any], records: Sequence[Mapping[str, Any]]
                   ) -> list[str]:
    """RUN-17: the rules the cases of a run cite that no verdict is booked on, grouped by why
    they were not judged (the operation not served, the releases not declared, the claims)."""
    declared = set((header.get("implementation") or {}).get("operations") or ())
    judged = {r for record in records if column_of(record) != "not-claimed"
              for r in booked(record)}
    judged |= {str(r) for record in records for r in record.get("not_exercised") or ()}
    why: dict[str, set[str]] = defaultdict(set)
    for record in records:
        if column_of(record) != "not-claimed":
            continue
        reason = ("outside the claims" if record.get("skip_source") == "not-claimed" else
                  "releases not declared" if record.get("op") in declared else
                  f"operation not served: {record.get('op')}")
        why[reason].update(r for r in booked(record) if r not in judged)
    for record in records:  # a failure is booked on the rules that decided it, not the rest
        why["cited only by cases that failed on other rules"].update(
            str(r) for r in record.get("not_judged") or () if str(r) not in judged)
    lines = []
    for reason in sorted(why):
        rules = sorted(why[reason] - {r for other in why if other < reason for r in why[other]},
                       key=_rule_key)
        if rules:
            shown = ", ".join(rules[:12]) + (f" and {len(rules) - 12} more" if len(rules) > 12
                                             else "")
            lines.append(f"not judged ({reason}): {len(rules)} rules: {shown}")
    return lines


def _claim_hint(case: Any) -> str:
    """Which claim would leave a merge request out, for the unjudged list: what the request
    carries beyond a plain merge (PROTO-7)."""
    if not isinstance(case, dict) or "providers" not in case:
        return ""
    carries = []
    if case.get("numa_distances") is not None:
        carries.append("distances (claims.merge.distances: false)")
    if case.get("policy_options"):
        carries.append(f"policy options {', '.join(sorted(case['policy_options']))} "
                       "(claims.merge.policy_options)")
    if case.get("feature_gates"):
        carries.append("feature gates (claims.merge.feature_gates: false)")
    return "the request carries " + "; ".join(carries) if carries else ""


def _case_json(record: Mapping[str, Any], limit: int) -> str:
    """The case a failure is about, as protocol JSON (a property's shrunk counterexample, a
    vector's case), shortened with a pointer to the whole."""
    case = record.get("counterexample", record.get("case"))
    if case is None:
        return ""
    text = json.dumps(case, separators=(",", ":"))
    return text if len(text) <= limit else (
        f"{text[:limit]}… ({len(text)} characters; the whole case is in report.jsonl)")


def _rules_text(record: Mapping[str, Any], *, markdown: bool) -> str:
    """The rules a verdict is booked on, linked; and how many the case cites in all when
    that is more (a property cites every rule it can speak of, RUN-17)."""
    parts = []
    chosen = booked(record)
    for rule in chosen:
        link = rule_link(rule)
        parts.append(f"[{rule}]({link})" if markdown and link else rule)
    cited = len(record.get("rules", ()))
    if record.get("blamed") and record.get("verdict") in BAD_VERDICTS:
        more = (" (the rules whose decision differs between the reference's answer and the "
                f"implementation's, of the {cited} it cites)")
    else:
        more = (f" (of the {cited} it cites: the ones this case exercised, claimed at its "
                "release)" if cited > len(chosen) else "")
    return ", ".join(parts) + more


def _why(record: Mapping[str, Any]) -> list[str]:
    """EXPLAIN-4: one line per trace of the reference's reasoning for the case."""
    from numaspec.protocols.explain import summarize

    return [summarize(t) for t in record.get("explain") or () if isinstance(t, dict)]


def _expectation_text(record: Mapping[str, Any]) -> str:
    entry = record.get("expectation")
    if not isinstance(entry, dict):
        return ""
    return f"{entry.get('reason', '')} ({entry.get('link', '')})".strip()


def terminal_summary(header: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
                     footer: Mapping[str, Any], *, rules: bool = True,
                     max_failures: int = 15) -> list[str]:
    head = _headline(header, records, footer)
    lines = ["", "numaspec conformance: " + head[0], *("  " + line for line in head[1:])]
    if rules and records:
        lines += ["", f"{'rule':<10} {'reached':>8} {'passed':>6} {'failed':>6} "
                      f"{'xfailed':>7} {'skipped':>7} {'not exercised':>13}  "
                      "first counterexample"]
        for row in rule_rows(records, claimed_only=True):
            lines.append(f"{row['rule']:<10} {row['cases']:>8,} {row['passed']:>6} "
                         f"{row['failed']:>6} {row['xfailed']:>7} {row['skipped']:>7} "
                         f"{row['not-exercised']:>13}  {row['first'][:90]}")
        lines += [f"  {line}" for line in unjudged_rules(header, records)]
    drawn = drawn_lines(header, records)
    if drawn:
        lines += ["", *drawn]
    met = _divergences_met(records)
    if met:
        lines += ["", "Known divergences met (RUN-5: the manifest's entries by input class; "
                      "each property explored on past them):"]
        lines += [f"  {line}" for line in met]
    bad = [r for r in records if r["verdict"] in BAD_VERDICTS]
    if bad:
        lines += ["", f"Failures ({len(bad)}; `numaspec replay REPORT --id ID --impl ...` "
                      "re-runs one):"]
        for record in bad[:max_failures]:
            message = str(record.get("message", "")).strip().splitlines() or [""]
            lines.append(f"  {record['id']} [{record['verdict']}]{_release(record)} "
                         f"{message[0]}")
            # never cut: a failure's own lines whole, the first few of them
            lines += [f"      {line}" for line in message[1:_MESSAGE_LINES]]
            if len(message) > _MESSAGE_LINES:
                lines.append(f"      … {len(message) - _MESSAGE_LINES} more lines in the "
                             "report")
            if record.get("description"):
                lines.append(f"      what:  {_first_line(str(record['description']), 160)}")
            if record.get("rules"):
                lines.append(f"      rules: {_rules_text(record, markdown=False)}")
            if _expectation_text(record):
                lines.append(f"      expected to fail: {_expectation_text(record)}")
            case = _case_json(record, 1_000)
            if case:
                lines.append(f"      case:  {case}")
            for why in _why(record)[:4]:
                lines.append(f"      why:   {_first_line(why, 220)}")
        if len(bad) > max_failures:
            lines.append(f"  … and {len(bad) - max_failures} more in the report")
    return lines


def _divergences_met(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per finding of an entry by input class: the vectors it covered, and the cases each
    property set aside."""
    vectors: Counter[str] = Counter()
    properties: dict[str, list[str]] = defaultdict(list)
    for record in records:
        entry = record.get("expectation")
        if isinstance(entry, dict) and entry.get("finding") and record["verdict"] == "xfailed":
            vectors[str(entry["finding"])] += 1
        for seen in record.get("divergences") or ():
            properties[str(seen["finding"])].append(f"{record['id']} {seen['cases']}")
    lines = []
    for finding in sorted(set(vectors) | set(properties)):
        parts = [f"{vectors[finding]} vectors"] if vectors[finding] else []
        if properties[finding]:
            parts.append("cases set aside by " + ", ".join(properties[finding]))
        lines.append(f"{finding}: " + "; ".join(parts))
    return lines


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_summary(header: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
                     footer: Mapping[str, Any]) -> str:
    """For ``$GITHUB_STEP_SUMMARY`` and pull requests: the headline, then one row per rule."""
    head = _headline(header, records, footer)
    out = [f"# numaspec conformance: {_md(head[0])}", "",
           *(f"- {_md(line)}" for line in head[1:]), "",
           f"numaspec {header.get('tool_version', '?')}, suite {header.get('suite_version', '?')},"
           f" protocol {header.get('protocol_version', '?')}, started {header.get('started', '?')}",
           "", "| rule | reached | passed | failed | xfailed | skipped | not exercised "
           "| not claimed | first counterexample |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for row in rule_rows(records, claimed_only=True):
        link = rule_link(row["rule"])
        rule = f"[{row['rule']}]({link})" if link else row["rule"]
        out.append(f"| {rule} | {row['cases']} | {row['passed']} | {row['failed']} | "
                   f"{row['xfailed']} | {row['skipped']} | {row['not-exercised']} | "
                   f"{row['not-claimed']} | {_md(row['first'])} |")
    out += ["", *(f"- {_md(line)}" for line in unjudged_rules(header, records))]
    drawn = drawn_lines(header, records)
    if drawn:
        out += ["", _md(" ".join(line.strip() for line in drawn))]
    met = _divergences_met(records)
    if met:
        out += ["", "## Known divergences met", "",
                "The manifest's entries by input class (RUN-5); each property explored on "
                "past the cases it set aside.", ""]
        out += [f"- {_md(line)}" for line in met]
    bad = [r for r in records if r["verdict"] in BAD_VERDICTS]
    if bad:
        out += ["", f"## Failures ({len(bad)})", "",
                f"Re-run one with `numaspec replay REPORT --id ID --impl "
                f"{_md(str(header.get('impl', 'IMPL')))}`.", ""]
        for record in bad[:_DETAILED]:
            version = record.get("kubelet_version") if record.get("kind") == "vector" else ""
            out += [f"### `{record['id']}` ({record['verdict']}"
                    + (f", kubelet {version}" if version else "") + ")", ""]
            if record.get("description"):
                out += [_md(str(record["description"])), ""]
            if record.get("rules"):
                out += [f"Rules: {_rules_text(record, markdown=True)}", ""]
            if _expectation_text(record):
                out += [f"Expected to fail: {_md(_expectation_text(record))}", ""]
            case = _case_json(record, 4000)
            if case:
                out += ["```json", case, "```", ""]
            why = _why(record)
            if why:
                out += ["Why the reference answers as it does (`numaspec replay --explain` "
                        "prints the whole trace):", ""]
                out += [f"- {_md(line)}" for line in why[:20]] + [""]
            message = str(record.get("message", ""))
            if message:
                out += ["```text", message[:4000], "```", ""]
        if len(bad) > _DETAILED:
            out.append(f"… and {len(bad) - _DETAILED} more, each in report.jsonl")
    skipped = [r for r in records if r["verdict"] == "skipped"]
    if skipped:
        out += ["", f"## Skipped ({len(skipped)})", ""]
        out += [f"- `{r['id']}`{_release(r)} ({r.get('skip_source', '?')}): "
                f"{_md(r.get('message', ''))}"
                + (f" ({r['issue_url']})" if r.get("issue_url") else "")
                for r in skipped[:_LISTED]]
        if len(skipped) > _LISTED:
            out.append(f"- … and {len(skipped) - _LISTED} more, each in report.jsonl")
    return "\n".join(out) + "\n"


_LISTED = 200  # skipped cases listed by name in the Markdown summary
_DETAILED = 50  # failures shown whole in the Markdown summary


def junit_xml(header: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
              footer: Mapping[str, Any]) -> str:
    """One ``testcase`` per case; classname ``numaspec.<op>.<kind>``."""
    counts = _counts(records)
    total = sum(float(r.get("duration", 0.0)) for r in records)
    suite = ET.Element("testsuite", {
        "time": f"{total:.3f}",
        "name": f"numaspec conformance: {(header.get('implementation') or {}).get('name', '?')}",
        "tests": str(len(records)),
        "failures": str(counts["failed"] + counts["xpassed"]),
        "errors": str(sum(counts[v] for v in ("errored", "crashed", "timeout", "protocol-error",
                                                "not-run"))),
        "skipped": str(counts["skipped"] + counts["xfailed"]),
        "timestamp": str(header.get("started", "")),
    })
    props = ET.SubElement(suite, "properties")
    for key in ("tool_version", "suite_version", "protocol_version", "impl"):
        ET.SubElement(props, "property", {"name": key, "value": str(header.get(key, ""))})
    for record in records:
        case = ET.SubElement(suite, "testcase", {
            "classname": f"numaspec.{record.get('op', '?')}.{record.get('kind', '?')}",
            "name": str(record["id"]), "time": f"{float(record.get('duration', 0.0)):.3f}"})
        properties = [ET.Element("property", {"name": "rules",
                                              "value": " ".join(booked(record))})]
        if record.get("kubelet_version"):
            properties.append(ET.Element("property", {
                "name": "kubelet_version", "value": str(record["kubelet_version"])}))
        if record.get("description"):
            properties.append(ET.Element("property", {
                "name": "description", "value": str(record["description"])}))
        ET.SubElement(case, "properties").extend(properties)
        verdict, message = record["verdict"], str(record.get("message", ""))
        if verdict in ("failed", "xpassed"):
            detail = [message]
            case_json = _case_json(record, 20_000)
            if case_json:
                detail.append(f"case: {case_json}")
            if record.get("rules"):
                detail.append(f"rules: {_rules_text(record, markdown=False)}")
            ET.SubElement(case, "failure", {"type": verdict, "message": _first_line(message)}
                          ).text = "\n".join(detail)
        elif verdict in BAD_VERDICTS:
            ET.SubElement(case, "error", {"type": verdict, "message": _first_line(message)}
                          ).text = "\n".join(filter(None, [message, record.get("offending", "")]))
        elif verdict in ("skipped", "xfailed"):
            link = f" ({record['issue_url']})" if record.get("issue_url") else ""
            ET.SubElement(case, "skipped", {"message": f"{verdict}: {_first_line(message)}{link}"})
        if record.get("stderr"):
            # The implementation's stderr while the case ran: its own output, for the CI page.
            ET.SubElement(case, "system-out").text = str(record["stderr"])
    if footer.get("stderr_tail"):
        ET.SubElement(suite, "system-out").text = str(footer["stderr_tail"])
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


class Progress:
    """RUN-6: a one-line progress bar on a terminal, shown once a run passes two seconds."""

    def __init__(self, total: int, stream: IO[str] | None = None, *, after: float = 2.0,
                 enabled: bool | None = None) -> None:
        self.total = max(total, 1)
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.start = time.monotonic()
        self.after = after
        self.last = 0.0
        self.shown = False

    def update(self, done: int, failed: int, label: str = "") -> None:
        now = time.monotonic()
        if not self.enabled or now - self.start < self.after or now - self.last < 0.1:
            return
        self.last = now
        width = 30
        filled = int(width * min(done, self.total) / self.total)
        self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} "
                          f"({failed} failing) {label[:40]:<40}")
        self.stream.flush()
        self.shown = True

    def finish(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()
