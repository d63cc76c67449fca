"""numaspec: an executable reference specification of kubelet NUMA alignment.

The public API is what this module re-exports; everything else is internal.  The spec itself
is in ``spec/`` of the source tree; rule IDs such as ``MERGE-3`` in the docstrings point there.
"""

from numaspec.admission import ContainerAssignment, Decision, Node
from numaspec.affinity import (
    AFFINITY_ANNOTATION,
    ANTI_AFFINITY_ANNOTATION,
    MEMORY_ENHANCEMENT_ANNOTATION,
    AffinityTerms,
    Placed,
    Region,
    Selector,
    Zone,
    admissible_region,
    filter_hints,
    parse_affinity,
)
from numaspec.bitmask import MAX_NUMA_ID, NumaMask, iterate_masks
from numaspec.errors import (
    AdapterError,
    CorruptCheckpointError,
    InputFileError,
    InvalidAffinityError,
    InvalidFieldError,
    InvalidNumaDistancesError,
    InvalidNumaIdError,
    InvalidPolicyOptionValueError,
    InvalidQuantityError,
    MalformedJSONError,
    MissingNumaDistancesError,
    NodeStartupError,
    NotModelledError,
    NumaspecError,
    PodAlreadyAdmittedError,
    PolicyOptionNotEnabledError,
    StateConflictError,
    TooManyNumaNodesError,
    UnknownPodError,
    UnknownPolicyError,
    UnknownPolicyOptionError,
    UnknownResourceError,
    UnsupportedVersionError,
)
from numaspec.explain import explain_admission, explain_case, explain_merge
from numaspec.hints import (
    NO_POSSIBLE_PLACEMENT,
    NO_PREFERENCE,
    ProviderHints,
    TopologyHint,
    flatten_provider_hints,
)
from numaspec.machine import Core, Device, DevicePlugin, Machine, NumaNode
from numaspec.merge import best_hint, merge_permutation, target_count
from numaspec.nodeconfig import NodeConfig
from numaspec.numa import NumaInfo
from numaspec.operator import NodeFiles, build_node, explain_pod, largest_pod, what_if
from numaspec.options import PolicyOptions, parse_policy_options
from numaspec.pods import Container, Pod, QOSClass, qos_class
from numaspec.policy import MergeOutcome, Policy, check_startup, merge_for_policy, topology_merge
from numaspec.resize import ContainerResize, ResizeResult, resize
from numaspec.restore import RestoreReport, RunningPod, restore_state, state_files
from numaspec.scheduling import NodeScheduler, Verdict
from numaspec.topology_export import node_resource_topology, predict_case, reference_predict
from numaspec.trace import AdmissionTrace, MergeTrace
from numaspec.versions import NEWEST, OLDEST, SUPPORTED_VERSIONS, KubeletVersion, parse_version
from numaspec.wire import MergeRequest, MergeTooLargeError, decode_merge_request, evaluate_request

__version__ = "0.2.0"

__all__ = [
    "AFFINITY_ANNOTATION",
    "ANTI_AFFINITY_ANNOTATION",
    "MAX_NUMA_ID",
    "MEMORY_ENHANCEMENT_ANNOTATION",
    "NEWEST",
    "NO_POSSIBLE_PLACEMENT",
    "NO_PREFERENCE",
    "OLDEST",
    "SUPPORTED_VERSIONS",
    "AdapterError",
    "AdmissionTrace",
    "AffinityTerms",
    "Container",
    "ContainerResize",
    "ContainerAssignment",
    "Core",
    "CorruptCheckpointError",
    "Decision",
    "Device",
    "DevicePlugin",
    "InputFileError",
    "InvalidAffinityError",
    "InvalidFieldError",
    "InvalidNumaDistancesError",
    "InvalidNumaIdError",
    "InvalidPolicyOptionValueError",
    "InvalidQuantityError",
    "KubeletVersion",
    "Machine",
    "MalformedJSONError",
    "MergeOutcome",
    "MergeRequest",
    "MergeTrace",
    "MergeTooLargeError",
    "MissingNumaDistancesError",
    "Node",
    "NodeConfig",
    "NodeFiles",
    "NodeScheduler",
    "NodeStartupError",
    "NotModelledError",
    "NumaInfo",
    "NumaMask",
    "NumaNode",
    "NumaspecError",
    "Placed",
    "Pod",
    "PodAlreadyAdmittedError",
    "Policy",
    "PolicyOptionNotEnabledError",
    "PolicyOptions",
    "ProviderHints",
    "QOSClass",
    "Region",
    "ResizeResult",
    "RestoreReport",
    "RunningPod",
    "Selector",
    "StateConflictError",
    "TooManyNumaNodesError",
    "TopologyHint",
    "UnknownPodError",
    "UnknownPolicyError",
    "UnknownPolicyOptionError",
    "UnknownResourceError",
    "UnsupportedVersionError",
    "Verdict",
    "Zone",
    "__version__",
    "admissible_region",
    "best_hint",
    "build_node",
    "check_startup",
    "decode_merge_request",
    "evaluate_request",
    "explain_admission",
    "explain_case",
    "explain_merge",
    "explain_pod",
    "filter_hints",
    "flatten_provider_hints",
    "iterate_masks",
    "largest_pod",
    "merge_for_policy",
    "merge_permutation",
    "node_resource_topology",
    "parse_affinity",
    "parse_policy_options",
    "parse_version",
    "predict_case",
    "qos_class",
    "reference_predict",
    "resize",
    "restore_state",
    "state_files",
    "target_count",
    "topology_merge",
    "what_if",
]
