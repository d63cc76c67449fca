"""The one error hierarchy of numaspec.

Every error numaspec raises on purpose derives from :class:`NumaspecError`.  Each concrete
class carries a stable, kebab-case ``kind`` (it is what the line protocols print as
``{"error": {"kind": ...}}``, so it never changes once released) and a ``where``: the path of
the offending input (``providers[1].gpu[0].numa_affinity[2]``), or ``""`` when the error is about
the request as a whole.

Errors that kubelet itself would raise at start-up (an unknown policy, a bad option value, too
many NUMA nodes) carry kubelet's own wording in ``kubelet_message`` so that an adapter around
the real kubelet can be compared with the reference on more than the kind.
"""

from __future__ import annotations

__all__ = [
    "AdapterError",
    "CorruptCheckpointError",
    "InputFileError",
    "InvalidAffinityError",
    "InvalidFieldError",
    "InvalidNumaDistancesError",
    "InvalidNumaIdError",
    "InvalidPolicyOptionValueError",
    "InvalidQuantityError",
    "LimitExceededError",
    "MalformedJSONError",
    "MergeTooLargeError",
    "MissingNumaDistancesError",
    "NodeStartupError",
    "NotModelledError",
    "NumaspecError",
    "PodAlreadyAdmittedError",
    "PolicyOptionNotEnabledError",
    "StateConflictError",
    "TooManyNumaNodesError",
    "UnknownPolicyError",
    "UnknownPodError",
    "UnknownPolicyOptionError",
    "UnknownResourceError",
    "UnsupportedVersionError",
    "NumaspecWarning",
]


class NumaspecError(Exception):
    """Root of every deliberate numaspec error.  Not raised directly."""

    kind: str = "numaspec-error"

    def __init__(self, message: str, *, where: str = "", kubelet_message: str | None = None):
        if type(self) is NumaspecError:
            raise TypeError("NumaspecError is abstract; raise one of its subclasses")
        self.message = message
        self.where = where
        self.kubelet_message = kubelet_message
        super().__init__(self.describe())

    def describe(self) -> str:
        """The message with its location, as printed by the line protocols."""
        return f"{self.where}: {self.message}" if self.where else self.message

    def relocated(self, where: str) -> NumaspecError:
        """The same error (kind, message, kubelet's message) at another ``where``: a field
        path put under the file or the enclosing object it was found in.  Raise it ``from
        None``: the relocated error is the whole story."""
        return type(self)(self.message, where=where, kubelet_message=self.kubelet_message)


# --- malformed input -------------------------------------------------------------------------


class MalformedJSONError(NumaspecError):
    """A line that is not a JSON document (truncated, garbage, wrong encoding)."""

    kind = "malformed-json"


class InvalidFieldError(NumaspecError):
    """A field with the wrong JSON type, a missing required field or an unknown field."""

    kind = "invalid-field"


class InvalidNumaIdError(NumaspecError):
    """A NUMA node id that is not an integer in 0..63, or a duplicated one."""

    kind = "invalid-numa-id"


class InvalidNumaDistancesError(NumaspecError):
    """A distance table that is not usable: a negative entry, a row too short for a node id."""

    kind = "invalid-numa-distances"


class InvalidQuantityError(NumaspecError):
    """A resource quantity that Kubernetes cannot parse (``"1.5.5"``, ``"10Xi"``, ``""``)."""

    kind = "invalid-quantity"


class UnsupportedVersionError(NumaspecError):
    """A kubelet version string that is malformed or outside the versions numaspec models."""

    kind = "unsupported-version"


class LimitExceededError(NumaspecError):
    """Input beyond the bounds numaspec accepts (``reference/limits.py``; WIRE-5, NWIRE-5):
    a line too long, an integer of too many digits, a cpuset range past the last CPU id, a
    machine too large.  Checked before any work proportional to the input is done, so that
    every request is answered or refused in bounded time and memory."""

    kind = "limit-exceeded"


class MergeTooLargeError(LimitExceededError):
    """WIRE-4: the merge's cross product is larger than the budget.  kubelet would walk it
    all; the reference refuses rather than hang (``numaspec merge --max-merge-steps``)."""

    kind = "merge-too-large"


# --- kubelet start-up errors (the Topology Manager would refuse to start) ---------------------


class UnknownPolicyError(NumaspecError):
    """A Topology Manager policy name kubelet does not know."""

    kind = "unknown-policy"


class UnknownPolicyOptionError(NumaspecError):
    """A policy option name the given kubelet version does not know."""

    kind = "unknown-policy-option"


class PolicyOptionNotEnabledError(NumaspecError):
    """A known option whose maturity level is switched off by the feature gates, or options
    given to a kubelet version that has no policy options at all."""

    kind = "policy-option-not-enabled"


class InvalidPolicyOptionValueError(NumaspecError):
    """A policy option value kubelet rejects (not a bool, not an integer, below the minimum)."""

    kind = "invalid-policy-option-value"


class TooManyNumaNodesError(NumaspecError):
    """More NUMA nodes on the machine than the Topology Manager accepts."""

    kind = "too-many-numa-nodes"


class MissingNumaDistancesError(NumaspecError):
    """prefer-closest-numa-nodes is on but a machine node has no distance row."""

    kind = "missing-numa-distances"


# --- the node model (spec chapters admission.md, cpu.md, devices.md, memory.md) --------------


class NodeStartupError(NumaspecError):
    """A node configuration kubelet would refuse to start with: a CPU or Memory Manager
    constructor error, a reservation that does not add up.  ``kubelet_message`` carries
    kubelet's own text where numaspec knows it."""

    kind = "node-startup"


class UnknownResourceError(NumaspecError):
    """A pod asks for a resource the node does not have at all (an extended resource no
    device plugin serves, a hugepage size the machine lacks)."""

    kind = "unknown-resource"


class PodAlreadyAdmittedError(NumaspecError):
    """``admit`` of a pod UID that is already live on the node."""

    kind = "pod-already-admitted"


class UnknownPodError(NumaspecError):
    """``remove`` of a pod UID the node does not hold."""

    kind = "unknown-pod"


class NotModelledError(NumaspecError):
    """Valid input whose kubelet behaviour numaspec does not model (yet), or where kubelet
    itself would not answer (it would loop forever).  Never a silent approximation."""

    kind = "not-modelled"


class InvalidAffinityError(NumaspecError):
    """A pod's NUMA-level affinity annotations that cannot be used (spec chapter
    ``affinity.md``): an empty selector, an unknown zone, a label key the node does not keep,
    affinity on a NUMA-exclusive pod."""

    kind = "invalid-affinity"


# --- operators' files (numaspec.operators.importers) -------------------------------------------


class InputFileError(NumaspecError):
    """A file an operator hands numaspec (a sysfs tree, an hwloc XML, a KubeletConfiguration,
    a Pod, a kubelet state file) that cannot be read as one: missing, unreadable, malformed
    YAML or JSON, a field of the wrong type.  ``where`` is ``FILE`` or ``FILE: field.path``."""

    kind = "invalid-input-file"


class CorruptCheckpointError(InputFileError):
    """A kubelet state file or checkpoint kubelet itself would refuse: a checksum that does not
    verify, a format no modelled release writes, data that does not decode."""

    kind = "corrupt-checkpoint"


class StateConflictError(InputFileError):
    """State files that contradict the machine, the configuration or the pods they name (a CPU
    the machine lacks, a CPU held twice, a policy other than the configured one, a pod the
    state names and the pods given do not)."""

    kind = "state-conflict"


# --- running other implementations ------------------------------------------------------------


class AdapterError(NumaspecError):
    """An implementation under test could not be loaded or misbehaved outside of a case."""

    kind = "adapter-error"


# --- warnings ----------------------------------------------------------------------------------


class NumaspecWarning(UserWarning):
    """Something numaspec read and went on past, as the component it models does (an unknown
    field kubelet's lenient decoding ignores, a field no answer depends on): raised with
    :func:`warnings.warn`, so a library user sees it on stderr and the commands print it with
    their answer.  ``where`` names the file and the field, as an error's does."""

    def __init__(self, message: str, *, where: str = ""):
        self.message = message
        self.where = where
        super().__init__(self.describe())

    def describe(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message
