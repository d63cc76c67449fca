"""The node sessions' judge (``hints``, ``node``, ``affinity``): step by step, errors by
kind, decisions and states equal up to devices that report the same NUMA nodes (RUN-12), each
resource's hints compared without regard to order (NWIRE-4), the kubelet words alike
(RUN-11)."""

from __future__ import annotations

import json
from typing import Any

from numaspec.conformance.cases.agreement import kubelet_words_problem
from numaspec.conformance.cases.device_equivalence import normalize_session
from numaspec.conformance.cases.judges.judge import Judge
from numaspec.conformance.cases.judges.wording import LIMIT, require, short

__all__ = ["JUDGES"]


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



def _case(op: str) -> Any:
    def check(case: Any, where: str) -> None:
        require(isinstance(case, dict) and set(case) == {"steps"}
                 and isinstance(case["steps"], list) and bool(case["steps"]),
                 '{"steps": [request, ...]}', where)
        has_hints = any(isinstance(s, dict) and s.get("op") == "hints" for s in case["steps"])
        require(op == "affinity" or has_hints == (op == "hints"),
                 "a session with a hints step is op 'hints', any other op 'node' (an "
                 "'affinity' session may have both)", where.rsplit(".", 1)[0] + ".op")
    return check


def _answer(answer: Any, where: str) -> None:
    require(isinstance(answer, dict) and set(answer) == {"answers"}
             and isinstance(answer["answers"], list), '{"answers": [answer, ...]}', where)


JUDGES = (Judge("hints", _compare_session, case=_case("hints"), answer=_answer,
                channel="hints_session"),
          Judge("node", _compare_session, case=_case("node"), answer=_answer,
                channel="node_session"),
          Judge("affinity", _compare_session, case=_case("affinity"), answer=_answer,
                channel="affinity_session"))
