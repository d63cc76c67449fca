"""Deliberately wrong in-place resizes: the property of tests/node/test_resize.py (RESIZE-6,
RESIZE-7) must reject every one.  ``RESIZE_MUTANTS`` maps a name to a function of
:func:`numaspec.node.resize.resize`'s shape, wrong in one way."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from numaspec.node.admission import Node
from numaspec.node.pods import PodResources
from numaspec.node.resize import ContainerResize, PodResourcesResize, ResizeResult, _desired, resize

__all__ = ["POD_LEVEL_RESIZE_MUTANTS", "RESIZE_MUTANTS"]


def _no_fit(node: Node, uid: str, changes: Sequence[ContainerResize]) -> ResizeResult:
    """The pod is not admitted again: a resize that passes the Infeasible checks is accepted
    whatever the other pods hold (no resource fit)."""
    before = node.pods.get(uid)
    answer = resize(node, uid, changes)
    if answer.status == "Deferred" and before is not None:
        node.pods[uid] = _desired(node, before, changes, before.resources)
        return ResizeResult("InProgress")
    return answer


def _deferred_still_counts(node: Node, uid: str, changes: Sequence[ContainerResize]
                           ) -> ResizeResult:
    """A Deferred resize leaves the pod counted at its desired size."""
    before = node.pods.get(uid)
    answer = resize(node, uid, changes)
    if answer.status == "Deferred" and before is not None:
        node.pods[uid] = _desired(node, before, changes, before.resources)
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


def _pod_level_unchecked(node: Node, uid: str, changes: Sequence[ContainerResize],
                         pod_resources: PodResourcesResize | None = None) -> ResizeResult:
    """RESIZE-8 wrong: a pod-level resize the fit refuses is taken anyway (the pod counted at
    its new pod-level requests)."""
    before = node.pods.get(uid)
    answer = resize(node, uid, changes, pod_resources)
    if answer.status == "Deferred" and before is not None and pod_resources is not None:
        node.pods[uid] = attrs.evolve(before, resources=PodResources.of(
            requests=pod_resources.requests, limits=pod_resources.limits))
        return ResizeResult("InProgress")
    return answer


def _pod_level_ignored(node: Node, uid: str, changes: Sequence[ContainerResize],
                       _pod_resources: PodResourcesResize | None = None) -> ResizeResult:
    """RESIZE-8 wrong: an accepted pod-level resize leaves the pod counted at its old
    pod-level requests (the pod-level part dropped)."""
    return resize(node, uid, changes, None)


#: RESIZE-8: mutants of the pod-level resize, for tests/node/test_resize.py's pod-level property.
POD_LEVEL_RESIZE_MUTANTS: dict[str, Callable[..., ResizeResult]] = {
    "pod_level_unchecked": _pod_level_unchecked,
    "pod_level_ignored": _pod_level_ignored,
}


RESIZE_MUTANTS: dict[str, Callable[[Node, str, Sequence[ContainerResize]], ResizeResult]] = {
    "no_fit": _no_fit,
    "deferred_still_counts": _deferred_still_counts,
    "releases_exclusive": _releases_exclusive,
}
