"""The merge's judge (MERGE-*, WIRE-3): outcomes equal, or refusals of the same kind (any
of the bad options' kinds when several are bad, OPT-1), the kubelet words alike (RUN-11)."""

from __future__ import annotations

from typing import Any

from numaspec.conformance.cases.agreement import (
    answers_agree,
    kubelet_words_problem,
    merge_is_ambiguous,
)
from numaspec.conformance.cases.judges.judge import Judge
from numaspec.conformance.cases.judges.wording import LIMIT, require, short
from numaspec.conformance.implementations.adapter import ErrorAnswer, MergeAnswer
from numaspec.errors import InvalidFieldError, NumaspecError
from numaspec.protocols.merge_protocol import MergeRequest, decode_merge_request
from numaspec.topology.hints import TopologyHint
from numaspec.topology.masks import NumaMask
from numaspec.topology.policies import MergeOutcome

__all__ = ["JUDGES", "decode_answer"]


def decode_answer(value: Any, where: str) -> MergeAnswer:
    """A merge response in the wire format → an answer; :class:`InvalidFieldError` if it is
    not one."""
    require(isinstance(value, dict), "expected a response object", where)
    if "error" in value:
        error = value["error"]
        require(isinstance(error, dict) and isinstance(error.get("kind"), str),
                 'an error is {"kind": ..., "message"?: ...}', f"{where}.error")
        words = error.get("kubelet_message")
        return ErrorAnswer(error["kind"], str(error.get("message", "")),
                           words if isinstance(words, str) else None)
    require(set(value) == {"hint", "admit"}, 'a response is {"hint": ..., "admit": ...}', where)
    hint, admit = value["hint"], value["admit"]
    require(isinstance(admit, bool), "a boolean", f"{where}.admit")
    require(isinstance(hint, dict) and {"numa_affinity", "preferred"} <= set(hint)
             <= {"numa_affinity", "preferred", "score", "scores"}
             and isinstance(hint["preferred"], bool),
             'a hint is {"numa_affinity": ..., "preferred": bool, "score"?: 0..100}',
             f"{where}.hint")
    scores = _answer_scores(hint, f"{where}.hint")
    affinity = hint["numa_affinity"]
    if affinity is not None:
        require(isinstance(affinity, list) and all(
            isinstance(n, int) and not isinstance(n, bool) for n in affinity),
                 "null or a list of node ids", f"{where}.hint.numa_affinity")
    try:
        mask = None if affinity is None else NumaMask.of(affinity, where=f"{where}.hint")
    except NumaspecError as exc:
        raise InvalidFieldError(exc.message, where=exc.where) from None
    score = 0 if scores is None else hint["score"]
    return MergeOutcome(TopologyHint(mask, hint["preferred"], score), admit, scores)


def _answer_scores(hint: dict[str, Any], where: str) -> frozenset[int] | None:
    """HINT-5, MERGE-14: an answer's ``score`` (1.38+) and the ``scores`` kubelet may report
    instead, as :class:`MergeOutcome` keeps them (``None``: no score given)."""
    def score(value: Any) -> bool:
        return type(value) is int and 0 <= value <= 100

    if "score" not in hint:
        require("scores" not in hint, "a hint with scores has a score", where)
        return None
    require(score(hint["score"]), "a score is an integer from 0 to 100", f"{where}.score")
    if "scores" not in hint:
        return frozenset({hint["score"]})
    others = hint["scores"]
    require(isinstance(others, list) and all(score(v) for v in others)
             and (not others or hint["score"] in others),
             "scores: the scores kubelet may report, the score among them ([] when not "
             "enumerated)", f"{where}.scores")
    return frozenset(others)


def _mergeshort(answer: Any) -> str:
    """A merge answer whole, in one line: a result as it is, a refusal by its kind and where
    it points (its words, which may be long, are compared apart: RUN-11)."""
    if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
        error = answer["error"]
        answer = {"error": {k: error[k] for k in ("kind", "where") if k in error}}
    return short(answer, 2_000)


def _compare_merge(case: Any, expected: Any, actual: Any) -> list[str]:

    want = decode_answer(expected, "expected")
    try:
        got = decode_answer(actual, "actual")
    except InvalidFieldError as exc:
        return [f"not a well-formed merge response ({exc.describe()}): {short(actual)}"[:LIMIT]]
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
    if not agree:
        return [f"expected {_mergeshort(expected)}, got {_mergeshort(actual)}"]
    if isinstance(want, ErrorAnswer) and isinstance(expected, dict) and isinstance(actual, dict):
        ambiguous = request is None or merge_is_ambiguous(request)
        problem = kubelet_words_problem(expected.get("error"), actual.get("error"), ambiguous)
        if problem is not None:
            return [problem[:LIMIT]]
    return []



def _answer(answer: Any, where: str) -> None:
    require(isinstance(answer, dict), "a merge response object", where)


JUDGES = (Judge("merge", _compare_merge, answer=_answer, channel=None),)
