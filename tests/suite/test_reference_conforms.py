"""The reference passes its own suite: every property and every vector."""

from __future__ import annotations

import pytest

from numaspec.conformance.cases.judges import compare
from numaspec.conformance.cases.vectors import Vector, load_vectors, merge_vectors
from numaspec.conformance.implementations.adapter import MergeAnswer, reference
from numaspec.conformance.properties import PROPERTIES, answers_agree
from numaspec.protocols.adapter_protocol import reference_result
from numaspec.protocols.merge_protocol import MergeRequest

MERGE = merge_vectors()


#: predict asks a scheduler; the reference is the node it is judged by (PRED-1), so P-PREDICT
#: runs against schedulers (tests/node/test_predict.py,
#: tests/upstream/peers/test_scheduler_plugins.py).
NOT_THE_REFERENCES = {"P-PREDICT"}


@pytest.mark.parametrize("prop_id", sorted(set(PROPERTIES) - NOT_THE_REFERENCES))
def test_reference_satisfies(prop_id: str) -> None:
    PROPERTIES[prop_id].check(reference)


@pytest.mark.parametrize(("vector", "request_", "expected"), MERGE,
                         ids=[v.id for v, _, _ in MERGE])
def test_reference_passes_merge_vector(vector: Vector, request_: MergeRequest,
                                       expected: MergeAnswer) -> None:
    """The in-process path (``numaspec.conformance.suite``) on the decoded merge vectors."""
    assert answers_agree(request_, expected, reference.merge(request_)), vector.id


@pytest.mark.parametrize("vector", load_vectors(), ids=lambda v: v.id)
def test_reference_passes_vector(vector: Vector) -> None:
    """The JSON path: every vector, every op."""
    actual = reference_result(vector.op, vector.case)
    assert compare(vector.op, vector.case, vector.expected, actual) == []
