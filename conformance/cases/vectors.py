"""Spec vectors: language-neutral cases with stable IDs and expected answers, for every operation.

The files live in ``spec/vectors/<part>/*.json`` (installed as the package ``numaspec.vectors``),
in the folder of the spec's part whose chapters they mostly illustrate (``topology``, ``node``,
``dra``, ``protocols``: spec/parts.toml), a large file in numbered pieces (``resize-1.json``,
``resize-2.json``, ...); each holds ``{"vectors": [...]}``, a vector being::

    {"id": "merge-different-masks-1.24", "description": "...", "rules": ["MERGE-3"],
     "op": "merge" | "hints" | "node" | "affinity" | "predict" | "allocate" | "mixed" |
           "cpus",
     "derived": "hand" | "reference",
     "case": {...}, "expected": {...}, "notes": "...",
     "releases": "1.24-1.37", "expected_by_release": {"1.24-1.27": {...}}}

``case`` and ``expected`` are exactly what
:func:`numaspec.protocols.adapter_protocol.reference_result` takes and gives: a merge request and
its response, or ``{"steps": [node-protocol request, ...]}`` run on a fresh node session and
``{"answers": [...]}``.  ``hints`` is for sessions with a hints step. A ``predict`` vector stores
``{"steps": [create, admit, remove ...], "pod": {...}}`` and the predict answer; each instance's
case is that with what a scheduler sees derived from it (``kubelet_version``, ``nrt``, ``node``:
:func:`numaspec.protocols.adapter_protocol.predict_case`), so the NodeResourceTopology is never
written by hand nor stale.
``derived: hand`` answers were worked out by hand from a source and are never rewritten;
``derived: reference`` answers are filled in from the reference by ``write``.  IDs never
change once published; a vector that turns out wrong is fixed, not renamed.

**Releases.**  A vector's case names one release (:func:`case_version`: the merge request's
``kubelet_version``, a session's ``kubeletVersion``), but it holds in a range of them: the
intersection of the ``Holds in`` ranges of the rules it cites (spec chapters), of what the op
models (merge 1.18-1.38, the node ops :data:`numaspec.node.nodeconfig.NODE_VERSIONS`) and of the
optional ``releases`` field (``"1.24-1.37"`` with an en dash as in ``Holds in``, or a hyphen;
or one release ``"1.30"``), which states it instead of the rules (to narrow it, or to keep a
vector that shows a rule not yet holding at its own release; ``check`` verifies every release
it names).  The vector is an *instance* at each release of that range
(:func:`instances`): the case rewritten to that release (``kubelet_version``, or the
``kubeletVersion`` of every create step, in the format the case wrote it), with ID
``<id>@<release>``, except at the vector's own release where the ID stays bare.  The
expected answer is ``expected`` unless ``expected_by_release`` holds one for that release: its
keys are releases or ranges (disjoint, inside the vector's range, never its own release), its
values answers in the format of ``expected``.  Vectors about versions themselves (a release
numaspec does not model for the op, no create step, or create steps of different releases)
are never retargeted: they are one instance.  Without the spec chapters (an installed wheel
has none), a vector holds at its own release only.

``python -m numaspec.conformance.cases.vectors check [FILE...]`` verifies the files (schema, unique
IDs, cited rules exist, ranges inside the rules', every instance's expected answer agrees
with the reference at its release); ``python -m numaspec.conformance.cases.vectors write [FILE...]``
recomputes the ``reference`` ones, ``expected_by_release`` included (an entry only where the
reference's answer at a release does not agree with ``expected``).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import functools
import itertools
import json
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import attrs

from numaspec.conformance.cases.judges import JUDGES, LIMIT, compare, decode_answer, require
from numaspec.conformance.implementations.adapter import MergeAnswer
from numaspec.errors import InvalidFieldError, NumaspecError
from numaspec.protocols.merge_protocol import MergeRequest, decode_merge_request
from numaspec.protocols.operations import OPERATIONS
from numaspec.protocols.operations import TABLE as OPERATION_TABLE
from numaspec.rules import parse_rules, spec_dir
from numaspec.topology.versions import parse_version

__all__ = [
    "DERIVATIONS",
    "OPS",
    "Instance",
    "Vector",
    "case_version",
    "format_range",
    "holds_in",
    "inherited_range",
    "instance_at",
    "instances",
    "load_vector_file",
    "load_vector_paths",
    "load_vectors",
    "main",
    "merge_vectors",
    "parse_range",
    "rule_ranges",
    "split_id",
    "stored_case",
    "vector_dir",
    "vector_files",
    "vector_paths",
]

#: The operations a vector can exercise (the adapter protocol's, PROTO-3).
OPS = OPERATIONS
#: Where a vector's expected answer comes from.
DERIVATIONS = ("hand", "reference")
_FIELDS = {"id", "description", "rules", "op", "derived", "case", "expected"}
_OPTIONAL = {"notes", "releases", "expected_by_release"}


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
    #: the ``releases`` field as minors (first, last), or None when the vector inherits
    releases: tuple[int, int] | None = None
    #: ``expected_by_release``: (first, last, answer) per key, in file order
    expected_by_release: tuple[tuple[int, int, Any], ...] = ()

    @property
    def retargetable(self) -> bool:
        """Whether the vector holds beyond its own case (not a vector about versions)."""
        if self.kubelet_version == "" or not isinstance(self.case, dict):
            return False
        return _session_versions(self.op, self.case) != "mixed"

    def expected_at(self, release: str) -> Any:
        """The expected answer at ``release`` (``1.N``)."""
        minor = _minor(release)
        for first, last, answer in self.expected_by_release:
            if first <= minor <= last:
                return answer
        return self.expected


@attrs.frozen
class Instance:
    """A vector at one release: what a runner sends (RUN-10)."""

    id: str
    vector: Vector
    release: str
    case: Any
    expected: Any

    @property
    def own(self) -> bool:
        return self.id == self.vector.id


# --- loading ---------------------------------------------------------------------------------


def vector_dir() -> Path:
    """The directory of the vector files (``spec/vectors`` in a source tree)."""
    return Path(str(resources.files("numaspec.vectors")))


def vector_paths(root: Path | None = None) -> list[Path]:
    """Every vector file under ``root`` (:func:`vector_dir`), its parts' folders read
    recursively, sorted by file name whatever the folder: the suite's order (RUN-6), which is
    the order of the files before they were grouped by part, so that grouping them changed
    neither the suite nor its version.  File names are unique across the folders; two of the
    same name are refused."""
    root = vector_dir() if root is None else root
    paths = sorted(root.rglob("*.json"), key=lambda p: (p.name, p.as_posix()))
    for first, second in itertools.pairwise(paths):
        if first.name == second.name:
            raise InvalidFieldError(f"two vector files named {first.name!r}: "
                                    f"{_name(first)} and {_name(second)}", where=str(root))
    return paths


def _name(path: Path) -> str:
    """How a vector file is named in messages and in a vector's ``source``: its path under
    :func:`vector_dir` (``node/resize-1.json``), or as given when it is elsewhere."""
    try:
        return path.resolve().relative_to(vector_dir().resolve()).as_posix()
    except ValueError:
        return path.name


def vector_files() -> Iterator[tuple[str, str]]:
    """(path under :func:`vector_dir`, text) of every vector file, in :func:`vector_paths`'
    order."""
    for path in vector_paths():
        yield _name(path), path.read_text(encoding="utf-8")


def case_version(op: str, case: Any) -> str:
    """The kubelet version a case is about, as ``1.N``: the merge request's (default: the
    newest), or the first create step's.  ``""`` when that version is not one numaspec models
    for the op (a vector about refusing it holds for every implementation), or when there is
    no create step."""
    row = OPERATION_TABLE.get(op)
    return "" if row is None else row.case_version(case)


# --- releases --------------------------------------------------------------------------------

_DASH = "\u2013"  # the en dash of "Holds in: 1.18\u20131.37"
_RANGE = re.compile(r"^1\.(\d+)(?: ?[" + _DASH + r"-] ?1\.(\d+))?$")


def _minor(release: str) -> int:
    return int(release.split(".", 1)[1])


def parse_range(text: Any, where: str) -> tuple[int, int]:
    """``"1.24-1.37"`` (en dash or hyphen) or ``"1.30"`` → (first minor, last minor);
    :class:`InvalidFieldError` for anything else or an empty range."""
    match = _RANGE.match(text) if isinstance(text, str) else None
    require(match is not None, f'a release range such as "1.24{_DASH}1.37", or one release '
             '"1.30"', where)
    assert match is not None
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) is not None else first
    require(first <= last, f"an empty range: 1.{first} is after 1.{last}", where)
    return first, last


def format_range(first: int, last: int) -> str:
    """The inverse of :func:`parse_range` (en dash, as the spec writes ``Holds in``)."""
    return f"1.{first}" if first == last else f"1.{first}{_DASH}1.{last}"


def _op_range(op: str) -> tuple[int, int]:
    return OPERATION_TABLE[op].modelled()


@functools.cache
def rule_ranges() -> Mapping[str, tuple[int, int]]:
    """Each spec rule's ``Holds in`` range as minors; empty without the spec chapters.  A
    range that does not parse is an :class:`InvalidFieldError` naming the rule: read as
    unknown, it would quietly hold every vector citing the rule to its own release."""

    spec = spec_dir()
    ranges: dict[str, tuple[int, int]] = {}
    for rule in parse_rules(spec) if spec.is_dir() else []:
        ranges[rule.id] = parse_range(rule.meta.get("Holds in", ""), f"{rule.id}: Holds in")
    return ranges


def inherited_range(vector: Vector, ranges: Mapping[str, tuple[int, int]] | None = None
                    ) -> tuple[int, int] | None:
    """The intersection of the op's range and of the cited rules' (None: empty, or a rule
    whose range is unknown)."""
    ranges = rule_ranges() if ranges is None else ranges
    first, last = _op_range(vector.op)
    for rule in vector.rules:
        if rule not in ranges:
            return None
        first, last = max(first, ranges[rule][0]), min(last, ranges[rule][1])
    return (first, last) if first <= last else None


def holds_in(vector: Vector, ranges: Mapping[str, tuple[int, int]] | None = None
             ) -> tuple[str, ...]:
    """The releases the vector holds in, oldest first (always its own release; only that for
    a vector about versions, or when a cited rule's range is unknown)."""
    if not vector.retargetable:
        return (vector.kubelet_version,) if vector.kubelet_version else ("",)
    own = _minor(vector.kubelet_version)
    span = inherited_range(vector, ranges)
    if vector.releases is not None:  # stated: it replaces the rules' range, inside the op's
        op_first, op_last = _op_range(vector.op)
        first, last = max(op_first, vector.releases[0]), min(op_last, vector.releases[1])
        span = (first, last) if first <= last else None
    minors = set(range(span[0], span[1] + 1)) if span is not None else set()
    return tuple(f"1.{m}" for m in sorted(minors | {own}))


def _retarget(op: str, case: Any, release: str) -> Any:
    return OPERATION_TABLE[op].retarget(case, release)


def split_id(case_id: str) -> tuple[str, str]:
    """``"x@1.31"`` → (``"x"``, ``"1.31"``); a bare ID → (ID, ``""``)."""
    base, _, release = case_id.partition("@")
    return base, release


def _derived(op: str, case: Any) -> Any:
    """PRED-1: a predict instance carries what the scheduler sees, derived from its steps."""
    if op != "predict":
        return case
    from numaspec.protocols.adapter_protocol import predict_case

    return predict_case(case)


def instance_at(vector: Vector, release: str) -> Instance:
    """The vector at ``release`` (one of :func:`holds_in`)."""
    if release == vector.kubelet_version or not vector.retargetable:
        return Instance(vector.id, vector, vector.kubelet_version,
                        _derived(vector.op, vector.case), vector.expected)
    return Instance(f"{vector.id}@{release}", vector, release,
                    _derived(vector.op, _retarget(vector.op, vector.case, release)),
                    vector.expected_at(release))


def instances(vector: Vector, releases: Sequence[str] | None = None,
              ranges: Mapping[str, tuple[int, int]] | None = None) -> list[Instance]:
    """The vector's own instance first, then one per other release it holds in (only those
    of ``releases`` when given), oldest first."""
    wanted = None if releases is None else set(releases)
    found = [instance_at(vector, vector.kubelet_version)]
    for release in holds_in(vector, ranges):
        if release != vector.kubelet_version and (wanted is None or release in wanted):
            found.append(instance_at(vector, release))
    return found


def _session_versions(op: str, case: Any) -> str:
    """``"mixed"`` when a session's create steps name different releases, else ``""``."""
    if OPERATION_TABLE[op].version_in != ("steps",) or not isinstance(case, dict) \
            or not isinstance(case.get("steps"), list):
        return ""
    seen = set()
    for step in case["steps"]:
        if isinstance(step, dict) and step.get("op") == "create":
            node = step.get("node")
            raw = node.get("kubeletVersion") if isinstance(node, dict) else None
            try:
                seen.add(str(parse_version(raw)))
            except NumaspecError:
                seen.add(repr(raw))
    return "mixed" if len(seen) > 1 else ""


def _vector(raw: Any, source: str, where: str) -> Vector:
    require(isinstance(raw, dict), "a vector is an object", where)
    missing = sorted(_FIELDS - set(raw))
    require(not missing, f"missing field {missing[0]!r}" if missing else "", where)
    unknown = sorted(set(raw) - _FIELDS - _OPTIONAL)
    require(not unknown, f"unknown field {unknown[0]!r}" if unknown else "", where)
    for key in ("id", "description", "op", "derived"):
        require(isinstance(raw[key], str) and raw[key] != "", "a non-empty string",
                 f"{where}.{key}")
    require(raw["op"] in OPS, f"op is one of {', '.join(OPS)}", f"{where}.op")
    require(raw["derived"] in DERIVATIONS, f"derived is one of {', '.join(DERIVATIONS)}",
             f"{where}.derived")
    rules = raw["rules"]
    require(isinstance(rules, list) and bool(rules) and all(isinstance(r, str) for r in rules),
             "a non-empty array of rule IDs", f"{where}.rules")
    notes = raw.get("notes", "")
    require(isinstance(notes, str), "a string", f"{where}.notes")
    op, case, expected = raw["op"], raw["case"], raw["expected"]
    judge = JUDGES[op]
    judge.case(case, f"{where}.case")
    judge.answer(expected, f"{where}.expected")
    version = case_version(op, case)
    releases = (parse_range(raw["releases"], f"{where}.releases") if "releases" in raw
                else None)
    if releases is not None and version:
        require(releases[0] <= _minor(version) <= releases[1],
                 f"the range holds the vector's own release {version}", f"{where}.releases")
    by_release: list[tuple[int, int, Any]] = []
    table = raw.get("expected_by_release", {})
    require(isinstance(table, dict) and (bool(table) or "expected_by_release" not in raw),
             "a non-empty object: release or range → expected answer",
             f"{where}.expected_by_release")
    for key, answer in table.items():
        at = f"{where}.expected_by_release[{key!r}]"
        first, last = parse_range(key, at)
        require(not version or not first <= _minor(version) <= last,
                 f"the vector's own release {version} takes 'expected', not an entry here", at)
        require(all(last < f or first > lt for f, lt, _ in by_release),
                 "ranges overlap another entry", at)
        judge.answer(answer, at)
        by_release.append((first, last, answer))
    vector = Vector(id=raw["id"], description=raw["description"], rules=tuple(rules), op=op,
                    case=case, expected=expected, derived=raw["derived"],
                    kubelet_version=version, source=source, notes=notes, releases=releases,
                    expected_by_release=tuple(by_release))
    require(vector.retargetable or (not by_release and releases is None),
             "a vector about versions (or whose case is not an object) holds at its own case "
             "only: no 'releases' nor 'expected_by_release'", f"{where}.releases")
    return vector


def load_vector_file(name: str, text: str) -> list[Vector]:
    """The vectors of one file; :class:`InvalidFieldError` (``where`` = ``name: vectors[i]…``)
    for anything malformed."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidFieldError(f"not JSON: {exc.msg} (line {exc.lineno})",
                                where=name) from None
    require(isinstance(document, dict) and set(document) == {"vectors"}
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
    """Every vector of every file, files in :func:`vector_paths`' order (by file name),
    vectors in file order."""
    return _load(list(vector_files()))


def stored_case(vector_id: str, releases: Sequence[str]) -> dict[str, Any]:
    """A copy of the case of the spec's vector ``vector_id`` at the release of ``releases``
    nearest the vector's own: what a property's ``@example(data=None)`` runs first, its fixed
    counterexample, at a release the implementation declares.  A copy, for the caller may
    change it and the loaded vectors are shared."""
    vector = next((v for v in load_vectors() if v.id == vector_id), None)
    if vector is None:
        raise InvalidFieldError(f"no vector {vector_id!r} in the spec", where="spec/vectors")
    own = int(vector.kubelet_version.split(".")[1])
    release = min(releases or (vector.kubelet_version,),
                  key=lambda r: abs(int(r.split(".")[1]) - own))
    case: dict[str, Any] = copy.deepcopy(instance_at(vector, release).case)
    return case


# --- merge answers ---------------------------------------------------------------------------


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


# --- node and hints answers ------------------------------------------------------------------


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
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"[:LIMIT]
            for e in sorted(validator.iter_errors(document), key=lambda e: list(map(
                str, e.absolute_path)))]


def _spec_rules() -> set[str] | None:

    spec = spec_dir()
    return {r.id for r in parse_rules(spec)} if spec.is_dir() else None


def _paths(files: Sequence[str]) -> list[Path]:
    return [Path(f) for f in files] if files else vector_paths()


def _dump(document: Any) -> str:
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def _disagreement(vector: Vector, reference: Any, differences: list[str],
                 instance: Instance | None = None) -> str:
    at = "" if instance is None or instance.own else f" at {instance.release} ({instance.id})"
    expected = vector.expected if instance is None else instance.expected
    advice = ("" if instance is None or instance.own or vector.derived == "reference" else
              "\n  (narrow its range with 'releases', or add a hand answer to "
              "'expected_by_release')")
    return (f"{vector.source}: {vector.id} ({vector.derived}) disagrees with the reference{at}:"
            "\n  " + "\n  ".join(differences)
            + f"\n  expected:  {json.dumps(expected, sort_keys=True)}"
            + f"\n  reference: {json.dumps(reference, sort_keys=True)}" + advice)


def _references(vector: Vector) -> list[tuple[Instance, Any]]:
    """Every instance of the vector with the reference's answer to it."""
    from numaspec.protocols.adapter_protocol import reference_result

    return [(i, reference_result(vector.op, i.case)) for i in instances(vector)]


def _by_release(answers: Sequence[tuple[Instance, Any]], own: Any) -> dict[str, Any]:
    """``expected_by_release`` of a ``reference`` vector whose own answer is ``own``: the
    reference's answer at each release where it is not ``own`` to the letter, consecutive
    releases with the same answer as one range.  The letter, not ``compare``: where RUN-11
    leaves kubelet's text unchecked (several refused gates) the answers still differ, and a
    table kept by ``compare`` would lose the release's own answer."""
    runs: list[tuple[int, int, Any]] = []
    others = [a for a in answers if not a[0].own]
    for instance, reference in sorted(others, key=lambda a: _minor(a[0].release)):
        if reference == own:
            continue
        minor = _minor(instance.release)
        if runs and runs[-1][1] == minor - 1 and runs[-1][2] == reference:
            runs[-1] = (runs[-1][0], minor, reference)
        else:
            runs.append((minor, minor, reference))
    return {format_range(first, last): answer for first, last, answer in runs}


def _range_problems(vector: Vector) -> list[str]:
    """A range that does not fit the rules the vector cites, or answers for releases it does
    not hold in."""
    if not vector.retargetable:
        return []
    problems = []
    span = inherited_range(vector)
    own = _minor(vector.kubelet_version)
    where = f"{vector.source}: {vector.id}"
    known = all(rule in rule_ranges() for rule in vector.rules)
    if known and vector.releases is None and (span is None or not span[0] <= own <= span[1]):
        rules = "none" if span is None else format_range(*span)
        problems.append(f"{where}: its own release {vector.kubelet_version} is outside the "
                        f"range its rules hold in ({rules}): state its range with 'releases'")
    holds = {_minor(r) for r in holds_in(vector)}
    for first, last, _ in vector.expected_by_release:
        if not set(range(first, last + 1)) <= holds:
            problems.append(f"{where}: expected_by_release has {format_range(first, last)}, "
                            "outside the releases it holds in")
    return problems


def check_files(paths: Sequence[Path]) -> list[str]:
    """Every problem of the vector files at ``paths`` (``[]``: all is well)."""
    problems: list[str] = []
    texts = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        texts.append((_name(path), text))
        with contextlib.suppress(json.JSONDecodeError):  # the loader below reports it
            problems += [f"{_name(path)}: schema: {p}"
                         for p in _schema_problems(json.loads(text))]
    try:
        vectors = _load(texts)
    except InvalidFieldError as exc:
        return [*problems, exc.describe()]
    known = _spec_rules()
    for vector in vectors:
        if known is not None:
            problems += [f"{vector.source}: {vector.id} cites {rule}, which the spec lacks"
                         for rule in vector.rules if rule not in known]
        problems += _range_problems(vector)
        answers = _references(vector)
        stale = False
        for instance, reference in answers:
            differences = compare(vector.op, instance.case, instance.expected, reference)
            if differences and vector.derived == "hand":
                problems.append(_disagreement(vector, reference, differences, instance))
            elif differences or (instance.own and vector.expected != reference):
                stale = True
        table = {format_range(f, lt): a for f, lt, a in vector.expected_by_release}
        if vector.derived == "reference" and (
                stale or table != _by_release(answers, vector.expected)):
            problems.append(f"{vector.source}: {vector.id}: expected answers are stale (not "
                            "the reference's answers at every release it holds in): run write")
    return problems


def write_files(paths: Sequence[Path]) -> tuple[int, list[str]]:
    """Recompute every ``derived: reference`` answer (``expected_by_release`` included) and
    rewrite the files; (number of files changed, disagreements of ``hand`` vectors)."""
    changed, problems = 0, []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        vectors = load_vector_file(_name(path), text)  # validates before anything is written
        document = json.loads(text)
        for raw, vector in zip(document["vectors"], vectors, strict=True):
            answers = _references(vector)
            if vector.derived == "reference":
                own = next(reference for instance, reference in answers if instance.own)
                raw["expected"] = own
                table = _by_release(answers, own)
                if table:
                    raw["expected_by_release"] = table
                else:
                    raw.pop("expected_by_release", None)
                continue
            for instance, reference in answers:
                differences = compare(vector.op, instance.case, instance.expected, reference)
                if differences:
                    problems.append(_disagreement(vector, reference, differences, instance))
        out = _dump(document)
        if out != text:
            path.write_text(out, encoding="utf-8")
            changed += 1
    return changed, problems


def add_subcommands(parser: argparse.ArgumentParser, *, export: bool = False) -> None:
    """``check``, ``write`` and ``list``: the subcommands of ``numaspec vectors`` (and of
    ``python -m numaspec.conformance.cases.vectors``); with ``export``, ``export --go`` too
    (``numaspec vectors`` only: numaspec.conformance.cases.go_export runs it)."""
    sub = parser.add_subparsers(dest="vectors_command", required=True, metavar="SUBCOMMAND")
    for name, text in (
            ("check", "verify vector files against their schema and the reference at every "
                      "release they hold in (default: every file of the spec's vectors)"),
            ("write", "recompute the expected answers of 'derived: reference' vectors (never "
                      "the hand-derived ones, which are only checked)"),
            ("list", "list the vectors: ID, op, the releases they hold in, the rules they "
                     "cite")):
        command = sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        command.add_argument("files", nargs="*", metavar="FILE",
                             help="vector files (default: the spec's, spec/vectors/*/*.json)")
    if not export:
        return
    text = ("write the merge vectors that hold at a kubelet release as a Go test of kubelet's "
            "pkg/kubelet/cm/topologymanager (RUN-20)")
    exporting = sub.add_parser("export", help=text, description=text[0].upper() + text[1:] + ".")
    exporting.add_argument("--go", required=True, metavar="RELEASE",
                           help="the kubelet release, e.g. 1.37")
    exporting.add_argument("--out", default=None, metavar="FILE",
                           help="write the _test.go file here (default: standard output)")
    exporting.add_argument("--random", type=int, default=2000, metavar="N",
                           help="also N random merge cases at the release with the reference's "
                                "answers (default: 2000; 0: the vectors only)")
    exporting.add_argument("--seed", type=int, default=0, metavar="S",
                           help="the random cases' seed (default: 0)")
    exporting.add_argument("files", nargs="*", metavar="FILE",
                           help="vector files (default: the spec's, spec/vectors/*/*.json)")


def run(args: argparse.Namespace) -> int:
    """Run a parsed ``numaspec vectors`` subcommand."""
    paths = _paths(args.files)
    try:
        if args.vectors_command == "list":
            for path in paths:
                for vector in load_vector_file(_name(path),
                                               path.read_text(encoding="utf-8")):
                    releases = holds_in(vector)
                    span = f"{releases[0]}-{releases[-1]}" if len(releases) > 1 else (
                        releases[0] if releases else "-")
                    print(f"{vector.id}  {vector.op}  {span}  {', '.join(vector.rules)}")
            return 0
        if args.vectors_command == "check":
            problems = check_files(paths)
            for problem in problems:
                print(problem)
            loaded = [] if problems else [
                v for p in paths for v in load_vector_file(_name(p),
                                                           p.read_text(encoding="utf-8"))]
            count = sum(len(holds_in(v)) for v in loaded)
            print(f"{len(problems)} problem(s)" if problems else
                  f"{len(loaded)} vectors ({count} instances) in {len(paths)} files: all agree "
                  "with the reference at every release they hold in")
            return 1 if problems else 0
        changed, problems = write_files(paths)
    except (NumaspecError, OSError) as exc:
        print(f"vectors {args.vectors_command}: {exc}")
        return 1
    for problem in problems:
        print(problem)
    print(f"rewrote {changed} of {len(paths)} files"
          + (f"; {len(problems)} hand-derived vector(s) disagree" if problems else ""))
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m numaspec.conformance.cases.vectors",
        description="Check the spec vectors, or recompute the reference-derived answers.")
    add_subcommands(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
