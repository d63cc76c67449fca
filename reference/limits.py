"""The bounds numaspec accepts, checked before work proportional to the input is done.

Every request to ``numaspec merge``, ``node`` and ``serve`` is answered, or refused with a
typed error (:class:`~numaspec.errors.LimitExceededError`), within bounded time and memory.
Each bound sits beside the rule it guards in the spec:

* WIRE-5 (``merge-protocol.md``): request lines and JSON integers;
* WIRE-4: the merge's cross product (also for the node's admissions, ADMIT-1);
* NWIRE-5 (``node-protocol.md``): CPU ids and cpusets, machine sizes, quantities, and the
  NUMA-node subsets the hint providers enumerate.

None of them is below what a kubelet machine can have: kubelet's bitmasks stop at 64 NUMA
nodes (MASK-1) and Linux at 8,192 CPUs (``CONFIG_NR_CPUS``'s maximum).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "LINE_BOUND_VARIABLE",
    "MAX_CONTAINERS",
    "MAX_CPU_ID",
    "MAX_DEVICES",
    "MAX_HINT_SUBSETS",
    "MAX_INT_DIGITS",
    "MAX_LINE_BYTES",
    "MAX_MERGE_STEPS",
    "MAX_QUANTITY_CHARS",
    "line_bound_from",
]

#: WIRE-5: the longest request line read by default (bytes, newline excluded); a longer line
#: is read to its end, discarded and answered with ``limit-exceeded``.  A setting:
#: ``--max-line-bytes`` of ``numaspec merge``, ``node`` and ``serve``, else the environment
#: variable :data:`LINE_BOUND_VARIABLE`.  64 MiB admits every kubelet-shaped merge request up
#: to 16 NUMA nodes: each of its hint lists holds at most the 65,535 non-empty masks, 4.7 MB
#: written with spaces, and 16 x 4 x 65,535 is 17.8 MB so written (14.9 MB compact).
MAX_LINE_BYTES = 64 << 20

#: WIRE-5: the environment variable that sets the request-line bound.
LINE_BOUND_VARIABLE = "NUMASPEC_MAX_LINE_BYTES"


def line_bound_from(environ: Mapping[str, str]) -> int:
    """WIRE-5: the request-line bound ``environ`` sets, else the default; ``ValueError``
    naming the variable when its value is not a positive integer."""
    text = environ.get(LINE_BOUND_VARIABLE, "").strip()
    if not text:
        return MAX_LINE_BYTES
    if not (text.isascii() and text.isdigit()) or len(text) > 15 or int(text) < 1:
        raise ValueError(f"{LINE_BOUND_VARIABLE}={text[:40]!r} is not a positive number "
                         "of bytes")
    return int(text)

#: WIRE-5: the most digits of a JSON integer.  Every integer field of the protocols fits a
#: 64-bit word (at most 20 digits); a longer literal is refused before it is converted.
MAX_INT_DIGITS = 20

#: WIRE-4: the most steps (permutations x hint lists) a merge walks, about five seconds of
#: the definitional merge on this project's machine; ``numaspec merge --max-merge-steps``.
MAX_MERGE_STEPS = 6_000_000

#: NWIRE-5: the highest CPU id of a machine, a cpuset or a reservation (Linux's NR_CPUS
#: maximum is 8,192 CPUs).
MAX_CPU_ID = 8191

#: NWIRE-5: the most containers of a pod, init containers and sidecars included (the API
#: server's object size limit keeps real pods far below it).
MAX_CONTAINERS = 256

#: NWIRE-5: the most devices a machine lists, over all its extended resources.
MAX_DEVICES = 4096

#: NWIRE-5: the most NUMA-node subsets one hint provider enumerates for one request
#: (kubelet's providers walk every subset of the machine's NUMA nodes: 2**n - 1 of them);
#: 2**12 - 1, so that machines of up to 12 NUMA nodes get hints (kubelet needs
#: max-allowable-numa-nodes above 8).
MAX_HINT_SUBSETS = (1 << 12) - 1

#: NWIRE-5: the longest quantity string read ("1Gi", "500m", "1e3"): a quantity that fits a
#: 64-bit integer needs far fewer characters; this bounds the scan, not the values.
MAX_QUANTITY_CHARS = 4096
