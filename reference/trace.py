"""The explain trace: the reference's reasoning as data (spec chapter ``explain.md``,
EXPLAIN-1..EXPLAIN-4; schema ``schemas/trace.schema.json``).

A merge trace says what the policy merged (each provider's hints, the lists after flattening
and after single-numa-node's filter), the target width of MERGE-8, how many candidates the
walk met, every candidate that became the best so far with the rule that made it so, and the
result with the policy rule that decided the admission.  An admission trace says, per
container (or for the pod, in pod scope), each hint provider's hints, the merge trace, and
then either the allocation or the provider and rule that refused the pod.

Both are built by the reference as it works (:func:`numaspec.explain.explain_merge`,
``Node.admit(pod, trace=...)``), never reconstructed afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from numaspec.hints import ProviderHints, TopologyHint

if TYPE_CHECKING:
    from numaspec.fast_merge import FastMerge
    from numaspec.numa import NumaInfo
    from numaspec.policy import MergeOutcome, Policy
    from numaspec.versions import KubeletVersion

__all__ = ["AdmissionTrace", "MergeTrace", "hint_json", "provider_json"]

#: EXPLAIN-2: kept candidates listed in a trace before it says it left the rest out.
MAX_KEPT = 200


def hint_json(hint: TopologyHint) -> dict[str, Any]:
    """A hint as the node protocol writes one: ``{"numa": [ids] | null, "preferred"}``."""
    mask = hint.numa_affinity
    return {"numa": None if mask is None else list(mask.nodes), "preferred": hint.preferred}


def provider_json(hints: ProviderHints) -> dict[str, Any] | None:
    """One provider's answer: resource -> hints (``null``: no preference, ``[]``: no
    placement); ``null`` for a provider without an opinion."""
    if hints is None:
        return None
    return {resource: None if listed is None else [hint_json(h) for h in listed]
            for resource, listed in hints.items()}


class MergeTrace:
    """EXPLAIN-2: one merge, as the policy ran it."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {"kind": "merge"}

    def start(self, policy: Policy, providers: Sequence[ProviderHints],
              version: KubeletVersion, numa: NumaInfo) -> None:
        self.data.update({"kubelet_version": str(version), "policy": policy.value,
                          "numa_nodes": list(numa.nodes),
                          "providers": [provider_json(p) for p in providers]})

    def lists(self, lists: Sequence[Sequence[TopologyHint]], *, filtered: bool,
              target: int | None) -> None:
        self.data["lists"] = [[hint_json(h) for h in listed] for listed in lists]
        self.data["single_numa_node_filter"] = filtered
        self.data["target_width"] = target
        self.data["kept"] = []
        self.data["walk"] = "definitional"

    def keep(self, hint: TopologyHint | None, permutation: Sequence[TopologyHint], rule: str,
             walked: int, empty: int) -> None:
        """merge.Keep: a candidate became the best so far (``hint``), or the walk ended."""
        if hint is None:
            self.data["candidates"] = walked
            self.data["empty_candidates"] = empty
            if not self.data["kept"]:
                self.data["nothing_kept"] = "MERGE-10"
            return
        kept: list[dict[str, Any]] = self.data["kept"]
        if len(kept) >= MAX_KEPT:
            self.data["kept_truncated"] = True
            kept.pop(0)
        kept.append({"hint": hint_json(hint), "permutation": [hint_json(h) for h in permutation],
                     "rule": rule, "candidate": walked})

    def fast(self, found: FastMerge) -> None:
        """EXPLAIN-2: the fast merge decided (FAST-7): the winner, the rule that ranks it
        first, one permutation that merges to it when one was found, and the candidates as
        distinct affinities rather than permutations."""
        self.data["walk"] = "fast"
        self.data["regime"] = found.regime
        self.data["candidates"] = found.permutations
        self.data["distinct_candidates"] = found.distinct
        if found.rule == "MERGE-10":
            self.data["nothing_kept"] = "MERGE-10"
            return
        if found.witness == ():
            return  # up to 1.23: the machine mask the walk starts from stands
        self.data["kept"] = [{"hint": hint_json(found.hint), "rule": found.rule,
                              "permutation": None if found.witness is None
                              else [hint_json(h) for h in found.witness]}]

    def result(self, outcome: MergeOutcome, rule: str) -> None:
        self.data["result"] = {"hint": hint_json(outcome.hint), "admit": outcome.admit}
        self.data["decided_by"] = rule

    def as_json(self) -> dict[str, Any]:
        return dict(self.data)


class AdmissionTrace:
    """EXPLAIN-3: one pod's admission, step by step."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {"kind": "admission", "steps": []}

    def start(self, pod_uid: str, version: KubeletVersion, policy: str, scope: str) -> None:
        self.data.update({"pod": pod_uid, "kubelet_version": str(version), "policy": policy,
                          "scope": scope})

    def merge(self, container: str | None, providers: Mapping[str, ProviderHints],
              merge: MergeTrace) -> None:
        self.data["steps"].append({"container": container,
                                   "hints": {name: provider_json(h)
                                             for name, h in providers.items()},
                                   "merge": merge.as_json()})

    def no_merge(self, container: str) -> None:
        """ADMIT-1: the none policy asks no provider and merges nothing."""
        self.data["steps"].append({"container": container, "hints": None, "merge": None,
                                   "rule": "POLICY-1"})

    def refused(self, by: str, reason: str, message: str, rule: str) -> None:
        self.data["refused"] = {"by": by, "reason": reason, "message": message, "rule": rule}

    def decision(self, admitted: bool, reason: str, message: str,
                 containers: Sequence[Mapping[str, Any]]) -> None:
        self.data["decision"] = {"admitted": admitted, "reason": reason, "message": message,
                                 "containers": list(containers)}

    def as_json(self) -> dict[str, Any]:
        return dict(self.data)
