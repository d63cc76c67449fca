"""DRA-8: which allocator the scheduler runs, from the release and its feature gates.

From 1.34 the structured allocator comes in three variants (stable, incubating,
experimental), each supporting a set of the module's ``Features``; ``NewAllocator`` takes the
first, in that order, whose supported set holds every enabled feature, and from 1.35
``EnableAllocators`` can restrict the candidates (how a variant is forced).  The scheduler's
DynamicResources plugin turns the allocator features on from its feature gates
(``AllocatorFeatures`` from 1.35, the plugin's ``PreFilter`` before), so a scheduler with a
release's default gates runs a variant that depends on the release.  The variants search the
node's pools in different orders (DRA-2): that is how the variant changes a pick.

Upstream: ``staging/src/k8s.io/dynamic-resource-allocation/structured/allocator.go``
(``NewAllocator``, ``EnableAllocators``), ``structured/internal/*/allocator_*.go``
(``SupportedFeatures``), ``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``
(``AllocatorFeatures``; ``PreFilter`` at 1.33 and 1.34).  The gates' defaults are the release's
own (``spec/data/feature-gates.json``, read from each release's code).
"""

from __future__ import annotations

from collections.abc import Mapping

from numaspec.errors import InvalidFieldError, NotModelledError
from numaspec.topology.gates import gate_enabled, gate_errors
from numaspec.topology.versions import KubeletVersion

__all__ = [
    "FEATURES",
    "SINGLE",
    "VARIANTS",
    "choose_variant",
    "features_from_gates",
    "scheduler_features",
    "sorts_pools",
    "supported",
]

#: DRA-8: the variants, in the order ``NewAllocator`` tries them (from 1.34).
VARIANTS = ("stable", "incubating", "experimental")
#: DRA-8: the name of 1.33's one allocator.
SINGLE = "single"

_COMMON = frozenset({"AdminAccess", "DeviceTaints", "PartitionableDevices", "PrioritizedList"})
_CAPACITY = frozenset({"ConsumableCapacity", "DeviceBindingAndStatus"})
#: DRA-8: the allocator's feature names per release (the fields of its ``Features``).
FEATURES: dict[int, frozenset[str]] = {
    33: _COMMON,
    34: _COMMON | {"ConsumableCapacity", "DeviceBinding", "DeviceStatus"},
    35: _COMMON | _CAPACITY,
    36: _COMMON | _CAPACITY | {"ListTypeAttributes"},
    37: _COMMON | _CAPACITY | {"ListTypeAttributes", "CompatibilityGroups",
                               "DerivedAttributes", "FractionalCapacityRange",
                               "OptionalNodeOperations"},
}
#: 1.38 (pre-release 1.38.0-beta.0): the same fields as 1.37.
FEATURES[38] = FEATURES[37]

#: DRA-8: each variant's ``SupportedFeatures`` per release (1.33: one allocator, which
#: takes every feature it has).
_SUPPORTED: dict[int, dict[str, frozenset[str]]] = {
    33: {SINGLE: FEATURES[33]},
    34: {"stable": frozenset(), "incubating": _COMMON, "experimental": FEATURES[34]},
    35: {"stable": frozenset(), "incubating": _COMMON, "experimental": FEATURES[35]},
    36: {"stable": _COMMON, "incubating": _COMMON | _CAPACITY,
         "experimental": FEATURES[36]},
    37: {"stable": _COMMON, "incubating": _COMMON | _CAPACITY | {"FractionalCapacityRange"},
         "experimental": FEATURES[37]},
    # 1.38 (pre-release): stable takes consumable capacity, binding conditions and fractional
    # ranges (what a default-gate 1.38 scheduler enables, so it runs stable); incubating
    # catches up with experimental.
    38: {"stable": _COMMON | _CAPACITY | {"FractionalCapacityRange"},
         "incubating": FEATURES[38], "experimental": FEATURES[38]},
}

_BY_NAME: dict[str, tuple[str, ...]] = {
    "AdminAccess": ("DRAAdminAccess",), "PrioritizedList": ("DRAPrioritizedList",),
    "PartitionableDevices": ("DRAPartitionableDevices",), "DeviceTaints": ("DRADeviceTaints",)}
_BINDING: dict[str, tuple[str, ...]] = {
    "DeviceBindingAndStatus": ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"),
    "ConsumableCapacity": ("DRAConsumableCapacity",)}
#: DRA-8: the gates the scheduler turns each allocator feature on from (all of them on);
#: a feature not listed is never turned on by the scheduler of that release (1.36's
#: ``AllocatorFeatures`` leaves ``ListTypeAttributes`` out).
_GATES: dict[int, dict[str, tuple[str, ...]]] = {
    33: _BY_NAME,
    34: {**_BY_NAME, "DeviceBinding": ("DRADeviceBindingConditions",),
         "DeviceStatus": ("DRAResourceClaimDeviceStatus",),
         "ConsumableCapacity": ("DRAConsumableCapacity",)},
    35: {**_BY_NAME, **_BINDING},
    36: {**_BY_NAME, **_BINDING},
    37: {**_BY_NAME, **_BINDING,
         "FractionalCapacityRange": ("DRAFractionalCapacityRange",),
         "ListTypeAttributes": ("DRAListTypeAttributes",),
         "OptionalNodeOperations": ("DRAOptionalNodeOperations",),
         "DerivedAttributes": ("DRADerivedAttributes",),
         "CompatibilityGroups": ("DRADeviceCompatibilityGroups",)},
}
#: 1.38 (pre-release): ``AllocatorFeatures`` as at 1.37.
_GATES[38] = _GATES[37]


def supported(minor: int, variant: str) -> frozenset[str]:
    """DRA-8: the features ``variant`` of the release's allocator supports."""
    return _SUPPORTED[minor][variant]


def features_from_gates(minor: int, gates: Mapping[str, bool]) -> frozenset[str]:
    """DRA-8: the allocator features a scheduler of the release enables under ``gates`` (its
    ``--feature-gates``; a gate not set is at the release's default).  A gate the release
    does not know, or one it refuses to set, is an :class:`InvalidFieldError` naming it, as
    the scheduler refuses to start."""
    version = KubeletVersion(minor)
    errors = gate_errors(dict(gates), version)
    if errors:
        error = errors[0]
        raise InvalidFieldError(f"the {version} scheduler refuses its feature gates: "
                                f"{error.message}", where=error.where)
    if minor == 36 and gate_enabled(gates, version, "DRAListTypeAttributes"):
        # DRA-18: 1.36's scheduler reads lists in CEL (its CEL cache has the gate) while its
        # allocator compares them as scalars (AllocatorFeatures leaves the feature out): a
        # state an allocate case, whose features serve both, cannot say
        raise NotModelledError("at 1.36, DRAListTypeAttributes turns on lists in CEL but not "
                               "in the allocator's matchAttribute, which a case cannot say",
                               where="feature_gates.DRAListTypeAttributes")
    return frozenset(feature for feature, needs in _GATES[minor].items()
                     if all(gate_enabled(gates, version, gate) for gate in needs))


def scheduler_features(minor: int) -> frozenset[str]:
    """DRA-8: the allocator features a scheduler of the release enables with its default
    gates."""
    return features_from_gates(minor, {})


def choose_variant(minor: int, features: frozenset[str], forced: str | None = None) -> str:
    """DRA-8: the allocator that answers: 1.33's one; from 1.34 the first variant that
    supports every enabled feature, among ``forced`` alone when one is forced (from 1.35,
    ``EnableAllocators``).  A forced variant that lacks a feature is an
    :class:`InvalidFieldError`, as ``NewAllocator`` finds no allocator."""
    if minor <= 33:
        if forced is not None:
            raise InvalidFieldError("1.33 has one allocator: no variant can be forced",
                                    where="variant")
        return SINGLE
    if forced is not None:
        if minor <= 34:
            raise InvalidFieldError(f"1.{minor} cannot force a variant (EnableAllocators "
                                    "exists from 1.35): the features choose it",
                                    where="variant")
        if forced not in VARIANTS:
            raise InvalidFieldError(f"unknown variant {forced!r} (known: "
                                    f"{', '.join(VARIANTS)})", where="variant")
        missing = sorted(features - supported(minor, forced))
        if missing:
            raise InvalidFieldError(f"the {forced} allocator of 1.{minor} does not support "
                                    f"{', '.join(missing)} (no allocator available)",
                                    where="variant")
        return forced
    for variant in VARIANTS:
        if features <= supported(minor, variant):
            return variant
    raise InvalidFieldError(f"no allocator of 1.{minor} supports "
                            f"{', '.join(sorted(features))}", where="features")


def sorts_pools(minor: int, variant: str) -> bool:
    """DRA-2, DRA-8: whether the variant searches pools by driver and pool name and a pool's
    slices by name (incubating and experimental from 1.36, stable too from 1.38); else pools
    in an order that is not defined, and slices as given."""
    return (variant in ("incubating", "experimental") and minor >= 36) or minor >= 38
