"""Strict mode (PROTO-6): every message, both ways, checked against the protocol's schemas.

The schemas are ``spec/schemas/*.schema.json`` (installed as ``numaspec.schemas``).  A request
of the runner's that breaks them is numaspec's own bug and raises; an answer that breaks them
is the implementation's protocol error, described in one line with the JSON path.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
from referencing import Registry, Resource

from numaspec.errors import AdapterError
from numaspec.protocols.operations import TABLE as OPERATION_TABLE

__all__ = ["StrictChecker", "schema_registry"]

_PROTOCOL = "tag:numaspec,2026:adapter-protocol"


def schema_registry() -> Registry[Any]:
    """Every schema numaspec publishes, by its ``$id``."""
    schemas = [json.loads(entry.read_text(encoding="utf-8"))
               for entry in resources.files("numaspec.schemas").iterdir()
               if entry.name.endswith(".schema.json")]
    return Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas)


class StrictChecker:
    """Validators for each message of the adapter protocol."""

    def __init__(self) -> None:
        registry = schema_registry()

        def validator(fragment: str) -> Any:
            return jsonschema.Draft202012Validator({"$ref": f"{_PROTOCOL}#/$defs/{fragment}"},
                                                   registry=registry)

        self._request = validator("request")
        self._start = validator("startAnswer")
        self._run = validator("runAnswer")
        # PROTO-3: each operation's result schema, as its row says
        self._results = {name: jsonschema.Draft202012Validator({"$ref": op.result_schema},
                                                               registry=registry)
                         for name, op in OPERATION_TABLE.items()}

    @staticmethod
    def _problem(validator: Any, value: Any, what: str) -> str | None:
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
        if error is None:
            return None
        while error.context:
            # "not valid under any of the given schemas" says nothing: name the first error of
            # the alternative that came closest (the one with the fewest errors).
            branches: dict[Any, list[Any]] = {}
            for sub in error.context:
                branches.setdefault(sub.relative_schema_path[0], []).append(sub)
            error = min(branches.values(), key=len)[0]
        path = "".join(f"[{p!r}]" if isinstance(p, str) else f"[{p}]"
                       for p in error.absolute_path)
        return f"{what}{path}: {error.message[:300]}"

    def check_request(self, request: Any) -> None:
        problem = self._problem(self._request, request, "request")
        if problem:
            raise AdapterError(f"numaspec built a request its own schema refuses: {problem}",
                               where="strict")

    def start_problem(self, answer: Any) -> str | None:
        return self._problem(self._start, answer, "start answer")

    def answer_problem(self, answer: Any, op: str) -> str | None:
        problem = self._problem(self._run, answer, "run answer")
        if problem is None and isinstance(answer, dict) and "result" in answer:
            problem = self._problem(self._results[op], answer["result"], "run answer.result")
        return problem
