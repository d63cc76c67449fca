"""The merge's judge (MERGE-*, WIRE-3): outcomes equal, or refusals of the same kind (any
of the bad options' kinds when several are bad, OPT-1), the kubelet words alike (RUN-11)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaspec.conformance.cases.agreement import (
    answers_agree,
    kubelet_words_problem,
    merge_is_ambiguous,
)
from numaspec.conformance.cases.judges.judge import Draw, Judge, minor_of
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


#: RUN-5: the merge's facts a manifest's ``match`` may name.
FACTS = {
    "case.empty_resource": "merge: some resource's hint list is empty ([]: it cannot be placed)",
    "expected.affinity": "merge: the reference's hint: none (no affinity), machine (every "
                         "node of the case) or other",
    "actual.affinity": "merge: the implementation's hint, as expected.affinity",
    "actual.narrower": "merge: both hints have an affinity and the implementation's has fewer "
                       "nodes",
    "expected.preferred": "merge: whether the reference's hint is preferred",
    "actual.preferred": "merge: whether the implementation's hint is preferred",
    "expected.admit": "merge: whether the reference admits",
    "actual.admit": "merge: whether the implementation admits",
    "same.preferred": "merge: both hints are preferred, or neither",
    "same.admit": "merge: both admit, or neither",
}


def _hint(answer: Any) -> tuple[list[int] | None, bool, bool] | None:
    if not isinstance(answer, Mapping) or not isinstance(answer.get("hint"), Mapping):
        return None
    hint = answer["hint"]
    affinity = hint.get("numa_affinity")
    return (sorted(affinity) if isinstance(affinity, list) else None,
            bool(hint.get("preferred")), bool(answer.get("admit")))


def _affinity(hint: tuple[list[int] | None, bool, bool] | None, machine: list[int]
              ) -> str | None:
    if hint is None:
        return None
    if hint[0] is None:
        return "none"
    return "machine" if hint[0] == machine else "other"


def _facts(case: Mapping[str, Any], expected: Any, actual: Any) -> dict[str, Any]:
    machine = sorted(n for n in case.get("numa_nodes") or () if isinstance(n, int))
    want, got = _hint(expected), _hint(actual)
    providers = case.get("providers") or ()
    return {
        "kubelet_version": minor_of(case.get("kubelet_version")),
        "policy": case.get("policy"),
        "case.empty_resource": any(
            hints == [] for p in providers if isinstance(p, Mapping) for hints in p.values()),
        "expected.affinity": _affinity(want, machine),
        "actual.affinity": _affinity(got, machine),
        "actual.narrower": bool(want and got and want[0] is not None and got[0] is not None
                                and len(got[0]) < len(want[0])),
        "expected.preferred": want[1] if want else None,
        "actual.preferred": got[1] if got else None,
        "expected.admit": want[2] if want else None,
        "actual.admit": got[2] if got else None,
        "same.preferred": bool(want and got and want[1] == got[1]),
        "same.admit": bool(want and got and want[2] == got[2]),
    }


_CASES = "numaspec.conformance.properties.random_cases"
JUDGES = (Judge("merge", _compare_merge, answer=_answer, channel=None, fact_names=FACTS,
                facts=_facts,
                draws=(Draw("small", f"{_CASES}:draw_small_case"),
                       Draw("large", f"{_CASES}:draw_large_case", batch=4,
                            versions=f"{_CASES}:large_draw_versions")),
                smaller=f"{_CASES}:smaller_merge_cases"),)
