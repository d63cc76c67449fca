"""DRA device co-placement (spec part III: chapter ``dra.md``): the structured allocator's choice of
devices for a node's ResourceClaims, from its ResourceSlices and DeviceClasses.

Devices allocated through DRA take no part in the Topology Manager's merge (DEV-8); whether
they land together is decided here, by selectors and ``matchAttribute`` constraints over
topology attributes.  Modules: ``objects`` (the API objects as read), ``pools`` (DRA-2),
``selectors`` (CEL, DRA-3), ``allocator`` (the search, DRA-4 to DRA-9), ``variants`` (which
allocator a scheduler runs, DRA-8), ``reasons`` (why a device, or none, DRA-15),
``mixed_pod`` (what aligns what in a pod with exclusive resources and DRA devices, DRA-12).
"""

from numaspec.dra.allocator import Allocation, Features, Picked, allocate
from numaspec.dra.mixed_pod import (
    Admitted,
    Allocated,
    ClaimUse,
    ContainerPlacements,
    Pair,
    Placement,
    co_placement,
)
from numaspec.dra.objects import Claim, DeviceClass, NodeInfo, Slice
from numaspec.dra.pools import Pool, gather_pools

__all__ = [
    "Admitted",
    "Allocated",
    "Allocation",
    "Claim",
    "ClaimUse",
    "ContainerPlacements",
    "DeviceClass",
    "Features",
    "NodeInfo",
    "Pair",
    "Picked",
    "Placement",
    "Pool",
    "Slice",
    "allocate",
    "co_placement",
    "gather_pools",
]
