"""The reference passes its own suite: every property and every vector."""

from __future__ import annotations

import pytest

from numaspec.conformance.adapter import reference
from numaspec.conformance.properties import PROPERTIES, answers_agree
from numaspec.conformance.vectors import Vector, load_vectors


@pytest.mark.parametrize("prop_id", sorted(PROPERTIES))
def test_reference_satisfies(prop_id: str) -> None:
    PROPERTIES[prop_id].check(reference)


@pytest.mark.parametrize("vector", load_vectors(), ids=lambda v: v.id)
def test_reference_passes_vector(vector: Vector) -> None:
    assert answers_agree(vector.request, vector.expected, reference.merge(vector.request))
