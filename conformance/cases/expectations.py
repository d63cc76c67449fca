"""The expectations manifest: an implementation's declared, known deviations (RUN-5).

A JSON file (schema ``spec/schemas/expectations.schema.json``)::

    {"implementation": "kubelet-1.30.14",
     "expectations": [
       {"vector": "node-seed004-pods-4-7-1.30", "outcome": "fail",
        "reason": "kubelet 1.30 is nondeterministic once groups overlap",
        "link": "spec/findings.md#f-mem-overlap"},
       {"rule": "MEM-7", "outcome": "fail", "reason": "...", "link": "..."},
       {"vector": "some-id", "outcome": "skip", "reason": "hangs the adapter", "link": "..."}]}

* ``fail`` by vector (or property) ID: that case is expected to fail; it is reported as
  ``xfailed``, and if it passes, as ``xpassed``, which fails the run.  A vector's bare ID
  covers its instance at every release (RUN-10); ``<id>@1.N`` covers the one at 1.N.
* ``fail`` by rule ID: every case citing the rule may fail; if none of them fails any more,
  the entry is stale, which fails the run.
* ``skip``: the case (or every case citing the rule) is not run; it is counted and shown as
  skipped by the manifest.  Meant for cases that hang or crash the implementation.

An entry naming an ID no case has, or a rule no case cites, is an error: a manifest never
silently stops meaning something.  :func:`regenerate` writes a manifest from a report.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

from numaspec.errors import InvalidFieldError, MalformedJSONError

__all__ = ["FAILING", "Expectation", "Manifest", "load_manifest", "regenerate"]

#: Verdicts that count as a failure of the case (what a ``fail`` expectation covers).
FAILING = frozenset({"failed", "errored", "crashed", "timeout", "protocol-error", "not-run"})


@attrs.frozen
class Expectation:
    outcome: Literal["fail", "skip"]
    reason: str
    link: str
    vector: str | None = None
    rule: str | None = None

    @property
    def target(self) -> str:
        return self.vector if self.vector is not None else f"rule {self.rule}"

    def covers(self, case_id: str, rules: Sequence[str], vector: str = "") -> bool:
        """Whether the entry names the case, its vector (every instance of it: RUN-10), or a
        rule it cites."""
        if self.vector is not None:
            return self.vector in (case_id, vector)
        return self.rule is not None and self.rule in rules

    def to_json(self) -> dict[str, str]:
        key = ("vector", self.vector) if self.vector is not None else ("rule", str(self.rule))
        return {key[0]: key[1], "outcome": self.outcome, "reason": self.reason,
                "link": self.link}


@attrs.frozen
class Manifest:
    path: str
    implementation: str
    entries: tuple[Expectation, ...]

    def lookup(self, case_id: str, rules: Sequence[str], outcome: str, *, vector: str = ""
               ) -> Expectation | None:
        """The first entry of ``outcome`` covering the case (``vector``: the ID of the vector
        it is an instance of); the case's own ID first, then its vector's, then a rule's."""
        matching = [e for e in self.entries
                    if e.outcome == outcome and e.covers(case_id, rules, vector)]
        matching.sort(key=lambda e: (e.vector is None, e.vector != case_id))
        return matching[0] if matching else None

    def check_known(self, case_ids: Iterable[str], rules: Iterable[str]) -> None:
        ids, cited = set(case_ids), set(rules)
        for i, entry in enumerate(self.entries):
            where = f"{self.path}: expectations[{i}]"
            if entry.vector is not None and entry.vector not in ids:
                raise InvalidFieldError(f"no case has the ID {entry.vector!r}", where=where)
            if entry.rule is not None and entry.rule not in cited:
                raise InvalidFieldError(f"no case cites the rule {entry.rule!r}", where=where)


def _entry(raw: Any, where: str) -> Expectation:
    if not isinstance(raw, dict):
        raise InvalidFieldError("an expectation is an object", where=where)
    keys = set(raw)
    allowed = {"vector", "rule", "outcome", "reason", "link"}
    if keys - allowed:
        raise InvalidFieldError(f"unknown keys {sorted(keys - allowed)} (allowed: "
                                f"{', '.join(sorted(allowed))})", where=where)
    if ("vector" in raw) == ("rule" in raw):
        raise InvalidFieldError("name exactly one of 'vector' or 'rule'", where=where)
    for key in ("outcome", "reason", "link", *(k for k in ("vector", "rule") if k in raw)):
        if not isinstance(raw.get(key), str):
            raise InvalidFieldError(f"'{key}' must be a string", where=f"{where}.{key}")
    if raw["outcome"] not in ("fail", "skip"):
        raise InvalidFieldError(f"outcome must be 'fail' or 'skip', not {raw['outcome']!r}",
                                where=f"{where}.outcome")
    if not raw["reason"].strip():
        raise InvalidFieldError("every expectation says why", where=f"{where}.reason")
    return Expectation(raw["outcome"], raw["reason"], raw["link"], raw.get("vector"),
                       raw.get("rule"))


def load_manifest(path: str | Path) -> Manifest:
    """Read and validate a manifest (typed errors naming the file and the entry)."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidFieldError(f"cannot read the manifest: {exc.strerror or exc}",
                                where=name) from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedJSONError(f"not valid JSON: {exc.msg} at line {exc.lineno} column "
                                 f"{exc.colno}", where=name) from None
    if not isinstance(raw, dict) or not isinstance(raw.get("expectations"), list):
        raise InvalidFieldError('a manifest is {"implementation": ..., "expectations": [...]}',
                                where=name)
    entries = tuple(_entry(e, f"{name}: expectations[{i}]")
                    for i, e in enumerate(raw["expectations"]))
    seen: set[tuple[str, str | None, str | None]] = set()
    for i, entry in enumerate(entries):
        key = (entry.outcome, entry.vector, entry.rule)
        if key in seen:
            raise InvalidFieldError(f"{entry.target} is listed twice",
                                    where=f"{name}: expectations[{i}]")
        seen.add(key)
    return Manifest(name, str(raw.get("implementation", "")), entries)


def _still_expected(record: Mapping[str, Any]) -> str | None:
    """The verdict a regenerated manifest must expect for this record, or None: a failing
    verdict, ``xfailed``, or ``skip`` for a case the manifest kept from being sent."""
    verdict = record.get("verdict")
    if verdict == "skipped":
        manifest_skip = (record.get("skip_source") == "manifest"
                         and (record.get("expectation") or {}).get("outcome") == "skip")
        return "skip" if manifest_skip else None
    return str(verdict) if verdict in FAILING or verdict == "xfailed" else None


def regenerate(records: Iterable[Mapping[str, Any]], implementation: str,
               previous: Manifest | None = None) -> dict[str, Any]:
    """RUN-5: a manifest that expects exactly the failures of a report.

    A case that failed, errored or gave a protocol error gets ``fail``; one that crashed or
    timed out gets ``skip`` (it would disturb the run again).  Reasons and links of a
    ``previous`` manifest carry over for the same IDs; new entries get the verdict and the
    message as their reason and an empty link to fill in.  Rule-level entries of ``previous``
    are kept while some case citing the rule still fails.  A vector instance ``<id>@1.N``
    keeps an entry of ``previous`` naming the bare ``<id>`` (once, however many of its
    instances fail); a new entry names the instance.
    """
    entries: list[dict[str, str]] = []
    failing_rules: set[str] = set()
    old: dict[tuple[str | None, str], Expectation] = {
        (e.vector, e.outcome): e for e in (previous.entries if previous else ())}
    for record in records:
        verdict = _still_expected(record)
        if verdict is None:
            continue
        failing_rules.update(record.get("rules", ()))
        if (record.get("expectation") or {}).get("rule"):
            continue  # covered by a rule entry, kept below
        outcome = "skip" if verdict in ("crashed", "timeout", "skip") else "fail"
        kept = old.get((str(record["id"]), outcome)) or old.get(
            (str(record.get("vector") or record["id"]), outcome))
        if kept is not None and kept.to_json() in entries:
            continue
        entries.append(kept.to_json() if kept else {
            "vector": str(record["id"]), "outcome": outcome,
            "reason": f"{verdict}: {str(record.get('message', '')).splitlines()[0][:200]}"
                      if record.get("message") else str(verdict),
            "link": ""})
    for entry in previous.entries if previous else ():
        if entry.rule is not None and entry.rule in failing_rules:
            entries.append(entry.to_json())
    return {"implementation": implementation, "expectations": entries}
