"""Spec vectors: language-neutral JSON merge cases with stable IDs and expected answers.

The files live in ``spec/vectors/*.json`` (installed as the package ``numaspec.vectors``);
each holds ``{"vectors": [...]}``, a vector being::

    {"id": "merge-1.24-equal-masks", "description": "...", "rules": ["MERGE-3"],
     "request": {<a merge request>}, "expected": {<a merge response>}}

IDs never change once published; a vector that turns out wrong is fixed, not renamed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from typing import Any

import attrs

from numaspec.bitmask import NumaMask
from numaspec.conformance.adapter import ErrorAnswer, MergeAnswer
from numaspec.errors import InvalidFieldError
from numaspec.hints import TopologyHint
from numaspec.policy import MergeOutcome
from numaspec.wire import MergeRequest, decode_merge_request

__all__ = ["Vector", "decode_answer", "load_vectors", "vector_files"]


@attrs.frozen
class Vector:
    id: str
    description: str
    rules: tuple[str, ...]
    request: MergeRequest
    expected: MergeAnswer
    source: str
    raw: dict[str, Any] = attrs.field(eq=False, repr=False)


def decode_answer(value: Any, where: str) -> MergeAnswer:
    """A merge response in the wire format → an answer."""
    if not isinstance(value, dict):
        raise InvalidFieldError("expected a response object", where=where)
    if "error" in value:
        error = value["error"]
        return ErrorAnswer(str(error["kind"]), str(error.get("message", "")))
    hint = value["hint"]
    affinity = hint["numa_affinity"]
    mask = None if affinity is None else NumaMask.of(affinity, where=f"{where}.hint")
    return MergeOutcome(TopologyHint(mask, bool(hint["preferred"])), bool(value["admit"]))


def vector_files() -> Iterator[tuple[str, str]]:
    """(file name, text) of every vector file, sorted by name."""
    root = resources.files("numaspec.vectors")
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            yield entry.name, entry.read_text(encoding="utf-8")


def load_vectors() -> list[Vector]:
    vectors: list[Vector] = []
    seen: set[str] = set()
    for name, text in vector_files():
        for i, raw in enumerate(json.loads(text)["vectors"]):
            where = f"{name}: vectors[{i}]"
            if raw["id"] in seen:
                raise InvalidFieldError(f"duplicate vector id {raw['id']!r}", where=where)
            seen.add(raw["id"])
            vectors.append(Vector(
                id=raw["id"],
                description=raw.get("description", ""),
                rules=tuple(raw["rules"]),
                request=decode_merge_request(raw["request"]),
                expected=decode_answer(raw["expected"], f"{where}.expected"),
                source=name,
                raw=raw,
            ))
    return vectors
