"""Which rules a verdict is booked on (RUN-17): the rules the case exercised, and only those the
implementation claims at the release it ran.

A vector cites the rules it shows; a property cites every rule it can speak of, which for
P-EQUIVALENCE is twenty-two.  Booking a property's failure on all of them put a red cell under
options and refusals an implementation never claimed, and under rules that do not hold at the
release it declared.  So a verdict is booked on:

* for a vector, its rules that hold at the instance's release;
* for a property that passed, its rules that hold at some release the implementation
  declares;
* for a property that failed, its rules that its counterexample exercised (named in the
  reference's trace of the counterexample, or in the failure's own message), that hold at
  the counterexample's release; when the case names none of them, its rules that hold there;

and in every case only on rules the implementation claims (PROTO-7): a policy's rule when it
claims the policy, an option's rules when it claims the option (with distances for those that
read them), refusals' rules when it claims refusals, a manager's rules when it claims the
manager, numaspec's format rules when it claims the format.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from numaspec.conformance.cases.decisions import CONDITIONAL
from numaspec.conformance.cases.vectors import parse_range
from numaspec.conformance.implementations.claims import FORMAT_RULES, Claims
from numaspec.errors import InvalidFieldError
from numaspec.rules import rules_by_id

__all__ = ["booked_rules", "claims_rule", "exercised_rules", "holds_at", "not_exercised"]

_RULE = re.compile(r"\b([A-Z]+-\d+)\b")
_MINOR = re.compile(r"^v?1\.(\d+)")
_POLICY_OF = {"POLICY-1": "none", "POLICY-2": "best-effort", "POLICY-3": "restricted",
              "POLICY-4": "single-numa-node"}
_MERGING = ("best-effort", "restricted", "single-numa-node")
_CLOSEST = "prefer-closest-numa-nodes"
_MAX = "max-allowable-numa-nodes"
_MANAGER_OF = {"CPU": "cpu", "MEM": "memory", "DEV": "device"}


@functools.cache
def _span(rule: str) -> tuple[int, int] | None:
    found = rules_by_id().get(rule)
    if found is None:
        return None
    try:
        return parse_range(found.meta.get("Holds in", "").split(" ")[0], rule)
    except InvalidFieldError:
        return None


def holds_at(rule: str, minor: int) -> bool:
    """Whether ``rule`` holds in kubelet 1.``minor`` (an unknown rule or range: yes)."""
    span = _span(rule)
    return span is None or span[0] <= minor <= span[1]


def claims_rule(rule: str, claims: Claims, op: str) -> bool:
    """Whether an implementation with ``claims`` claims the part of the semantics ``rule``
    speaks of, for cases of ``op`` (PROTO-7)."""
    if rule in FORMAT_RULES:
        return claims.format
    if op == "merge":
        merge = claims.merge
        any_refusal = merge.refusals is None or bool(merge.refusals)
        any_option = merge.policy_options is None or bool(merge.policy_options)
        closest = merge.claims_option(_CLOSEST) and merge.distances
        needs = {
            "POLICY-5": merge.claims_refusal("unknown-policy"),
            "POLICY-6": any_refusal,
            "OPT-1": any_option,
            "OPT-2": any_option,
            "OPT-3": merge.claims_option(_CLOSEST),
            "OPT-4": merge.claims_option(_MAX),
            "OPT-5": merge.claims_refusal("too-many-numa-nodes") or merge.claims_option(_MAX),
            "OPT-6": closest,
            "MERGE-9": closest,
            "MERGE-12": closest,
            "VER-2": merge.feature_gates,
            "VER-4": any_refusal,
        }
        if rule in _POLICY_OF:
            return merge.claims_policy(_POLICY_OF[rule])
        if rule.startswith(("MERGE-", "HINT-")) and not any(
                merge.claims_policy(p) for p in _MERGING):
            return False  # none merges nothing: the merge's rules are not claimed with it
        return needs.get(rule, True)
    part = claims.predict if op == "predict" else claims.node
    manager = _MANAGER_OF.get(rule.split("-", maxsplit=1)[0])
    if manager is not None and part.managers is not None:
        return manager in part.managers
    if rule in _POLICY_OF and part.policies is not None:
        return _POLICY_OF[rule] in part.policies
    return True


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def exercised_rules(record: Mapping[str, Any]) -> set[str]:
    """The rules a case's record names as at work: in the reference's trace of it
    (``explain``: the rule that kept each candidate, the policy rule that decided, who
    refused and by which rule) and in the failure's own message (a property's assertion
    names the invariant it found broken)."""
    found = {m for text in _strings(record.get("explain") or ()) for m in _RULE.findall(text)}
    found.update(_RULE.findall(str(record.get("message", ""))))
    return found


def _case_minor(op: str, case: Any) -> int | None:
    """The release a case ran at: a merge request's ``kubelet_version``, a session's first
    node's ``kubeletVersion``."""
    version: Any = None
    if isinstance(case, Mapping):
        if op == "merge":
            version = case.get("kubelet_version")
        else:
            for step in case.get("steps") or ():
                if isinstance(step, Mapping) and step.get("op") == "create":
                    version = (step.get("node") or {}).get("kubeletVersion")
                    break
    match = _MINOR.match(version.strip()) if isinstance(version, str) else None
    return int(match.group(1)) if match else None


def booked_rules(record: Mapping[str, Any], claims: Claims, declared: Iterable[str]
                 ) -> list[str]:
    """The rules a case's verdict is booked on (see the module docstring); ``declared``: the
    kubelet releases the implementation declares for the case's operation (``"1.30"``)."""
    rules: Sequence[str] = record.get("rules") or ()
    op = str(record.get("op", "merge"))
    if record.get("verdict") == "skipped" and record.get("skip_source") in (
            "undeclared", "not-claimed"):
        return list(rules)  # not a verdict on the implementation: what the run left out
    claimed = [r for r in rules if claims_rule(r, claims, op)]
    failing = record.get("verdict") not in ("passed", "skipped", "refused")
    blamed = record.get("blamed")
    if record.get("kind") == "vector":
        minor = _case_minor("merge", {"kubelet_version": record.get("kubelet_version")})
        if failing and blamed:  # RUN-17: the rules whose decision differs
            return [str(r) for r in blamed if claims_rule(str(r), claims, op)
                    and (minor is None or holds_at(str(r), minor))] or list(map(str, blamed))
        return [r for r in claimed if minor is None or holds_at(r, minor)]
    minors = [int(m.group(1)) for v in declared if (m := _MINOR.match(v))]
    minor = _case_minor(op, record.get("counterexample")) if failing else None
    if failing and blamed:
        # RUN-17: the rules whose decision differs, claimed and holding where it ran
        return [str(r) for r in blamed if claims_rule(str(r), claims, op)
                and (minor is None or holds_at(str(r), minor))] or list(map(str, blamed))
    if minor is None:
        held = [r for r in claimed if not minors or any(holds_at(r, m) for m in minors)]
        return [r for r in held if r in reaching(record)] if "reached" in record else held
    there = [r for r in claimed if holds_at(r, minor)]
    exercised = exercised_rules(record)
    return [r for r in there if r in exercised] or there


class _Reaching:
    """The rules a record's judged cases reached (RUN-17): those its ``reached`` tally names,
    and every rule whose behaviour any merge goes through."""

    def __init__(self, record: Mapping[str, Any]) -> None:
        self.reached = record.get("reached") or {}

    def __contains__(self, rule: object) -> bool:
        return rule in self.reached or rule not in CONDITIONAL


def reaching(record: Mapping[str, Any]) -> _Reaching:
    return _Reaching(record)


def not_exercised(record: Mapping[str, Any], claims: Claims, declared: Iterable[str]
                  ) -> list[str]:
    """RUN-17: the claimed rules a passed case cites that none of its judged cases reached
    (shown apart: *not exercised*, never *passed*)."""
    if record.get("verdict") != "passed" or "reached" not in record:
        return []
    held = booked_rules({k: v for k, v in record.items() if k != "reached"}, claims, declared)
    return [r for r in held if r not in reaching(record)]
