"""What the suite knows of one operation (PROTO-3; the protocol's facts are the reference's
row, :mod:`numaspec.protocols.operations`): how an answer is held to the expected one, what a
vector's case and expected answer must look like, and the channel the properties send its
cases through."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

__all__ = ["Judge"]

#: ``(case, expected, actual)`` -> each difference in a line (``[]``: they agree)
Compare = Callable[[Any, Any, Any], list[str]]
#: ``(value, where)`` -> None, or :class:`~numaspec.errors.InvalidFieldError` naming ``where``
Check = Callable[[Any, str], None]


def _anything(value: Any, where: str) -> None:
    """No shape asked beyond JSON (a merge case is decoded when it is judged)."""


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
