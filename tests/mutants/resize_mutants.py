"""Deliberately wrong in-place resizes: the property of tests/test_resize.py (RESIZE-6,
RESIZE-7) must reject every one.  ``RESIZE_MUTANTS`` maps a name to a function of
:func:`numaspec.resize.resize`'s shape, wrong in one way."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from numaspec import resize as resize_module
from numaspec.admission import Node
from numaspec.resize import ContainerResize, ResizeResult, resize

__all__ = ["RESIZE_MUTANTS"]


def _no_fit(node: Node, uid: str, changes: Sequence[ContainerResize]) -> ResizeResult:
    """The pod is not admitted again: a resize that passes the Infeasible checks is accepted
    whatever the other pods hold (no resource fit)."""
    before = node.pods.get(uid)
    answer = resize(node, uid, changes)
    if answer.status == "Deferred" and before is not None:
        node.pods[uid] = resize_module._desired(node, before, changes)
        return ResizeResult("InProgress")
    return answer


def _deferred_still_counts(node: Node, uid: str, changes: Sequence[ContainerResize]
                           ) -> ResizeResult:
    """A Deferred resize leaves the pod counted at its desired size."""
    before = node.pods.get(uid)
    answer = resize(node, uid, changes)
    if answer.status == "Deferred" and before is not None:
        node.pods[uid] = resize_module._desired(node, before, changes)
    return answer


def _releases_exclusive(node: Node, uid: str, changes: Sequence[ContainerResize]
                        ) -> ResizeResult:
    """An accepted resize hands the pod's exclusive CPUs and memory blocks back (as if they
    were to be allocated anew at the new size)."""
    answer = resize(node, uid, changes)
    if answer.status == "InProgress":
        if node.cpu is not None:
            node.cpu.remove_pod(uid)
        if node.memory is not None:
            node.memory.remove_pod(uid)
    return answer


RESIZE_MUTANTS: dict[str, Callable[[Node, str, Sequence[ContainerResize]], ResizeResult]] = {
    "no_fit": _no_fit,
    "deferred_still_counts": _deferred_still_counts,
    "releases_exclusive": _releases_exclusive,
}
