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
    DeviceClass,
    NodeInfo,
    Slice,
    decode_claim,
    decode_class,
    decode_slice,
)
from numaspec.errors import InputFileError, InvalidFieldError
from numaspec.node.admission import Node
from numaspec.node.pods import Pod
from numaspec.operators.importers.dra_objects import DraObjects, allocation_of
from numaspec.operators.importers.kube_objects import ImportedPod
from numaspec.protocols.allocate_protocol import (
    ALLOCATE_RELEASES,
    AllocateCase,
    allocate_once,
    encode_allocation,
)

__all__ = ["DraQuestion", "default_features", "dra_part"]


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


def default_features(minor: int) -> frozenset[str]:
    """DRA-8: the allocator features a scheduler of the release enables by default: the
    prioritized list is beta, and on, from 1.34 (DRAPrioritizedList)."""
    return frozenset({"PrioritizedList"} if minor >= 34 else ())


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
                spec = template.get("spec")
                body = {"metadata": {"name": f"{imported.pod.name}-{name}", "namespace": ns},
                        "spec": (spec.get("spec") if isinstance(spec, dict) else None) or {}}
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
            before[name] = tuple(Picked(**d) for d in devices)
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
    slices: list[Slice] = [decode_slice(body, at) for at, body in objects.slices]
    classes: dict[str, DeviceClass] = {}
    for at, body in objects.classes:
        device_class = decode_class(body, at)
        if device_class.name in classes:
            raise InputFileError(f"DeviceClass {device_class.name!r} given twice", where=at)
        classes[device_class.name] = device_class
    claims, before, said = _pod_claims(imported, objects)
    fresh = [name for name in claims if name not in before]
    allocation = allocate_once(AllocateCase(
        minor, default_features(minor), NodeInfo(node_name, labels), tuple(slices), classes,
        frozenset(objects.allocated()), tuple(claims[n] for n in fresh)))
    scheduled = allocation.outcome == "allocated"
    decision = copy.deepcopy(node).admit(pod) if scheduled else None
    uses = {c: tuple(ClaimUse(claim, request) for claim, request in listed)
            for c, listed in imported.claim_uses.items()}
    placements = co_placement(
        pod, uses, Admitted.on(node, decision),
        Allocated(claims, fresh, allocation if scheduled else None, before, slices))
    return {"release": release, "node": node_name, "claims": said,
            "asked": fresh, "allocation": encode_allocation(allocation),
            "scheduled": scheduled,
            "containers": [p.as_json() for p in placements]}
