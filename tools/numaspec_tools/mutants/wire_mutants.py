"""Deliberately wrong fast readings of a merge request line: the reading property (WIRE-7,
FAST-8) must reject every one.

Each is :func:`numaspec.protocols.merge_wire.read_merge_request` with one step left out or
got wrong the way a hurried optimisation might; ``WIRE_MUTANTS`` maps a name to a function of
its shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from unittest import mock

import numpy as np

from numaspec.protocols import merge_wire as mw
from numaspec.protocols.merge_protocol import MergeRequest
from numaspec.topology.hints import HintArray

__all__ = ["WIRE_MUTANTS"]


def _trusting_colons(line: bytes) -> MergeRequest | None:
    """Takes the typed decoder's word for every key: a repeated key is read as its last
    value instead of being refused (WIRE-3)."""
    try:
        request, _ = mw._request(mw._REQUEST.decode(line))
    except Exception:
        return None
    return request


def _null_as_empty(hints: Any) -> HintArray:
    """Holds a hint without an affinity (no constraint) as the empty word (no node at all)."""
    found = _real_hint_array(hints)
    return HintArray(found.words, np.zeros(len(found), dtype=np.bool_), found.preferred)


_real_hint_array = mw._hint_array


def _patched(name: str, replacement: Any) -> Callable[[bytes], MergeRequest | None]:
    def read(line: bytes) -> MergeRequest | None:
        with mock.patch.object(mw, name, replacement):
            return mw.read_merge_request(line)
    return read


WIRE_MUTANTS: dict[str, Callable[[bytes], MergeRequest | None]] = {
    "trusting-colons": _trusting_colons,
    "null-as-empty": _patched("_hint_array", _null_as_empty),
}
