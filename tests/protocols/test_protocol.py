"""The implementation side of the adapter protocol (PROTO-1..PROTO-6): ``serve_adapter`` and
``numaspec serve``, every message checked against spec/schemas/adapter-protocol.schema.json."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from numaspec.conformance.implementations.connection import connect
from numaspec.conformance.implementations.strict import StrictChecker, schema_registry
from numaspec.protocols.adapter_protocol import ReferenceAdapter, reference_result, serve_adapter
from numaspec.protocols.operations import OPERATIONS

MERGE = {"kubelet_version": "1.30", "numa_nodes": [0, 1], "policy": "restricted",
         "providers": [{"cpu": [{"numa_affinity": [1], "preferred": True}]}]}


def converse(*requests: Any) -> list[dict[str, Any]]:
    lines = b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n"
                     for r in requests)
    out = io.StringIO()
    assert serve_adapter(ReferenceAdapter(), io.BytesIO(lines), out) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def validator(definition: str) -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(
        {"$ref": f"tag:numaspec,2026:adapter-protocol#/$defs/{definition}"},
        registry=schema_registry())


def test_a_session_answers_start_and_runs_in_order_and_stops() -> None:
    """PROTO-1 framing, PROTO-2 start, PROTO-3 run, PROTO-4 answers, PROTO-5 stop."""
    answers = converse({"cmd": "start", "version": 1},
                       {"cmd": "run", "seq": 1, "op": "merge", "case": MERGE},
                       {"cmd": "run", "seq": 2, "op": "node", "case": {"steps": []}},
                       {"cmd": "stop"},
                       {"cmd": "run", "seq": 3, "op": "merge", "case": MERGE})
    assert len(answers) == 3  # nothing after stop (PROTO-5)
    start, first, second = answers
    validator("startAnswer").validate(start)
    assert start["ready"] is True
    # every operation of the protocol's list, in its order, but predict (PRED-1)
    assert start["implementation"]["operations"] == [op for op in OPERATIONS if op != "predict"]
    assert first == {"seq": 1, "result": reference_result("merge", MERGE)}
    assert second == {"seq": 2, "result": {"answers": []}}
    for answer in (first, second):
        validator("runAnswer").validate(answer)


def test_an_unknown_protocol_version_is_refused_not_guessed() -> None:
    """PROTO-2: ready false, with the version spoken."""
    (answer,) = converse({"cmd": "start", "version": 2})
    assert answer["ready"] is False
    assert "version 1" in answer["message"]
    validator("startAnswer").validate(answer)


@pytest.mark.parametrize(("line", "message"), [
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "a request is a JSON object"),
    (json.dumps({"cmd": "dance"}).encode(), "unknown cmd 'dance'"),
    (json.dumps({"cmd": "run", "seq": "x", "op": "merge", "case": {}}).encode(),
     "'seq' must be an integer"),
    (json.dumps({"cmd": "run", "seq": 4, "op": "fold", "case": {}}).encode(),
     "unknown op 'fold'"),
    (json.dumps({"cmd": "run", "seq": 5, "op": "node", "case": []}).encode(),
     '{"steps": [request, ...]}'),
])
def test_bad_requests_get_errored_answers_and_the_stream_goes_on(line: bytes,
                                                                 message: str) -> None:
    bad, good = converse(line, {"cmd": "run", "seq": 9, "op": "merge", "case": MERGE})
    assert bad["errored"] is True
    assert message in bad["context"]["message"]
    validator("runAnswer").validate(bad)
    assert good["seq"] == 9
    assert "result" in good


def test_an_invalid_case_is_a_result_carrying_the_error_kind() -> None:
    _, answer = converse({"cmd": "start", "version": 1},
                         {"cmd": "run", "seq": 1, "op": "merge",
                          "case": {**MERGE, "policy": "sometimes"}})
    assert answer["result"]["error"]["kind"] == "unknown-policy"  # PROTO-4


def test_strict_checker_names_the_path_of_a_violation() -> None:
    """PROTO-6."""
    checker = StrictChecker()
    problem = checker.answer_problem({"seq": 1, "result": {"hint": {}, "admit": "yes"}}, "merge")
    assert problem is not None
    assert problem.startswith("run answer.result")
    assert checker.answer_problem({"seq": 1, "skipped": True}, "merge") is not None
    assert checker.answer_problem({"seq": 1, "result": {"answers": [{"ok": True}]}},
                                  "node") is None
    assert checker.start_problem({"ready": True, "version": 1}) is not None


def test_numaspec_serve_passes_strict_mode_as_a_subprocess() -> None:
    connection = connect(f"exec:{sys.executable} -m numaspec serve", strict=True)
    try:
        assert connection.implementation.name == "numaspec-reference"
        answers = connection.run_many("merge", [MERGE] * 40, window=8)
        assert {a.status for a in answers} == {"result"}
        node = connection.run("node", {"steps": [{"op": "state"}]})
        assert node.status == "result"
        assert node.result["answers"][0]["error"]
    finally:
        connection.close()


def test_serve_exits_cleanly_at_end_of_input() -> None:
    done = subprocess.run([sys.executable, "-m", "numaspec", "serve"], input=b"",
                          capture_output=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout == b""
    assert done.stderr == b""


def test_serve_definitional_walks_the_cross_product() -> None:
    """``numaspec serve --definitional`` answers merges by the walk (FAST-7, WIRE-4): the same
    answer as the fast merge where the walk fits its budget, merge-too-large where it does not."""
    hints = [{"numa_affinity": [i % 2], "preferred": True} for i in range(60)]
    big = {**MERGE, "providers": [{f"r{i}": hints for i in range(5)}]}
    walk = ReferenceAdapter(definitional=True)
    assert walk.run("merge", MERGE) == ReferenceAdapter().run("merge", MERGE)
    assert walk.run("merge", big)["result"]["error"]["kind"] == "merge-too-large"
    assert "error" not in ReferenceAdapter().run("merge", big)["result"]
    lines = b"".join(json.dumps(r).encode() + b"\n" for r in (
        {"cmd": "start", "version": 1}, {"cmd": "run", "seq": 1, "op": "merge", "case": big}))
    done = subprocess.run([sys.executable, "-m", "numaspec", "serve", "--definitional"],
                          input=lines, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.splitlines()[1])
    assert answer["result"]["error"]["kind"] == "merge-too-large"


def test_a_connection_never_closed_leaves_no_temp_dir(tmp_path: Path) -> None:
    """RUN-14: a script that ends without closing its connection leaves no
    ``numaspec-impl-*`` directory behind (removed when the script's process exits)."""
    script = ("import sys\n"
              "from numaspec.conformance.implementations.connection import connect\n"
              f"c = connect('exec:{sys.executable} -m numaspec serve')\n"
              "c.run('merge', {})\n"
              "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.stdout.strip() == "ok", done.stderr
    assert list(tmp_path.iterdir()) == []
