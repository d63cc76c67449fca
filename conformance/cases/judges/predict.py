"""The ``predict`` operation's judge for the reference's own answers: the same answer exactly
(the runner judges an implementation's prediction by PRED-4 instead)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaspec.conformance.cases.judges.judge import Judge, minor_of
from numaspec.conformance.cases.judges.wording import LIMIT, require

__all__ = ["JUDGES"]


def _compare(_: Any, expected: Any, actual: Any) -> list[str]:
    from numaspec.conformance.cases.predictions import same_answer

    return [d[:LIMIT] for d in same_answer(expected, actual)]


def _case(case: Any, where: str) -> None:
    require(isinstance(case, dict) and set(case) == {"steps", "pod"}
             and isinstance(case["steps"], list) and bool(case["steps"]),
             '{"steps": [create/admit/remove request, ...], "pod": {...}}', where)


def _answer(answer: Any, where: str) -> None:
    require(isinstance(answer, dict) and isinstance(answer.get("fits"), bool),
             '{"fits": true | false, ...}', where)


#: RUN-5: a prediction's facts a manifest's ``match`` may name.
FACTS = {
    "scope": "predict: the node's topologyManagerScope",
    "expected.fits": "predict: whether the node admits the pod",
    "actual.fits": "predict: whether the implementation says it fits",
    "case.live_init_containers": "predict: a pod on the node has init containers that are "
                                 "not sidecars",
    "case.live_sidecars": "predict: a pod on the node has sidecars (restartable init "
                          "containers)",
    "case.pod_init_containers": "predict: the pod asked about has init containers that are "
                                "not sidecars",
    "case.pod_zero_device_request": "predict: the pod asked about requests zero of a device",
    "case.pod_sidecars": "predict: the pod asked about has sidecars (restartable init "
                         "containers)",
}


def _init_containers(pod: Any, sidecars: bool) -> bool:
    inits = pod.get("initContainers") if isinstance(pod, Mapping) else None
    return any(isinstance(c, Mapping) and (c.get("restartPolicy") == "Always") == sidecars
               for c in inits or ())


def _facts(case: Mapping[str, Any], expected: Any, actual: Any) -> dict[str, Any]:
    steps = [s for s in case.get("steps") or () if isinstance(s, Mapping)]
    create = next((s for s in steps if s.get("op") == "create"), {})
    config = (create.get("node") or {}).get("config") or {}
    live: dict[str, Any] = {}
    for step in steps:
        if step.get("op") == "admit" and isinstance(step.get("pod"), Mapping):
            live[str(step["pod"].get("uid"))] = step["pod"]
        elif step.get("op") == "remove":
            live.pop(str(step.get("uid")), None)
    pod: Mapping[str, Any] = case["pod"] if isinstance(case.get("pod"), Mapping) else {}
    zero = any(isinstance(c, Mapping) and any(
        amount in ("0", 0) and "/" in name
        for kind in ("requests", "limits")
        for name, amount in ((c.get("resources") or {}).get(kind) or {}).items())
        for c in [*(pod.get("initContainers") or ()), *(pod.get("containers") or ())])
    return {
        "kubelet_version": minor_of((create.get("node") or {}).get("kubeletVersion")
                                    or case.get("kubelet_version")),
        "policy": config.get("topologyManagerPolicy", "none"),
        "scope": config.get("topologyManagerScope", "container"),
        "expected.fits": expected.get("fits") if isinstance(expected, Mapping) else None,
        "actual.fits": actual.get("fits") if isinstance(actual, Mapping) else None,
        "case.live_init_containers": any(_init_containers(p, False) for p in live.values()),
        "case.live_sidecars": any(_init_containers(p, True) for p in live.values()),
        "case.pod_init_containers": _init_containers(pod, False),
        "case.pod_zero_device_request": zero,
        "case.pod_sidecars": _init_containers(pod, True),
    }


JUDGES = (Judge("predict", _compare, case=_case, answer=_answer, channel="predict",
                fact_names=FACTS, facts=_facts),)
