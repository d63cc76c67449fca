"""The conformance suite as pytest tests: one test per property and one per spec vector.

Run it with ``numaspec conformance --impl module:object`` or
``pytest --pyargs numaspec.conformance.suite --numaspec-impl module:object``.
"""

from __future__ import annotations

from typing import Any

import pytest

from numaspec.conformance.properties import PROPERTIES, Property, answers_agree, fit_to
from numaspec.conformance.vectors import Vector, load_vectors

_VECTORS = load_vectors()


@pytest.mark.parametrize("prop", list(PROPERTIES.values()), ids=lambda p: p.id)
def test_property(prop: Property, numaspec_impl: Any, record_property: Any) -> None:
    record_property("numaspec_rules", " ".join(prop.rules))
    if prop.requires is not None and not hasattr(numaspec_impl, prop.requires):
        pytest.skip(f"{numaspec_impl.name} does not offer the {prop.requires!r} capability")
    prop.check(numaspec_impl)


@pytest.mark.parametrize("vector", _VECTORS, ids=lambda v: v.id)
def test_vector(vector: Vector, numaspec_impl: Any, record_property: Any) -> None:
    record_property("numaspec_rules", " ".join(vector.rules))
    request = vector.request
    if fit_to(request, numaspec_impl) != request:
        pytest.skip(f"{numaspec_impl.name} does not model kubelet {request.version}")
    actual = numaspec_impl.merge(request)
    assert answers_agree(request, vector.expected, actual), (
        f"{vector.id} ({vector.description}): expected {vector.expected}, got {actual}")
