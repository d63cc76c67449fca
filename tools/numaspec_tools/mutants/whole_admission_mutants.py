"""Deliberately wrong whole-admission nodes (spec/node/admission.md, ADMIT-8, ADMIT-9, INV-10).
Each patches a reference node right after it is created; tests/node/test_whole_admission.py shows
the whole-admission properties failing on every one of them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numaspec.node.admission import Decision, Node
from numaspec.node.pods import Pod
from numaspec.protocols.node_protocol import NodeSession


class _Unlimited(dict[str, int]):
    """An allocatable that has room for everything."""

    def __getitem__(self, key: str) -> int:
        return 1 << 62

    def get(self, key: str, default: Any = None) -> int:  # noqa: ARG002
        return 1 << 62


def _fit_skipped(node: Node) -> None:
    """ADMIT-8 broken: the resource-fit handler never refuses (numaspec before issue 13)."""
    node.allocatable = _Unlimited()


def _fit_keeps_allocations(node: Node) -> None:
    """ADMIT-9 broken: a pod refused after the providers allocated keeps what they gave it."""
    release = node._release
    admitting: list[bool] = []

    def keep_while_admitting(pod_uid: str) -> None:
        if not admitting:
            release(pod_uid)

    original = node.admit

    def admit(pod: Pod) -> Decision:
        admitting.append(True)
        try:
            return original(pod)
        finally:
            admitting.clear()

    node._release = keep_while_admitting  # type: ignore[method-assign]
    node.admit = admit  # type: ignore[method-assign,assignment]


def _pods_not_counted(node: Node) -> None:
    """ADMIT-8 broken: maxPods is never reached."""
    node.allocatable["pods"] = 1 << 62


WHOLE_ADMISSION_MUTATIONS: dict[str, Callable[[Node], None]] = {
    "fit-skipped": _fit_skipped,
    "fit-keeps-allocations": _fit_keeps_allocations,
    "pods-not-counted": _pods_not_counted,
}


class MutantSession(NodeSession):
    """A node session whose every node is patched by one mutation."""

    def __init__(self, mutation: str) -> None:
        super().__init__()
        self.mutate = WHOLE_ADMISSION_MUTATIONS[mutation]

    def handle(self, request: object) -> dict[str, Any]:
        answer = super().handle(request)
        if isinstance(request, dict) and request.get("op") == "create" and \
                self.node is not None:
            self.mutate(self.node)
        return answer
