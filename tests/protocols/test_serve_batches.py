"""``numaspec serve`` answers PROTO-8's batches: each run as it would be answered alone, the
merge runs of a batch read whole by the fast reading (WIRE-7) and any other batch by the
strict decoders; a batch that is none is refused as any line that is no request."""

from __future__ import annotations

import io
import json
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numaspec.conformance.properties.random_cases import random_merge_cases
from numaspec.protocols import adapter_protocol
from numaspec.protocols.adapter_protocol import SERVE_BATCH, ReferenceAdapter, serve_adapter

MERGE = {"kubelet_version": "1.30", "numa_nodes": [0, 1], "policy": "restricted",
         "providers": [{"cpu": [{"numa_affinity": [1], "preferred": True}]}]}


def _converse(lines: list[bytes], *, max_line: int | None = None) -> list[Any]:
    out = io.StringIO()
    extra = {} if max_line is None else {"max_line": max_line}
    serve_adapter(ReferenceAdapter(), io.BytesIO(b"".join(line + b"\n" for line in lines)), out,
                  **extra)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _run(seq: int, case: Any, op: str = "merge") -> dict[str, Any]:
    return {"cmd": "run", "seq": seq, "op": op, "case": case}


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def test_serve_declares_its_batches_unless_told_not_to() -> None:
    assert ReferenceAdapter().start()["batch"] == SERVE_BATCH
    assert "batch" not in ReferenceAdapter(batch=False).start()


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(1, SERVE_BATCH),
       strict=st.booleans())
def test_a_batch_is_answered_as_its_runs_alone(seed: int, size: int, strict: bool) -> None:
    """PROTO-8: the random mix of ``numaspec bench`` (every policy, option, gate, release and
    refusal) in a batch the fast reading takes whole, or (``strict``: each run with a field
    of its own, which the fast reading declines) one the strict decoders read: the answers
    are the runs' own, in order."""
    cases = random_merge_cases(size, seed)
    runs = [{**_run(seq, case), **({"note": seq} if strict else {})}
            for seq, case in enumerate(cases, 1)]
    alone = _converse([_compact(run) for run in runs])
    (together,) = _converse([_compact({"cmd": "batch", "runs": runs})])
    assert together == {"answers": alone}


def test_a_batch_of_other_operations_and_refusals() -> None:
    """Runs of other operations, and runs the reference refuses, each get their own answer."""
    runs = [_run(1, MERGE), _run(2, {**MERGE, "policy": "bogus"}), _run(3, MERGE, "hints"),
            _run(4, MERGE, "no-such-op"), {"cmd": "run", "seq": "five", "op": "merge",
                                           "case": MERGE}]
    (together,) = _converse([_compact({"cmd": "batch", "runs": runs})])
    assert together == {"answers": _converse([_compact(run) for run in runs])}


@pytest.mark.parametrize("batch", [
    {"cmd": "batch", "runs": []},
    {"cmd": "batch", "runs": [_run(i, MERGE) for i in range(SERVE_BATCH + 1)]},
    {"cmd": "batch", "runs": [{"cmd": "start", "version": 1}]},
    {"cmd": "batch", "runs": [_run(1, MERGE)], "window": 2},
    {"cmd": "batch", "runs": {"1": _run(1, MERGE)}},
    {"cmd": "batch"},
])
def test_a_batch_that_is_none_is_refused_whole(batch: dict[str, Any]) -> None:
    (answer,) = _converse([_compact(batch)])
    assert answer["seq"] is None
    assert answer["errored"] is True
    assert "a batch is" in answer["context"]["message"]


def test_a_batch_may_be_as_long_as_its_runs_and_no_other_line_is() -> None:
    """WIRE-5 under PROTO-8: a batch line is held to the bound of the run lines it holds; any
    other line to the bound of one line, and told that bound."""
    runs = [_run(seq, MERGE) for seq in range(1, 5)]
    single = len(_compact(runs[0]))
    batch, long_run = _converse([_compact({"cmd": "batch", "runs": runs}),
                                 _compact({**runs[0], "pad": "x" * single})],
                                max_line=single + 10)
    assert [a["seq"] for a in batch["answers"]] == [1, 2, 3, 4]
    assert long_run["errored"] is True
    assert f"of at most {single + 10} bytes" in long_run["context"]["message"]


def _drops_the_last(self: ReferenceAdapter, line: bytes) -> dict[str, Any] | None:
    """A mutant: the fast batch answer loses its last run."""
    answer = _ORIGINAL(self, line)
    if answer is not None:
        answer["answers"] = answer["answers"][:-1]
    return answer


_ORIGINAL = ReferenceAdapter.answer_batch_line


def test_the_batch_property_catches_a_lost_run() -> None:
    check = test_a_batch_is_answered_as_its_runs_alone.hypothesis.inner_test  # type: ignore[attr-defined]
    with mock.patch.object(adapter_protocol.ReferenceAdapter, "answer_batch_line",
                           _drops_the_last), pytest.raises(AssertionError):
        check(seed=0, size=3, strict=False)


def test_a_compact_batch_of_merges_is_read_whole() -> None:
    """WIRE-7: the fast reading takes a batch of plain merge runs (the bench's), and leaves
    one with a field it does not know, or a run of another operation, to the strict
    decoders."""
    batch = {"cmd": "batch", "runs": [_run(1, MERGE), _run(2, MERGE)]}
    assert ReferenceAdapter().answer_batch_line(json.dumps(batch).encode()) is not None
    for runs in ([_run(1, MERGE), {**_run(2, MERGE), "note": 2}],
                 [_run(1, MERGE), _run(2, MERGE, "hints")]):
        assert ReferenceAdapter().answer_batch_line(_compact({"cmd": "batch",
                                                              "runs": runs})) is None
