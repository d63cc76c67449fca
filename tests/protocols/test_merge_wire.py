"""WIRE-7, FAST-8, WIRE-5: the fast reading of a merge request line is the strict one.

For any line, :func:`read_merge_request` either declines it (``None``: the strict decoder
answers) or gives the very request the strict decoder gives; a line the strict decoder
refuses is never taken.  Lines are drawn from valid requests, then written compactly or with
spaces, and broken the ways a client breaks them (a repeated key, an unknown field, a float,
an integer past 64 bits, a node id out of range, a colon in a string).  The mutants of
``tools/numaspec_tools/mutants/wire_mutants.py`` show the property can fail.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings

from numaspec.conformance.properties.strategies import merge_requests
from numaspec.errors import NumaspecError
from numaspec.limits import LINE_BOUND_VARIABLE, MAX_LINE_BYTES, line_bound_from
from numaspec.protocols.adapter_protocol import ReferenceAdapter, serve_adapter
from numaspec.protocols.merge_protocol import (
    MergeRequest,
    decode_merge_request,
    encode_error,
    encode_merge_request,
    encode_outcome,
    evaluate_request,
)
from numaspec.protocols.merge_wire import ARRAY_FROM, read_merge_request, read_run_merge
from numaspec.protocols.serve import serve_merge
from numaspec.strict_json import decode_json_line
from numaspec.topology.hints import HintArray, TopologyHint
from numaspec.topology.masks import NumaMask
from numaspec_tools.mutants.wire_mutants import WIRE_MUTANTS

Reader = Callable[[bytes], MergeRequest | None]

#: A list long enough to be held as arrays, with a hint without an affinity in it.
LONG = ('{"numa_nodes":[0,1],"policy":"restricted","providers":[{"cpu":['
        + ",".join(['{"numa_affinity":[0],"preferred":false}'] * ARRAY_FROM)
        + ',{"numa_affinity":null,"preferred":true}]}]}')
REPEATED = ('{"numa_nodes":[0,1],"policy":"best-effort","policy":"restricted",'
            '"providers":[]}')


def _answer(request: MergeRequest) -> dict[str, Any]:
    try:
        return encode_outcome(evaluate_request(request))
    except NumaspecError as exc:
        return encode_error(exc)


def check_reading(line: bytes, read: Reader = read_merge_request, *, taken: bool = False
                  ) -> None:
    """WIRE-7: ``read`` declines ``line`` or reads it as the strict decoder does; ``taken``:
    the line is a plain one the fast reading must take."""
    fast = read(line)
    try:
        strict = decode_merge_request(decode_json_line(line))
    except NumaspecError as exc:
        refused = exc.describe()
    else:
        refused = ""
    if refused:
        assert fast is None, f"the fast reading took a line the strict decoder refuses: {refused}"
        return
    if fast is None:
        assert not taken, f"the fast reading declined a plain line: {line[:200]!r}"
        return
    assert fast == strict, f"the fast reading differs: {fast} != {strict}"
    assert _answer(fast) == _answer(strict), "the fast reading's request merges differently"


_BREAKS = ("none", "spaces", "repeat", "unknown", "float", "big", "range", "colon", "null",
           "long", "node", "distance", "score")


def _broken(body: dict[str, Any], how: str, draw: st.DrawFn) -> tuple[bytes, bool]:
    """The line of ``body`` broken ``how``, and whether it is plain (must be taken)."""
    compact = json.dumps(body, separators=(",", ":"))
    if how == "none":
        return compact.encode(), ":" not in json.dumps(
            [body.get("policy"), body.get("policy_options"), body.get("kubelet_version"),
             [list(p or {}) for p in body["providers"]]])[1:-1].replace('":', '"')
    if how == "spaces":
        return json.dumps(body, indent=draw(st.sampled_from([None, 1]))).encode(), False
    if how == "repeat":
        key = draw(st.sampled_from(sorted(body)))
        text = compact[:-1] + f',"{key}":' + json.dumps(body[key]) + "}"
        return text.encode(), False
    if how == "unknown":
        return (compact[:-1] + ',"numa_node":[0]}').encode(), False
    if how == "float":
        return compact.replace('"numa_nodes":[0', '"numa_nodes":[0.0', 1).encode(), False
    if how == "big":
        return compact.replace('"numa_nodes":[', '"numa_nodes":[18446744073709551616,',
                               1).encode(), False
    if how == "range":
        return compact.replace('"numa_affinity":[', '"numa_affinity":[64,', 1).encode(), False
    if how == "node":  # MASK-1: a machine node id out of range
        return compact.replace('"numa_nodes":[', '"numa_nodes":[64,', 1).encode(), False
    if how == "distance" and body.get("numa_distances"):  # OPT-6: a negative distance
        rows = {key: [-1, *row[1:]] if row else [-1]
                for key, row in body["numa_distances"].items()}
        return json.dumps({**body, "numa_distances": rows}, separators=(",", ":")).encode(), \
            False
    if how == "score":  # HINT-5: a score outside 0..100 (and before 1.38, any score)
        score = draw(st.sampled_from([-1, 101, -2]))
        return compact.replace('"preferred":', f'"score":{score},"preferred":', 1).encode(), \
            False
    if how == "colon":
        return compact.replace('"policy":"', '"policy":":', 1).encode(), False
    if how == "null":
        return compact.replace('"numa_affinity":[', '"numa_affinity":null,"x":[', 1).encode(), \
            False
    # long: every list padded past ARRAY_FROM with copies of its own hints (FAST-8)
    providers = [None if p is None else {
        name: None if hints is None else (hints * (ARRAY_FROM // max(1, len(hints)) + 1)
                                          if hints else hints)
        for name, hints in p.items()} for p in body["providers"]]
    return json.dumps({**body, "providers": providers}, separators=(",", ":")).encode(), False


@st.composite
def lines(draw: st.DrawFn) -> tuple[bytes, bool]:
    body = encode_merge_request(draw(merge_requests()))
    return _broken(body, draw(st.sampled_from(_BREAKS)), draw)


SETTINGS = settings(max_examples=400, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(lines())
@example((LONG.encode(), True))
@example((REPEATED.encode(), False))
def test_the_fast_reading_is_the_strict_one(case: tuple[bytes, bool]) -> None:  # WIRE-7
    line, plain = case
    check_reading(line, taken=plain)


KILL = settings(max_examples=1500, derandomize=True, database=None, deadline=None,
                phases=[Phase.explicit, Phase.generate], report_multiple_bugs=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("name", sorted(WIRE_MUTANTS))
def test_the_reading_property_kills_the_mutant(name: str) -> None:  # WIRE-7, FAST-8
    mutant = WIRE_MUTANTS[name]

    @KILL
    @given(lines())
    def against_mutant(case: tuple[bytes, bool]) -> None:
        check_reading(case[0], mutant, taken=case[1])

    with pytest.raises(AssertionError, match="fast reading"):
        against_mutant()


def test_the_vectors_read_alike() -> None:  # WIRE-7
    """Every merge vector's request line, read both ways."""
    from numaspec.conformance.cases.vectors import load_vectors

    count = 0
    for vector in load_vectors():
        if vector.op != "merge":
            continue
        line = json.dumps(vector.case, separators=(",", ":")).encode()
        check_reading(line)
        count += 1
    assert count > 100


def test_long_lists_are_arrays_equal_to_their_hints() -> None:  # FAST-8
    request = read_merge_request(LONG.encode())
    assert request is not None
    assert request.providers[0] is not None
    hints = request.providers[0]["cpu"]
    assert isinstance(hints, HintArray)
    assert len(hints) == ARRAY_FROM + 1
    assert hints[-1] == TopologyHint(None, True)
    assert hints[0] == TopologyHint(NumaMask.of([0]), False)
    assert list(hints[-2:]) == [TopologyHint(NumaMask.of([0]), False), TopologyHint(None, True)]
    assert hints == tuple(hints)
    assert tuple(hints) == hints
    assert hints != tuple(hints)[:-1]
    with pytest.raises(ValueError, match="one length"):
        HintArray(np.zeros(2, dtype=np.uint64), np.zeros(1, dtype=np.bool_),
                  np.zeros(2, dtype=np.bool_))
    with pytest.raises(ValueError, match="read-only"):
        hints.words[0] = np.uint64(3)  # read-only: a request is a value


def test_a_run_request_is_read_whole_or_not_at_all() -> None:  # WIRE-7, PROTO-3
    case = LONG
    line = f'{{"cmd":"run","seq":7,"op":"merge","case":{case}}}'.encode()
    found = read_run_merge(line)
    assert found is not None
    assert found[0] == 7
    assert read_run_merge(line.replace(b'"seq":7', b'"seq":7,"seq":8')) is None
    assert read_run_merge(line.replace(b'"op":"merge"', b'"op":"node"')) is None
    assert read_run_merge(line.replace(b'"seq":7', b'"seq":true')) is None
    assert read_run_merge(b'{"cmd":"start","version":1}') is None


def _serve(lines_: list[bytes], adapter: ReferenceAdapter) -> list[Any]:
    out = io.StringIO()
    serve_adapter(adapter, io.BytesIO(b"\n".join(lines_) + b"\n"), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_serve_answers_alike_either_way() -> None:  # WIRE-7
    """The same run requests through serve, fast reading on and off (the definitional
    adapter never takes it): the answers are the same, errors included."""
    bodies = [LONG, REPEATED, '{"numa_nodes":[0],"policy":"static","providers":[]}',
              '{"numa_nodes":[0],"policy":"none","providers":[],"kubelet_version":"1.99"}']
    requests = [f'{{"cmd":"run","seq":{i},"op":"merge","case":{b}}}'.encode()
                for i, b in enumerate(bodies)]
    fast = _serve(requests, ReferenceAdapter())

    class Strict(ReferenceAdapter):
        answer_merge_line = None  # type: ignore[assignment]

    assert fast == _serve(requests, Strict())
    # the repeated key is refused for the whole line (WIRE-3), before any operation
    assert [sorted(a.get("result", a)) for a in fast] == [
        ["admit", "hint"], ["context", "errored", "seq"], ["error"], ["error"]]


# --- WIRE-5: the line bound, a setting --------------------------------------------------------


def test_the_line_bound_admits_16_nodes_and_is_a_setting() -> None:  # WIRE-5
    assert MAX_LINE_BYTES >= 17_800_000  # 16 x 4 x 65,535 written with spaces
    assert line_bound_from({}) == MAX_LINE_BYTES
    assert line_bound_from({LINE_BOUND_VARIABLE: " 1024 "}) == 1024
    for bad in ("0", "-1", "1e6", "lots", "9" * 40):
        with pytest.raises(ValueError, match=LINE_BOUND_VARIABLE):
            line_bound_from({LINE_BOUND_VARIABLE: bad})
    out = io.StringIO()
    serve_merge(io.BytesIO(LONG.encode() + b"\n" + REPEATED.encode() + b"\n"), out,
                max_line=len(LONG) - 1)
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["error"]["kind"] == "limit-exceeded"
    assert f"at most {len(LONG) - 1} bytes" in first["error"]["message"]
    assert "appears twice" in second["error"]["message"]  # the stream goes on


@pytest.mark.parametrize("how", ["flag", "variable", "bad-variable", "bad-flag"])
def test_the_line_bound_from_the_command_line(how: str) -> None:  # WIRE-5
    args = [sys.executable, "-m", "numaspec", "merge"]
    env = {k: v for k, v in __import__("os").environ.items() if k != LINE_BOUND_VARIABLE}
    if how == "flag":
        args += ["--max-line-bytes", "100"]
    elif how == "bad-flag":
        args += ["--max-line-bytes", "many"]
    else:
        env[LINE_BOUND_VARIABLE] = "100" if how == "variable" else "many"
    done = subprocess.run(args, input=LONG.encode() + b"\n", capture_output=True, env=env,
                          timeout=120, check=False)
    if how.startswith("bad"):
        assert done.returncode == (2 if how == "bad-flag" else 4)  # argparse's, numaspec's
        assert b"Traceback" not in done.stderr
        assert (b"--max-line-bytes" if how == "bad-flag" else LINE_BOUND_VARIABLE.encode()) \
            in done.stderr
        return
    assert done.returncode == 0
    assert json.loads(done.stdout)["error"]["kind"] == "limit-exceeded"


# --- WIRE-5: numbers written inside strings ---------------------------------------------------


@pytest.mark.parametrize(("field", "value", "kind"), [
    ("kubelet_version", "1." + "3" * 4500, "unsupported-version"),
    ("kubelet_version", "v1.30." + "9" * 5000, "unsupported-version"),
    ("policy_options", {"max-allowable-numa-nodes": "9" * 4800}, "invalid-policy-option-value"),
    ("policy_options", {"max-allowable-numa-nodes": "-" + "9" * 4400},
     "invalid-policy-option-value"),
])
def test_long_numbers_in_strings_are_refused_not_crashed(field: str, value: Any,
                                                          kind: str) -> None:  # WIRE-5
    body = {"kubelet_version": "1.37", "numa_nodes": [0, 1], "policy": "restricted",
            "providers": [], field: value}
    line = json.dumps(body).encode()
    answer = _answer_line(line)
    assert answer["error"]["kind"] == kind, answer


def test_leading_zeros_are_go_s_integers() -> None:  # OPT-4
    body = {"kubelet_version": "1.37", "numa_nodes": list(range(9)), "policy": "restricted",
            "policy_options": {"max-allowable-numa-nodes": "0" * 5000 + "9"},
            "feature_gates": {"TopologyManagerPolicyBetaOptions": True},
            "providers": []}
    assert "error" not in _answer_line(json.dumps(body).encode())


def _answer_line(line: bytes) -> dict[str, Any]:
    from numaspec.protocols.serve import answer_merge_line

    return answer_merge_line(line)
