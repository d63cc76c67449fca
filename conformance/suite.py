"""The conformance suite as pytest tests: one test per property and one per merge vector.

Run it with ``numaspec conformance --impl module:object`` or
``pytest --pyargs numaspec.conformance.suite --numaspec-impl module:object``.
"""

from __future__ import annotations

from typing import Any

import pytest

from numaspec.conformance.cases.vectors import Vector, merge_vectors
from numaspec.conformance.implementations.adapter import supported_versions
from numaspec.conformance.implementations.claims import claims_of
from numaspec.conformance.properties import PROPERTIES, Property, answers_agree
from numaspec.protocols.merge_protocol import MergeRequest

#: Merge vectors whose case decodes (node and hints vectors, and bad-input merge cases, need
#: an implementation at the JSON level: ``numaspec conformance`` with the adapter protocol).
_VECTORS = merge_vectors()


@pytest.mark.parametrize("prop", list(PROPERTIES.values()), ids=lambda p: p.id)
def test_property(prop: Property, numaspec_impl: Any, record_property: Any) -> None:
    record_property("numaspec_rules", " ".join(prop.rules))
    reason = prop.applies_to(numaspec_impl)
    if reason is not None:
        pytest.skip(reason)
    unclaimed = prop.outside_claims(numaspec_impl)
    if unclaimed is not None:
        pytest.skip(f"not claimed: {unclaimed}")
    if prop.requires is not None and not hasattr(numaspec_impl, prop.requires):
        pytest.skip(f"{numaspec_impl.name} does not offer the {prop.requires!r} capability")
    prop.check(numaspec_impl)


@pytest.mark.parametrize(("vector", "request_", "expected"), _VECTORS,
                         ids=[v.id for v, _, _ in _VECTORS])
def test_vector(vector: Vector, request_: MergeRequest, expected: Any, numaspec_impl: Any,
                record_property: Any) -> None:
    record_property("numaspec_rules", " ".join(vector.rules))
    if request_.version not in supported_versions(numaspec_impl):
        pytest.skip(f"{numaspec_impl.name} does not model kubelet {request_.version}")
    unclaimed = claims_of(numaspec_impl).outside("merge", vector.case, vector.expected,
                                                 vector.rules)
    if unclaimed is not None:
        pytest.skip(f"not claimed: {unclaimed}")
    actual = numaspec_impl.merge(request_)
    assert answers_agree(request_, expected, actual), (
        f"{vector.id} ({vector.description}): expected {expected}, got {actual}")
