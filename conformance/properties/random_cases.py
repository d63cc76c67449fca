"""Seeded random merge cases, fast enough for tens of thousands (differential fuzzing, bench).

The Hypothesis strategies (:mod:`numaspec.conformance.properties.strategies`) shrink and explore;
these only sample, about a thousand times faster, from the same space: 1 to 8 NUMA nodes (now and
then 9 to 12, past kubelet's limit), contiguous, sparse (ids up to 63) or unsorted; distance tables,
symmetric or not, with odd self-distances now and then; every policy and some names that are none;
every Topology Manager option with good and bad values, and unknown ones; explicit feature gates; up
to 3 providers of hints drawn from a shared palette of masks (so that equal, nested and overlapping
masks are common), with null and empty lists, hints without an affinity, empty masks and bits of
nodes that are not on the machine. A case's permutations are capped at 256."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from numaspec.versions import SUPPORTED_VERSIONS

__all__ = ["random_merge_case", "random_merge_cases"]

_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
_NOT_POLICIES = ("", "Restricted", "single-numa", "static", "none ")
_TRUTHY = ("true", "true", "1", "T", "True", "false", "0", "F", "yes", "", " true")
_COUNTS = ("8", "9", "12", "16", "64", "7", "0", "-8", "+9", "0x10", "1_0", "9" * 25, "x")
_UNKNOWN = ("full-pcpus-only", "prefer-closest-numa-node", "Prefer-Closest-Numa-Nodes")
_GATES = ("TopologyManagerPolicyOptions", "TopologyManagerPolicyAlphaOptions",
          "TopologyManagerPolicyBetaOptions")
_MAX_PERMUTATIONS = 256


def _nodes(rng: random.Random) -> list[int]:
    roll = rng.random()
    count = (rng.randint(1, 4) if roll < 0.55 else 8 if roll < 0.75
             else rng.randint(5, 8) if roll < 0.95 else rng.randint(9, 12))
    shape = rng.choice(("contiguous", "contiguous", "sparse", "shuffled"))
    if shape == "contiguous":
        return list(range(count))
    ids = rng.sample(range(64 if rng.random() < 0.3 else 16), count)
    return ids if shape == "shuffled" else sorted(ids)


def _distances(rng: random.Random, nodes: Sequence[int]) -> dict[str, list[int]]:
    width = max(nodes) + 1
    odd_self = rng.random() < 0.25
    table = {n: [rng.randint(11, 40) for _ in range(width)] for n in nodes}
    symmetric = rng.random() < 0.5
    for n in nodes:
        table[n][n] = rng.randint(1, 40) if odd_self else 10
        if symmetric:
            for m in nodes:
                if m < n:
                    table[n][m] = table[m][n]
    return {str(n): row for n, row in table.items()}


def _mask(rng: random.Random, nodes: Sequence[int]) -> list[int]:
    if rng.random() < 0.15:
        return sorted(rng.sample(range(64), rng.randint(0, 3)))  # stray bits, or empty
    return sorted(rng.sample(list(nodes), rng.randint(1, len(nodes))))


def _providers(rng: random.Random, nodes: Sequence[int]) -> list[Any]:
    palette = [_mask(rng, nodes) for _ in range(rng.randint(1, 4))]
    providers: list[Any] = []
    product = 1
    for p in range(rng.choice((2, 3, 1, 2, 3, 0))):
        kind = rng.random()
        if kind < 0.08:
            providers.append(None)
            continue
        if kind < 0.16:
            providers.append({})
            continue
        resources: dict[str, Any] = {}
        for r in range(rng.choice((1, 2, 1, 3))):
            shape = rng.random()
            if shape < 0.08:
                resources[f"r{p}{r}"] = None
            elif shape < 0.14:
                resources[f"r{p}{r}"] = []
            else:
                room = max(1, _MAX_PERMUTATIONS // product)
                hints = []
                for _ in range(min(rng.randint(1, 4), room)):
                    pick = rng.random()
                    mask = (None if pick < 0.1 else rng.choice(palette) if pick < 0.75
                            else _mask(rng, nodes))
                    hints.append({"numa_affinity": mask, "preferred": rng.random() < 0.7})
                product *= len(hints)
                resources[f"r{p}{r}"] = hints
        providers.append(resources)
    return providers


def random_merge_case(rng: random.Random, versions: Sequence[str]) -> dict[str, Any]:
    """One merge request in the wire format (``spec/merge-protocol.md``)."""
    nodes = _nodes(rng)
    case: dict[str, Any] = {
        "kubelet_version": rng.choice(list(versions)),
        "numa_nodes": nodes,
        "policy": rng.choice(_NOT_POLICIES) if rng.random() < 0.04 else rng.choice(_POLICIES),
        "providers": _providers(rng, nodes),
    }
    options: dict[str, str] = {}
    if rng.random() < 0.45:
        options["prefer-closest-numa-nodes"] = rng.choice(_TRUTHY)
    if rng.random() < 0.2 or (len(nodes) > 8 and rng.random() < 0.6):
        options["max-allowable-numa-nodes"] = rng.choice(_COUNTS)
    if rng.random() < 0.05:
        options[rng.choice(_UNKNOWN)] = rng.choice(_TRUTHY)
    if options:
        case["policy_options"] = options
    if ("prefer-closest-numa-nodes" in options and rng.random() < 0.9) or rng.random() < 0.2:
        case["numa_distances"] = _distances(rng, nodes)
    if rng.random() < 0.15:
        case["feature_gates"] = {gate: rng.random() < 0.5
                                 for gate in rng.sample(_GATES, rng.randint(1, 3))}
    return case


def random_merge_cases(count: int, seed: int = 0,
                       versions: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """``count`` cases from ``seed``, for the given kubelet releases (default: all)."""
    rng = random.Random(seed)
    chosen = list(versions) if versions else [str(v) for v in SUPPORTED_VERSIONS]
    return [random_merge_case(rng, chosen) for _ in range(count)]
