"""The judges: how an implementation's answer is held to the expected one, per operation
(``compare``: ``[]`` when they agree, else each difference in a line).  The runner, the
differential, the behaviour diff and the properties judge through here; the vector loader
(:mod:`numaspec.conformance.cases.vectors`) only loads."""

from __future__ import annotations

import json
from typing import Any

from numaspec.conformance.cases.agreement import (
    answers_agree,
    kubelet_words_problem,
    merge_is_ambiguous,
)
from numaspec.conformance.cases.device_equivalence import normalize_session
from numaspec.conformance.implementations.adapter import ErrorAnswer, MergeAnswer
from numaspec.errors import InvalidFieldError, NumaspecError
from numaspec.protocols.merge_protocol import MergeRequest, decode_merge_request
from numaspec.protocols.operations import OPERATIONS
from numaspec.topology.hints import TopologyHint
from numaspec.topology.masks import NumaMask
from numaspec.topology.policies import MergeOutcome

__all__ = ["LIMIT", "compare", "decode_answer", "require", "short"]


LIMIT = 300  # characters per difference


def require(ok: bool, message: str, where: str) -> None:
    if not ok:
        raise InvalidFieldError(message, where=where)


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


def short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _session_is_ambiguous(case: Any) -> bool:
    """Several gates or options in a create step: which one kubelet names first is Go map
    order."""
    steps = case.get("steps", []) if isinstance(case, dict) else []
    for step in steps if isinstance(steps, list) else []:
        node = step.get("node") if isinstance(step, dict) else None
        config = node.get("config") if isinstance(node, dict) else None
        if isinstance(config, dict) and any(
                isinstance(config.get(field), dict) and len(config[field]) > 1
                for field in ("featureGates", "cpuManagerPolicyOptions",
                              "topologyManagerPolicyOptions")):
            return True
    return False


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
    return f"not an answer: {short(answer, 60)}"


def _hint_key(hint: Any) -> str:
    """NWIRE-4: a hint whole, its ``score`` (1.38+) included."""
    return json.dumps(hint, sort_keys=True)


def _placement_key(hint: Any) -> str:
    """NWIRE-4: a hint without its ``score``: where and whether preferred."""
    return _hint_key({k: v for k, v in hint.items() if k != "score"}
                     if isinstance(hint, dict) else hint)


def _compare_step(expected: Any, actual: Any, ambiguous: bool = False) -> str | None:
    """What differs between one expected and one actual node-protocol answer, or None."""
    if not (isinstance(expected, dict) and len(expected) == 1):
        return None if expected == actual else f"expected {short(expected)}, got {short(actual)}"
    key = next(iter(expected))
    if not (isinstance(actual, dict) and set(actual) == {key}):
        return f"expected {_shape(expected)}, got {_shape(actual)}"
    want, got = expected[key], actual[key]
    if key == "error":
        kind = want.get("kind") if isinstance(want, dict) else None
        got_kind = got.get("kind") if isinstance(got, dict) else None
        if kind != got_kind:
            return f"expected error {kind!r}, got error {got_kind!r}: {short(got, 100)}"
        return kubelet_words_problem(want, got, ambiguous)
    if key == "decision" and isinstance(want, dict) and isinstance(got, dict):
        for field in ("admitted", "reason", "message", "containers"):
            if want.get(field) != got.get(field):
                return (f"decision.{field}: expected {short(want.get(field))}, got "
                        f"{short(got.get(field))}")
        extra = sorted(set(got) - set(want))
        return f"decision has unexpected fields {extra}" if extra else None
    if key == "hints" and isinstance(want, dict) and isinstance(got, dict):
        for resource in sorted(set(want) | set(got), key=str):
            if resource not in got:
                return f"hints: no {resource!r} (expected {short(want[resource], 80)})"
            if resource not in want:
                return f"hints: unexpected {resource!r}: {short(got[resource], 80)}"
            a, b = want[resource], got[resource]
            if isinstance(a, list) and isinstance(b, list):
                # NWIRE-4: each hint whole: from 1.38 its score too (a hint with a score
                # where none is expected, before 1.38, differs as well)
                if sorted(map(_hint_key, a)) == sorted(map(_hint_key, b)):
                    continue
                if sorted(map(_placement_key, a)) == sorted(map(_placement_key, b)):
                    return (f"hints.{resource}: the same hints with other scores (NWIRE-4): "
                            f"expected {short(a, 100)}, got {short(b, 100)}")
            elif a == b:
                continue
            return f"hints.{resource}: expected {short(a, 100)}, got {short(b, 100)}"
        return None
    return None if want == got else f"{key}: expected {short(want)}, got {short(got)}"


def _compare_session(case: Any, expected: Any, actual: Any) -> list[str]:
    steps = case.get("steps", []) if isinstance(case, dict) else []
    want = expected.get("answers", []) if isinstance(expected, dict) else []
    if not (isinstance(actual, dict) and isinstance(actual.get("answers"), list)):
        return [f'not a session result ({{"answers": [...]}}): {short(actual)}'[:LIMIT]]
    got = actual["answers"]
    ambiguous = _session_is_ambiguous(case)
    # RUN-12: devices that report the same NUMA nodes are interchangeable.
    listed = steps if isinstance(steps, list) else []
    want_eq = normalize_session(listed, want) if isinstance(want, list) else want
    got_eq = normalize_session(listed, got)
    differences = []
    for index in range(max(len(want), len(got))):
        label = _label(index + 1, steps[index] if index < len(steps) else None)
        if index >= len(got):
            differences.append(f"{label}: no answer (expected {_shape(want[index])})")
        elif index >= len(want):
            differences.append(f"{label}: an extra answer: {short(got[index], 100)}")
        else:
            problem = _compare_step(want[index], got[index], ambiguous)
            if problem is not None:
                problem = _compare_step(want_eq[index], got_eq[index], ambiguous)
            if problem is not None:
                differences.append(f"{label}: {problem}")
    return [d[:LIMIT] for d in differences]


def compare(op: str, case: Any, expected: Any, actual: Any) -> list[str]:
    """How ``actual`` differs from ``expected`` for ``case``: ``[]`` when they agree.

    ``merge``: outcomes equal, or errors of the same kind (any of the bad options' kinds when
    several are bad, OPT-1).  ``node``/``hints``/``affinity``: step by step, errors by kind,
    decisions and states equal up to devices that report the same NUMA nodes (RUN-12), each
    resource's hints compared without regard to order (NWIRE-4).  ``predict``: the same answer
    exactly (for the reference's own answers; the runner judges an implementation's
    prediction by PRED-4 instead).  ``allocate``: the same answer up to the order of the
    node's pools (DRA-2).  ``mixed``: the same answer exactly, part by part (only the
    reference answers it; its cases search one pool per driver, DRA-13).  ``cpus``: the same
    CPUs, or both unsatisfiable, or errors of the same kind (CPU-21).  An error's
    ``kubelet_message``, where both sides give one, must hold the same words (RUN-11).
    """
    if op == "merge":
        return _compare_merge(case, expected, actual)
    if op in ("hints", "node", "affinity"):
        return _compare_session(case, expected, actual)
    if op == "predict":
        from numaspec.conformance.cases.predictions import same_answer

        return [d[:LIMIT] for d in same_answer(expected, actual)]
    if op == "allocate":
        from numaspec.conformance.cases.allocations import allocation_differences

        return allocation_differences(case, expected, actual)
    if op == "mixed":
        return _compare_mixed(expected, actual)
    if op == "cpus":
        return _compare_cpus(expected, actual)
    raise InvalidFieldError(f"unknown op {op!r} (known: {', '.join(OPERATIONS)})", where="op")


def _compare_cpus(expected: Any, actual: Any) -> list[str]:
    """CPU-21: the same CPUs; an unsatisfiable request agrees with one, its words free; an
    error agrees with an error of the same kind."""
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return [f"expected {short(expected)}, got {short(actual)}"]
    if "unsatisfiable" in expected and "unsatisfiable" in actual:
        return []
    if "error" in expected and "error" in actual:
        kinds = (expected["error"] or {}).get("kind"), (actual["error"] or {}).get("kind")
        return [] if kinds[0] == kinds[1] else [f"error kind {kinds[1]!r}, expected "
                                                 f"{kinds[0]!r}"]
    if expected == actual:
        return []
    return [f"expected {short(expected)}, got {short(actual)}"]


def _compare_mixed(expected: Any, actual: Any) -> list[str]:
    """DRA-13: each part that differs, named, with both sides."""
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return [] if expected == actual else [f"expected {short(expected)}, got "
                                              f"{short(actual)}"]
    return [f"{key}: expected {short(expected.get(key))}, got {short(actual.get(key))}"
            for key in sorted(set(expected) | set(actual))
            if expected.get(key) != actual.get(key)]
