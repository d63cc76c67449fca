"""How a hint provider refuses a pod (spec chapter ``admission.md``, ADMIT-4).

Kubelet turns the error a provider's ``Allocate`` returns into the pod's admission result
(``pkg/kubelet/cm/admission/errors.go``, ``GetPodAdmitResult``): an error that names its own
type keeps it as the reason (``SMTAlignmentError``, ``TopologyAffinityError``); any other error
becomes ``UnexpectedAdmissionError`` with the message wrapped.  A rejection is a decision, not
a numaspec error, so it is not part of the :class:`~numaspec.errors.NumaspecError` hierarchy.
"""

from __future__ import annotations

__all__ = ["UNEXPECTED", "Rejection", "unexpected"]

#: ADMIT-4: the reason of every provider error that has no type of its own.
UNEXPECTED = "UnexpectedAdmissionError"


class Rejection(Exception):
    """A provider (or the Topology Manager) refuses the pod with ``reason`` and ``message``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message


def unexpected(error_text: str) -> Rejection:
    """ADMIT-4: an untyped provider error, worded as kubelet words it."""
    return Rejection(UNEXPECTED, f"Allocate failed due to {error_text}, which is unexpected")
