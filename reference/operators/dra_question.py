"""The DRA part of an explanation (spec chapter ``dra.md``, DRA-11, DRA-12; ``operators.md``,
OPS-11): for a pod with resource claims, what the scheduler's allocator would give it on this
node, and for each container what the Topology Manager aligned, what DRA co-placed, and which
pairs nothing aligns.

The pod's claims are found among the ResourceClaims and ResourceClaimTemplates the operator
gives (:mod:`numaspec.operators.importers.dra_objects`); the devices of every allocated claim
are in use; the claims not yet allocated are allocated as the scheduler would (DRA-11).
"""

from __future__ import annotations

import copy
from typing import Any

import attrs

from numaspec.dra.allocator import Picked
from numaspec.dra.mixed_pod import Admitted, Allocated, ClaimUse, co_placement
from numaspec.dra.objects import (
    Claim,
    NodeInfo,
    decode_claim,
)
from numaspec.dra.variants import SINGLE, scheduler_features, sorts_pools
from numaspec.errors import InputFileError, InvalidFieldError
from numaspec.node.admission import Node
from numaspec.node.pods import Pod
from numaspec.operators.importers.dra_objects import (
    DraObjects,
    allocation_of,
    claim_from_template,
)
from numaspec.operators.importers.kube_objects import ImportedPod
from numaspec.protocols.allocate_protocol import (
    ALLOCATE_RELEASES,
    AllocateCase,
    allocate_once,
    claims_scope,
    encode_allocation,
    release_scope,
)

__all__ = ["DraQuestion", "dra_part", "search_lines"]


@attrs.frozen
class DraQuestion:
    """OPS-11: what ``--dra`` adds to a question: the pod as imported (its claims and each
    container's share), the DRA objects, the scheduler's release, and the node's name and
    labels."""

    imported: ImportedPod
    objects: DraObjects
    release: str
    node_name: str
    labels: dict[str, str] = attrs.field(factory=dict)

    def answer(self, node: Node, pod: Pod) -> dict[str, Any]:
        return dra_part(node, pod, self.imported, self.objects, release=self.release,
                        node_name=self.node_name, labels=self.labels)


def search_lines(case: AllocateCase, *, defaults: bool = True) -> list[str]:
    """DRA-2, DRA-8: which allocator answers, the features that chose it, and the order it
    searches the node's pools (``defaults``: the features of the release's default gates)."""
    variant = case.variant
    if variant == SINGLE:
        who = "its one allocator"
    elif case.forced is not None:
        who = f"the {variant} allocator, forced (EnableAllocators)"
    else:
        gates = "its default gates" if defaults else "its gates"
        who = f"the {variant} allocator: the first that supports the features {gates} enable"
    if sorts_pools(case.minor, variant):
        order = "it searches pools, and a pool's slices, by name"
    else:
        order = "it searches pools as listed (upstream's order is not defined)"
    return [who, f"features: {', '.join(sorted(case.features)) or 'none'}", order]


def _pod_claims(imported: ImportedPod, objects: DraObjects
                ) -> tuple[dict[str, Claim], dict[str, tuple[Picked, ...]], list[str]]:
    """DRA-11: the pod's claims by its names for them, the devices of those allocated
    already, and a line per claim saying where it came from."""
    claims: dict[str, Claim] = {}
    before: dict[str, tuple[Picked, ...]] = {}
    said = []
    ns = imported.namespace
    for name, (kind, source) in imported.claim_sources.items():
        target = source
        if kind == "template":
            made = imported.claim_statuses.get(name)
            if made is not None and (ns, made) in objects.claims:
                target = made
            elif (ns, source) not in objects.templates:
                raise InputFileError(f"the pod's claim {name!r} is made from "
                                     f"ResourceClaimTemplate {ns}/{source}, which no --dra "
                                     "file holds", where=imported.source)
            else:
                at, template = objects.templates[(ns, source)]
                body = claim_from_template(template, ns, f"{imported.pod.name}-{name}")
                claims[name] = decode_claim(body, f"{at}.spec")
                said.append(f"{name}: a new claim from ResourceClaimTemplate {ns}/{source}")
                continue
        if (ns, target) not in objects.claims:
            raise InputFileError(f"the pod's claim {name!r} is ResourceClaim {ns}/{target}, "
                                 "which no --dra file holds", where=imported.source)
        at, body = objects.claims[(ns, target)]
        claims[name] = decode_claim(body, at)
        devices = allocation_of(body)
        if devices is None:
            said.append(f"{name}: ResourceClaim {ns}/{target}, not allocated yet")
        else:
            before[name] = tuple(Picked(d["request"], d["driver"], d["pool"], d["device"])
                                 for d in devices)
            said.append(f"{name}: ResourceClaim {ns}/{target}, allocated already")
    return claims, before, said


def dra_part(node: Node, pod: Pod, imported: ImportedPod, objects: DraObjects, *,
             release: str, node_name: str, labels: dict[str, str]) -> dict[str, Any]:
    """DRA-11, DRA-12: the scheduler's allocation of the pod's claims on this node, the
    node's admission when it succeeds, and each container's placements and pairs."""
    if release not in ALLOCATE_RELEASES:
        raise InvalidFieldError(f"the scheduler's DRA allocator is modelled for "
                                f"{', '.join(ALLOCATE_RELEASES)}, not "
                                f"{release}: give the cluster's release with --dra-release",
                                where="--dra-release")
    minor = int(release.split(".")[1])
    slices, classes = objects.decoded()
    release_scope(minor, slices, [at for at, _ in objects.slices])
    claims, before, said = _pod_claims(imported, objects)
    fresh = [name for name in claims if name not in before]
    # DRA-8: a scheduler with the release's default feature gates, whose features choose
    # the allocator (and with it the order pools are searched in)
    claims_scope(minor, [claims[n] for n in fresh])
    case = AllocateCase(minor, scheduler_features(minor), NodeInfo(node_name, labels),
                        slices, classes, frozenset(objects.allocated()),
                        tuple(claims[n] for n in fresh), shares=objects.shares())
    allocation = allocate_once(case)
    scheduled = allocation.outcome == "allocated"
    decision = copy.deepcopy(node).admit(pod) if scheduled else None
    uses = {c: tuple(ClaimUse(claim, request) for claim, request in listed)
            for c, listed in imported.claim_uses.items()}
    placements = co_placement(
        pod, uses, Admitted.on(node, decision),
        Allocated(claims, fresh, allocation if scheduled else None, before, slices))
    return {"release": release, "node": node_name, "search": search_lines(case),
            "claims": said,
            "asked": fresh, "allocation": encode_allocation(allocation, case.variant),
            "scheduled": scheduled,
            "containers": [p.as_json() for p in placements]}
