"""The predict property (spec chapter ``predict.md``): a scheduler-side implementation never
places a pod that the node then rejects.

Node sessions are drawn inside the implementation's ``claims.predict`` (its policies, scopes
and managers; no options nor gates, which an NRT does not carry), at a release it declares;
the pod it is asked about follows a few admitted ones.  The case it is sent is what a
scheduler sees (PRED-1), and its answer is judged by the node's own admission (PRED-4): a
refusal of what kubelet admits is not a failure, a fit that kubelet rejects is.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from hypothesis import event, example, given, note, reject
from hypothesis import strategies as st

from numaspec.conformance.cases.divergences import known
from numaspec.conformance.cases.vectors import stored_case
from numaspec.conformance.implementations.claims import PredictClaims, claims_of
from numaspec.conformance.properties.node_strategies import machines, pods
from numaspec.conformance.properties.registry import register

__all__ = ["PredictImplementation", "predict_sessions"]

_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")


class PredictImplementation(Protocol):
    name: str
    node_kubelet_versions: tuple[str, ...]

    def predict(self, case: Any) -> Any: ...


def _claimed(names: frozenset[str] | None, every: tuple[str, ...]) -> list[str]:
    return [n for n in every if names is None or n in names]


@st.composite
def predict_sessions(draw: st.DrawFn, claims: PredictClaims | None = None,
                     versions: tuple[str, ...] = ("1.30", "1.33", "1.37")
                     ) -> dict[str, Any]:
    """A stored predict case (``{"steps", "pod"}``) inside ``claims`` (None: everything)."""
    claims = claims or PredictClaims()
    managers = _claimed(claims.managers, ("cpu", "memory", "device"))
    machine = draw(machines(devices_too="device" in managers))
    config: dict[str, Any] = {
        "topologyManagerPolicy": draw(st.sampled_from(_claimed(claims.policies, _POLICIES))),
        "topologyManagerScope": draw(st.sampled_from(
            _claimed(claims.scopes, ("container", "pod")))),
    }
    if "cpu" in managers and draw(st.integers(0, 4)) > 0:
        config["cpuManagerPolicy"] = "static"
        if draw(st.booleans()):
            first = min(t for c in machine["numaNodes"][0]["cores"] for t in c["threads"])
            config["reservedSystemCPUs"] = str(first)
        else:
            config["kubeReserved"] = {"cpu": draw(st.sampled_from(["500m", "1"]))}
    if "memory" in managers and draw(st.booleans()):
        config["memoryManagerPolicy"] = "Static"
        config["systemReserved"] = {"memory": "412Mi"}
        config["reservedMemory"] = [{"numaNode": 0, "limits": {"memory": "512Mi"}}]
    steps: list[dict[str, Any]] = [{"op": "create", "node": {
        "kubeletVersion": draw(st.sampled_from(versions)), "machine": machine,
        "config": config}}]
    devices = sorted(machine["devices"])
    for index in range(draw(st.integers(0, 3))):
        steps.append({"op": "admit", "pod": draw(pods(f"p{index}", devices))})
    return {"steps": steps, "pod": draw(pods("asked", devices))}


def _settled(case: dict[str, Any]) -> dict[str, Any]:
    """The stored case with only the admissions kubelet accepted (PRED-1: every step of a
    predict session succeeds; a rejected admit leaves nothing behind anyway)."""
    from numaspec.protocols.adapter_protocol import reference_result

    answers = reference_result("node", {"steps": case["steps"]})["answers"]
    kept = [step for step, answer in zip(case["steps"], answers, strict=True)
            if step["op"] == "create" or answer.get("decision", {}).get("admitted")]
    return {"steps": kept, "pod": case["pod"]}


#: P-PREDICT's fixed example: NRT-6's blind spot (CPUs a running pod's init container still
#: holds are counted available), the vector of that name.
FIXED_EXAMPLE = "predict-init-cpus-invisible"


@register("P-PREDICT", rules=["NRT-1", "NRT-2", "NRT-3", "NRT-4", "NRT-5", "NRT-6", "NRT-7",
                              "PRED-1", "PRED-2", "PRED-4"],
          level="invariant", requires="predict", since=29, op="predict")
@given(data=st.data())
@example(data=None)  # FIXED_EXAMPLE: NRT-6's invisible init-container CPUs
def predict_never_admits_what_kubelet_rejects(impl: PredictImplementation,
                                              data: st.DataObject | None) -> None:
    """A pod the implementation says fits is one the node admits."""
    from numaspec.conformance.cases.predictions import judge
    from numaspec.node.nodeconfig import NODE_VERSIONS
    from numaspec.protocols.adapter_protocol import predict_case, reference_predict, scheduler_case

    claims = claims_of(impl).predict
    versions = tuple(v for v in impl.node_kubelet_versions
                     if v[:2] == "1." and v[2:].isdigit() and int(v[2:]) in NODE_VERSIONS)
    if data is None:
        stored = {k: v for k, v in stored_case(FIXED_EXAMPLE, versions).items()
                  if k in ("steps", "pod")}
    else:
        stored = _settled(data.draw(predict_sessions(claims, versions or ("1.30",))))
    case = predict_case(stored)
    expected = reference_predict(case)
    reason = claims.outside_predict(stored, expected)
    if reason is not None:
        # Outside the claim (most often a pod the node cannot hold at all, node_fit): not a
        # question for this implementation.  Not filtered out with assume(): so many are
        # that Hypothesis would call the test unhealthy.
        event("outside the claim")
        return
    sent = scheduler_case(case)
    note(f"session: {json.dumps(stored, separators=(',', ':'))}")
    note(f"request: {json.dumps(sent, separators=(',', ':'))}")
    note(f"kubelet: {json.dumps(expected, separators=(',', ':'))}")
    actual = impl.predict(sent)
    verdict, message = judge(expected, actual)
    if verdict == "failed":
        # RUN-5: a known divergence of the manifest is set aside; the property explores on
        finding = known("predict", case, expected, actual)
        if finding is not None:
            note(f"set aside: {finding.finding} ({finding.reason[:120]})")
            reject()
    assert verdict != "failed", message
