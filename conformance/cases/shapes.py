"""The shapes of random cases a campaign draws (``numaspec differential --shape``), and
their bounds.  Each operation's judge names the shapes of its cases (``Judge.draws``); this
gathers them.

Kept apart from :mod:`numaspec.conformance.properties.random_cases`, which draws them: the
command line reads these to build its options, and must not import the properties package
(that would create the Hypothesis properties before the run loads its settings profile, so
that they would keep the default one: random instead of derandomized examples)."""

from __future__ import annotations

from types import MappingProxyType

from numaspec.conformance.cases.judges import JUDGES
from numaspec.conformance.cases.judges.judge import Draw

__all__ = ["DEFAULT_MAX_PERMUTATIONS", "DRAWS", "LARGE_NUMA_NODES", "SHAPES"]

#: Each shape, by name: its operation and how it is drawn.  ``small``: today's merge
#: distribution (1 to 8 NUMA nodes and past them, every policy, option and gate); ``large``:
#: kubelet's providers on a big machine; ``allocate``: the DRA allocator's cases (spec chapter
#: dra.md); ``cpus``: the CPU Manager's allocator alone (spec chapter cpu.md, CPU-21), for
#: allocators outside kubelet.
DRAWS: MappingProxyType[str, tuple[str, Draw]] = MappingProxyType(
    {draw.name: (op, draw) for op, judge in JUDGES.items() for draw in judge.draws})
#: The shapes' names, the operations' in the protocol's order.
SHAPES = tuple(DRAWS)
#: The NUMA node counts of the large shape (kubelet needs max-allowable-numa-nodes past 8).
LARGE_NUMA_NODES = (9, 16)
#: The cap on a large case's permutations (the product of its hint lists' lengths) unless told:
#: kubelet 1.37 walks about 4 million a second on this project's machine, so at most ~3 s.
DEFAULT_MAX_PERMUTATIONS = 10_000_000
