"""``numaspec bench --sizes``: one merge per shape (NUMA nodes x providers x hints per list),
timed for the fast merge, the definitional walk where its budget allows, and an
implementation through the protocol (kubelet 1.37's adapter by default), with peak memory,
ratios and the fitted growth of each column.

A benchmark, not a test: it prints a Markdown table and asserts nothing about speed (only
that every answer agrees with the fast merge's; a disagreement is reported in the table).
A second table takes each row's request line through ``numaspec serve`` of this
installation, request sent to answer read, beside a bare parse of the same line by the fastest
JSON parser installed (WIRE-7: reading the request should cost about what parsing it does).

The lists are the first *H* subsets of the machine's nodes in kubelet's order (MASK-3: sizes
ascending); provider *i* prefers the subsets of ``1 + i mod 2`` nodes.  No word is then
preferred by every provider, so no candidate is preferred (MERGE-3) and the whole
non-preferred ranking runs: the expensive case for every algorithm, and the shape of
kubernetes #137700 (8 NUMA nodes, 4 providers, 255 hints: kubelet 258 s and 407 GB).
"""

from __future__ import annotations

import importlib
import json
import math
import os
import shlex
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

import attrs
import msgspec

from numaspec.errors import NumaspecError
from numaspec.limits import MAX_MERGE_STEPS
from numaspec.protocols.merge_protocol import decode_merge_request, encode_outcome, evaluate_request
from numaspec.protocols.merge_wire import read_merge_request

__all__ = ["DEFAULT_SHAPES", "SERVE_IMPL", "Row", "Shape", "Timing", "bare_parse", "measure",
           "parse_shapes", "render", "render_protocol", "show_ms", "show_ratio", "sizes",
           "through"]


@attrs.frozen
class Shape:
    nodes: int
    providers: int
    hints: int

    def __str__(self) -> str:
        return f"{self.nodes}x{self.providers}x{self.hints}"

    @property
    def permutations(self) -> int:
        return int(self.hints ** self.providers)


#: The table's rows: small ones every algorithm answers, the walk's and kubelet's limits, the
#: #137700 shape, and the issue's 16-node target (all 65,535 masks in each of 4 lists).
DEFAULT_SHAPES = (Shape(2, 2, 3), Shape(4, 3, 15), Shape(6, 3, 63), Shape(7, 3, 127),
                  Shape(8, 2, 255), Shape(8, 3, 255), Shape(8, 4, 255), Shape(10, 4, 1023),
                  Shape(12, 4, 4095), Shape(14, 4, 16383), Shape(16, 4, 65535))


def parse_shapes(text: str) -> tuple[Shape, ...]:
    """``8x4x255,16x4x65535`` -> shapes; a bad one is a one-line error."""
    shapes = []
    for item in text.split(","):
        parts = item.strip().lower().split("x")
        try:
            nodes, providers, hints = (int(p) for p in parts)
        except ValueError:
            raise SystemExit(f"--sizes: {item!r} is not NODESxPROVIDERSxHINTS") from None
        if not (1 <= nodes <= 22 and 1 <= providers <= 16 and 1 <= hints < 1 << nodes):
            raise SystemExit(f"--sizes: {item!r}: nodes 1..22, providers 1..16, hints "
                             "1..2**nodes-1")
        shapes.append(Shape(nodes, providers, hints))
    return tuple(shapes)


def request(shape: Shape) -> dict[str, Any]:
    """The merge request of a shape, in the wire format (kubelet 1.37, best-effort)."""
    nodes = list(range(shape.nodes))
    subsets = [list(c) for size in range(1, shape.nodes + 1) for c in combinations(nodes, size)]
    subsets = subsets[:shape.hints]
    providers = [{f"r{i}": [{"numa_affinity": s, "preferred": len(s) == 1 + i % 2}
                            for s in subsets]} for i in range(shape.providers)]
    case: dict[str, Any] = {"kubelet_version": "1.37", "numa_nodes": nodes,
                            "policy": "best-effort", "providers": providers}
    if shape.nodes > 8:
        case["policy_options"] = {"max-allowable-numa-nodes": str(shape.nodes)}
    return case


@attrs.frozen
class Timing:
    seconds: float | None  # None: not run
    peak_bytes: int | None = None
    note: str = ""
    answer: dict[str, Any] | None = None


@attrs.frozen
class Row:
    shape: Shape
    fast: Timing
    walk: Timing
    impl: Timing
    line_bytes: int = 0
    read: Timing = Timing(None)  # the line read in process (WIRE-7)
    parse: Timing = Timing(None)  # the line parsed by the fastest JSON parser, nothing more
    parser: str = ""
    serve: Timing = Timing(None)  # request -> answer through numaspec serve


#: ``numaspec serve`` of this installation, as an implementation.
SERVE_IMPL = f"exec:{shlex.quote(sys.executable)} -m numaspec serve"


def _parsers() -> list[tuple[str, Callable[[bytes], Any]]]:
    """The JSON parsers installed, each as a bare parse of one line (no checks at all)."""
    found: list[tuple[str, Callable[[bytes], Any]]] = [("json", json.loads),
                                                       ("msgspec", msgspec.json.decode)]
    for name in ("orjson", "simdjson", "ujson"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        loads = getattr(module, "loads", None)
        if callable(loads):
            found.append((name, loads))
    return found


def _best(run: Callable[[], Any], repeat: int) -> Timing:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return Timing(min(times))


def bare_parse(line: bytes, repeat: int = 3) -> tuple[str, Timing]:
    """The fastest installed parser's best time over ``line`` (a bare parse: no checks)."""
    timings = [(name, _best(lambda loads=loads: loads(line), repeat))  # type: ignore[misc]
               for name, loads in _parsers()]
    return min(timings, key=lambda item: item[1].seconds or 0.0)


def _in_process(case: dict[str, Any], *, definitional: bool, repeat: int) -> Timing:
    line = msgspec.json.encode(case)
    decoded = read_merge_request(line) or decode_merge_request(case)

    def once() -> dict[str, Any]:
        return encode_outcome(evaluate_request(decoded, definitional=definitional,
                                               max_steps=MAX_MERGE_STEPS))

    times = []
    answer: dict[str, Any] = {}
    for _ in range(repeat):
        started = time.perf_counter()
        answer = once()
        times.append(time.perf_counter() - started)
    tracemalloc.start()
    try:
        once()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return Timing(statistics.median(times), peak, answer=answer)


def through(impl: str, case: dict[str, Any], timeout: float, repeat: int = 1) -> Timing:
    """One merge through ``impl``'s protocol, the request line sent to the answer read: the
    best of ``repeat`` asks on one connection."""
    from numaspec.conformance.implementations.connection import connect

    connection = connect(impl, timeout=timeout, max_line=64 << 20)
    try:
        elapsed = math.inf
        for _ in range(repeat):
            started = time.perf_counter()
            answer = connection.run("merge", case)
            elapsed = min(elapsed, time.perf_counter() - started)
            if answer.status != "result":
                break
        process = getattr(connection, "_process", None)
        peak = _peak_rss(process.proc.pid) if process is not None else None
    finally:
        connection.close()
    if answer.status != "result":
        return Timing(None, note=f"{answer.status}: {answer.message}"[:80])
    return Timing(elapsed, peak, answer=answer.result)


def _peak_rss(pid: int) -> int | None:
    """The process's peak resident set (``VmHWM``), in bytes, on Linux."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


def measure(shape: Shape, *, impl: str | None, impl_max_permutations: int,
            timeout: float, repeat: int = 5, protocol: bool = True) -> Row:
    case = request(shape)
    fast = _in_process(case, definitional=False, repeat=repeat)
    steps = shape.permutations * shape.providers
    if steps <= MAX_MERGE_STEPS:
        walk = _in_process(case, definitional=True, repeat=1)
    else:
        walk = Timing(None, note=f"beyond the walk's budget ({steps:.1e} steps)")
    if impl is None:
        other = Timing(None, note="no implementation")
    elif shape.permutations > impl_max_permutations:
        other = Timing(None, note=f"{shape.permutations:.1e} permutations: not sent")
    else:
        other = through(impl, case, timeout)
    line = msgspec.json.encode(case)
    parser, parse = bare_parse(line)
    read = _best(lambda: read_merge_request(line), 3)
    served = through(SERVE_IMPL, case, timeout, repeat=3) if protocol else Timing(None)
    for timing in (walk, other, served):
        if timing.answer is not None and timing.answer != fast.answer:
            raise NumaspecError(f"{shape}: {timing.answer} differs from the fast merge's "
                                f"{fast.answer}")
    return Row(shape, fast, walk, other, len(line), read, parse, parser, served)


def show_ms(timing: Timing) -> str:
    if timing.seconds is None:
        return "—"
    if timing.seconds < 0.001:
        return f"{timing.seconds * 1000:.3f} ms"
    return f"{timing.seconds * 1000:,.1f} ms" if timing.seconds < 10 else f"{timing.seconds:,.1f} s"


def _mib(timing: Timing) -> str:
    return "—" if timing.peak_bytes is None else f"{timing.peak_bytes / (1 << 20):,.1f} MiB"


def show_ratio(slow: Timing, fast: Timing, digits: int = 0) -> str:
    if slow.seconds is None or not fast.seconds:
        return "—"
    return f"{slow.seconds / fast.seconds:,.{digits}f}x"


#: Rows faster than these are left out of the fits: fixed costs dominate them (decoding in
#: process; a process round trip through the protocol).
FIT_FLOOR, PROTOCOL_FIT_FLOOR = 0.001, 0.02


def _fit(points: Sequence[tuple[float, float]], floor: float = FIT_FLOOR) -> str:
    """The exponent b of time ≈ a · work^b, least squares on the logs."""
    usable = [(math.log(w), math.log(t)) for w, t in points if w > 0 and t >= floor]
    if len(usable) < 2:
        return "too few points"
    mean_x = statistics.fmean(x for x, _ in usable)
    mean_y = statistics.fmean(y for _, y in usable)
    spread = sum((x - mean_x) ** 2 for x, _ in usable)
    if spread == 0:
        return "too few points"
    slope = sum((x - mean_x) * (y - mean_y) for x, y in usable) / spread
    return f"{slope:.2f}"


def render(rows: Sequence[Row], impl_name: str) -> str:
    lines = [f"| NxPxH | permutations | fast | fast peak | definitional | walk peak | "
             f"{impl_name} | its peak RSS | walk/fast | {impl_name}/fast |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(
            f"| {row.shape} | {row.shape.permutations:.3g} | {show_ms(row.fast)} "
            f"| {_mib(row.fast)} "
            f"| {show_ms(row.walk) if row.walk.seconds is not None else row.walk.note} "
            f"| {_mib(row.walk)} "
            f"| {show_ms(row.impl) if row.impl.seconds is not None else row.impl.note} "
            f"| {_mib(row.impl)} | {show_ratio(row.walk, row.fast)} "
            f"| {show_ratio(row.impl, row.fast)} |")
    fast_points = [(r.shape.providers * r.shape.nodes * 2.0 ** r.shape.nodes, r.fast.seconds)
                   for r in rows if r.fast.seconds]
    walk_points = [(float(r.shape.permutations), r.walk.seconds) for r in rows if r.walk.seconds]
    impl_points = [(float(r.shape.permutations), r.impl.seconds) for r in rows if r.impl.seconds]
    lines += ["", "Fitted growth over the rows above 1 ms, time ≈ a · work^b: fast merge b = "
              f"{_fit(fast_points)} in P·N·2^N; definitional b = {_fit(walk_points)} and "
              f"{impl_name} b = {_fit(impl_points, PROTOCOL_FIT_FLOOR)} in permutations (its rows "
              "above 20 ms)."]
    if any(row.serve.seconds is not None for row in rows):
        lines += ["", render_protocol(rows)]
    return "\n".join(lines)


def render_protocol(rows: Sequence[Row]) -> str:
    """WIRE-7: each row's request line through ``numaspec serve`` (sent to answered, the best
    of three) beside a bare parse of the same line by the fastest JSON parser installed (the
    best of three), and, in process, the line read and the merge."""
    lines = ["| NxPxH | request line | bare parse (parser) | numaspec serve, request → answer "
             "| serve / parse | read in process | merge in process |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(
            f"| {row.shape} | {_size(row.line_bytes)} | {show_ms(row.parse)} ({row.parser}) "
            f"| {show_ms(row.serve) if row.serve.seconds is not None else row.serve.note or '—'} "
            f"| {show_ratio(row.serve, row.parse, 2)} | {show_ms(row.read)} "
            f"| {show_ms(row.fast)} |")
    return "\n".join(lines)


def _size(count: int) -> str:
    return f"{count / 1e6:,.1f} MB" if count >= 100_000 else f"{count:,} B"



def sizes(shapes: Sequence[Shape], *, impl: str | None, impl_name: str,
          impl_max_permutations: int, timeout: float,
          progress: Callable[[str], None] | None = None) -> str:
    rows = []
    for i, shape in enumerate(shapes):
        if progress is not None:
            progress(f"[{i + 1}/{len(shapes)}] {shape}")
        rows.append(measure(shape, impl=impl, impl_max_permutations=impl_max_permutations,
                            timeout=timeout))
    return render(rows, impl_name)


def default_impl() -> str | None:
    """kubelet 1.37's adapter when it is built in this checkout (adapters/kubelet/bin)."""
    root = Path(__file__).resolve().parents[2] / "adapters" / "kubelet" / "bin"
    found = sorted(root.glob("kubelet-adapter-v1.37.*")) if root.is_dir() else []
    return f"exec:{found[-1]}" if found and os.access(found[-1], os.X_OK) else None


def main(shapes_text: str | None, impl: str | None, *, impl_max_permutations: int,
         timeout: float) -> int:
    shapes = parse_shapes(shapes_text) if shapes_text else DEFAULT_SHAPES
    chosen = impl or default_impl()
    name = "kubelet 1.37" if impl is None and chosen else (impl or "implementation")

    def show(text: str) -> None:
        if sys.stderr.isatty():
            print(f"\r{text:<40}", end="", file=sys.stderr, flush=True)

    table = sizes(shapes, impl=chosen, impl_name=name,
                  impl_max_permutations=impl_max_permutations, timeout=timeout, progress=show)
    if sys.stderr.isatty():
        print("\r" + " " * 40 + "\r", end="", file=sys.stderr)
    print(table)
    if chosen is None:
        print("\n(no implementation column: build adapters/kubelet or pass --impl)")
    return 0
