"""The merge's trace: the reference's reasoning about one merge as data (spec chapter
``explain.md``, EXPLAIN-2; schema ``schemas/trace.schema.json``).

A merge trace says what the policy merged (each provider's hints, the lists after flattening
and after single-numa-node's filter), the target width of MERGE-8, how many candidates the
walk met, every candidate that became the best so far with the rule that made it so, and the
result with the policy rule that decided the admission.  The policy fills it in as it works
(``merge_for_policy(..., trace=...)``); it is never reconstructed afterwards.  An admission's
trace (EXPLAIN-3) holds one of these per merge: :mod:`numaspec.node.trace`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from numaspec.topology.hints import ProviderHints, TopologyHint

if TYPE_CHECKING:
    from numaspec.topology.fast_merge import FastMerge
    from numaspec.topology.numa import NumaInfo
    from numaspec.topology.versions import KubeletVersion

__all__ = ["MergeTrace", "hint_json", "provider_json"]

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

    def start(self, policy: str, providers: Sequence[ProviderHints],
              version: KubeletVersion, numa: NumaInfo) -> None:
        self.data.update({"kubelet_version": str(version), "policy": policy,
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
            self.data["chosen_by"] = "MERGE-10" if not self.data["kept"] else rule
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
        # the fast merge names the rule ranking the winner first among its kind; one
        # distinct preferred candidate is ranked above every other by MERGE-5
        self.data["chosen_by"] = "MERGE-5" if found.rule == "MERGE-4" else found.rule
        if found.rule == "MERGE-10":
            self.data["nothing_kept"] = "MERGE-10"
            return
        if found.witness == ():
            self.data["chosen_by"] = "MERGE-10"
            return  # up to 1.23: the machine mask the walk starts from stands
        self.data["kept"] = [{"hint": hint_json(found.hint), "rule": found.rule,
                              "permutation": None if found.witness is None
                              else [hint_json(h) for h in found.witness]}]

    def result(self, hint: TopologyHint, admit: bool, rule: str) -> None:
        self.data["result"] = {"hint": hint_json(hint), "admit": admit}
        self.data["decided_by"] = rule

    def as_json(self) -> dict[str, Any]:
        return dict(self.data)
