"""The reference behind the smallest claim a property can be judged under (PROTO-7), and
nothing more: every request outside that claim is answered ``skipped``, as a partial
implementation that models only what it claims would have to.

For a property, the claim is: its first policy, its options and refusals only, no feature
gates, NUMA distances only when prefer-closest-numa-nodes is among its options, kubelet 1.30
only, and a node of the CPU Manager, container scope and restricted.  A property that draws a
request outside that claim is skipped by this adapter, which the runner reports as a claimed
case that went unjudged (RUN-7): ``tests/suite/test_claims.py`` shows none does.

``--impl numaspec_tools.adapters.minimal:MINIMAL.P_EQUIVALENCE`` (the property's ID with ``_``
for ``-``), in process.
"""

from __future__ import annotations

import functools
import types
from typing import Any

from numaspec.conformance.implementations.claims import Claims
from numaspec.conformance.properties import PROPERTIES
from numaspec.conformance.properties.registry import Property
from numaspec.protocols.adapter_protocol import ReferenceAdapter, reference_result
from numaspec.topology.masks import iterate_masks

RELEASE = "1.30"


def release_for(prop: Property) -> str:
    """The one release the minimal adapter declares: 1.30, or the property's own first
    release where it speaks of later ones only (P-NODE-RESIZE: 1.34)."""
    return f"1.{prop.since}" if prop.since is not None and prop.since > 30 else RELEASE


def claims_for(prop: Property) -> dict[str, Any]:
    """The smallest claim ``prop`` can be judged under: a node's managers and scopes are the
    CPU Manager's and container scope, or those the property requires (P-RESIZE-POD-SCOPE:
    the Device Manager, pod scope); the line format only for a property that judges it
    (P-NODE-MALFORMED)."""
    node = {"managers": sorted({"cpu", *prop.managers}),
            "scopes": list(prop.scopes) or ["container"], "policies": ["restricted"],
            "policy_options": [], "cpu_policy_options": [], "feature_gates": False}
    return {"format": prop.format,
            "merge": {"policies": [prop.policies[0]], "policy_options": list(prop.options),
                      "feature_gates": False, "refusals": list(prop.refusals) or False,
                      "distances": "prefer-closest-numa-nodes" in prop.options},
            "node": node, "predict": node}


class MinimalReference:
    """An in-process adapter: the reference, inside one property's minimal claim."""

    def __init__(self, pid: str) -> None:
        self.prop = PROPERTIES[pid]
        self.claims_json = claims_for(self.prop)
        self.claims = Claims.from_json(self.claims_json)
        self.reference = ReferenceAdapter()
        self.release = release_for(self.prop)
        self.outside: list[str] = []  # what it was asked outside its claim

    def start(self) -> dict[str, Any]:
        return {**self.reference.start(), "name": f"minimal-{self.prop.id}",
                "kubelet_versions": [self.release], "node_kubelet_versions": [self.release],
                "operations": ["merge", "hints", "node", "affinity", "allocate", "cpus"],
                "allocate_versions": [self.release], "claims": self.claims_json}

    def subsets(self, nodes: list[int]) -> list[tuple[int, ...]]:
        """MASK-3, which every claim includes."""
        return [mask.nodes for mask in iterate_masks(nodes)]

    def run(self, op: str, case: Any) -> dict[str, Any]:
        expected = reference_result(op, case)
        reason = self.claims.outside(op, case, expected, ())
        version = (case.get("kubelet_version") if op in ("merge", "cpus") else
                   case.get("release") if op == "allocate" else None)
        if reason is None and version is not None and version != self.release:
            reason = f"kubelet {version}"
        for step in case.get("steps", ()) if op not in ("merge", "allocate", "cpus") else ():
            if step.get("op") == "create" and step["node"].get("kubeletVersion") != self.release:
                reason = reason or f"a kubelet {step['node'].get('kubeletVersion')} node"
        if reason is not None:
            self.outside.append(reason)
            return {"skipped": True, "message": f"outside the minimal claim: {reason}"}
        return {"result": expected}


#: One factory per property: ``MINIMAL.P_EQUIVALENCE`` and so on.
MINIMAL = types.SimpleNamespace(**{pid.replace("-", "_"): functools.partial(MinimalReference, pid)
                                   for pid in PROPERTIES})
