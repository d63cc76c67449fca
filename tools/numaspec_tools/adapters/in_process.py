"""In-process implementations the suite's tests hand the runner by name
(``numaspec_tools.adapters.in_process:Raising``): one that raises, one that hangs, one that
declares a single release, and two that claim part of what the reference answers."""

from __future__ import annotations

from typing import Any


class Raising:
    def start(self) -> dict[str, Any]:
        from numaspec.protocols.adapter_protocol import ReferenceAdapter

        return {**ReferenceAdapter().start(), "name": "raising"}

    def run(self, op: str, case: Any) -> dict[str, Any]:
        raise RuntimeError(f"no {op} today: {len(case)}")


class Hanging(Raising):
    def run(self, op: str, case: Any) -> dict[str, Any]:
        import threading

        threading.Event().wait(3600)
        return {"never": (op, case)}


class Only123:
    """The reference's merge, declaring kubelet 1.23 alone."""

    name = "only-1.23"

    def __init__(self) -> None:
        from numaspec.topology.versions import KubeletVersion

        self.kubelet_versions = (KubeletVersion(23),)

    def merge(self, request: Any) -> Any:
        from numaspec.conformance.implementations.adapter import reference

        return reference.merge(request)


class PartialAdapter:
    """The reference, claiming only the CPU Manager under restricted (PROTO-7)."""

    def __init__(self) -> None:
        from numaspec.protocols.adapter_protocol import ReferenceAdapter

        self.inner = ReferenceAdapter()

    def start(self) -> dict[str, Any]:
        return {**self.inner.start(), "name": "partial",
                "claims": {"node": {"managers": ["cpu"], "policies": ["restricted"]}}}

    def run(self, op: str, case: Any) -> dict[str, Any]:
        return self.inner.run(op, case)


class NodeOnlyAdapter(PartialAdapter):
    """The reference, declaring node sessions but not affinity sessions."""

    def start(self) -> dict[str, Any]:
        return {**self.inner.start(), "name": "node-only",
                "operations": ["merge", "hints", "node"]}
