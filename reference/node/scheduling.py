"""The scheduler side of NUMA-level inter-pod affinity (spec chapter ``affinity.md``, SCHED-*).

Katalyst's scheduler plugin keeps a pod off a node when no NUMA placement there could satisfy
its affinity rules, and reserves a scheduled pod's affinity information until the node reports
it (seed 003, section 5; katalyst-core PR #347, ``pkg/scheduler/plugins/numainterpodaffinity``).
numaspec's scheduler judges a node by running the node's own admission on a copy of what the
node reports, with the pods in flight placed first; a node passes exactly when that admission
would succeed, so resource fit, hint width and the Topology Manager policy all count.
"""

from __future__ import annotations

import attrs

from numaspec.errors import InvalidFieldError, NumaspecError, UnknownPodError
from numaspec.node.admission import Node
from numaspec.node.pods import Pod

__all__ = ["NodeScheduler", "Verdict"]


@attrs.frozen
class Verdict:
    """SCHED-1: whether the node passes, and the node's reason when it does not."""

    passes: bool
    reason: str = ""
    message: str = ""


class NodeScheduler:
    """SCHED-1..SCHED-4: the scheduler's view of one node.

    ``node`` is the node as it reports itself (Katalyst's CNR); ``reserved`` holds the pods the
    scheduler placed on it that the node has not decided on yet, in the order they were
    reserved.
    """

    def __init__(self, node: Node) -> None:
        self.node = node
        self.reserved: dict[str, Pod] = {}

    def fork(self, node: Node) -> NodeScheduler:
        """NODE-6: a copy of the scheduler's view of ``node`` (this one's node, or a copy of
        it) with the same reservations."""
        twin = NodeScheduler(node)
        twin.reserved = dict(self.reserved)
        return twin

    def _view(self) -> Node:
        """SCHED-2: the node's state with every reserved pod admitted on top, in reservation
        order; one the copy refuses is left out (the node will most likely refuse it too).
        SCHED-4: a reserved pod the node now reports as live is no longer a reservation (a
        rejected one the node cannot report: the caller says so with :meth:`settle`)."""
        for uid in [u for u in self.reserved if u in self.node.pods]:
            del self.reserved[uid]
        view = self.node.fork()
        for pod in self.reserved.values():
            try:
                view.admit(pod)
            except NumaspecError:
                continue
        return view

    def check(self, pod: Pod) -> Verdict:
        """SCHED-1: the node passes ``pod`` iff its admission, on the scheduler's view, admits
        it.  Bad annotations raise the node's errors; a pod already live or reserved is an
        error, not a verdict."""
        if pod.uid in self.reserved:
            raise InvalidFieldError(f"pod {pod.uid!r} is reserved on this node already",
                                    where="pod.uid")
        decision = self._view().admit(pod)
        return Verdict(decision.admitted, decision.reason, decision.message)

    def reserve(self, pod: Pod) -> None:
        """SCHED-3: the scheduler chose this node for ``pod``; until the node decides, later
        checks see it placed."""
        if pod.uid in self.reserved or pod.uid in self.node.pods:
            raise InvalidFieldError(f"pod {pod.uid!r} is already reserved or live on the node",
                                    where="pod.uid")
        self.node._check_pod(pod)
        self.node.region(pod)  # the annotation errors, now rather than at every later check
        self.reserved[pod.uid] = pod

    def unreserve(self, uid: str) -> None:
        """SCHED-3: binding failed; the reservation is rolled back."""
        if uid not in self.reserved:
            raise UnknownPodError(f"no pod {uid!r} is reserved on this node", where="uid")
        del self.reserved[uid]

    def settle(self, uid: str) -> None:
        """SCHED-4: the node decided on the pod (admitted it, and reports it from now on, or
        rejected it): its reservation ends either way."""
        self.reserved.pop(uid, None)
