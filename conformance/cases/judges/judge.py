"""What the suite knows of one operation (PROTO-3; the protocol's facts are the reference's
row, :mod:`numaspec.protocols.operations`): how an answer is held to the expected one, what a
vector's case and expected answer must look like, the channel the properties send its cases
through, the facts of its cases a manifest may match on (RUN-5), and the random cases
``numaspec differential`` draws of it and how it shrinks them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

__all__ = ["Draw", "Judge", "minor_of"]

#: ``(case, expected, actual)`` -> each difference in a line (``[]``: they agree)
Compare = Callable[[Any, Any, Any], list[str]]
#: ``(value, where)`` -> None, or :class:`~numaspec.errors.InvalidFieldError` naming ``where``
Check = Callable[[Any, str], None]


#: ``(case, expected, actual)`` -> the facts of a case and its two answers that are the
#: operation's own (RUN-5), by name; the answers as the protocol writes them, ``actual``
#: possibly ``{"errored": message}``
Facts = Callable[[Mapping[str, Any], Any, Any], dict[str, Any]]


def _anything(value: Any, where: str) -> None:
    """No shape asked beyond JSON (a merge case is decoded when it is judged)."""


def _no_facts(_case: Mapping[str, Any], _expected: Any, _actual: Any) -> dict[str, Any]:
    """No facts beyond every operation's."""
    return {}


def minor_of(version: Any) -> str | None:
    """A kubelet version string as its minor (``"v1.30.2"`` -> ``"1.30"``), or None."""
    if not isinstance(version, str):
        return None
    parts = version.strip().lstrip("v").split(".")
    return f"1.{parts[1]}" if len(parts) >= 2 and parts[0] == "1" and parts[1].isdigit() \
        else None


@attrs.frozen
class Draw:
    """A shape of random cases of the operation, ``numaspec differential --shape NAME``.  Its
    functions are named ``module:function``, imported when first asked
    (:func:`numaspec.protocols.operations.resolve`)."""

    name: str
    #: ``module:function(shape, seed, index, versions, features)`` -> case ``index`` of
    #: ``seed`` at one of ``versions`` (``shape``: the campaign's
    #: :class:`~numaspec.conformance.properties.random_cases.CaseShape`, with its options;
    #: ``features``: the allocator features a case may enable, None: every one)
    case_at: str
    #: cases drawn and sent at once
    batch: int = 500
    #: ``module:function(declared, who)`` -> the releases of ``declared`` it draws at, or an
    #: :class:`~numaspec.errors.InvalidFieldError` saying why none; "": every one declared
    versions: str = ""


@attrs.frozen
class Judge:
    """One operation's judge.  Each module of this package lists its own in ``JUDGES``; the
    package gathers them, one per operation of the protocol."""

    #: the operation (a name of :data:`numaspec.protocols.operations.OPERATIONS`)
    op: str
    #: the judge proper
    compare: Compare
    #: a vector's ``case`` (the vector loader's check; ``where`` names it)
    case: Check = _anything
    #: a vector's ``expected`` answer and each of its ``expected_by_release``
    answer: Check = _anything
    #: the method of an implementation the properties send one case through (``impl.cpus``),
    #: bound by the runner for an adapter that serves the operation; None: no property sends
    #: it one case at a time (the merge has its own channel, ``merge``)
    channel: str | None = None
    #: RUN-5: the facts of its cases that a manifest's ``match`` may name beyond every
    #: operation's (:data:`numaspec.conformance.cases.divergences.FACTS`), with what each is
    fact_names: Mapping[str, str] = attrs.field(factory=dict)
    #: computes them, and the shared ``kubelet_version`` and ``policy`` where its case has them
    facts: Facts = _no_facts
    #: the shapes of random cases ``numaspec differential`` draws of it (none: it draws none)
    draws: tuple[Draw, ...] = ()
    #: ``module:function(case)`` -> each case one step smaller, the steps of the greedy shrink
    #: of a disagreement the differential found ("" where it draws none)
    smaller: str = ""
    #: times the differential asks a case before the disagreement counts (DRA-2: an
    #: allocation may depend on the order of the pools)
    asks: int = 1
    #: whether a drawn case the reference refuses is left out as unclaimed (drawn cases are
    #: meant to be answered; a refusal says the draw strayed outside what is modelled)
    refusals_unclaimed: bool = False
