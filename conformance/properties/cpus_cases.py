"""Random ``cpus`` cases (spec chapter ``cpu.md``, CPU-21), for ``numaspec differential --shape
cpus``: machines of one to four sockets with one to four NUMA nodes each, SMT off, on (two
threads a core) or four threads a core, uncore caches shared by groups of cores (or none
reported), CPU ids numbered socket by socket or interleaved as many x86 servers number them,
core ids as sysfs gives them (each socket counting from zero, now and then with gaps); some
CPUs reserved or already taken, and a count from one to a little past what is left.

One generator, two sources of choices, as for the allocator's cases: Hypothesis's
(:func:`cpus_cases`, for P-CPUS, which shrinks) and a seeded :class:`random.Random`
(:func:`random_cpus_case_at`: case ``i`` of a seed is always the same case).  The options are
none or ``prefer-align-cpus-by-uncorecache`` (with its gate before 1.34), so that every case
is one the static policy starts with at its release, or the ones an implementation always
applies.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from numaspec.conformance.properties.choices import Choices, HypothesisChoices, SeededChoices
from numaspec.conformance.properties.random_cases import without

__all__ = ["UNCORE", "build_case", "cpus_cases", "draw_cpus_case", "random_cpus_case_at",
           "smaller_cpus_cases"]

UNCORE = "prefer-align-cpus-by-uncorecache"
#: The first release with the uncore-cache option (alpha, behind CPUManagerPolicyAlphaOptions
#: until 1.34: CPU-14).
_UNCORE_FROM, _UNCORE_BETA = 32, 34


def build_case(c: Choices, versions: Sequence[str],
               options: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A random ``cpus`` case for one of ``versions``; ``options``: the options every case
    gives (an implementation that always applies them, PROTO-7's ``cpus.options``), else
    none or the uncore-cache option drawn."""
    version = c.choice(list(versions))
    minor = int(version.split(".")[1])
    sockets = c.choice((1, 2, 2, 1, 2, 4))
    per_socket = c.choice((1, 2, 1, 2, 4))
    cores_per_numa = c.integer(1, 8)
    threads = c.choice((2, 1, 2, 2, 4))
    uncore_group = c.choice((0, 1, 2, 4, cores_per_numa, 2 * cores_per_numa))
    interleaved = c.integer(0, 1) == 1
    gaps = c.integer(0, 4) == 4
    total_cores = sockets * per_socket * cores_per_numa
    # every core's place: (socket, NUMA node, index of the core on its socket)
    places = [(s, s * per_socket + n, n * cores_per_numa + k)
              for s in range(sockets) for n in range(per_socket) for k in range(cores_per_numa)]
    nodes: dict[int, list[dict[str, Any]]] = {}
    caches: dict[tuple[int, int], int] = {}
    for number, (socket, numa, on_socket) in enumerate(places):
        # CPU ids socket by socket, thread by thread; or interleaved (thread t of core k of
        # socket s is t * cores + k * sockets + s, as many x86 servers number them)
        thread_ids = ([t * total_cores + on_socket * sockets + socket for t in range(threads)]
                      if interleaved else [number * threads + t for t in range(threads)])
        core: dict[str, Any] = {"id": on_socket * (2 if gaps else 1), "socket": socket,
                                "threads": thread_ids}
        if uncore_group:
            core["uncoreCache"] = caches.setdefault(
                (numa, (on_socket % cores_per_numa) // uncore_group), len(caches))
        nodes.setdefault(numa, []).append(core)
    machine = {"numaNodes": [{"id": numa, "memory": "16Gi", "cores": cores}
                             for numa, cores in sorted(nodes.items())]}
    every = sorted(t for cores in nodes.values() for core in cores for t in core["threads"])
    # CPUs not available: none, the first ones (as reserved CPUs usually are), or scattered
    how = c.choice(("none", "first", "scattered", "none", "first"))
    if how == "first":
        gone = set(every[:c.integer(0, len(every) // 2)])
    elif how == "scattered":
        gone = set(c.subset(every, len(every) // 2))
    else:
        gone = set()
    available = [cpu for cpu in every if cpu not in gone]
    count = c.integer(1, max(1, len(available)))
    if c.integer(0, 19) == 19:
        count = len(available) + 1  # one too many: unsatisfiable
    case: dict[str, Any] = {"kubelet_version": version, "machine": machine,
                            "available": available, "count": count}
    chosen = dict(options) if options is not None else (
        {UNCORE: "true"} if minor >= _UNCORE_FROM and c.integer(0, 9) < 7 else {})
    if chosen:
        case["options"] = chosen
        if UNCORE in chosen and minor < _UNCORE_BETA:
            case["feature_gates"] = {"CPUManagerPolicyAlphaOptions": True}
    return case


@st.composite
def cpus_cases(draw: st.DrawFn, versions: tuple[str, ...],
               options: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A random ``cpus`` case, Hypothesis's way (it shrinks)."""
    return build_case(HypothesisChoices(draw), versions, options)


def random_cpus_case_at(seed: int, index: int, versions: Sequence[str],
                        options: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Case ``index`` of ``seed``: the same case however a campaign is cut into pieces."""
    return build_case(SeededChoices(random.Random(f"cpus:{seed}:{index}")), versions, options)


def draw_cpus_case(shape: object, seed: int, index: int, versions: Sequence[str],
                   features: Sequence[str] | None) -> dict[str, Any]:
    """The ``cpus`` shape's case ``index`` of ``seed`` (``numaspec differential --shape cpus``;
    the judge's ``Draw``)."""
    del shape, features
    return random_cpus_case_at(seed, index, versions)


def smaller_cpus_cases(case: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every ``cpus`` case one step smaller than ``case``: a NUMA node, a core or an
    available CPU less, fewer CPUs asked, no options (the differential's shrink steps)."""
    nodes = case["machine"]["numaNodes"]
    available = case["available"]

    def keeping(new_nodes: list[Any]) -> dict[str, Any]:
        left = {t for n in new_nodes for c in n["cores"] for t in c["threads"]}
        return {**case, "machine": {**case["machine"], "numaNodes": new_nodes},
                "available": [c for c in available if c in left]}

    for i in range(len(nodes) if len(nodes) > 1 else 0):
        yield keeping(without(nodes, i))
    for i, node in enumerate(nodes):
        for j in range(len(node["cores"]) if len(node["cores"]) > 1 else 0):
            yield keeping([*nodes[:i], {**node, "cores": without(node["cores"], j)},
                           *nodes[i + 1:]])
    for count in (1, case["count"] - 1):
        if 1 <= count < case["count"]:
            yield {**case, "count": count}
    for i in range(len(available)):
        yield {**case, "available": without(available, i)}
    if case.get("options"):
        yield {k: v for k, v in case.items() if k not in ("options", "feature_gates")}
