"""The spec vectors (spec/vectors/*.json): they pass their own check, cover every rule of the
spec outside the exemptions below, and the generator reproduces them byte for byte; and
``compare``, which judges every implementation's answers, says what it should."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from numaspec.conformance.cases.judges import compare
from numaspec.conformance.cases.vectors import (
    load_vector_file,
    load_vectors,
    main,
    vector_dir,
    vector_files,
    vector_paths,
)
from numaspec.errors import InvalidFieldError
from numaspec.protocols.operations import OPERATIONS
from numaspec.rules import parse_rules
from numaspec_tools import REPO, vector_pieces

# Rules no vector can express, and why.  Everything else in spec/*/*.md must be cited by at
# least one vector.  (The harness chapter, PROTO-* and RUN-*, is checked by its own tests.)
EXEMPT = {
    # Subset enumeration order is invisible in any answer: hint lists are compared without
    # regard to order (NWIRE-4) and the merge result does not depend on order (MERGE-11).
    # Checked by the property P-SUBSETS on an implementation's own subsets().
    "MASK-3": "enumeration order is not observable in an answer",
    # Why numaspec allocate says a device was passed over: an explanation the operator's
    # command prints beside the allocator's answer, which no implementation gives.
    # tests/operators/test_allocate_command.py checks it.
    "DRA-15": "an explanation numaspec prints, not an answer an implementation gives",
    # One answer per line, in order, whatever the line holds: a statement about the bytes of
    # a stream (garbage, truncated JSON, invalid UTF-8, empty lines), while a case is already
    # a JSON object (the adapter protocol's schema).  tests/protocols/test_cli.py checks it.
    "WIRE-1": "about the bytes and lines of a stream, not a case",
    # The merge budget is a limit of the reference (configurable, default 6,000,000 steps),
    # not behaviour an implementation must share: kubelet would answer such a merge.
    "WIRE-4": "a limit of the reference, not a conformance requirement",
    # The bounds are the reference's own (kubelet decodes a 30-digit integer as a type error
    # and hangs on a cpuset of 10**11 CPUs); tests/protocols/test_limits.py and
    # tests/suite/test_fuzz.py check
    # them on numaspec's commands.
    "WIRE-5": "a limit of the reference, not a conformance requirement",
    "WIRE-6": "about numaspec's own commands under fuzzing, not a case",
    "WIRE-7": "how numaspec reads its own request lines, not a case",
    "NWIRE-5": "a limit of the reference, not a conformance requirement",
    # DRA-backed extended resources are outside the node protocol, and kubelet's side of them
    # cannot be run without a scheduler and a driver (the rule says what was read and what
    # would confirm it); tests/operators/test_kube_import.py checks the importer's refusal.  (DEV-8
    # is
    # the mixed vectors', DRA-12.)
    "DEV-9": "DRA-backed extended resources are not part of a node case",
    # DRA-0 says what the allocate operation leaves out: its refusals are numaspec's own
    # (not-modelled), which an implementation of the allocator does not give; tests/dra/test_dra.py
    # checks each.
    "DRA-0": "the reference's own refusals, not behaviour an implementation shares",
}
# The harness's own rules, and the fast merge's (FAST-*: how the reference reaches the answer
# every merge vector checks; their equality with the walk is tests/topology/test_fast_merge.py's).
HARNESS = ("PROTO-", "RUN-", "EXPLAIN-", "FAST-", "SYSFS-", "KCONF-", "CKPT-", "OPS-",
           "CHECK-")


def spec_rules() -> list[str]:
    return [r.id for r in parse_rules(REPO / "spec")]


def test_vectors_check_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check"]) == 0, capsys.readouterr().out


def test_every_rule_is_cited_by_a_vector() -> None:
    cited = {rule for vector in load_vectors() for rule in vector.rules}
    missing = [r for r in spec_rules()
               if r not in cited and r not in EXEMPT and not r.startswith(HARNESS)]
    assert missing == [], f"no vector cites {missing}"


def test_exemptions_are_real_rules_and_really_uncited() -> None:
    cited = {rule for vector in load_vectors() for rule in vector.rules}
    assert set(EXEMPT) <= set(spec_rules())
    assert not set(EXEMPT) & cited, "a vector cites an exempt rule: drop the exemption"


def test_ids_are_unique_and_every_op_has_vectors() -> None:
    vectors = load_vectors()
    assert len({v.id for v in vectors}) == len(vectors)
    assert {v.op for v in vectors} == set(OPERATIONS)
    assert all(v.kubelet_version or v.id.startswith(("ver-", "node-version-")) for v in vectors)


def test_the_generator_is_idempotent(tmp_path: Path) -> None:
    """``write`` on a copy reproduces every committed file byte for byte."""
    names = [p.relative_to(vector_dir()) for p in vector_paths()]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(vector_dir() / name, tmp_path / name)
    assert main(["write", *(str(tmp_path / n) for n in names)]) == 0
    for name in names:
        assert (tmp_path / name).read_bytes() == (vector_dir() / name).read_bytes(), name


def test_the_files_are_read_by_part_in_the_suite_s_order(tmp_path: Path) -> None:
    """The vector files are read from the parts' folders recursively, by file name whatever
    the folder (the order they had before they were grouped, so the suite's is unchanged);
    a name used twice is refused."""
    paths = vector_paths()
    assert {p.parent.name for p in paths} == {"topology", "node", "dra", "protocols"}
    assert [p.name for p in paths] == sorted(p.name for p in paths)
    assert [name for name, _ in vector_files()] == [
        p.relative_to(vector_dir()).as_posix() for p in paths]
    assert {v.source for v in load_vectors()} == {
        p.relative_to(vector_dir()).as_posix() for p in paths}
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "same.json").write_text('{"vectors": []}', encoding="utf-8")
    with pytest.raises(InvalidFieldError, match=r"two vector files named 'same\.json'"):
        vector_paths(tmp_path)


def test_every_file_is_of_a_reviewable_size_and_listed_in_its_folder() -> None:
    """No vector file is larger than numaspec_tools.vector_pieces.LIMIT (a larger one is kept
    in numbered pieces), and spec/vectors/README.md's table lists each file (``name-*.json``
    for one in pieces) in the folder it is in."""
    assert vector_pieces.oversized() == [], (
        f"split it: python -m numaspec_tools.vector_pieces FILE (over {vector_pieces.LIMIT} "
        "bytes)")
    table: dict[str, set[str]] = {}
    readme = (vector_dir() / "README.md").read_text(encoding="utf-8")
    for folder, files in re.findall(r"^\| `(\w+)/` \| (.*) \|$", readme, re.MULTILINE):
        table[folder] = set(re.findall(r"`([\w*-]+\.json)`", files))
    on_disk: dict[str, set[str]] = {}
    for path in vector_paths():
        name = path.name
        if len(vector_pieces.pieces(vector_pieces.stem(name))) > 1:
            name = f"{vector_pieces.stem(name)}-*.json"
        on_disk.setdefault(path.parent.name, set()).add(name)
    assert table == on_disk


def test_pieces_keep_every_vector_whole_and_in_order(tmp_path: Path) -> None:
    vectors = [{"id": f"v{i}", "notes": "x" * (100 + 37 * i)} for i in range(40)]
    (tmp_path / "big.json").write_text(vector_pieces.dump(vectors), encoding="utf-8")
    written = vector_pieces.write(tmp_path, "big", vectors, limit=12_000)
    assert [p.name for p in written] == [f"big-{n}.json" for n in range(1, len(written) + 1)]
    assert len(written) > 2
    assert not (tmp_path / "big.json").exists()
    assert all(p.stat().st_size <= 12_000 for p in written)
    assert vector_pieces.read("big", tmp_path) == vectors
    # written again small enough, it is one file again and the pieces go
    assert vector_pieces.write(tmp_path, "big", vectors[:3]) == [tmp_path / "big.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.json"]


def test_write_fills_in_reference_answers(tmp_path: Path) -> None:
    path = tmp_path / "new.json"
    path.write_text(json.dumps({"vectors": [{
        "id": "x", "description": "d", "rules": ["POLICY-1"], "op": "merge",
        "derived": "reference", "case": {"numa_nodes": [0], "policy": "none", "providers": []},
        "expected": {}}]}))
    assert main(["write", str(path)]) == 0
    written = json.loads(path.read_text())["vectors"][0]["expected"]
    assert written == {"hint": {"numa_affinity": None, "preferred": False}, "admit": True}
    assert main(["check", str(path)]) == 0


def test_check_reports_a_disagreeing_hand_vector(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"vectors": [{
        "id": "x", "description": "d", "rules": ["NO-99"], "op": "merge", "derived": "hand",
        "case": {"numa_nodes": [0], "policy": "none", "providers": []},
        "expected": {"hint": {"numa_affinity": [0], "preferred": True}, "admit": True}}]}))
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "disagrees with the reference" in out
    assert "NO-99, which the spec lacks" in out


@pytest.mark.parametrize(("text", "where"), [
    ("{", "f.json"),
    ('{"vectors": {}}', "f.json"),
    ('{"vectors": [{"id": "a"}]}', "f.json: vectors[0]"),
    ('{"vectors": [{"id": "a", "description": "d", "rules": ["X-1"], "op": "fly", '
     '"derived": "hand", "case": {}, "expected": {}}]}', "f.json: vectors[0].op"),
    ('{"vectors": [{"id": "a", "description": "d", "rules": ["X-1"], "op": "node", '
     '"derived": "hand", "case": {"steps": [{"op": "hints"}]}, "expected": {"answers": []}}]}',
     "f.json: vectors[0].op"),
])
def test_malformed_files_are_typed_errors(text: str, where: str) -> None:
    with pytest.raises(InvalidFieldError) as caught:
        load_vector_file("f.json", text)
    assert caught.value.where == where


# --- compare ---------------------------------------------------------------------------------

MERGE_CASE: dict[str, Any] = {"kubelet_version": "1.30", "numa_nodes": [0, 1],
                              "policy": "best-effort", "providers": [],
                              "policy_options": {"prefer-closest-numa-nodes": "maybe",
                                                 "zzz": "1"}}
OK = {"hint": {"numa_affinity": [0], "preferred": True}, "admit": True}


def error(kind: str, message: str = "") -> dict[str, Any]:
    return {"error": {"kind": kind, "message": message}}


def test_compare_merge() -> None:
    """Errors by kind, any bad option's kind when several are bad (OPT-1); a malformed
    answer is a difference, not an exception."""
    bad_value = error("invalid-policy-option-value", "a")
    assert compare("merge", MERGE_CASE, bad_value, error("unknown-policy-option", "b")) == []
    assert compare("merge", MERGE_CASE, bad_value, error("too-many-numa-nodes")) != []
    assert compare("merge", MERGE_CASE, OK, OK) == []
    assert compare("merge", MERGE_CASE, OK, {**OK, "admit": False}) != []
    garbage: list[Any] = [[], {"hint": 1, "admit": True},
                          {"hint": {"numa_affinity": [99], "preferred": True}, "admit": 1}]
    for actual in garbage:
        differences = compare("merge", MERGE_CASE, OK, actual)
        assert len(differences) == 1
        assert "not a well-formed merge response" in differences[0]
    assert compare("merge", [1], error("invalid-field"), error("invalid-field", "x")) == []


STEPS = [{"op": "create", "node": {}}, {"op": "admit", "pod": {"uid": "a"}},
         {"op": "hints", "pod": {"uid": "a"}, "container": "c"}, {"op": "state"}]
DECISION = {"decision": {"admitted": True, "reason": "", "message": "", "containers": []}}
CPU_HINTS = [{"numa": [0], "preferred": True}, {"numa": [1], "preferred": True}]
HINTS: dict[str, Any] = {"hints": {"cpu": CPU_HINTS, "gpu": None}}
ANSWERS = [{"ok": True}, DECISION, HINTS, {"state": {"pods": ["a"]}}]


def test_compare_sessions() -> None:
    """NWIRE-4: hints lists compared without regard to order; errors by kind; decisions
    whole; missing and extra answers named by step."""
    case, expected = {"steps": STEPS}, {"answers": ANSWERS}
    reordered = {"hints": {"gpu": None, "cpu": list(reversed(CPU_HINTS))}}
    assert compare("hints", case, expected, {"answers": [*ANSWERS[:2], reordered,
                                                         ANSWERS[3]]}) == []
    rejected = {"decision": {**DECISION["decision"], "message": "x"}}
    got = compare("hints", case, expected, {"answers": [ANSWERS[0], rejected, {"hints": {
        "cpu": []}}]})
    assert got[0].startswith("step 2 (admit pod 'a'): decision.message")
    assert got[1].startswith("step 3 (hints pod 'a' container 'c'): hints.cpu: expected")
    assert got[2].startswith("step 4 (state): no answer")
    assert all(len(d) <= 300 for d in got)
    errors = {"answers": [error("invalid-field", "one")]}
    assert compare("node", {"steps": STEPS[:1]}, errors,
                   {"answers": [error("invalid-field", "two")]}) == []
    assert compare("node", {"steps": STEPS[:1]}, errors,
                   {"answers": [error("not-modelled")]}) != []
    extra = compare("node", {"steps": STEPS[:1]}, {"answers": [{"ok": True}]},
                    {"answers": [{"ok": True}, {"ok": True}]})
    assert extra == ["step 2: an extra answer: {\"ok\":true}"]
    assert compare("node", {"steps": STEPS}, expected, {"nope": 1}) != []
