"""An admission's trace: the reference's reasoning about one pod's admission as data (spec
chapter ``explain.md``, EXPLAIN-3; schema ``schemas/trace.schema.json``).

Per container (or for the pod, in pod scope) it holds each hint provider's hints and the
merge's trace (:class:`numaspec.topology.trace.MergeTrace`), then either the allocation or
the provider and rule that refused the pod.  ``Node.admit(pod, trace=...)`` fills it in as it
works; it is never reconstructed afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from numaspec.topology.hints import ProviderHints
from numaspec.topology.trace import MergeTrace, provider_json

if TYPE_CHECKING:
    from numaspec.topology.versions import KubeletVersion

__all__ = ["AdmissionTrace"]


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
