"""Deliberately wrong batch handling in the runner (PROTO-8), each a replacement of
``ExecConnection._receive_batch``; tests/protocols/test_batches.py runs its checks through
them and expects each mutant to fail the check named for it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from numaspec.conformance.implementations import connection
from numaspec.conformance.implementations.connection import Answer, ExecConnection

ReceiveBatch = Callable[[ExecConnection, Any, list[int], str, int], "list[Answer] | None"]
_RIGHT = ExecConnection._receive_batch


def _charge_the_whole_batch(self: ExecConnection, process: Any, seqs: list[int], op: str,
                            mark: int) -> list[Answer] | None:
    """A batch that crashes or hangs is charged to every case of it, instead of its cases
    being sent again one at a time (the crash not isolated)."""
    answers = _RIGHT(self, process, seqs, op, mark)
    if answers is None:
        return [Answer("crashed", message="the batch crashed", restarted=True)] * len(seqs)
    return answers


def _trust_the_order(self: ExecConnection, process: Any, seqs: list[int], op: str,
                     mark: int) -> list[Answer] | None:
    """A batch's answers are taken in the order they come, their ``seq`` not checked."""
    original = connection._classify

    def classify(answer: Any, seq: int | None, *args: Any, **kwargs: Any) -> Answer:
        del seq
        return original(answer, None, *args, **kwargs)

    connection._classify = classify
    try:
        return _RIGHT(self, process, seqs, op, mark)
    finally:
        connection._classify = original


def _ignore_short_answers(self: ExecConnection, process: Any, seqs: list[int], op: str,
                          mark: int) -> list[Answer] | None:
    """A short batch answer's missing cases are given what the last one got."""
    answers = _RIGHT(self, process, seqs, op, mark)
    if answers and "none for seq" in answers[-1].message:
        answers[-1] = attrs.evolve(answers[-2], restarted=True) if len(answers) > 1 else (
            answers[-1])
    return answers


@attrs.frozen
class Mutant:
    receive_batch: ReceiveBatch
    #: the check of test_batches.py that must fail with it
    caught_by: str


MUTANTS = {
    "charge-the-whole-batch": Mutant(_charge_the_whole_batch, "crash"),
    "trust-the-order": Mutant(_trust_the_order, "out-of-order"),
    "ignore-short-answers": Mutant(_ignore_short_answers, "short"),
}
