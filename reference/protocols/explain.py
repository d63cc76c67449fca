"""Why the reference answers what it answers (spec chapter ``explain.md``, EXPLAIN-1..4).

* :func:`explain_merge`: one merge request's trace (each provider's hints, the lists the
  policy merged, the target width, the candidates that became the best and the rule that made
  each so, the result and the policy rule that decided the admission);
* :func:`explain_admission`: one pod's admission on a node, without changing the node (per
  container, or for the pod in pod scope: each provider's hints, the merge's trace, then the
  allocation or the provider and rule that refused);
* :func:`explain_case`: the traces of a case of the adapter protocol (a merge case, every
  admission of a node session, a predict case's admission), as ``numaspec replay --explain``
  prints them.

The format is one, with a schema (``schemas/trace.schema.json``): the operator tooling reads
the same traces.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Mapping
from typing import Any

from numaspec.errors import NumaspecError
from numaspec.node.admission import Node
from numaspec.node.pods import Pod
from numaspec.node.trace import AdmissionTrace
from numaspec.protocols.merge_protocol import MergeRequest, decode_merge_request, encode_error
from numaspec.topology.policies import topology_merge
from numaspec.topology.trace import MergeTrace

__all__ = ["chosen_by", "explain_admission", "explain_case", "explain_merge", "summarize"]


def explain_merge(request: MergeRequest | Mapping[str, Any]) -> dict[str, Any]:
    """EXPLAIN-2: the trace of one merge request (a :class:`MergeRequest` or its JSON).  A
    request kubelet refuses to start with is ``{"kind": "merge", "error": {...}}``."""
    trace = MergeTrace()
    try:
        parsed = request if isinstance(request, MergeRequest) else decode_merge_request(request)
        topology_merge(parsed.providers, parsed.numa_nodes, parsed.policy,
                       version=parsed.version, policy_options=parsed.policy_options,
                       numa_distances=parsed.numa_distances,
                       feature_gates=parsed.feature_gates, trace=trace)
    except NumaspecError as exc:
        return {"kind": "merge", **encode_error(exc)}
    return trace.as_json()


def explain_admission(node: Node, pod: Pod) -> dict[str, Any]:
    """EXPLAIN-3: the trace of admitting ``pod`` on a copy of ``node`` (``node`` is left as
    it was)."""
    trace = AdmissionTrace()
    copy.deepcopy(node).admit(pod, trace)
    return trace.as_json()


def explain_case(op: str, case: Any) -> list[dict[str, Any]]:
    """EXPLAIN-4: the reference's traces for a case of the adapter protocol: the merge's, or
    one per ``admit`` step of a node, hints or affinity session (in step order), and the
    predicted (or mixed case's) pod's admission; none for an ``allocate`` case.  Steps the
    session refuses get no trace."""
    if op == "merge":
        return [explain_merge(case)]
    from numaspec.protocols.node_protocol import NodeSession, decode_pod

    steps = case.get("steps") if isinstance(case, Mapping) else None
    if not isinstance(steps, list):
        return []
    session = NodeSession(affinity=op == "affinity")
    traces: list[dict[str, Any]] = []
    for index, step in enumerate(steps):
        if isinstance(step, Mapping) and step.get("op") == "admit" and session.node is not None:
            try:
                trace = explain_admission(session.node, decode_pod(step.get("pod")))
                traces.append({"step": index + 1, **trace})
            except NumaspecError:
                pass
        with contextlib.suppress(NumaspecError):
            session.handle(step)
    if op in ("predict", "mixed") and session.node is not None:
        # the predicted pod's admission; a mixed case's pod (DRA-13), when it is scheduled
        with contextlib.suppress(NumaspecError):
            traces.append({"step": op,
                           **explain_admission(session.node, decode_pod(case.get("pod")))})
    return traces


def _hint_text(hint: Mapping[str, Any]) -> str:
    numa = hint.get("numa")
    where = "no affinity" if numa is None else "{" + ",".join(map(str, numa)) + "}"
    return f"{where}{'' if hint.get('preferred') else ' (not preferred)'}"


def chosen_by(trace: Mapping[str, Any]) -> str:
    """EXPLAIN-2: the rule that decided a merge: the one ranking the winner above the
    runner-up (``chosen_by``); for a trace written before that field, the last kept
    entry's rule."""
    if trace.get("chosen_by"):
        return str(trace["chosen_by"])
    kept = trace.get("kept") or []
    return str(kept[-1].get("rule") or "") if kept else str(trace.get("nothing_kept") or "")


def _merge_text(trace: Mapping[str, Any]) -> str:
    if "error" in trace:
        return f"kubelet refuses to start: {trace['error'].get('kind')}"
    result = trace.get("result") or {}
    why = chosen_by(trace)
    walked = trace.get("candidates")
    return (f"merged {_hint_text(result.get('hint', {}))}"
            + (f" of {walked} candidates, chosen by {why}" if walked is not None and why
               else "")
            + f"; {trace.get('decided_by', '?')} "
            + ("admits" if result.get("admit") else "refuses"))


def summarize(trace: Mapping[str, Any]) -> str:
    """EXPLAIN-4: one line of a trace, for a terminal."""
    if trace.get("kind") == "merge":
        return _merge_text(trace)
    parts = []
    for step in trace.get("steps") or ():
        who = step.get("container") or "the pod"
        merge = step.get("merge")
        parts.append(f"{who}: " + (_merge_text(merge) if merge else "no merge (POLICY-1)"))
    refused = trace.get("refused")
    if refused:
        parts.append(f"refused by {refused['by']} ({refused['rule']}): {refused['reason']}")
    where = trace.get("step")
    head = f"step {where}: " if where is not None else ""
    return head + f"pod {trace.get('pod', '?')}: " + "; ".join(parts)
