"""Expected divergences by input class (RUN-5): a known finding, matched case by case.

A manifest entry of the form ``{"finding": "KATALYST-1", "match": {"policy": ""}, ...}`` says
that where a case has these facts, the implementation answers otherwise than kubelet, and why.
It is matched against each disagreement, not against a whole property: a vector that fails
inside the class is ``xfailed``; a property that meets a case inside the class sets that case
aside and goes on exploring at random, so that a new divergence, outside every class, still
fails it; and ``numaspec differential`` books each disagreement on the class it falls in, or
reports it unexplained.  One matcher serves the three.

The facts of a case are computed from the case, the reference's answer (``expected``) and the
implementation's (``actual``), all as the protocol writes them (:func:`facts`; the names are
:data:`FACTS`).  A ``match`` names facts and the value each must have (or a list of values, any
of which will do); every fact it names must match.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

__all__ = ["FACTS", "TIMED_OUT", "Divergence", "Seen", "expecting", "facts", "known",
           "matches"]

#: DRA-7: the scheduler's words for a node whose allocation passed its Filter timeout.
TIMED_OUT = "timed out trying to allocate devices"

#: Each fact a ``match`` may name, with what it is.
FACTS: Mapping[str, str] = {
    "op": "the operation: merge, predict, allocate or cpus",
    "kubelet_version": "the case's kubelet release, as a minor (\"1.30\")",
    "policy": "the Topology Manager policy (a merge case's, or the predict node's)",
    "scope": "predict: the node's topologyManagerScope",
    "case.empty_resource": "merge: some resource's hint list is empty ([]: it cannot be placed)",
    "expected.kind": "the reference's error kind, or null when it answers",
    "actual.kind": "the implementation's error kind, or null when it answers",
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
    "actual.errored": "the implementation answered errored: the first word of its message "
                      "(\"nondeterministic\"), null otherwise",
    "expected.fits": "predict: whether the node admits the pod",
    "actual.fits": "predict: whether the implementation says it fits",
    "case.live_init_containers": "predict: a pod on the node has init containers that are "
                                 "not sidecars",
    "case.live_sidecars": "predict: a pod on the node has sidecars (restartable init "
                          "containers)",
    "case.pod_init_containers": "predict: the pod asked about has init containers that are "
                                "not sidecars",
    "case.pod_zero_device_request": "predict: the pod asked about requests zero of a device",
    "actual.timed_out": "allocate: the implementation answered unschedulable because its search "
                        "passed the scheduler's Filter timeout (DRA-7)",
    "allocate.release": "allocate: the case's Kubernetes release, as a minor (\"1.34\")",
    "cpus.shared_core_ids": "cpus: two cores of the machine have the same id (as sysfs "
                            "numbers cores, each socket from zero)",
}


@attrs.frozen
class Divergence:
    """One manifest entry of the class form: where ``match`` holds, ``finding`` explains the
    implementation's answer.  ``property`` restricts it to one property (None: every case)."""

    finding: str
    match: Mapping[str, Any]
    reason: str
    link: str
    property: str | None = None
    #: whose behaviour it is: the implementation's, kubelet's, or numaspec's model (RUN-5)
    owner: str = "implementation"

    def applies_to(self, case_id: str, kind: str) -> bool:
        return self.property is None or (kind == "property" and self.property == case_id) \
            or (kind != "property" and self.property == "vectors")


def _minor(version: Any) -> str | None:
    if not isinstance(version, str):
        return None
    parts = version.strip().lstrip("v").split(".")
    return f"1.{parts[1]}" if len(parts) >= 2 and parts[0] == "1" and parts[1].isdigit() \
        else None


def _kind(answer: Any) -> str | None:
    if isinstance(answer, Mapping) and isinstance(answer.get("error"), Mapping):
        kind = answer["error"].get("kind")
        return kind if isinstance(kind, str) else None
    return None


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


def _merge_facts(case: Mapping[str, Any], expected: Any, actual: Any) -> dict[str, Any]:
    machine = sorted(n for n in case.get("numa_nodes") or () if isinstance(n, int))
    want, got = _hint(expected), _hint(actual)
    providers = case.get("providers") or ()
    return {
        "kubelet_version": _minor(case.get("kubelet_version")),
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


def _init_containers(pod: Any, sidecars: bool) -> bool:
    inits = pod.get("initContainers") if isinstance(pod, Mapping) else None
    return any(isinstance(c, Mapping) and (c.get("restartPolicy") == "Always") == sidecars
               for c in inits or ())


def _predict_facts(case: Mapping[str, Any], expected: Any, actual: Any) -> dict[str, Any]:
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
        "kubelet_version": _minor((create.get("node") or {}).get("kubeletVersion")
                                  or case.get("kubelet_version")),
        "policy": config.get("topologyManagerPolicy", "none"),
        "scope": config.get("topologyManagerScope", "container"),
        "expected.fits": expected.get("fits") if isinstance(expected, Mapping) else None,
        "actual.fits": actual.get("fits") if isinstance(actual, Mapping) else None,
        "case.live_init_containers": any(_init_containers(p, False) for p in live.values()),
        "case.live_sidecars": any(_init_containers(p, True) for p in live.values()),
        "case.pod_init_containers": _init_containers(pod, False),
        "case.pod_zero_device_request": zero,
    }


def facts(op: str, case: Any, expected: Any, actual: Any) -> dict[str, Any]:
    """The facts of a case and its two answers, by name (:data:`FACTS`).  ``actual`` may be
    ``{"errored": message}`` for an implementation that answered errored."""
    case = case if isinstance(case, Mapping) else {}
    found: dict[str, Any] = {"op": op, "expected.kind": _kind(expected),
                             "actual.kind": _kind(actual), "actual.errored": None}
    if isinstance(actual, Mapping) and isinstance(actual.get("errored"), str):
        found["actual.errored"] = (actual["errored"].split(":", 1)[0].split() or [""])[0]
    if op == "merge":
        found.update(_merge_facts(case, expected, actual))
    elif op == "predict":
        found.update(_predict_facts(case, expected, actual))
    elif op == "allocate":
        found["actual.timed_out"] = (isinstance(actual, Mapping)
                                     and actual.get("outcome") == "unschedulable"
                                     and actual.get("message") == TIMED_OUT)
        found["allocate.release"] = case.get("release")
    elif op == "cpus":
        found["cpus.shared_core_ids"] = _shared_core_ids(case)
    return found


def _shared_core_ids(case: Mapping[str, Any]) -> bool:
    """Whether two cores of a ``cpus`` case's machine give the same ``id``."""
    machine = case.get("machine")
    nodes = machine.get("numaNodes") if isinstance(machine, Mapping) else None
    ids = [core.get("id") for node in nodes if isinstance(node, Mapping)
           for core in node.get("cores") or () if isinstance(core, Mapping)
           and core.get("id") is not None] if isinstance(nodes, list) else []
    return len(ids) != len(set(ids))


def matches(match: Mapping[str, Any], found: Mapping[str, Any]) -> bool:
    """Whether every fact ``match`` names has its value (or one of its listed values)."""
    for name, wanted in match.items():
        value = found.get(name)
        if isinstance(wanted, list):
            if value not in wanted:
                return False
        elif value != wanted:
            return False
    return True


# --- the divergences a property is run under ------------------------------------------------


@attrs.define
class Seen:
    """The cases a property set aside as known divergences, per finding (the first case)."""

    divergences: tuple[Divergence, ...]
    found: dict[str, tuple[int, Any]] = attrs.field(factory=dict)

    def add(self, divergence: Divergence, case: Any) -> None:
        count, first = self.found.get(divergence.finding, (0, case))
        self.found[divergence.finding] = (count + 1, first)


_ACTIVE: contextvars.ContextVar[Seen | None] = contextvars.ContextVar("divergences",
                                                                        default=None)


@contextlib.contextmanager
def expecting(divergences: Sequence[Divergence]) -> Iterator[Seen]:
    """Run a property under these known divergences; what it set aside is in the result."""
    seen = Seen(tuple(divergences))
    token = _ACTIVE.set(seen)
    try:
        yield seen
    finally:
        _ACTIVE.reset(token)


def known(op: str, case: Any, expected: Any, actual: Any) -> Divergence | None:
    """The known divergence a case of the property being run falls in (recorded as seen), or
    None: a property calls this where its implementation's answer differs from the
    reference's, and sets the case aside when it is known."""
    seen = _ACTIVE.get()
    if seen is None or not seen.divergences:
        return None
    found = facts(op, case, expected, actual)
    for divergence in seen.divergences:
        if matches(divergence.match, found):
            seen.add(divergence, case)
            return divergence
    return None
