"""Spec vectors: language-neutral cases with stable IDs and expected answers, for every operation.

The files live in ``spec/vectors/*.json`` (installed as the package ``numaspec.vectors``); each
holds ``{"vectors": [...]}``, a vector being::

    {"id": "merge-different-masks-1.24", "description": "...", "rules": ["MERGE-3"],
     "op": "merge" | "hints" | "node", "derived": "hand" | "reference",
     "case": {...}, "expected": {...}, "notes": "..."}

``case`` and ``expected`` are exactly what :func:`numaspec.protocol.reference_result` takes and
gives: a merge request and its response, or ``{"steps": [node-protocol request, ...]}`` run on a
fresh node session and ``{"answers": [...]}``.  ``hints`` is for sessions with a hints step.
``derived: hand`` answers were worked out by hand from a source and are never rewritten;
``derived: reference`` answers are filled in from the reference by ``write``.  IDs never
change once published; a vector that turns out wrong is fixed, not renamed.

``python -m numaspec.conformance.vectors check [FILE...]`` verifies the files (schema, unique
IDs, cited rules exist, every expected answer agrees with the reference);
``python -m numaspec.conformance.vectors write [FILE...]`` recomputes the ``reference`` ones.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import attrs

from numaspec.bitmask import NumaMask
from numaspec.conformance.adapter import ErrorAnswer, MergeAnswer
from numaspec.errors import InvalidFieldError, NumaspecError
from numaspec.hints import TopologyHint
from numaspec.policy import MergeOutcome
from numaspec.versions import NEWEST, parse_version
from numaspec.wire import MergeRequest, decode_merge_request

__all__ = [
    "DERIVATIONS",
    "OPS",
    "Vector",
    "case_version",
    "compare",
    "decode_answer",
    "load_vector_file",
    "load_vector_paths",
    "load_vectors",
    "main",
    "merge_vectors",
    "vector_dir",
    "vector_files",
]

#: The operations a vector can exercise (the adapter protocol's, PROTO-3).
OPS = ("merge", "hints", "node", "affinity")
#: Where a vector's expected answer comes from.
DERIVATIONS = ("hand", "reference")
_FIELDS = {"id", "description", "rules", "op", "derived", "case", "expected"}
_LIMIT = 300  # characters per difference


@attrs.frozen
class Vector:
    id: str
    description: str
    rules: tuple[str, ...]
    op: str
    case: Any
    expected: Any
    derived: str
    kubelet_version: str
    source: str
    notes: str = ""


# --- loading ---------------------------------------------------------------------------------


def vector_dir() -> Path:
    """The directory of the vector files (``spec/vectors`` in a source tree)."""
    return Path(str(resources.files("numaspec.vectors")))


def vector_files() -> Iterator[tuple[str, str]]:
    """(file name, text) of every vector file, sorted by name."""
    for path in sorted(vector_dir().glob("*.json")):
        yield path.name, path.read_text(encoding="utf-8")


def case_version(op: str, case: Any) -> str:
    """The kubelet version a case is about, as ``1.N``: the merge request's (default: the
    newest), or the first create step's.  ``""`` when that version is not one numaspec models
    for the op (a vector about refusing it holds for every implementation), or when there is
    no create step."""
    from numaspec.nodeconfig import NODE_VERSIONS

    raw: Any = None
    if op == "merge":
        raw = case.get("kubelet_version") if isinstance(case, dict) else None
        if raw is None:
            return str(NEWEST)
    else:
        steps = case.get("steps") if isinstance(case, dict) else None
        for step in steps if isinstance(steps, list) else []:
            if isinstance(step, dict) and step.get("op") == "create":
                node = step.get("node")
                raw = node.get("kubeletVersion") if isinstance(node, dict) else None
                break
        if raw is None:
            return ""
    try:
        version = parse_version(raw)
    except NumaspecError:
        return ""
    if op != "merge" and version.minor not in NODE_VERSIONS:
        return ""
    return str(version)


def _require(ok: bool, message: str, where: str) -> None:
    if not ok:
        raise InvalidFieldError(message, where=where)


def _vector(raw: Any, source: str, where: str) -> Vector:
    _require(isinstance(raw, dict), "a vector is an object", where)
    missing = sorted(_FIELDS - set(raw))
    _require(not missing, f"missing field {missing[0]!r}" if missing else "", where)
    unknown = sorted(set(raw) - _FIELDS - {"notes"})
    _require(not unknown, f"unknown field {unknown[0]!r}" if unknown else "", where)
    for key in ("id", "description", "op", "derived"):
        _require(isinstance(raw[key], str) and raw[key] != "", "a non-empty string",
                 f"{where}.{key}")
    _require(raw["op"] in OPS, f"op is one of {', '.join(OPS)}", f"{where}.op")
    _require(raw["derived"] in DERIVATIONS, f"derived is one of {', '.join(DERIVATIONS)}",
             f"{where}.derived")
    rules = raw["rules"]
    _require(isinstance(rules, list) and bool(rules) and all(isinstance(r, str) for r in rules),
             "a non-empty array of rule IDs", f"{where}.rules")
    notes = raw.get("notes", "")
    _require(isinstance(notes, str), "a string", f"{where}.notes")
    op, case, expected = raw["op"], raw["case"], raw["expected"]
    if op == "merge":
        _require(isinstance(expected, dict), "a merge response object", f"{where}.expected")
    else:
        _require(isinstance(case, dict) and set(case) == {"steps"}
                 and isinstance(case["steps"], list) and bool(case["steps"]),
                 '{"steps": [request, ...]}', f"{where}.case")
        _require(isinstance(expected, dict) and set(expected) == {"answers"}
                 and isinstance(expected["answers"], list), '{"answers": [answer, ...]}',
                 f"{where}.expected")
        has_hints = any(isinstance(s, dict) and s.get("op") == "hints" for s in case["steps"])
        _require(op == "affinity" or has_hints == (op == "hints"),
                 "a session with a hints step is op 'hints', any other op 'node' (an "
                 "'affinity' session may have both)", f"{where}.op")
    return Vector(id=raw["id"], description=raw["description"], rules=tuple(rules), op=op,
                  case=case, expected=expected, derived=raw["derived"],
                  kubelet_version=case_version(op, case), source=source, notes=notes)


def load_vector_file(name: str, text: str) -> list[Vector]:
    """The vectors of one file; :class:`InvalidFieldError` (``where`` = ``name: vectors[i]…``)
    for anything malformed."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidFieldError(f"not JSON: {exc.msg} (line {exc.lineno})",
                                where=name) from None
    _require(isinstance(document, dict) and set(document) == {"vectors"}
             and isinstance(document["vectors"], list), '{"vectors": [...]}', name)
    return [_vector(raw, name, f"{name}: vectors[{i}]")
            for i, raw in enumerate(document["vectors"])]


def _load(files: Sequence[tuple[str, str]]) -> list[Vector]:
    vectors: list[Vector] = []
    seen: dict[str, str] = {}
    for name, text in files:
        for i, vector in enumerate(load_vector_file(name, text)):
            if vector.id in seen:
                raise InvalidFieldError(f"duplicate vector id {vector.id!r} (also in "
                                        f"{seen[vector.id]})", where=f"{name}: vectors[{i}].id")
            seen[vector.id] = name
            vectors.append(vector)
    return vectors


def load_vector_paths(paths: Sequence[str]) -> list[Vector]:
    """The vectors of the given files (``numaspec conformance --vectors``), IDs unique across
    them; an unreadable file is an :class:`InvalidFieldError` naming it."""
    files = []
    for path in paths:
        try:
            files.append((path, Path(path).read_text(encoding="utf-8")))
        except OSError as exc:
            raise InvalidFieldError(f"cannot read: {exc.strerror or exc}", where=path) from None
    return _load(files)


def load_vectors() -> list[Vector]:
    """Every vector of every file, files sorted by name, vectors in file order."""
    return _load(list(vector_files()))


# --- merge answers ---------------------------------------------------------------------------


def decode_answer(value: Any, where: str) -> MergeAnswer:
    """A merge response in the wire format → an answer; :class:`InvalidFieldError` if it is
    not one."""
    _require(isinstance(value, dict), "expected a response object", where)
    if "error" in value:
        error = value["error"]
        _require(isinstance(error, dict) and isinstance(error.get("kind"), str),
                 'an error is {"kind": ..., "message"?: ...}', f"{where}.error")
        return ErrorAnswer(error["kind"], str(error.get("message", "")))
    _require(set(value) == {"hint", "admit"}, 'a response is {"hint": ..., "admit": ...}', where)
    hint, admit = value["hint"], value["admit"]
    _require(isinstance(admit, bool), "a boolean", f"{where}.admit")
    _require(isinstance(hint, dict) and set(hint) == {"numa_affinity", "preferred"}
             and isinstance(hint["preferred"], bool),
             'a hint is {"numa_affinity": ..., "preferred": bool}', f"{where}.hint")
    affinity = hint["numa_affinity"]
    if affinity is not None:
        _require(isinstance(affinity, list) and all(
            isinstance(n, int) and not isinstance(n, bool) for n in affinity),
                 "null or a list of node ids", f"{where}.hint.numa_affinity")
    try:
        mask = None if affinity is None else NumaMask.of(affinity, where=f"{where}.hint")
    except NumaspecError as exc:
        raise InvalidFieldError(exc.message, where=exc.where) from None
    return MergeOutcome(TopologyHint(mask, hint["preferred"]), admit)


def merge_vectors() -> list[tuple[Vector, MergeRequest, MergeAnswer]]:
    """The merge vectors whose case decodes, with the decoded request and expected answer
    (what an in-process merge implementation is run on: ``numaspec.conformance.suite``)."""
    found = []
    for vector in load_vectors():
        if vector.op != "merge":
            continue
        try:
            request = decode_merge_request(vector.case)
        except NumaspecError:
            continue  # a bad-input vector: the JSON level (the adapter runner) checks those
        found.append((vector, request, decode_answer(vector.expected, f"{vector.id}.expected")))
    return found


def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _compare_merge(case: Any, expected: Any, actual: Any) -> list[str]:
    from numaspec.conformance.properties import answers_agree

    want = decode_answer(expected, "expected")
    try:
        got = decode_answer(actual, "actual")
    except InvalidFieldError as exc:
        return [f"not a well-formed merge response ({exc.describe()}): {_short(actual)}"[:_LIMIT]]
    try:
        request: MergeRequest | None = decode_merge_request(case)
    except NumaspecError:
        request = None
    if request is not None:
        agree = answers_agree(request, want, got)
    elif isinstance(want, ErrorAnswer) and isinstance(got, ErrorAnswer):
        agree = want.kind == got.kind
    else:
        agree = want == got
    if agree:
        return []
    return [f"expected {_short(expected)}, got {_short(actual)}"[:_LIMIT]]


# --- node and hints answers ------------------------------------------------------------------


def _label(index: int, request: Any) -> str:
    if not isinstance(request, dict):
        return f"step {index}"
    op = request.get("op")
    pod = request.get("pod")
    uid = pod.get("uid") if isinstance(pod, dict) else None
    if op in ("admit", "hints", "schedule", "reserve") and uid is not None:
        what = f"{op} pod {uid!r}"
        if op == "hints" and "container" in request:
            what += f" container {request['container']!r}"
    elif op in ("remove", "unreserve"):
        what = f"remove {request.get('uid')!r}"
    else:
        what = str(op)
    return f"step {index} ({what})"


def _shape(answer: Any) -> str:
    if isinstance(answer, dict) and len(answer) == 1:
        key = next(iter(answer))
        if key == "error" and isinstance(answer[key], dict):
            return f"error {answer[key].get('kind')!r}"
        return f"a {key!r} answer"
    return f"not an answer: {_short(answer, 60)}"


def _hint_key(hint: Any) -> str:
    return json.dumps(hint, sort_keys=True)


def _compare_step(expected: Any, actual: Any) -> str | None:
    """What differs between one expected and one actual node-protocol answer, or None."""
    if not (isinstance(expected, dict) and len(expected) == 1):
        return None if expected == actual else f"expected {_short(expected)}, got {_short(actual)}"
    key = next(iter(expected))
    if not (isinstance(actual, dict) and set(actual) == {key}):
        return f"expected {_shape(expected)}, got {_shape(actual)}"
    want, got = expected[key], actual[key]
    if key == "error":
        kind = want.get("kind") if isinstance(want, dict) else None
        got_kind = got.get("kind") if isinstance(got, dict) else None
        return None if kind == got_kind else (
            f"expected error {kind!r}, got error {got_kind!r}: {_short(got, 100)}")
    if key == "decision" and isinstance(want, dict) and isinstance(got, dict):
        for field in ("admitted", "reason", "message", "containers"):
            if want.get(field) != got.get(field):
                return (f"decision.{field}: expected {_short(want.get(field))}, got "
                        f"{_short(got.get(field))}")
        extra = sorted(set(got) - set(want))
        return f"decision has unexpected fields {extra}" if extra else None
    if key == "hints" and isinstance(want, dict) and isinstance(got, dict):
        for resource in sorted(set(want) | set(got), key=str):
            if resource not in got:
                return f"hints: no {resource!r} (expected {_short(want[resource], 80)})"
            if resource not in want:
                return f"hints: unexpected {resource!r}: {_short(got[resource], 80)}"
            a, b = want[resource], got[resource]
            if isinstance(a, list) and isinstance(b, list):
                if sorted(map(_hint_key, a)) == sorted(map(_hint_key, b)):
                    continue
            elif a == b:
                continue
            return f"hints.{resource}: expected {_short(a, 100)}, got {_short(b, 100)}"
        return None
    return None if want == got else f"{key}: expected {_short(want)}, got {_short(got)}"


def _compare_session(case: Any, expected: Any, actual: Any) -> list[str]:
    steps = case.get("steps", []) if isinstance(case, dict) else []
    want = expected.get("answers", []) if isinstance(expected, dict) else []
    if not (isinstance(actual, dict) and isinstance(actual.get("answers"), list)):
        return [f'not a session result ({{"answers": [...]}}): {_short(actual)}'[:_LIMIT]]
    got = actual["answers"]
    differences = []
    for index in range(max(len(want), len(got))):
        label = _label(index + 1, steps[index] if index < len(steps) else None)
        if index >= len(got):
            differences.append(f"{label}: no answer (expected {_shape(want[index])})")
        elif index >= len(want):
            differences.append(f"{label}: an extra answer: {_short(got[index], 100)}")
        else:
            problem = _compare_step(want[index], got[index])
            if problem is not None:
                differences.append(f"{label}: {problem}")
    return [d[:_LIMIT] for d in differences]


def compare(op: str, case: Any, expected: Any, actual: Any) -> list[str]:
    """How ``actual`` differs from ``expected`` for ``case``: ``[]`` when they agree.

    ``merge``: outcomes equal, or errors of the same kind (any of the bad options' kinds when
    several are bad, OPT-1).  ``node``/``hints``/``affinity``: step by step, errors by kind,
    decisions and states equal, each resource's hints compared without regard to order
    (NWIRE-4).
    """
    if op == "merge":
        return _compare_merge(case, expected, actual)
    if op in ("hints", "node", "affinity"):
        return _compare_session(case, expected, actual)
    raise InvalidFieldError(f"unknown op {op!r} (known: {', '.join(OPS)})", where="op")


# --- the generator ---------------------------------------------------------------------------


def _schema_problems(document: Any) -> list[str]:
    import jsonschema
    from referencing import Registry, Resource

    root = resources.files("numaspec.schemas")
    schemas = [json.loads(entry.read_text(encoding="utf-8")) for entry in root.iterdir()
               if entry.name.endswith(".schema.json")]
    registry: Registry[Any] = Registry().with_resources(
        (s["$id"], Resource.from_contents(s)) for s in schemas if "$id" in s)
    schema = next(s for s in schemas if s.get("$id") == "tag:numaspec,2026:vectors")
    validator = jsonschema.Draft202012Validator(schema, registry=registry)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"[:_LIMIT]
            for e in sorted(validator.iter_errors(document), key=lambda e: list(map(
                str, e.absolute_path)))]


def _spec_rules() -> set[str] | None:
    from numaspec.conformance.speccheck import parse_rules, spec_dir

    spec = spec_dir()
    return {r.id for r in parse_rules(spec)} if spec.is_dir() else None


def _paths(files: Sequence[str]) -> list[Path]:
    return [Path(f) for f in files] if files else sorted(vector_dir().glob("*.json"))


def _dump(document: Any) -> str:
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def _disagreement(vector: Vector, reference: Any, differences: list[str]) -> str:
    return (f"{vector.source}: {vector.id} ({vector.derived}) disagrees with the reference:\n  "
            + "\n  ".join(differences)
            + f"\n  expected:  {json.dumps(vector.expected, sort_keys=True)}"
            + f"\n  reference: {json.dumps(reference, sort_keys=True)}")


def check_files(paths: Sequence[Path]) -> list[str]:
    """Every problem of the vector files at ``paths`` (``[]``: all is well)."""
    from numaspec.protocol import reference_result

    problems: list[str] = []
    texts = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        texts.append((path.name, text))
        with contextlib.suppress(json.JSONDecodeError):  # the loader below reports it
            problems += [f"{path.name}: schema: {p}" for p in _schema_problems(json.loads(text))]
    try:
        vectors = _load(texts)
    except InvalidFieldError as exc:
        return [*problems, exc.describe()]
    known = _spec_rules()
    for vector in vectors:
        if known is not None:
            problems += [f"{vector.source}: {vector.id} cites {rule}, which the spec lacks"
                         for rule in vector.rules if rule not in known]
        reference = reference_result(vector.op, vector.case)
        differences = compare(vector.op, vector.case, vector.expected, reference)
        if differences:
            problems.append(_disagreement(vector, reference, differences))
        elif vector.derived == "reference" and vector.expected != reference:
            problems.append(f"{vector.source}: {vector.id}: expected answer is stale (agrees, "
                            "but is not the reference's answer): run write")
    return problems


def write_files(paths: Sequence[Path]) -> tuple[int, list[str]]:
    """Recompute every ``derived: reference`` answer and rewrite the files; (number of files
    changed, disagreements of ``hand`` vectors)."""
    from numaspec.protocol import reference_result

    changed, problems = 0, []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        vectors = load_vector_file(path.name, text)  # validates before anything is written
        document = json.loads(text)
        for raw, vector in zip(document["vectors"], vectors, strict=True):
            reference = reference_result(vector.op, vector.case)
            if vector.derived == "reference":
                raw["expected"] = reference
                continue
            differences = compare(vector.op, vector.case, vector.expected, reference)
            if differences:
                problems.append(_disagreement(vector, reference, differences))
        out = _dump(document)
        if out != text:
            path.write_text(out, encoding="utf-8")
            changed += 1
    return changed, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m numaspec.conformance.vectors",
        description="Check the spec vectors, or recompute the reference-derived answers.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (("check", "verify vector files (default: all of spec/vectors)"),
                       ("write", "rewrite the expected answers of 'derived: reference' vectors")):
        command = sub.add_parser(name, help=text)
        command.add_argument("files", nargs="*", metavar="FILE")
    args = parser.parse_args(argv)
    paths = _paths(args.files)
    try:
        if args.command == "check":
            problems = check_files(paths)
            for problem in problems:
                print(problem)
            count = sum(len(load_vector_file(p.name, p.read_text(encoding="utf-8")))
                        for p in paths) if not problems else 0
            print(f"{len(problems)} problem(s)" if problems else
                  f"{count} vectors in {len(paths)} files: all agree with the reference")
            return 1 if problems else 0
        changed, problems = write_files(paths)
    except (NumaspecError, OSError) as exc:
        print(f"vectors {args.command}: {exc}")
        return 1
    for problem in problems:
        print(problem)
    print(f"rewrote {changed} of {len(paths)} files"
          + (f"; {len(problems)} hand-derived vector(s) disagree" if problems else ""))
    return 1 if problems else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
