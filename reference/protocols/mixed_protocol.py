"""The ``mixed`` operation (spec chapter ``dra.md``, DRA-11 to DRA-13): a node session, a pod
with exclusive resources and DRA claims, the node's DRA objects in; the scheduler's
allocation, the node's admission, and each container's placements and pairs out.

A case::

    {"steps": [node-protocol create, admit, ...],
     "pod": node-protocol pod,
     "claims": [{"name": "gpus", "claim": ResourceClaim,
                 "devices": [{"request", "driver", "pool", "device"}, ...]}, ...],
     "uses": {"container": [{"claim": "gpus", "request": "gpu"}, ...]},
     "dra": {"release", "features", "node", "slices", "classes", "allocated"},
     "numa_attributes": ["example.com/numa", ...]}

``claims``: the pod's claims by the name its ``spec.resourceClaims`` gives them; one with
``devices`` is allocated already.  ``uses``: each container's ``resources.claims``
(``request`` optional).  ``dra``: an ``allocate`` case without ``claims`` (DRA-10).
"""

from __future__ import annotations

from typing import Any

import attrs

from numaspec.dra.allocator import Allocation, Picked
from numaspec.dra.mixed_pod import NUMA_ATTRIBUTES, Admitted, Allocated, ClaimUse, co_placement
from numaspec.dra.objects import Claim, decode_claim
from numaspec.errors import InvalidFieldError, NumaspecError
from numaspec.protocols.allocate_protocol import (
    AllocateCase,
    allocate_once,
    decode_allocate_case,
    encode_allocation,
)
from numaspec.protocols.merge_protocol import encode_error
from numaspec.protocols.node_protocol import NodeSession, decode_pod, encode_decision
from numaspec.strict_json import as_array, as_object, as_string

__all__ = ["MixedCase", "decode_mixed_case", "reference_mixed"]

_KEYS = {"steps", "pod", "claims", "uses", "dra", "numa_attributes"}


@attrs.frozen
class MixedCase:
    """A decoded ``mixed`` case: the DRA part as an ``allocate`` case whose claims are the
    pod's claims not yet allocated, in the pod's order."""

    steps: tuple[Any, ...]
    pod: Any
    claims: dict[str, Claim]
    allocated: dict[str, tuple[Picked, ...]]
    uses: dict[str, tuple[ClaimUse, ...]]
    dra: AllocateCase
    numa_attributes: tuple[str, ...]


def _picks(value: object, where: str) -> tuple[Picked, ...]:
    picks = []
    for i, item in enumerate(as_array(value, where)):
        body = as_object(item, f"{where}[{i}]")
        for key in body:
            if key not in ("request", "driver", "pool", "device"):
                raise InvalidFieldError("unknown field (known: device, driver, pool, request)",
                                        where=f"{where}[{i}].{key}")
        request, driver, pool, device = (as_string(body.get(k), f"{where}[{i}].{k}")
                                         for k in ("request", "driver", "pool", "device"))
        picks.append(Picked(request, driver, pool, device))
    return tuple(picks)


def decode_mixed_case(case: object) -> MixedCase:
    """DRA-13: a case, or a typed error naming the field."""
    body = as_object(case, "case")
    for key in body:
        if key not in _KEYS:
            raise InvalidFieldError(f"unknown field (known: {', '.join(sorted(_KEYS))})",
                                    where=key)
    for key in ("steps", "pod", "dra"):
        if key not in body:
            raise InvalidFieldError("required", where=key)
    pod = decode_pod(body["pod"])
    containers = {c.name for c in pod.all_containers()}
    claims: dict[str, Claim] = {}
    allocated: dict[str, tuple[Picked, ...]] = {}
    fresh_json: list[Any] = []
    for i, item in enumerate(as_array(body.get("claims", []), "claims")):
        where = f"claims[{i}]"
        entry = as_object(item, where)
        for key in entry:
            if key not in ("name", "claim", "devices"):
                raise InvalidFieldError("unknown field (known: claim, devices, name)",
                                        where=f"{where}.{key}")
        name = as_string(entry.get("name"), f"{where}.name")
        if name in claims:
            raise InvalidFieldError(f"the pod names claim {name!r} twice",
                                    where=f"{where}.name")
        claims[name] = decode_claim(entry.get("claim"), f"{where}.claim")
        if "devices" in entry:
            allocated[name] = _picks(entry["devices"], f"{where}.devices")
        else:
            fresh_json.append(entry["claim"])
    uses: dict[str, tuple[ClaimUse, ...]] = {}
    for container, listed in as_object(body.get("uses", {}), "uses").items():
        where = f"uses.{container}"
        if container not in containers:
            raise InvalidFieldError(f"the pod has no container {container!r}", where=where)
        found = []
        for j, item in enumerate(as_array(listed, where)):
            entry = as_object(item, f"{where}[{j}]")
            claim = as_string(entry.get("claim"), f"{where}[{j}].claim")
            if claim not in claims:
                raise InvalidFieldError(f"the pod has no claim {claim!r}",
                                        where=f"{where}[{j}].claim")
            request = as_string(entry.get("request", ""), f"{where}[{j}].request")
            if request and request not in {r.name for r in claims[claim].requests}:
                raise InvalidFieldError(f"claim {claim!r} has no request {request!r}",
                                        where=f"{where}[{j}].request")
            found.append(ClaimUse(claim, request))
        uses[container] = tuple(found)
    dra_body = as_object(body["dra"], "dra")
    if "claims" in dra_body:
        raise InvalidFieldError("the claims are the pod's (the case's claims), not the "
                                "dra part's", where="dra.claims")
    in_use = [p.id for picks in allocated.values() for p in picks]
    try:
        dra = decode_allocate_case({**dra_body, "claims": fresh_json,
                                    "allocated": [*dra_body.get("allocated", []), *in_use]})
    except NumaspecError as exc:
        raise exc.relocated(f"dra.{exc.where}" if not exc.where.startswith("claims")
                            else exc.where) from None
    names = [as_string(n, f"numa_attributes[{i}]")
             for i, n in enumerate(as_array(body.get("numa_attributes", []), "numa_attributes"))]
    steps = tuple(as_array(body["steps"], "steps"))
    return MixedCase(steps, pod, claims, allocated, uses, dra,
                     tuple(dict.fromkeys([*NUMA_ATTRIBUTES, *names])))


def reference_mixed(case: object) -> dict[str, Any]:
    """DRA-13: the reference's answer: the allocation of the pod's claims not yet allocated
    (the node's pools in first-listed order), then, when it succeeds, the node's admission
    of the pod after the case's steps, and each container's placements and pairs
    (DRA-12)."""
    mixed = decode_mixed_case(case)
    session = NodeSession()
    for i, step in enumerate(mixed.steps):
        try:
            session.handle(step)
        except NumaspecError as exc:
            raise exc.relocated(f"steps[{i}]" + (f".{exc.where}" if exc.where else "")
                                ) from None
    node = session.node
    if node is None:
        raise InvalidFieldError("the steps create no node", where="steps")
    fresh = {name: claim for name, claim in mixed.claims.items()
             if name not in mixed.allocated}
    allocation: Allocation = allocate_once(mixed.dra)
    admission: dict[str, Any] | None = None
    decision = None
    if allocation.outcome == "allocated":
        try:
            decision = node.admit(mixed.pod)
            admission = encode_decision(decision)["decision"]
        except NumaspecError as exc:
            admission = encode_error(exc)
    placements = co_placement(
        mixed.pod, mixed.uses, Admitted.on(node, decision),
        Allocated(mixed.claims, list(fresh),
                  allocation if allocation.outcome == "allocated" else None, mixed.allocated,
                  mixed.dra.slices, mixed.numa_attributes))
    return {"allocation": encode_allocation(allocation), "admission": admission,
            "containers": [p.as_json() for p in placements]}

