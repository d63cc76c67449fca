"""numaspec: an executable reference specification of kubelet NUMA alignment.

The public API is what this module re-exports; everything else is internal.  The spec itself
is in ``spec/`` of the source tree (installed as ``numaspec.spec``); rule IDs such as
``MERGE-3`` in the docstrings point there.

The package is laid out as the spec is, one wing per part, each importing only the wings
before it (``tests/meta/test_imports.py`` holds it to that):

* at the base, shared by every wing: ``errors`` (the one error hierarchy), ``limits`` (the
  bounds numaspec accepts), ``strict_json`` (JSON as numaspec reads it), ``rules`` (the
  spec's rules as data) and ``about`` (numaspec's version);
* :mod:`numaspec.topology`: the Topology Manager's merge: masks, hints, the merge and the fast
  merge, the policies and their options, kubelet releases and their feature gates;
* :mod:`numaspec.node`: a whole node: pods and quantities, the machine and the configuration,
  the CPU, Device and Memory Managers, admission, resize, NUMA-level affinity and what a
  scheduler sees;
* :mod:`numaspec.dra`: DRA device co-placement: the scheduler's structured allocator, which
  decides which DRA devices land together on a node;
* :mod:`numaspec.protocols`: the line formats and the adapter protocol, the reference's
  line loops and its traces on request;
* :mod:`numaspec.operators`: questions about a real node from its own files: the importers,
  the node restored from kubelet's state files, ``numaspec explain``, what-if.

The suite, :mod:`numaspec.conformance`, sits above all of them, and the ``numaspec`` command
(:mod:`numaspec.conformance.cli`) above the suite.
"""

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
    MergeTooLargeError,
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
from numaspec.node.admission import ContainerAssignment, Decision, Node
from numaspec.node.affinity import (
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
from numaspec.node.machine import Core, Device, DevicePlugin, Machine, NumaNode
from numaspec.node.nodeconfig import NodeConfig
from numaspec.node.pods import Container, Pod, QOSClass, qos_class
from numaspec.node.predict import node_resource_topology
from numaspec.node.resize import ContainerResize, ResizeResult, resize
from numaspec.node.scheduling import NodeScheduler, Verdict
from numaspec.node.trace import AdmissionTrace
from numaspec.operators.questions import NodeFiles, build_node, explain_pod, largest_pod, what_if
from numaspec.operators.restore import RestoreReport, RunningPod, restore_state, state_files
from numaspec.protocols.adapter_protocol import predict_case, reference_predict
from numaspec.protocols.explain import explain_admission, explain_case, explain_merge
from numaspec.protocols.merge_protocol import MergeRequest, decode_merge_request, evaluate_request
from numaspec.topology.hints import (
    NO_POSSIBLE_PLACEMENT,
    NO_PREFERENCE,
    ProviderHints,
    TopologyHint,
    flatten_provider_hints,
)
from numaspec.topology.masks import MAX_NUMA_ID, NumaMask, iterate_masks
from numaspec.topology.merge import best_hint, merge_permutation, target_count
from numaspec.topology.numa import NumaInfo
from numaspec.topology.options import PolicyOptions, parse_policy_options
from numaspec.topology.policies import (
    MergeOutcome,
    Policy,
    check_startup,
    merge_for_policy,
    topology_merge,
)
from numaspec.topology.trace import MergeTrace
from numaspec.topology.versions import (
    DEFAULT,
    NEWEST,
    OLDEST,
    PRERELEASES,
    SUPPORTED_VERSIONS,
    KubeletVersion,
    parse_version,
)

__all__ = [
    "AFFINITY_ANNOTATION",
    "ANTI_AFFINITY_ANNOTATION",
    "MAX_NUMA_ID",
    "MEMORY_ENHANCEMENT_ANNOTATION",
    "DEFAULT",
    "NEWEST",
    "NO_POSSIBLE_PLACEMENT",
    "NO_PREFERENCE",
    "OLDEST",
    "PRERELEASES",
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

#: numaspec's version (numaspec.about): derived from git in a checkout, so asked for only when
#: read (PEP 562), not on every import.
__version__: str


def __getattr__(name: str) -> str:
    if name == "__version__":
        from numaspec.about import version

        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
