"""The expectations manifest: an implementation's declared, known deviations (RUN-5).

A JSON file (schema ``spec/schemas/expectations.schema.json``)::

    {"implementation": "kubelet-1.30.14",
     "expectations": [
       {"vector": "node-seed004-pods-4-7-1.30", "outcome": "fail",
        "reason": "kubelet 1.30 is nondeterministic once groups overlap",
        "link": "spec/conformance/findings.md#f-mem-overlap"},
       {"rule": "MEM-7", "outcome": "fail", "reason": "...", "link": "..."},
       {"vector": "some-id", "outcome": "skip", "reason": "hangs the adapter", "link": "..."}]}

* ``fail`` by vector (or property) ID: that case is expected to fail; it is reported as
  ``xfailed``, and if it passes, as ``xpassed``, which fails the run.  A vector's bare ID
  covers its instance at every release (RUN-10); ``<id>@1.N`` covers the one at 1.N.
* ``fail`` by rule ID: every case citing the rule may fail; if none of them fails any more,
  the entry is stale, which fails the run.
* ``skip``: the case (or every case citing the rule) is not run; it is counted and shown as
  skipped by the manifest.  Meant for cases that hang or crash the implementation.
* ``fail`` by input class: ``{"finding": "KATALYST-1", "match": {"policy": ""}, ...}``: every
  case whose facts match (:mod:`numaspec.conformance.cases.divergences`) may be answered
  otherwise than kubelet does, for the finding's reason.  A vector that fails inside the class
  is ``xfailed``; a property sets such a case aside and goes on exploring, failing on anything
  outside every class; ``numaspec differential`` books each disagreement on its class.  An
  optional ``"property"`` restricts the entry to one property (``"vectors"``: to the
  vectors).

An entry naming an ID no case has, or a rule no case cites, is an error: a manifest never
silently stops meaning something.  :func:`regenerate` writes a manifest from a report.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

from numaspec.conformance.cases.divergences import FACTS, Divergence
from numaspec.errors import InvalidFieldError, MalformedJSONError

__all__ = ["FAILING", "OWNERS", "Expectation", "Manifest", "load_manifest", "regenerate"]

#: Verdicts that count as a failure of the case (what a ``fail`` expectation covers).
FAILING = frozenset({"failed", "errored", "crashed", "timeout", "protocol-error", "not-run"})


#: Whose behaviour a known divergence is (RUN-5, RUN-16): the implementation's own, kubelet's
#: (a gap of an API it reads, a kubelet quirk it inherits), or numaspec's model (the bounds of
#: its node model, its reading of the resource-topology-exporter).
OWNERS = ("implementation", "kubelet", "numaspec")


@attrs.frozen
class Expectation:
    outcome: Literal["fail", "skip"]
    reason: str
    link: str
    vector: str | None = None
    rule: str | None = None
    owner: str = "implementation"

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
        body = {key[0]: key[1], "outcome": self.outcome, "reason": self.reason,
                "link": self.link}
        if self.owner != "implementation":
            body["owner"] = self.owner
        return body


@attrs.frozen
class Manifest:
    path: str
    implementation: str
    entries: tuple[Expectation, ...]
    #: the entries by input class (RUN-5), in the manifest's order
    divergences: tuple[Divergence, ...] = ()

    def divergences_for(self, case_id: str, kind: str) -> tuple[Divergence, ...]:
        """The class entries that apply to a case (a property's own, or the vectors')."""
        return tuple(d for d in self.divergences if d.applies_to(case_id, kind))

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
        for divergence in self.divergences:
            if divergence.property not in (None, "vectors") and divergence.property not in ids:
                raise InvalidFieldError(f"no property has the ID {divergence.property!r}",
                                        where=f"{self.path}: {divergence.finding}")
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
    allowed = {"vector", "rule", "outcome", "reason", "link", "owner"}
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
                       raw.get("rule"), _owner(raw, where))


def _owner(raw: dict[str, Any], where: str) -> str:
    owner = raw.get("owner", "implementation")
    if owner not in OWNERS:
        raise InvalidFieldError(f"owner must be one of {', '.join(OWNERS)}, not {owner!r}",
                                where=f"{where}.owner")
    return str(owner)


def _divergence(raw: dict[str, Any], where: str) -> Divergence:
    """RUN-5: an entry by input class: finding, match, outcome fail, reason, link."""
    allowed = {"finding", "match", "property", "outcome", "reason", "link", "owner"}
    if set(raw) - allowed:
        raise InvalidFieldError(f"unknown keys {sorted(set(raw) - allowed)} in an entry by "
                                f"input class (allowed: {', '.join(sorted(allowed))})",
                                where=where)
    for key in ("finding", "reason", "link"):
        if not isinstance(raw.get(key), str) or (key != "link" and not raw[key].strip()):
            raise InvalidFieldError(f"'{key}' must be a non-empty string", where=f"{where}.{key}")
    if raw.get("outcome", "fail") != "fail":
        raise InvalidFieldError("an entry by input class expects a failure: outcome 'fail'",
                                where=f"{where}.outcome")
    if "property" in raw and not isinstance(raw["property"], str):
        raise InvalidFieldError("'property' is a property ID, or 'vectors'",
                                where=f"{where}.property")
    match = raw["match"]
    if not isinstance(match, dict) or not match:
        raise InvalidFieldError("'match' is an object of fact to value", where=f"{where}.match")
    for fact, value in match.items():
        if fact not in FACTS:
            raise InvalidFieldError(f"no fact {fact!r} (known: {', '.join(sorted(FACTS))})",
                                    where=f"{where}.match")
        values = value if isinstance(value, list) else [value]
        if not all(v is None or isinstance(v, str | bool | int) for v in values):
            raise InvalidFieldError(f"{fact}: a value is a string, a boolean, a number or "
                                    "null, or a list of them", where=f"{where}.match.{fact}")
    return Divergence(raw["finding"], dict(match), raw["reason"], raw["link"],
                      raw.get("property"), _owner(raw, where))


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
    classes = tuple(_divergence(e, f"{name}: expectations[{i}]")
                    for i, e in enumerate(raw["expectations"])
                    if isinstance(e, dict) and "match" in e)
    entries = tuple(_entry(e, f"{name}: expectations[{i}]")
                    for i, e in enumerate(raw["expectations"])
                    if not (isinstance(e, dict) and "match" in e))
    seen: set[tuple[str, str | None, str | None]] = set()
    for i, entry in enumerate(entries):
        key = (entry.outcome, entry.vector, entry.rule)
        if key in seen:
            raise InvalidFieldError(f"{entry.target} is listed twice",
                                    where=f"{name}: expectations[{i}]")
        seen.add(key)
    return Manifest(name, str(raw.get("implementation", "")), entries, classes)


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
    entries: list[dict[str, Any]] = []
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
        if (record.get("expectation") or {}).get("match"):
            continue  # covered by an entry by input class, kept below
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
    for divergence in previous.divergences if previous else ():  # classes carry over
        entries.append({"finding": divergence.finding, "match": dict(divergence.match),
                        **({"property": divergence.property} if divergence.property else {}),
                        "outcome": "fail", "reason": divergence.reason,
                        "link": divergence.link, "owner": divergence.owner})
    return {"implementation": implementation, "expectations": entries}
