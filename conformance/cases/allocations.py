"""Judging an ``allocate`` answer (spec chapter ``dra.md``, DRA-2, DRA-8, DRA-9, DRA-10).

The case's features (or its forced ``variant``) choose the allocator that answers (DRA-8).
The stable variant, and every variant until 1.35, searches a node's pools in Go map order,
which is not defined (DRA-2): such an answer is right when it is the reference's answer under
some order of the node's pools.  From 1.36 the incubating and experimental variants sort pools
and slices, and are judged under that order.  An answer that names the variant that gave it
is judged as that variant's, when that variant can answer the case: a scheduler run with
``EnableAllocators`` may run another variant than its features choose (from 1.35), never one
that lacks a feature the case enables, nor another than the case forces.
"""

from __future__ import annotations

import json
from typing import Any

from numaspec.errors import NumaspecError
from numaspec.protocols.allocate_protocol import (
    AllocateCase,
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


def _variant_problem(case: AllocateCase, said: str) -> str | None:
    """DRA-8: why the variant an answer names cannot have answered the case, or None."""
    from numaspec.dra.variants import VARIANTS, supported

    chosen = case.variant
    if said == chosen:
        return None
    if case.forced is not None:
        return f"answered by the {said} allocator where the case forces {case.forced}"
    if case.minor <= 34 or said not in VARIANTS:
        return (f"answered by the {said!r} allocator where 1.{case.minor} runs {chosen} "
                "for these features")
    missing = sorted(case.features - supported(case.minor, said))
    if missing:
        return (f"answered by the {said} allocator, which does not support "
                f"{', '.join(missing)} (1.{case.minor} runs {chosen} for these features)")
    return None


def allocation_differences(case: Any, expected: Any, actual: Any) -> list[str]:
    """``[]`` when ``actual`` is ``expected`` or an answer the variant that gave it may give
    (another order of the node's pools where its order is not defined); else one line saying
    how it differs."""
    got = _plain(actual)
    said = actual.get("variant") if isinstance(actual, dict) else None
    try:
        decoded: AllocateCase | None = decode_allocate_case(case)
    except NumaspecError:
        decoded = None
    variant = None
    if decoded is not None and isinstance(said, str):
        problem = _variant_problem(decoded, said)
        if problem is not None:
            return [problem]
        variant = said
    if got == _plain(expected) and (decoded is None or variant in (None, decoded.variant)):
        return []
    if isinstance(got, dict) and got.get("message") == TIMED_OUT:
        # DRA-7: the scheduler's Filter timeout, no answer of the search under any order
        return [f"timed out ({TIMED_OUT}) where the reference answers "
                f"{json.dumps(_plain(expected), separators=(',', ':'))[:300]}"]
    if decoded is not None and isinstance(expected, dict) and "error" not in expected:
        try:
            for answer in allocate_answers(decoded, variant):
                if encode_allocation(answer) == got:
                    return []
        except NumaspecError:
            pass
    want = json.dumps(_plain(expected), separators=(",", ":"))
    have = json.dumps(got, separators=(",", ":"))
    extra = f" from the {variant} allocator" if variant not in (None, getattr(
        decoded, "variant", None)) else ""
    return [f"expected {want[:600]} (or the same under another pool order where the order "
            f"is not defined), got {have[:600]}{extra}"]
