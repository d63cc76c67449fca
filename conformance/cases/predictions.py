"""Judging a scheduler's prediction against the node's own admission (spec chapter
``predict.md``, PRED-3 and PRED-4).

A scheduler-side implementation answers ``{"fits": bool, "numa_nodes"?, "message"?}`` about a
pod on a node it sees through the node's NodeResourceTopology; the expected answer is the
node's admission of that pod (PRED-2).  The two directions of disagreement are not alike: a
pod the scheduler places and kubelet then rejects is stuck (kubelet's TopologyAffinityError
loop), a failure; a pod the scheduler keeps off a node kubelet would admit it to waits for
another node, a conservative answer reported as its own verdict, ``refused``.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["check_answer", "judge", "same_answer"]


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "…"


def check_answer(answer: Any) -> str | None:
    """PRED-3: what is wrong with the shape of a predict answer, or None."""
    if not isinstance(answer, dict) or not isinstance(answer.get("fits"), bool):
        return f'not a predict answer ({{"fits": true | false, ...}}): {_short(answer)}'
    unknown = sorted(set(answer) - {"fits", "numa_nodes", "reason", "message", "node_fit"})
    if unknown:
        return f"a predict answer has no fields {unknown}"
    placed = answer.get("numa_nodes")
    if placed is not None and not (
            isinstance(placed, dict) and all(
                isinstance(k, str) and isinstance(v, list)
                and all(isinstance(i, int) and not isinstance(i, bool) for i in v)
                for k, v in placed.items())):
        return f"numa_nodes is {{container: [NUMA ids]}}: {_short(placed)}"
    for field in ("reason", "message"):
        if field in answer and not isinstance(answer[field], str):
            return f"{field} is a string: {_short(answer[field])}"
    return None


def _kubelet(expected: dict[str, Any]) -> str:
    if expected.get("fits"):
        placed = expected.get("numa_nodes")
        return "kubelet admits it" + (f" (NUMA nodes {_short(placed, 120)})" if placed else "")
    return (f"kubelet rejects it: {expected.get('reason', '?')}: "
            f"{expected.get('message', '')}").rstrip(": ")


def judge(expected: Any, actual: Any) -> tuple[str, str]:
    """PRED-4: ``(verdict, message)``: ``passed``, ``failed`` or ``refused``."""
    problem = check_answer(actual)
    if problem is not None:
        return "failed", problem
    if not isinstance(expected, dict) or "fits" not in expected:
        return "failed", f"the reference has no verdict for this case: {_short(expected)}"
    said = actual.get("message") or actual.get("reason") or ""
    if actual["fits"] and not expected["fits"]:
        return "failed", (f"admits-what-kubelet-rejects: the implementation says the pod fits; "
                          f"{_kubelet(expected)}")
    if expected["fits"] and not actual["fits"]:
        return "refused", (f"refuses-what-kubelet-admits: the implementation says the pod does "
                           f"not fit ({said or 'no message'}); {_kubelet(expected)}")
    note = ""
    placed, want = actual.get("numa_nodes"), expected.get("numa_nodes")
    if actual["fits"] and placed is not None and want is not None:
        moved = sorted(name for name in placed
                       if sorted(placed[name]) != sorted(want.get(name, [])))
        if moved:
            note = (f"misplaced: containers {moved} on other NUMA nodes than kubelet's "
                    f"({_short(placed, 100)} against {_short(want, 100)})")
    return "passed", note


def same_answer(expected: Any, actual: Any) -> list[str]:
    """``vectors check``: the reference's answer must be the stored one exactly."""
    if expected == actual:
        return []
    return [f"expected {_short(expected, 140)}, got {_short(actual, 140)}"]
