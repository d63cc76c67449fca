"""Seeded random merge cases, fast enough for tens of thousands (differential fuzzing, bench).

The Hypothesis strategies (:mod:`numaspec.conformance.properties.strategies`) shrink and explore;
these only sample, about a thousand times faster, from the same space: 1 to 8 NUMA nodes (now and
then 9 to 12, past kubelet's limit), contiguous, sparse (ids up to 63) or unsorted; distance tables,
symmetric or not, with odd self-distances now and then; every policy and some names that are none;
every Topology Manager option with good and bad values, and unknown ones; explicit feature gates; up
to 3 providers of hints drawn from a shared palette of masks (so that equal, nested and overlapping
masks are common), with null and empty lists, hints without an affinity, empty masks and bits of
nodes that are not on the machine. A case's permutations are capped at 256.

Case ``i`` of a seed is drawn from its own generator, seeded with ``(seed, i)``
(:func:`random_merge_case_at`), so that any range of a campaign's cases can be drawn on its
own, in another process or on another machine, and come out as in the whole campaign.

The large shape (:class:`CaseShape` ``large``, :func:`random_large_case_at`) is kubelet's on a
big machine: 9 to 16 NUMA nodes with ``max-allowable-numa-nodes`` (kubelet 1.31+, OPT-5), and
providers' full hint lists (every non-empty subset of the NUMA nodes a resource sees that can
hold its request, preferred iff of the narrowest width that could: CPU-1..CPU-4, DEV-3, MEM-4
without groups), their cross product capped by ``max_permutations``."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from itertools import combinations
from typing import Any

import attrs

from numaspec.conformance.cases.judges import JUDGES
from numaspec.conformance.cases.shapes import (
    DEFAULT_MAX_PERMUTATIONS,
    DRAWS,
    LARGE_NUMA_NODES,
    SHAPES,
)
from numaspec.errors import InvalidFieldError
from numaspec.protocols.operations import resolve
from numaspec.topology.versions import SUPPORTED_VERSIONS

__all__ = [
    "DEFAULT_MAX_PERMUTATIONS",
    "LARGE_NUMA_NODES",
    "SHAPES",
    "CaseShape",
    "answered_merge_cases",
    "draw_large_case",
    "draw_small_case",
    "greedy_shrink",
    "large_case_versions",
    "large_draw_versions",
    "permutations",
    "random_large_case_at",
    "random_merge_case",
    "random_merge_case_at",
    "random_merge_cases",
    "shrink_case",
    "shrink_merge_case",
    "smaller_merge_cases",
    "without",
]

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


#: HINT-5 (1.38+): scores as kubelet's providers give them (0: no signal, 1: the floor).
_SCORES = (0, 0, 1, 1, 2, 25, 40, 50, 81, 99, 100)


def _scored(version: str) -> bool:
    """Whether hints at ``version`` may carry a score (HINT-5: from 1.38)."""
    match = version.split(".")
    return len(match) > 1 and match[1].isdigit() and int(match[1]) >= 38


def _providers(rng: random.Random, nodes: Sequence[int], scored: bool = False) -> list[Any]:
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
                    hint: dict[str, Any] = {"numa_affinity": mask,
                                            "preferred": rng.random() < 0.7}
                    if scored and rng.random() < 0.85:
                        hint["score"] = rng.choice(_SCORES)
                    hints.append(hint)
                product *= len(hints)
                resources[f"r{p}{r}"] = hints
        providers.append(resources)
    return providers


def random_merge_case(rng: random.Random, versions: Sequence[str]) -> dict[str, Any]:
    """One merge request in the wire format (``spec/protocols/merge-protocol.md``)."""
    nodes = _nodes(rng)
    version = rng.choice(list(versions))
    policy = rng.choice(_NOT_POLICIES) if rng.random() < 0.04 else rng.choice(_POLICIES)
    scored = _scored(version) and rng.random() < 0.75
    case: dict[str, Any] = {
        "kubelet_version": version,
        "numa_nodes": nodes,
        "policy": policy,
        "providers": _providers(rng, nodes, scored),
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


def answered_merge_cases(release: str, count: int, seed: int = 0
                         ) -> list[tuple[str, dict[str, Any], Any]]:
    """Cases 0 to ``count - 1`` of ``seed`` at ``release``, each with its ID
    (``random-<seed>-<i>``) and the reference's answer as the protocol writes it (RUN-20's
    random sample)."""
    from numaspec.errors import NumaspecError
    from numaspec.protocols.merge_protocol import (
        decode_merge_request,
        encode_outcome,
        evaluate_request,
    )

    if count < 0:
        raise InvalidFieldError(f"must be 0 or more, got {count}", where="--random")
    found = []
    for index in range(count):
        case = random_merge_case_at(seed, index, [release])
        try:
            answer: Any = encode_outcome(evaluate_request(decode_merge_request(case)))
        except NumaspecError as exc:  # a refusal: kubelet's configuration checks, not Merge
            answer = {"error": {"kind": exc.kind}}
        found.append((f"random-{seed}-{index}", case, answer))
    return found


def _all_versions(versions: Sequence[str] | None) -> list[str]:
    return list(versions) if versions else [str(v) for v in SUPPORTED_VERSIONS]


def random_merge_case_at(seed: int, index: int,
                         versions: Sequence[str] | None = None) -> dict[str, Any]:
    """Case ``index`` of ``seed``: drawn from its own generator, so that it is the same case
    whether the cases before it were drawn or not (sharded campaigns, replay)."""
    return random_merge_case(random.Random(f"{seed}:{index}"), _all_versions(versions))


def random_merge_cases(count: int, seed: int = 0, versions: Sequence[str] | None = None,
                       *, start: int = 0) -> list[dict[str, Any]]:
    """Cases ``start`` to ``start + count - 1`` of ``seed``, for the given kubelet releases
    (default: all)."""
    chosen = _all_versions(versions)
    return [random_merge_case_at(seed, i, chosen) for i in range(start, start + count)]



# --- the large shape: kubelet's providers on a big machine ------------------------------------

#: The most NUMA nodes a large case may have: a provider's list walks 2**n - 1 subsets.
_MOST_LARGE_NODES = 20
#: OPT-5: max-allowable-numa-nodes exists from kubelet 1.31.
_LARGE_FIRST_MINOR = 31
_LARGE_POLICIES = ("best-effort", "restricted", "single-numa-node") * 3 + ("none",)
#: The providers of a kubelet node and the resources each gives hints for.
_MANAGERS = (("cpu",), ("memory", "hugepages-1Gi"), ("example.com/gpu", "example.com/nic"))
_TRIES = 6


def large_case_versions(versions: Sequence[str] | None) -> list[str]:
    """The releases among ``versions`` (default: all) that have max-allowable-numa-nodes."""
    return [v for v in _all_versions(versions)
            if v.startswith("1.") and v[2:].isdigit() and int(v[2:]) >= _LARGE_FIRST_MINOR]


def _subset_sums(values: Sequence[int]) -> list[int]:
    """The sum of ``values`` over every subset of their positions, indexed by its bits."""
    sums = [0] * (1 << len(values))
    for word in range(1, len(sums)):
        low = word & -word
        sums[word] = sums[word ^ low] + values[low.bit_length() - 1]
    return sums


def _full_list(universe: Sequence[int], capacity: Sequence[int], sums: Sequence[int],
               request: int) -> list[dict[str, Any]]:
    """A provider's hints for ``request`` units (CPU-1..CPU-4, DEV-3, MEM-4 without groups):
    every non-empty subset of ``universe`` in MASK-3's order whose free units can hold the
    request (``sums``: the free units of each subset, by its bits); preferred iff it has the
    narrowest width whose capacity could hold it."""
    top = sorted(capacity, reverse=True)
    width = next((k for k in range(1, len(top) + 1) if sum(top[:k]) >= request),
                 len(universe))
    bits = [1 << p for p in range(len(universe))]
    hints = []
    for size in range(1, len(universe) + 1):
        for combo in combinations(range(len(universe)), size):
            if sums[sum(bits[p] for p in combo)] >= request:
                hints.append({"numa_affinity": [universe[p] for p in combo],
                              "preferred": size == width})
    return hints


def _resource_draw(rng: random.Random, nodes: Sequence[int], size: int
                   ) -> tuple[list[int], list[int], list[int], int]:
    """A resource on ``size`` of the machine's nodes: the nodes (ascending), each one's
    capacity and free units, and a request that needs a random width of them."""
    universe = sorted(rng.sample(list(nodes), size))
    if rng.random() < 0.7:
        capacity = [rng.choice((2, 4, 8, 16, 32))] * size
    else:
        capacity = [rng.choice((1, 2, 4, 8, 16, 32)) for _ in universe]
    free = [c if rng.random() < 0.4 else rng.randint(0, c) for c in capacity]
    top = sorted(capacity, reverse=True)
    width = min(size, 1 + int(rng.expovariate(0.6)))
    request = rng.randint(sum(top[:width - 1]) + 1, sum(top[:width]))
    return universe, capacity, free, request


def _large_hints(rng: random.Random, nodes: Sequence[int], room: int) -> list[dict[str, Any]]:
    """A full hint list of at most ``room`` hints: the resource is drawn again when its list
    is longer, and then seen by fewer nodes (2**k - 1 <= room subsets) if need be."""
    for attempt in range(_TRIES + 1):
        size = len(nodes) if rng.random() < 0.5 else rng.randint(1, len(nodes))
        if attempt == _TRIES:
            size = min(size, (room + 1).bit_length() - 1)
        universe, capacity, free, request = _resource_draw(rng, nodes, max(size, 1))
        sums = _subset_sums(free)
        if sum(1 for s in sums[1:] if s >= request) <= room:
            return _full_list(universe, capacity, sums, request)
    raise AssertionError("unreachable: the last attempt fits")  # pragma: no cover


def _large_providers(rng: random.Random, nodes: Sequence[int], max_permutations: int
                     ) -> list[Any]:
    providers: list[Any] = []
    product = 1
    for resources in _MANAGERS:
        if resources[0] != "cpu" and rng.random() < 0.4:
            continue
        if rng.random() < 0.05:
            providers.append(None)  # HINT-2: no opinion (a pod the manager does not manage)
            continue
        chosen = resources[:rng.randint(1, len(resources))]
        given: dict[str, Any] = {}
        for resource in chosen:
            hints = _large_hints(rng, nodes, max(1, max_permutations // product))
            product *= max(1, len(hints))
            given[resource] = hints
        providers.append(given)
    return providers


def _machine_distances(rng: random.Random, nodes: Sequence[int]) -> dict[str, list[int]]:
    """A firmware-like table: symmetric, 10 to itself, near within a socket, far across."""
    width = max(nodes) + 1
    per_socket = rng.choice((1, 2, 4, len(nodes)))
    near, far = rng.choice(((11, 21), (12, 32), (16, 20), (20, 30)))
    noisy = rng.random() < 0.3
    socket = {n: position // per_socket for position, n in enumerate(nodes)}
    table = {n: [far] * width for n in nodes}
    for n in nodes:
        for m in nodes:
            if m < n:
                continue
            value = 10 if m == n else near if socket[m] == socket[n] else far
            if noisy and m != n:
                value += rng.randint(0, 3)
            table[n][m] = table[m][n] = value
    return {str(n): row for n, row in table.items()}


def random_large_case_at(seed: int, index: int, versions: Sequence[str], *,
                         max_permutations: int = DEFAULT_MAX_PERMUTATIONS,
                         numa_nodes: tuple[int, int] = LARGE_NUMA_NODES) -> dict[str, Any]:
    """Large case ``index`` of ``seed`` for ``versions`` (releases from 1.31): a machine of
    ``numa_nodes`` NUMA nodes, allowed by max-allowable-numa-nodes, and full hint lists whose
    permutations are at most ``max_permutations``."""
    rng = random.Random(f"large:{seed}:{index}")
    count = rng.randint(*numa_nodes)
    nodes = (list(range(count)) if rng.random() < 0.85
             else sorted(rng.sample(range(max(32, count)), count)))
    limit = max(count, 8)
    options = {"max-allowable-numa-nodes": str(rng.choice((limit, limit, max(limit, 16), 64)))}
    case: dict[str, Any] = {
        "kubelet_version": rng.choice(list(versions)),
        "numa_nodes": nodes,
        "policy": rng.choice(_LARGE_POLICIES),
        "providers": _large_providers(rng, nodes, max_permutations),
        "policy_options": options,
    }
    if rng.random() < 0.35:
        options["prefer-closest-numa-nodes"] = "true"
    if "prefer-closest-numa-nodes" in options or rng.random() < 0.2:
        case["numa_distances"] = _machine_distances(rng, nodes)
    return case


def permutations(case: Any) -> int:
    """The size of a merge case's cross product: the product of its hint lists' lengths
    (a resource without a list counts once)."""
    product = 1
    providers = case.get("providers") if isinstance(case, dict) else None
    for provider in providers if isinstance(providers, list) else ():
        if isinstance(provider, dict):
            for hints in provider.values():
                product *= max(1, len(hints)) if isinstance(hints, list) else 1
    return product


# --- which cases a campaign draws -------------------------------------------------------------


@attrs.frozen
class CaseShape:
    """Which random cases a campaign draws: one of the shapes the operations' judges name
    (:data:`~numaspec.conformance.cases.shapes.DRAWS`; ``small``:
    :func:`random_merge_case_at`; ``large``: :func:`random_large_case_at`, within
    ``max_permutations`` and ``numa_nodes``; ``allocate``: the DRA allocator's; ``cpus``: the
    CPU Manager's allocator's) and what their IDs are.  Picklable, so that a campaign's
    shards can draw their own ranges of cases anywhere."""

    name: str = "small"
    max_permutations: int = DEFAULT_MAX_PERMUTATIONS
    numa_nodes: tuple[int, int] = LARGE_NUMA_NODES

    def __attrs_post_init__(self) -> None:
        low, high = self.numa_nodes
        if self.name not in SHAPES:
            raise InvalidFieldError(f"unknown shape {self.name!r} (known: "
                                    f"{', '.join(SHAPES)})", where="--shape")
        if self.max_permutations < 1:
            raise InvalidFieldError(f"must be at least 1, got {self.max_permutations}",
                                    where="--max-permutations")
        if not 1 <= low <= high <= _MOST_LARGE_NODES:
            raise InvalidFieldError(f"must be LOW-HIGH with 1 <= LOW <= HIGH <= "
                                    f"{_MOST_LARGE_NODES}, got {low}-{high}",
                                    where="--numa-nodes")

    @property
    def op(self) -> str:
        """The operation the cases ask (the judge that names the shape): ``merge`` for
        ``small`` and ``large``, ``allocate`` (DRA-10), ``cpus`` (CPU-21)."""
        return DRAWS[self.name][0]

    @property
    def batch(self) -> int:
        """Cases drawn and sent at once (a large case can take kubelet seconds)."""
        return DRAWS[self.name][1].batch

    def versions(self, declared: Sequence[str], who: str) -> list[str]:
        """The releases of ``declared`` this shape draws cases for."""
        if not declared:
            raise InvalidFieldError(f"{who} declares no releases for {self.op!r}",
                                    where="--impl")
        chosen = DRAWS[self.name][1].versions
        return resolve(chosen)(declared, who) if chosen else list(declared)

    def case_at(self, seed: int, index: int, versions: Sequence[str],
                features: Sequence[str] | None = None) -> dict[str, Any]:
        """Case ``index`` of ``seed``; ``features``: the allocator features an ``allocate``
        case may enable (None: every one)."""
        draw: dict[str, Any] = resolve(DRAWS[self.name][1].case_at)(self, seed, index,
                                                                   versions, features)
        return draw

    def case_id(self, seed: int, index: int) -> str:
        """``differential-<seed>-<index>`` (small) or ``differential-large-<seed>-<index>``."""
        return (f"differential-{seed}-{index}" if self.name == "small"
                else f"differential-{self.name}-{seed}-{index}")


def draw_small_case(shape: CaseShape, seed: int, index: int, versions: Sequence[str],
                    features: Sequence[str] | None) -> dict[str, Any]:
    """The ``small`` shape's case ``index`` of ``seed`` (the merge judge's ``Draw``)."""
    del shape, features
    return random_merge_case_at(seed, index, versions)


def draw_large_case(shape: CaseShape, seed: int, index: int, versions: Sequence[str],
                    features: Sequence[str] | None) -> dict[str, Any]:
    """The ``large`` shape's case ``index`` of ``seed``, within the shape's
    ``max_permutations`` and ``numa_nodes`` (the merge judge's ``Draw``)."""
    del features
    return random_large_case_at(seed, index, versions, max_permutations=shape.max_permutations,
                                numa_nodes=shape.numa_nodes)


def large_draw_versions(declared: Sequence[str], who: str) -> list[str]:
    """The releases of ``declared`` large cases are drawn at: those with
    max-allowable-numa-nodes (1.31 on)."""
    chosen = large_case_versions(declared)
    if not chosen:
        raise InvalidFieldError(
            f"large cases need kubelet 1.31 or later (max-allowable-numa-nodes); {who} "
            f"declares {', '.join(declared)}", where="--shape")
    return chosen


# --- shrinking a disagreement ----------------------------------------------------------------


def shrink_merge_case(case: dict[str, Any], still_fails: Callable[[Any], bool],
                      budget: int = 2_000) -> dict[str, Any]:
    """The smallest case reachable from ``case`` by :func:`smaller_merge_cases` steps on which
    ``still_fails`` holds (greedy; at most ``budget`` tries)."""
    return greedy_shrink(case, smaller_merge_cases, still_fails, budget)


def shrink_case(op: str, case: dict[str, Any], still_fails: Callable[[Any], bool],
                budget: int = 2_000) -> dict[str, Any]:
    """The smallest ``op`` case reachable from ``case`` by its judge's steps
    (``Judge.smaller``) on which ``still_fails`` holds (greedy; at most ``budget`` tries)."""
    judge = JUDGES[op]
    if not judge.smaller:
        return case
    return greedy_shrink(case, resolve(judge.smaller), still_fails, budget)


def without(items: list[Any], i: int) -> list[Any]:
    """``items`` but its ``i``-th (a shrink step of every operation's cases)."""
    return items[:i] + items[i + 1:]


def greedy_shrink(case: dict[str, Any], smaller_cases: Callable[[dict[str, Any]],
                                                          Iterator[dict[str, Any]]],
            still_fails: Callable[[Any], bool], budget: int) -> dict[str, Any]:
    """The first smaller case that still fails, again and again, until none does."""
    tries = 0
    while tries < budget:
        for smaller in smaller_cases(case):
            tries += 1
            if still_fails(smaller):
                case = smaller
                break
            if tries >= budget:
                return case
        else:
            return case
    return case


def smaller_merge_cases(case: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every merge case one step smaller than ``case``: half of a long hint list less, a
    provider, a resource or a hint less, an option or a gate less, a NUMA node less (from the
    machine, its distances and every hint), distance rows cut to the machine."""
    providers = case.get("providers") or []
    for i, provider in enumerate(providers):  # long lists first lose half their hints
        for resource, hints in (provider.items() if isinstance(provider, dict) else ()):
            if isinstance(hints, list) and len(hints) >= 4:
                half = len(hints) // 2
                for kept in (hints[:half], hints[half:]):
                    yield {**case, "providers": [*providers[:i], {**provider, resource: kept},
                                                 *providers[i + 1:]]}
    for i in range(len(providers)):
        yield {**case, "providers": without(providers, i)}
    for i, provider in enumerate(providers):
        if not isinstance(provider, dict):
            continue
        for resource in list(provider):
            if len(provider) > 1:
                rest = {k: v for k, v in provider.items() if k != resource}
                yield {**case, "providers": [*providers[:i], rest, *providers[i + 1:]]}
            hints = provider[resource]
            for j in range(len(hints) if isinstance(hints, list) else 0):
                fewer = {**provider, resource: hints[:j] + hints[j + 1:]}
                yield {**case, "providers": [*providers[:i], fewer, *providers[i + 1:]]}
    for field in ("policy_options", "feature_gates"):
        table = case.get(field)
        if isinstance(table, dict) and table:
            for key in list(table):
                yield {**case, field: {k: v for k, v in table.items() if k != key}}
        elif field in case:  # an empty table or null says nothing: left out
            yield {k: v for k, v in case.items() if k != field}
    if "numa_distances" in case:  # distances that do not decide the answer are left out
        yield {k: v for k, v in case.items() if k != "numa_distances"}
    named = {n for p in providers if isinstance(p, dict) for hints in p.values()
             if isinstance(hints, list) for h in hints if isinstance(h, dict)
             for n in (h.get("numa_affinity") or [])}
    nodes = case.get("numa_nodes") or []
    distances = case.get("numa_distances")
    for node in sorted(nodes, key=lambda n: n not in named):  # (named nodes are the most)
        if len(nodes) > 1:
            smaller = {**case, "numa_nodes": [n for n in nodes if n != node]}
            if isinstance(distances, dict):
                smaller["numa_distances"] = {k: v for k, v in distances.items()
                                             if str(k) != str(node)}
            if node in named:
                smaller["providers"] = _without_node(providers, node)
            yield smaller
    if isinstance(distances, dict) and all(isinstance(n, int) for n in nodes) and nodes:
        width = max(nodes) + 1
        if any(isinstance(row, list) and len(row) > width for row in distances.values()):
            yield {**case, "numa_distances": {k: row[:width] if isinstance(row, list) else row
                                              for k, row in distances.items()}}


def _without_node(providers: list[Any], node: int) -> list[Any]:
    """The providers' hints with ``node`` taken out of every affinity (a hint left with no
    node goes)."""
    def hints_without(hints: Any) -> Any:
        if not isinstance(hints, list):
            return hints
        kept = []
        for hint in hints:
            nodes = hint.get("numa_affinity") if isinstance(hint, dict) else None
            if isinstance(nodes, list) and node in nodes:
                if len(nodes) > 1:
                    kept.append({**hint, "numa_affinity": [n for n in nodes if n != node]})
            else:
                kept.append(hint)
        return kept

    return [{k: hints_without(v) for k, v in p.items()} if isinstance(p, dict) else p
            for p in providers]
