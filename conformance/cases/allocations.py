"""Judging an ``allocate`` answer (spec chapter ``dra.md``, DRA-2, DRA-9, DRA-10).

Upstream's stable variant searches a node's pools in Go map order, which is not defined
(DRA-2): an answer is right when it is the reference's answer under some order of the node's
pools.  From 1.36 the incubating and experimental variants sort pools and slices (DRA-8): an
answer that says it comes from one of them is judged under that order.
"""

from __future__ import annotations

import json
from typing import Any

from numaspec.errors import NumaspecError
from numaspec.protocols.allocate_protocol import (
    allocate_answers,
    decode_allocate_case,
    encode_allocation,
)

__all__ = ["TIMED_OUT", "allocation_differences"]

#: DRA-7: the scheduler's words for a node whose allocation passed its Filter timeout.
TIMED_OUT = "timed out trying to allocate devices"


def _plain(answer: Any) -> Any:
    if isinstance(answer, dict):
        return {k: v for k, v in answer.items() if k != "variant"}
    return answer


def allocation_differences(case: Any, expected: Any, actual: Any) -> list[str]:
    """``[]`` when ``actual`` is ``expected`` or the reference's answer under another order
    of the node's pools; else one line saying how it differs from ``expected``."""
    got = _plain(actual)
    variant = actual.get("variant", "stable") if isinstance(actual, dict) else "stable"
    if got == _plain(expected) and variant not in ("incubating", "experimental"):
        return []
    if isinstance(got, dict) and got.get("message") == TIMED_OUT:
        # DRA-7: the scheduler's Filter timeout, no answer of the search under any order
        return [f"timed out ({TIMED_OUT}) where the reference answers "
                f"{json.dumps(_plain(expected), separators=(',', ':'))[:300]}"]
    if isinstance(expected, dict) and "error" not in expected:
        try:
            for answer in allocate_answers(decode_allocate_case(case), str(variant)):
                if encode_allocation(answer) == got:
                    return []
        except NumaspecError:
            pass
    want = json.dumps(_plain(expected), separators=(",", ":"))
    have = json.dumps(got, separators=(",", ":"))
    return [f"expected {want[:600]} (or the same under another pool order), got {have[:600]}"]
