"""A scheduler-side implementation of ``predict``, as a NUMA-aware scheduler plugin would
write one: it reads only the NodeResourceTopology and the node's allocatable (PRED-1), and
under ``single-numa-node`` looks, per container (container scope) or for the pod's summed
request (pod scope), for one zone whose ``available`` covers every requested resource the
zones list, taking the lowest such zone and subtracting a container's request from it.  Other
policies are never filtered.  Its claims are those of a plugin that knows it models only
single-numa-node and leaves the node-level fit to another plugin.

``python nrt_scheduler.py [--bug always-fits | never-fits]``: ``always-fits`` says every pod
fits (what a plugin without a filter does), which the predict vectors and P-PREDICT must
catch; ``never-fits`` refuses every pod, which is conservative, never a failure (PRED-4).
"""

from __future__ import annotations

import re
import sys
from fractions import Fraction
from typing import Any

CLAIMS = {"format": False,
          "predict": {"policies": ["single-numa-node"], "scopes": ["container", "pod"],
                      "managers": ["cpu", "memory", "device"], "policy_options": [],
                      "cpu_policy_options": [], "feature_gates": False, "node_fit": False}}
_SUFFIX: dict[str, Fraction | int] = {
    "": 1, "m": Fraction(1, 1000), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
    "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}


def quantity(text: str) -> Fraction:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([a-zA-Z]*)", text)
    if match is None or match.group(2) not in _SUFFIX:
        raise ValueError(f"not a quantity: {text!r}")
    return Fraction(match.group(1)) * _SUFFIX[match.group(2)]


def _requests(container: dict[str, Any]) -> dict[str, Fraction]:
    resources = container.get("resources", {})
    wanted = {**resources.get("limits", {}), **resources.get("requests", {})}
    return {name: quantity(value) for name, value in wanted.items() if quantity(value) > 0}


def _fits(zones: list[dict[str, Fraction]], request: dict[str, Fraction]) -> int | None:
    for index, zone in enumerate(zones):
        if all(name in zone and zone[name] >= amount for name, amount in request.items()
               if name in zone or name in ("cpu", "memory") or name.startswith("hugepages-")):
            return index
    return None


def predict(case: dict[str, Any]) -> dict[str, Any]:
    nrt, pod = case["nrt"], case["pod"]
    attributes = {a["name"]: a["value"] for a in nrt.get("attributes", [])}
    if attributes.get("topologyManagerPolicy") != "single-numa-node":
        return {"fits": True}
    zones = [{r["name"]: quantity(r["available"]) for r in zone["resources"]}
             for zone in nrt["zones"]]
    apps = [_requests(c) for c in pod["containers"]]
    inits = [_requests(c) for c in pod.get("initContainers", [])]
    if attributes.get("topologyManagerScope") == "pod":
        total: dict[str, Fraction] = {}
        for request in apps:
            for name, amount in request.items():
                total[name] = total.get(name, Fraction(0)) + amount
        for request in inits:
            for name, amount in request.items():
                total[name] = max(total.get(name, Fraction(0)), amount)
        ok = _fits(zones, total) is not None
        return {"fits": ok} if ok else {"fits": False, "message": "cannot align pod"}
    for request in inits:
        if _fits(zones, request) is None:
            return {"fits": False, "message": "cannot align init container"}
    for request in apps:
        index = _fits(zones, request)
        if index is None:
            return {"fits": False, "message": "cannot align container"}
        for name, amount in request.items():
            if name in zones[index]:
                zones[index][name] -= amount
    return {"fits": True}


class NrtScheduler:
    """The scheduler as a JSON-level adapter, served by numaspec's protocol loop."""

    def __init__(self, bug: str) -> None:
        self.bug = bug

    def start(self) -> dict[str, Any]:
        return {"name": "nrt-scheduler-fixture", "version": "0", "language": "python",
                "homepage": "", "issues": "", "kubelet_versions": [],
                "node_kubelet_versions": [f"1.{m}" for m in range(29, 38)],
                "operations": ["predict"], "claims": CLAIMS}

    def run(self, op: str, case: Any) -> dict[str, Any]:
        if op != "predict":
            return {"skipped": True, "message": f"{op} is not a scheduler's question"}
        result = predict(case)
        if self.bug == "always-fits":
            result = {"fits": True}
        elif self.bug == "never-fits":
            result = {"fits": False, "message": "never"}
        return {"result": result}


def main() -> int:
    from numaspec.protocols.adapter_protocol import serve_adapter

    bug = sys.argv[sys.argv.index("--bug") + 1] if "--bug" in sys.argv else ""
    return serve_adapter(NrtScheduler(bug), sys.stdin.buffer, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
