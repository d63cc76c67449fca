"""Pairs of functions for ``crosshair diffbehavior`` (CHECK-9), each over a few small ints.

``diffbehavior`` ignores preconditions, so every function answers a constant outside its
small domain: the two of a pair then differ exactly where they differ inside it, which
``tests/suite/test_crosshair.py`` counts by enumeration.  ``DOMAINS`` gives each pair's domain.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable

from numaspec.node.devices import DeviceManager
from numaspec.node.machine import Device, Machine
from numaspec.node.pods import Container, Pod
from numaspec.topology.fast_merge import _choose_count
from numaspec.topology.masks import NumaMask
from numaspec.topology.versions import parse_version
from numaspec_tools.mutants.crosshair_mutant import narrower_by_lowest_node
from numaspec_tools.mutants.fast_merge_mutants import _fewest_below

__all__ = ["DOMAINS", "PAIRS"]


def _counts(a: int, b: int, c: int, target: int) -> bool:
    """Three NUMA node counts and a target, each 1..4."""
    return all(1 <= x <= 4 for x in (a, b, c, target))


def choose_count(a: int, b: int, c: int, target: int) -> int:
    """FAST-5 (MERGE-8): the fast merge's count choice among the counts ``{a, b, c}``."""
    return _choose_count({a, b, c}, target) if _counts(a, b, c, target) else 0


def choose_fewest_below(a: int, b: int, c: int, target: int) -> int:
    """The fast-merge mutant ``fewest_below_target``: the fewest below the target, not the
    most."""
    return _fewest_below({a, b, c}, target) if _counts(a, b, c, target) else 0


def narrower(a: int, b: int) -> bool:
    """MASK-2 on two non-empty masks of four NUMA nodes (words 1..15)."""
    if not (1 <= a <= 15 and 1 <= b <= 15):
        return False
    return NumaMask(a).is_narrower_than(NumaMask(b))


def narrower_by_lowest(a: int, b: int) -> bool:
    """The mutant of ``mutants.crosshair_mutant``: the mask holding the lower node wins."""
    if not (1 <= a <= 15 and 1 <= b <= 15):
        return False
    return narrower_by_lowest_node(a, b)


def _device_hints(version: str, nodes: int, hosting: int, request: int
                  ) -> tuple[tuple[int, bool], ...]:
    """DEV-3: a container's hints for ``request`` devices on ``nodes`` NUMA nodes, one device
    on each NUMA node of the word ``hosting``."""
    if not (1 <= nodes <= 3 and 1 <= hosting < 1 << nodes and 1 <= request <= 3):
        return ()
    devices = tuple(Device(f"d{n}", (n,)) for n in range(nodes) if hosting >> n & 1)
    machine = Machine.symmetric(sockets=nodes, cores_per_numa=1, threads_per_core=1,
                                devices={"example.com/dev": devices})
    limits = {"cpu": "1", "memory": "1Gi", "example.com/dev": str(request)}
    pod = Pod("p", (Container.of("c", requests=limits, limits=limits),))
    hints = DeviceManager(machine, parse_version(version)).container_hints(
        pod, pod.containers[0])
    assert hints is not None
    return tuple((h.numa_affinity.bits if h.numa_affinity else 0, h.preferred)
                 for h in hints["example.com/dev"] or [])


def device_hints_1_35(nodes: int, hosting: int, request: int) -> tuple[tuple[int, bool], ...]:
    """DEV-3 in 1.35: every mask of the machine's NUMA nodes."""
    return _device_hints("1.35", nodes, hosting, request)


def device_hints_1_36(nodes: int, hosting: int, request: int) -> tuple[tuple[int, bool], ...]:
    """DEV-3 from 1.36: only the masks of the NUMA nodes hosting a device."""
    return _device_hints("1.36", nodes, hosting, request)


#: name -> (the reference's function, the other one), as ``crosshair diffbehavior`` targets.
_HERE = "numaspec_tools.mutants.crosshair_diff"
PAIRS = {
    "fast-5-count-choice": (f"{_HERE}.choose_count", f"{_HERE}.choose_fewest_below"),
    "mask-2-narrower": (f"{_HERE}.narrower", f"{_HERE}.narrower_by_lowest"),
    "dev-3-1.35-vs-1.36": (f"{_HERE}.device_hints_1_35", f"{_HERE}.device_hints_1_36"),
}


def _grid(*ranges: range) -> Callable[[], Iterable[tuple[int, ...]]]:
    return lambda: itertools.product(*ranges)


#: name -> every input of the pair's small domain.
DOMAINS: dict[str, Callable[[], Iterable[tuple[int, ...]]]] = {
    "fast-5-count-choice": _grid(range(1, 5), range(1, 5), range(1, 5), range(1, 5)),
    "mask-2-narrower": _grid(range(1, 16), range(1, 16)),
    "dev-3-1.35-vs-1.36": lambda: ((n, h, r) for n in range(1, 4) for h in range(1, 1 << n)
                                   for r in range(1, 4)),
}
