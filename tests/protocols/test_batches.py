"""PROTO-8: batches.  An implementation that declares ``batch`` is sent its cases in batch
requests, and whatever it does with a batch (crash, hang, a short answer, answers out of
order, a line that is not JSON) each case still ends in the verdict the one-case path gives
it (RUN-1, RUN-2): the crash or the hang lands on the case that causes it, a broken answer on
the case it breaks, and the cases after it are sent again to a fresh process.  The fixture
adapter is tools/numaspec_tools/adapters/batching.py; the mutants that these checks catch,
tools/numaspec_tools/mutants/batch_mutants.py."""

from __future__ import annotations

import io
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from numaspec.conformance.implementations.connection import (
    Answer,
    ExecConnection,
    Implementation,
)
from numaspec.conformance.implementations.strict import StrictChecker
from numaspec.conformance.running.reports import read_report
from numaspec.conformance.running.runner import RunConfig, run_conformance
from numaspec.errors import AdapterError
from numaspec.protocols.adapter_protocol import ReferenceAdapter
from numaspec_tools import ADAPTERS, FIXTURES
from numaspec_tools.mutants import batch_mutants

MERGE = {"kubelet_version": "1.30", "numa_nodes": [0, 1], "policy": "restricted"}
#: ten merges with different answers; the sixth (index 5) is the fixture's trigger
CASES = [{**MERGE, "providers": [{"cpu": [{"numa_affinity": [i % 2], "preferred": i < 5}]}],
          **({"fixture": "trigger"} if i == 5 else {})} for i in range(10)]
EXPECTED = [{"seq": 0, **ReferenceAdapter().run("merge", case)}["result"] for case in CASES]


def command(mode: str) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(ADAPTERS / 'batching.py'))} {mode}"


def answers_of(mode: str, *, timeout: float = 10.0) -> tuple[list[Answer], ExecConnection]:
    connection = ExecConnection(command(mode), timeout=timeout, strict=StrictChecker())
    try:
        # window 8: batches of 4, two in flight
        return connection.run_many("merge", CASES, window=8), connection
    finally:
        connection.close()


def right(answers: list[Answer], index: int) -> bool:
    return answers[index].status == "result" and answers[index].result == EXPECTED[index]


# --- the checks, each a function so that the mutants can be run through them -----------------


def check_good() -> None:
    answers, connection = answers_of("good")
    assert connection.implementation.batch == 4
    assert all(right(answers, i) for i in range(10))
    assert connection.restarts == 0


def check_crash() -> None:
    answers, connection = answers_of("crash")
    assert len(answers) == 10
    assert answers[5].status == "crashed"
    assert "crashing on the trigger case" in answers[5].stderr
    assert all(right(answers, i) for i in range(10) if i != 5)
    assert connection.restarts == 2  # the batch's crash, then the trigger's own


def check_hang() -> None:
    answers, _ = answers_of("hang", timeout=1.0)
    assert len(answers) == 10
    assert answers[5].status == "timeout"
    assert all(right(answers, i) for i in range(10) if i != 5)


def check_short() -> None:
    answers, _ = answers_of("short")
    # batches [0..3], then (restarted) [4..7], then [8, 9]: each loses its last answer
    broken = [i for i, a in enumerate(answers) if a.status == "protocol-error"]
    assert broken == [3, 7, 9]
    assert all("none for seq" in answers[i].message for i in broken)
    assert all(answers[i].restarted for i in broken)
    assert all(right(answers, i) for i in range(10) if i not in broken)


def check_out_of_order() -> None:
    answers, _ = answers_of("out-of-order")
    assert len(answers) == 10
    assert answers[0].status == "protocol-error"
    assert "out of order" in answers[0].message
    assert answers[0].restarted
    # every batch loses its first case; the last case goes alone and is answered right
    assert all(a.status == "protocol-error" for a in answers[:9])
    assert right(answers, 9)


def check_garbage() -> None:
    answers, _ = answers_of("garbage")
    assert len(answers) == 10
    assert answers[0].status == "protocol-error"
    assert "not JSON" in answers[0].message
    assert "first case" in answers[0].message
    assert all(a.status == "protocol-error" or right(answers, i) for i, a in enumerate(answers))


def check_too_many() -> None:
    answers, _ = answers_of("too-many")
    assert answers[0].status == "protocol-error"
    assert "at most 4 run answers" in answers[0].message


CHECKS: dict[str, Callable[[], None]] = {
    "good": check_good, "crash": check_crash, "hang": check_hang, "short": check_short,
    "out-of-order": check_out_of_order, "garbage": check_garbage, "too-many": check_too_many}


@pytest.mark.parametrize("mode", sorted(CHECKS))
def test_each_case_gets_the_verdict_the_one_case_path_gives_it(mode: str) -> None:
    CHECKS[mode]()


@pytest.fixture(params=sorted(batch_mutants.MUTANTS))
def mutant(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    name: str = request.param
    monkeypatch.setattr(ExecConnection, "_receive_batch", batch_mutants.MUTANTS[name].receive_batch)
    return name


def test_the_checks_catch_wrong_batch_handling(mutant: str) -> None:
    """Every property asserts something that can fail: each mutant of the runner's batch
    handling (charging a whole batch with its crash, taking answers in the order they come)
    fails the check written for it."""
    with pytest.raises(AssertionError):
        CHECKS[batch_mutants.MUTANTS[mutant].caught_by]()


# --- the declaration ------------------------------------------------------------------------


IMPLEMENTATION = {"name": "x", "version": "1", "language": "go", "homepage": "", "issues": "",
                  "kubelet_versions": ["1.30"], "operations": ["merge"]}


def test_an_implementation_without_batch_is_sent_one_run_a_request() -> None:
    assert Implementation.from_json(IMPLEMENTATION, "start").batch == 1
    assert Implementation.from_json({**IMPLEMENTATION, "batch": 64}, "start").batch == 64


@pytest.mark.parametrize("batch", [1, 0, 1025, "8", True, 2.5])
def test_a_bad_batch_declaration_is_refused_naming_it(batch: Any) -> None:
    with pytest.raises(AdapterError, match=r"implementation\.batch"):
        Implementation.from_json({**IMPLEMENTATION, "batch": batch}, "start")
    answer = {"ready": True, "version": 1, "implementation": {**IMPLEMENTATION, "batch": batch}}
    assert StrictChecker().start_problem(answer) is not None


def test_strict_mode_checks_batch_requests() -> None:
    checker = StrictChecker()
    run = {"cmd": "run", "seq": 1, "op": "merge", "case": MERGE}
    checker.check_request({"cmd": "batch", "runs": [run, {**run, "seq": 2}]})
    for bad in ({"cmd": "batch", "runs": []}, {"cmd": "batch", "runs": [{**run, "seq": 0}]},
                {"cmd": "batch", "runs": [run], "extra": 1}):
        with pytest.raises(AdapterError):
            checker.check_request(bad)


# --- the runner -----------------------------------------------------------------------------


SMALL = str(FIXTURES / "vectors-small.json")


def run(tmp_path: Path, mode: str, timeout: float) -> list[dict[str, Any]]:
    config = RunConfig(impl=f"exec:{command(mode)}", out=str(tmp_path / "out"), timeout=timeout,
                       vector_files=(SMALL,), properties=False, strict=True)
    run_conformance(config, stream=io.StringIO())
    return read_report(tmp_path / "out" / "report.jsonl")[1]


def test_vectors_sent_in_batches_get_the_verdicts_they_get_alone(tmp_path: Path) -> None:
    records = run(tmp_path, "good", 10.0)
    assert len(records) == 10
    assert {r["verdict"] for r in records} == {"passed"}


def test_the_runner_gives_up_on_a_batching_adapter_that_never_answers(tmp_path: Path) -> None:
    """RUN-3: five timeouts in a row, however many cases were asked together."""
    records = run(tmp_path, "hang-always", 0.5)
    assert [r["verdict"] for r in records] == ["timeout"] * 5 + ["not-run"] * 5
