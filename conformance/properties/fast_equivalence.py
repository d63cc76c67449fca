"""The fast merge is the definitional merge (spec chapter ``fast-merge.md``, FAST-1..FAST-7):
a Hypothesis property over the whole merge input space, and an exhaustive enumeration of a
small domain.

Both compare :func:`numaspec.topology.fast_merge.fast_best_hint` (or any function of the same shape:
the mutants in ``tools/numaspec_tools/mutants/fast_merge_mutants.py`` are wrong ones) with the walk
over the
cross product, :func:`numaspec.topology.merge.best_hint`, on the same arguments.  The property draws
large lists on purpose (up to :data:`MAX_WALK` permutations), every release, prefer-closest
with distance rows (some too large for a double to sum exactly), stray bits, empty masks,
hints without an affinity, empty lists, and the fast merge's :class:`~numaspec.topology.fast_merge.
Tuning`, so that every regime answers.  ``python -m numaspec.conformance.properties.
fast_equivalence --nodes 2 --lists 3 --hints 2`` runs the enumeration at other bounds.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable, Iterator, Sequence

import attrs
from hypothesis import strategies as st

from numaspec.conformance.properties.strategies import distances_for, machines, versions
from numaspec.topology.fast_merge import DEFAULT_TUNING, Tuning, fast_best_hint
from numaspec.topology.hints import HintArray, TopologyHint
from numaspec.topology.masks import NumaMask
from numaspec.topology.merge import MergeMode, best_hint
from numaspec.topology.numa import NumaInfo
from numaspec.topology.options import PolicyOptions
from numaspec.topology.versions import KubeletVersion, parse_version

__all__ = ["FastCase", "Exhaustion", "FastMerger", "check_fast_equivalence", "domain",
           "exhaust", "fast_cases"]

#: A merge of the fast merge's shape (:func:`numaspec.topology.fast_merge.fast_best_hint`).
FastMerger = Callable[..., TopologyHint]

#: The most permutations a drawn case makes: the definitional walk answers each in well
#: under a second, and lists are long enough to reach every regime of the fast merge.
MAX_WALK = 6000


@attrs.frozen
class FastCase:
    """One merge, as :func:`~numaspec.topology.merge.best_hint` takes it, and a tuning."""

    lists: tuple[tuple[TopologyHint, ...], ...]
    numa: NumaInfo
    version: KubeletVersion
    mode: MergeMode
    options: PolicyOptions
    tuning: Tuning = DEFAULT_TUNING


def check_fast_equivalence(case: FastCase, fast: FastMerger = fast_best_hint) -> None:
    """FAST-1: ``fast`` returns exactly the definitional merge's hint."""
    expected = best_hint(case.lists, case.numa, case.version, case.mode, case.options)
    actual = fast(case.lists, case.numa, case.version, case.mode, case.options,
                  tuning=case.tuning)
    assert actual == expected, (
        f"fast merge {actual} != definitional {expected} at {case.version}, {case.mode}, "
        f"closest={case.options.prefer_closest_numa_nodes}, nodes {case.numa.nodes}, "
        f"lists {[list(map(str, hints)) for hints in case.lists]}")
    # FAST-8: the same lists held as arrays are merged alike
    arrays = [HintArray.of(hints) for hints in case.lists]
    from_arrays = fast(arrays, case.numa, case.version, case.mode, case.options,
                       tuning=case.tuning)
    assert from_arrays == expected, (
        f"fast merge on arrays {from_arrays} != definitional {expected} at {case.version}, "
        f"{case.mode}, nodes {case.numa.nodes}, "
        f"lists {[list(map(str, hints)) for hints in case.lists]}")


# --- the Hypothesis strategy ------------------------------------------------------------------


def _mask(nodes: Sequence[int], palette: Sequence[NumaMask]) -> st.SearchStrategy[NumaMask]:
    on_machine = st.lists(st.sampled_from(list(nodes)), min_size=1, max_size=len(nodes),
                          unique=True).map(NumaMask.of) if nodes else st.just(NumaMask.empty())
    stray = st.lists(st.integers(0, 63), max_size=4).map(NumaMask.of)
    chosen = [st.sampled_from(list(palette))] * 3 if palette else []
    return st.one_of(*chosen, on_machine, on_machine, stray)


@st.composite
def _lists(draw: st.DrawFn, nodes: Sequence[int]) -> tuple[tuple[TopologyHint, ...], ...]:
    palette = draw(st.lists(_mask(nodes, ()), min_size=1, max_size=6))
    hint = st.builds(TopologyHint, st.one_of(st.none(), _mask(nodes, palette)),
                     st.sampled_from([True, True, False]))
    lists: list[tuple[TopologyHint, ...]] = []
    product = 1
    for _ in range(draw(st.integers(0, 6))):
        room = MAX_WALK // product
        if room < 1:
            break
        length = draw(st.one_of(st.integers(0, 4), st.integers(0, min(60, room))))
        hints = tuple(draw(st.lists(hint, min_size=length, max_size=length)))
        lists.append(hints)
        product *= max(1, len(hints))
    return tuple(lists)


@st.composite
def _tunings(draw: st.DrawFn, n: int) -> Tuning:
    return Tuning(small_work=draw(st.sampled_from([4096, 0, 1 << 40])),
                  zeta_nodes=draw(st.sampled_from([22, max(0, n - 1), n])),
                  zeta_factor=draw(st.sampled_from([1.0, 0.0, 1e12])),
                  small_select=draw(st.sampled_from([512, 0])))


@st.composite
def fast_cases(draw: st.DrawFn, max_nodes: int = 10) -> FastCase:
    """Any merge the Topology Manager can be asked for: 0 to ``max_nodes`` NUMA nodes
    (contiguous, sparse or unsorted ids), any list shape, every release, mode and
    prefer-closest, distances usual or huge."""
    nodes = draw(machines(0, max_nodes)) if draw(st.integers(0, 9)) else ()
    distances = None
    if nodes:
        distances = draw(distances_for(nodes))
        if draw(st.integers(0, 5)) == 0:  # too large for a double to sum exactly
            distances = {k: tuple(d << 50 for d in row) for k, row in distances.items()}
    mode: MergeMode = draw(st.sampled_from(["best-effort", "restricted", "single-numa-node"]))
    closest = bool(nodes) and draw(st.booleans())
    return FastCase(draw(_lists(nodes)), NumaInfo(nodes, distances), draw(versions()), mode,
                    PolicyOptions(prefer_closest_numa_nodes=closest), draw(_tunings(len(nodes))))


# --- exhaustive enumeration -------------------------------------------------------------------


@attrs.frozen
class Exhaustion:
    """The result of :func:`exhaust`: how many merges were compared, and every difference."""

    domain: int
    compared: int
    differences: list[str]


#: The release and option profiles the enumeration runs every domain member under: up to
#: 1.23 (MERGE-2, MERGE-7), 1.24-1.25 (MERGE-3, MERGE-8), 1.26+ with prefer-closest off and
#: on (MERGE-9), and single-numa-node with it on (where it does not apply).
PROFILES: tuple[tuple[str, MergeMode, bool], ...] = (
    ("1.23", "best-effort", False), ("1.24", "best-effort", False),
    ("1.37", "best-effort", False), ("1.37", "best-effort", True),
    ("1.37", "single-numa-node", True))


def domain(nodes: int, hints: int) -> list[tuple[TopologyHint, ...]]:
    """The hints of a domain (every mask over ``nodes`` + 1 bits, the last one not on the
    machine, and no mask at all; each preferred or not) and its lists: every set of at most
    ``hints`` distinct hints, the empty list included.  A list's order and repeats do not
    change a merge (MERGE-11), nor does the order of lists: the domain is every multiset of
    at most ``lists`` such lists."""
    masks: list[NumaMask | None] = [None, *(NumaMask(b) for b in range(1 << (nodes + 1)))]
    universe = [TopologyHint(m, p) for m in masks for p in (True, False)]
    return [combo for size in range(hints + 1)
            for combo in itertools.combinations(universe, size)]


def _members(listed: Sequence[tuple[TopologyHint, ...]], lists: int
             ) -> Iterator[tuple[tuple[TopologyHint, ...], ...]]:
    for count in range(lists + 1):
        yield from itertools.combinations_with_replacement(listed, count)


def domain_size(nodes: int, lists: int, hints: int) -> int:
    """How many merges :func:`exhaust` compares for these bounds."""
    from math import comb

    listed = domain(nodes, hints)
    members = sum(comb(len(listed) + count - 1, count) for count in range(lists + 1))
    return members * len(PROFILES)


def exhaust(nodes: int = 2, lists: int = 3, hints: int = 2, *,
            fast: FastMerger = fast_best_hint, tuning: Tuning = DEFAULT_TUNING,
            progress: Callable[[int, int], None] | None = None,
            shard: tuple[int, int] = (0, 1)) -> Exhaustion:
    """FAST-1 over every member of the domain (:func:`domain`) under every profile
    (:data:`PROFILES`): the machine is nodes 0..``nodes``-1, with asymmetric distances and
    odd self-distances so that prefer-closest decides.  ``shard`` (k, N): only the members
    whose index is k modulo N."""
    listed = domain(nodes, hints)
    ids = tuple(range(nodes))
    distances = {i: tuple(10 + i if i == j else 11 + (3 * i + 5 * j) % 7 for j in ids)
                 for i in ids}
    numa = NumaInfo(ids, distances)
    profiles = [(parse_version(v), m, PolicyOptions(prefer_closest_numa_nodes=c))
                for v, m, c in PROFILES]
    total = domain_size(nodes, lists, hints)
    compared = 0
    differences: list[str] = []
    index, part = shard
    for position, member in enumerate(_members(listed, lists)):
        if position % part != index:
            continue
        for version, mode, options in profiles:
            expected = best_hint(member, numa, version, mode, options)
            actual = fast(member, numa, version, mode, options, tuning=tuning)
            compared += 1
            if actual != expected:
                differences.append(
                    f"{version} {mode} closest={options.prefer_closest_numa_nodes}: "
                    f"{[list(map(str, h)) for h in member]}: fast {actual}, walk {expected}")
        if progress is not None and position % 4096 == 0:
            progress(compared, total)
    return Exhaustion(total, compared, differences)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m numaspec.conformance.properties.fast_equivalence",
        description="Compare the fast merge with the definitional walk on every merge of a "
                    "small domain (FAST-1), and report the domain's size.")
    parser.add_argument("--nodes", type=int, default=2, help="NUMA nodes of the machine")
    parser.add_argument("--lists", type=int, default=3, help="the most hint lists")
    parser.add_argument("--hints", type=int, default=2, help="the most hints in a list")
    args = parser.parse_args(argv)
    size = domain_size(args.nodes, args.lists, args.hints)
    print(f"{size:,} merges ({len(PROFILES)} profiles) ...", file=sys.stderr)

    def show(done: int, total: int) -> None:
        if sys.stderr.isatty():
            print(f"\r{done:,}/{total:,} ({100 * done // max(1, total)}%)", end="",
                  file=sys.stderr)

    result = exhaust(args.nodes, args.lists, args.hints, progress=show)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    print(f"{result.compared:,} of {result.domain:,} merges compared: "
          f"{len(result.differences)} differences")
    for line in result.differences[:20]:
        print("  " + line)
    return 1 if result.differences else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
