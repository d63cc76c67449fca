"""``numaspec allocate``: what would the scheduler's DRA allocator give these claims on this
node, and why (spec chapter ``operators.md``, OPS-17; ``dra.md``, DRA-8, DRA-15).

It reads the cluster's DRA objects as kubectl prints them (ResourceSlices, DeviceClasses,
ResourceClaims and ResourceClaimTemplates, :mod:`numaspec.operators.importers.dra_objects`),
takes the devices of the claims allocated already as in use (not those with admin access),
and allocates the claims asked about (every claim not allocated yet, unless ``--claim``
names them) as a scheduler of ``--release`` does: its default feature gates (or
``--feature-gates``) choose the allocator, and with it the order of the pools (DRA-8).
The answer says which device each request gets and, for each, the devices the search walked
past and why (DRA-15), or why nothing fits.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from numaspec.errors import InvalidFieldError, NumaspecError

if TYPE_CHECKING:
    from numaspec.dra.allocator import Picked

__all__ = ["add_parser", "allocate_answer", "run"]

EXIT_ALLOCATED, EXIT_NOT_ALLOCATED, EXIT_ERROR = 0, 1, 2


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "allocate", help="which devices the scheduler's DRA allocator gives these claims on "
                         "this node, and why",
        description="Allocate ResourceClaims on one node as the scheduler's structured "
                    "allocator of --release does, from the cluster's DRA objects as kubectl "
                    "get -o yaml prints them.  Exit status: 0 allocated, 1 not schedulable on "
                    "the node (or the allocator's error), 2 bad input.")
    parser.add_argument("files", metavar="FILE", nargs="+",
                        help="ResourceSlices, DeviceClasses, ResourceClaims and "
                             "ResourceClaimTemplates (resource.k8s.io/v1, YAML or JSON, lists "
                             "too): kubectl get resourceslices,deviceclasses -o yaml; kubectl "
                             "get resourceclaims,resourceclaimtemplates -A -o yaml")
    parser.add_argument("--release", metavar="1.N", required=True,
                        help="the scheduler's Kubernetes release (1.33 to 1.37)")
    parser.add_argument("--feature-gates", metavar="GATE=BOOL,...", action="append",
                        default=[],
                        help="the scheduler's --feature-gates, over the release's defaults "
                             "(DRAConsumableCapacity=false,...); repeatable")
    parser.add_argument("--variant", choices=("stable", "incubating", "experimental"),
                        help="force one allocator, as the scheduler's EnableAllocators does "
                             "(from 1.35; default: the first that supports the features)")
    parser.add_argument("--node", metavar="FILE",
                        help="the Node object (kubectl get node NAME -o yaml): its name and "
                             "labels decide which slices are its (default: the one node the "
                             "slices name)")
    parser.add_argument("--claim", dest="claims", metavar="NAMESPACE/NAME", action="append",
                        default=[],
                        help="a claim to allocate: a ResourceClaim, or a "
                             "ResourceClaimTemplate (a new claim made from it); repeatable, in "
                             "order (default: every ResourceClaim not allocated yet)")
    parser.add_argument("--json", action="store_true", help="print the answer as JSON")
    return parser


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """The command; every bad input is one line on stderr and exit status 2."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        answer = allocate_answer(args.files, release=args.release, gates=args.feature_gates,
                                 variant=args.variant, node=args.node, claims=args.claims)
    except NumaspecError as exc:
        print(f"numaspec allocate: {exc.kind}: {exc.describe()}", file=err)
        return EXIT_ERROR
    if args.json:
        json.dump(answer, out, indent=2)
        out.write("\n")
    else:
        render(answer, out)
    return EXIT_ALLOCATED if answer["outcome"] == "allocated" else EXIT_NOT_ALLOCATED


def _gates(texts: list[str]) -> dict[str, bool]:
    """The scheduler's ``--feature-gates`` syntax: ``A=true,B=false``."""
    gates: dict[str, bool] = {}
    for text in texts:
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, sep, value = item.partition("=")
            if not sep or value.strip().lower() not in ("true", "false"):
                raise InvalidFieldError(f"{item!r} is not GATE=true or GATE=false",
                                        where="--feature-gates")
            gates[name.strip()] = value.strip().lower() == "true"
    return gates


def _release(text: str) -> int:
    from numaspec.protocols.allocate_protocol import ALLOCATE_RELEASES

    if text not in ALLOCATE_RELEASES:
        raise InvalidFieldError(f"the scheduler's DRA allocator is modelled for "
                                f"{', '.join(ALLOCATE_RELEASES)}, not {text!r}",
                                where="--release")
    return int(text.split(".")[1])


def allocate_answer(files: list[str], *, release: str, gates: list[str] | None = None,
                    variant: str | None = None, node: str | None = None,
                    claims: list[str] | None = None) -> dict[str, Any]:
    """OPS-17: the answer ``numaspec allocate`` prints, as JSON."""
    from numaspec.dra.allocator import Features
    from numaspec.dra.objects import NodeInfo, decode_claim
    from numaspec.dra.reasons import Node, why_picked, why_unschedulable
    from numaspec.dra.variants import features_from_gates
    from numaspec.operators.dra_question import search_lines
    from numaspec.operators.importers.dra_objects import (
        allocation_of,
        claim_from_template,
        node_of,
        read_dra_objects,
    )
    from numaspec.protocols.allocate_protocol import (
        AllocateCase,
        allocate_once,
        claims_scope,
        release_scope,
        searched_pools,
    )

    minor = _release(release)
    features = features_from_gates(minor, _gates(gates or []))
    objects = read_dra_objects(files)
    name, labels = node_of(objects, node)
    slices, classes = objects.decoded()
    release_scope(minor, slices, [at for at, _ in objects.slices])
    asked, already, wheres = [], [], []
    for text in claims or [f"{ns}/{n}" for (ns, n), (_, body) in objects.claims.items()
                           if allocation_of(body) is None]:
        namespace, sep, claim_name = text.rpartition("/")
        key = (namespace if sep else "default", claim_name)
        if key in objects.claims:
            at, body = objects.claims[key]
            devices = allocation_of(body)
            if devices is not None:
                already.append({"claim": "/".join(key), "devices": devices})
                continue
            asked.append((f"ResourceClaim {'/'.join(key)}", decode_claim(body, at)))
            wheres.append(at)
        elif key in objects.templates:
            at, template = objects.templates[key]
            made = claim_from_template(template, *key)
            asked.append((f"a new claim from ResourceClaimTemplate {'/'.join(key)}",
                          decode_claim(made, f"{at}.spec")))
            wheres.append(f"{at}.spec")
        else:
            raise InvalidFieldError(f"no ResourceClaim or ResourceClaimTemplate {'/'.join(key)} "
                                    "in the files", where="--claim")
    if not asked:
        raise InvalidFieldError(
            "no claim to allocate: " + ("every ResourceClaim in the files is allocated already"
                                        if objects.claims else "the files hold no "
                                        "ResourceClaim") + "; name one with --claim "
            "NAMESPACE/NAME (a ResourceClaim, or a ResourceClaimTemplate to make one from)",
            where="--claim")
    claims_scope(minor, [c for _, c in asked], wheres)
    case = AllocateCase(minor, features, NodeInfo(name, labels), slices, classes,
                        frozenset(objects.allocated()), tuple(c for _, c in asked), variant,
                        objects.shares())
    chosen = case.variant  # DRA-8: refuses a forced variant that lacks a feature
    allocation = allocate_once(case)
    pools = searched_pools(case)
    reading = Node(tuple(pools), classes, case.allocated, minor, Features.named(features),
                   case.shares)
    answer: dict[str, Any] = {
        "release": release, "node": name, "variant": chosen, "features": sorted(features),
        "search": search_lines(case, defaults=not gates),
        "pools": [pool.id for pool in pools],
        "outcome": allocation.outcome, "already_allocated": already,
        "claims": []}
    if allocation.outcome == "allocated":
        whys = why_picked(reading, case.claims, allocation)
        for (source, claim), picks in zip(asked, allocation.claims, strict=True):
            answer["claims"].append({"claim": claim.key, "from": source, "devices": [
                {"request": why.pick.request, "device": why.pick.id, "keeps": list(why.shares),
                 "passed": [{"device": p.device, "why": p.reason} for p in why.passed],
                 "more_passed": why.more, "other_class": why.other_class,
                 **_share(why.pick)}
                for why in whys if why.claim == claim.key and why.pick in picks]})
    elif allocation.outcome == "unschedulable":
        answer["claims"] = [{"claim": c.key, "from": s} for s, c in asked]
        answer["why"] = why_unschedulable(reading, case.claims)
        if allocation.message:
            answer["message"] = allocation.message
    else:
        answer["claims"] = [{"claim": c.key, "from": s} for s, c in asked]
        answer["message"] = allocation.message
    return answer


def _share(pick: Picked) -> dict[str, Any]:
    """DRA-20: a share's fields for the answer: ``shared``, and what it consumes (each amount
    as a quantity, ``16Gi``)."""
    from numaspec.node.fit import format_quantity

    if not pick.shared:
        return {}
    return {"shared": True, "consumed": {name: format_quantity(amount, binary=True)
                                         for name, amount in pick.consumed or ()}}


def render(answer: dict[str, Any], out: TextIO) -> None:
    """OPS-17: the verdict first, then each claim's devices and why."""
    from numaspec.topology.versions import parse_version

    # VER-1: a pre-release is named with the one that was read
    where = (f"on node {answer['node']} (Kubernetes {parse_version(answer['release']).described} "
             f"scheduler, {answer['variant']} allocator)")
    claims = answer["claims"]
    if answer["outcome"] == "allocated":
        devices = sum(len(c["devices"]) for c in claims)
        print(f"ALLOCATED {devices} device{'s' if devices != 1 else ''} to {len(claims)} "
              f"claim{'s' if len(claims) != 1 else ''} {where}", file=out)
    elif answer["outcome"] == "unschedulable":
        print(f"NOT SCHEDULABLE {where}: {answer['why'][0]}", file=out)
    else:
        print(f"ERROR {where}: the allocator stops the scheduling of these claims: "
              f"{answer['message']}", file=out)
    for line in answer["search"]:
        print(f"  {line}", file=out)
    print(f"  pools in the order searched: {', '.join(answer['pools']) or 'none'}", file=out)
    for item in answer["already_allocated"]:
        listed = ", ".join(f"{d['driver']}/{d['pool']}/{d['device']}" for d in item["devices"])
        print(f"claim {item['claim']}: allocated already ({listed or 'no devices'})", file=out)
    for claim in claims:
        print(f"claim {claim['claim']} ({claim['from']})", file=out)
        for device in claim.get("devices", []):
            keeps = f"  [{'; '.join(device['keeps'])}]" if device["keeps"] else ""
            share = ""
            if device.get("shared"):
                # DRA-20: a share of the device, and what it consumes
                used = ", ".join(f"{k} {v}" for k, v in device["consumed"].items())
                share = f"  (a share{': ' + used if used else ''})"
            print(f"  {device['request']}: {device['device']}{share}{keeps}", file=out)
            for passed in device["passed"]:
                print(f"      passed over {passed['device']}: {passed['why']}", file=out)
            if device["more_passed"]:
                print(f"      ... and {device['more_passed']} more", file=out)
            if device["other_class"]:
                print(f"      (and {device['other_class']} device(s) its class does not take)",
                      file=out)
    for line in answer.get("why", [])[1:]:
        print(f"  also: {line}", file=out)
    if answer.get("message") and answer["outcome"] == "unschedulable":
        print(f"  the allocator says: {answer['message']}", file=out)
