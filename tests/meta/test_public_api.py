"""The public API is pinned: every name ``numaspec`` re-exports, so that moving a module inside
the package (its wings, CONTRIBUTING.md) can never drop or rename one unnoticed.  A change to
this list is a change to the API: say it in CHANGELOG.md."""

from __future__ import annotations

import types

import numaspec

#: ``numaspec.__all__`` as of 0.2.0, sorted.
PUBLIC = (
    "AFFINITY_ANNOTATION",
    "ANTI_AFFINITY_ANNOTATION",
    "AdapterError",
    "AdmissionTrace",
    "AffinityTerms",
    "Container",
    "ContainerAssignment",
    "ContainerResize",
    "Core",
    "CorruptCheckpointError",
    "DEFAULT",
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
    "MAX_NUMA_ID",
    "MEMORY_ENHANCEMENT_ANNOTATION",
    "Machine",
    "MalformedJSONError",
    "MergeOutcome",
    "MergeRequest",
    "MergeTooLargeError",
    "MergeTrace",
    "MissingNumaDistancesError",
    "NEWEST",
    "NO_POSSIBLE_PLACEMENT",
    "NO_PREFERENCE",
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
    "OLDEST",
    "PRERELEASES",
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
    "SUPPORTED_VERSIONS",
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
)


def test_the_public_api_is_pinned() -> None:
    assert sorted(numaspec.__all__) == list(PUBLIC)
    assert len(set(numaspec.__all__)) == len(numaspec.__all__)


def test_every_public_name_is_there_and_comes_from_the_package() -> None:
    for name in PUBLIC:
        value = getattr(numaspec, name)
        module = getattr(value, "__module__", None)
        if isinstance(value, type) or callable(value):
            assert module is not None
            assert module.startswith("numaspec."), (name, module)
            assert not module.startswith("numaspec.conformance"), (name, module)


def test_nothing_public_is_left_out_of_all() -> None:
    """A name the package imports at its top is either exported or private to it."""
    exported = set(numaspec.__all__)
    loose = {n for n, v in vars(numaspec).items()
             if not n.startswith("_") and not isinstance(v, types.ModuleType)} - exported
    assert not loose, sorted(loose)
