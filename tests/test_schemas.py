"""The JSON Schemas in spec/schemas describe what numaspec reads and writes (WIRE-2, WIRE-3)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from conftest import REPO
from hypothesis import given
from referencing import Registry, Resource

from numaspec.cli import answer_merge_line
from numaspec.conformance.strategies import merge_requests
from numaspec.conformance.vectors import vector_files
from numaspec.wire import MergeRequest, encode_merge_request

SCHEMAS = {p.name: json.loads(p.read_text()) for p in (REPO / "spec" / "schemas").glob("*.json")}
REGISTRY: Registry[Any] = Registry().with_resources(
    (s["$id"], Resource.from_contents(s)) for s in SCHEMAS.values())


def validator(name: str) -> jsonschema.protocols.Validator:
    schema = SCHEMAS[name]
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, registry=REGISTRY)


@pytest.mark.parametrize("text", [text for _, text in vector_files()],
                         ids=[name for name, _ in vector_files()])
def test_vector_files_match_their_schema(text: str) -> None:
    validator("vectors.schema.json").validate(json.loads(text))


@given(merge_requests())
def test_requests_and_answers_match_their_schemas(request: MergeRequest) -> None:
    body = encode_merge_request(request)
    validator("merge-request.schema.json").validate(body)
    validator("merge-response.schema.json").validate(answer_merge_line(json.dumps(body)))


@pytest.mark.parametrize(
    "line", ["{", "[]", '{"numa_nodes": [99], "policy": "x", "providers": []}'])
def test_error_answers_match_the_schema(line: str) -> None:  # WIRE-2
    validator("merge-response.schema.json").validate(answer_merge_line(line))
