"""Expected divergences by input class (RUN-5): a known finding, matched case by case.

A manifest entry of the form ``{"finding": "KATALYST-1", "match": {"policy": ""}, ...}`` says
that where a case has these facts, the implementation answers otherwise than kubelet, and why.
It is matched against each disagreement, not against a whole property: a vector that fails
inside the class is ``xfailed``; a property that meets a case inside the class sets that case
aside and goes on exploring at random, so that a new divergence, outside every class, still
fails it; and ``numaspec differential`` books each disagreement on the class it falls in, or
reports it unexplained.  One matcher serves the three.

The facts of a case are computed from the case, the reference's answer (``expected``) and the
implementation's (``actual``), all as the protocol writes them (:func:`facts`; the names are
:data:`FACTS`).  A ``match`` names facts and the value each must have (or a list of values, any
of which will do); every fact it names must match.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import attrs

from numaspec.conformance.cases.judges import JUDGES

__all__ = ["COMMON_FACTS", "FACTS", "Divergence", "Seen", "expecting", "facts", "known",
           "matches"]

#: The facts of every operation's cases a ``match`` may name, with what each is; each
#: operation's judge adds its own (``Judge.fact_names``).
COMMON_FACTS: Mapping[str, str] = {
    "op": "the operation: merge, predict, allocate or cpus",
    "kubelet_version": "the case's kubelet release, as a minor (\"1.30\")",
    "policy": "the Topology Manager policy (a merge case's, or the predict node's)",
    "expected.kind": "the reference's error kind, or null when it answers",
    "actual.kind": "the implementation's error kind, or null when it answers",
    "actual.errored": "the implementation answered errored: the first word of its message "
                      "(\"nondeterministic\"), null otherwise",
}


def _gather_facts() -> Mapping[str, str]:
    found = dict(COMMON_FACTS)
    for judge in JUDGES.values():
        twice = sorted(set(found) & set(judge.fact_names))
        if twice:
            raise RuntimeError(f"the {judge.op} judge names facts named already: {twice}")
        found.update(judge.fact_names)
    return MappingProxyType(found)


#: Each fact a ``match`` may name, with what it is.
FACTS = _gather_facts()


@attrs.frozen
class Divergence:
    """One manifest entry of the class form: where ``match`` holds, ``finding`` explains the
    implementation's answer.  ``property`` restricts it to one property (None: every case)."""

    finding: str
    match: Mapping[str, Any]
    reason: str
    link: str
    property: str | None = None
    #: whose behaviour it is: the implementation's, kubelet's, or numaspec's model (RUN-5)
    owner: str = "implementation"

    def applies_to(self, case_id: str, kind: str) -> bool:
        return self.property is None or (kind == "property" and self.property == case_id) \
            or (kind != "property" and self.property == "vectors")


def _kind(answer: Any) -> str | None:
    if isinstance(answer, Mapping) and isinstance(answer.get("error"), Mapping):
        kind = answer["error"].get("kind")
        return kind if isinstance(kind, str) else None
    return None


def facts(op: str, case: Any, expected: Any, actual: Any) -> dict[str, Any]:
    """The facts of a case and its two answers, by name (:data:`FACTS`): every operation's,
    and its judge's own.  ``actual`` may be ``{"errored": message}`` for an implementation
    that answered errored."""
    case = case if isinstance(case, Mapping) else {}
    found: dict[str, Any] = {"op": op, "expected.kind": _kind(expected),
                             "actual.kind": _kind(actual), "actual.errored": None}
    if isinstance(actual, Mapping) and isinstance(actual.get("errored"), str):
        found["actual.errored"] = (actual["errored"].split(":", 1)[0].split() or [""])[0]
    judge = JUDGES.get(op)
    if judge is not None:
        found.update(judge.facts(case, expected, actual))
    return found


def matches(match: Mapping[str, Any], found: Mapping[str, Any]) -> bool:
    """Whether every fact ``match`` names has its value (or one of its listed values)."""
    for name, wanted in match.items():
        value = found.get(name)
        if isinstance(wanted, list):
            if value not in wanted:
                return False
        elif value != wanted:
            return False
    return True


# --- the divergences a property is run under ------------------------------------------------


@attrs.define
class Seen:
    """The cases a property set aside as known divergences, per finding (the first case)."""

    divergences: tuple[Divergence, ...]
    found: dict[str, tuple[int, Any]] = attrs.field(factory=dict)

    def add(self, divergence: Divergence, case: Any) -> None:
        count, first = self.found.get(divergence.finding, (0, case))
        self.found[divergence.finding] = (count + 1, first)


_ACTIVE: contextvars.ContextVar[Seen | None] = contextvars.ContextVar("divergences",
                                                                        default=None)


@contextlib.contextmanager
def expecting(divergences: Sequence[Divergence]) -> Iterator[Seen]:
    """Run a property under these known divergences; what it set aside is in the result."""
    seen = Seen(tuple(divergences))
    token = _ACTIVE.set(seen)
    try:
        yield seen
    finally:
        _ACTIVE.reset(token)


def known(op: str, case: Any, expected: Any, actual: Any) -> Divergence | None:
    """The known divergence a case of the property being run falls in (recorded as seen), or
    None: a property calls this where its implementation's answer differs from the
    reference's, and sets the case aside when it is known."""
    seen = _ACTIVE.get()
    if seen is None or not seen.divergences:
        return None
    found = facts(op, case, expected, actual)
    for divergence in seen.divergences:
        if matches(divergence.match, found):
            seen.add(divergence, case)
            return divergence
    return None
