"""``numaspec check``: the explorer run from the command line (spec/conformance/checking.md,
CHECK-6)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from numaspec.conformance.checking.bounds import Bounds, initial_nodes
from numaspec.conformance.checking.explorer import (
    Fold,
    NodeExplorer,
    NodeRun,
    ReferenceRunner,
    ReplayRunner,
    Report,
    explore,
)
from numaspec.conformance.implementations.connection import Connection
from numaspec.conformance.running.sharding import Engine, Runner, Tick
from numaspec.errors import AdapterError, InvalidFieldError

__all__ = ["NodesTask", "default_jobs", "explore_partitioned", "run"]


def _names(text: str, where: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise InvalidFieldError("name at least one", where=where)
    return names


def bounds_from_args(args: argparse.Namespace) -> Bounds:
    from numaspec.topology.versions import parse_version

    releases = _names(args.releases, "--releases")
    for release in releases:
        version = parse_version(release)
        if version.minor < 29:
            raise InvalidFieldError(f"{release}: the node model starts at 1.29",
                                    where="--releases")
    return Bounds(releases=releases, machines=_names(args.machines, "--machines"),
                  policies=_names(args.policies, "--policies"),
                  scopes=_names(args.scopes, "--scopes"), cpu=_names(args.cpu, "--cpu"),
                  memory=_names(args.memory, "--memory"), pods=args.pods,
                  depth=args.depth, copies=args.copies, hints=args.hints,
                  devices=not args.no_devices, max_pods=args.max_pods,
                  symmetry=not args.no_symmetry)


def _unclaimed(connection: Connection, op: str) -> Callable[[dict[str, Any]], str | None]:
    """CHECK-4, PROTO-7: why a node lies outside what the implementation declares or claims."""
    def reason(create: dict[str, Any]) -> str | None:
        implementation = connection.implementation
        return implementation.declares(op, create["node"]["kubeletVersion"]) or \
            implementation.outside_claims(op, {"steps": [create]}, None, ())
    return reason


def _runner(impl: str, op: str) -> tuple[Any, Any]:
    """The reference in process, or any implementation through the protocol (CHECK-4)."""
    from numaspec.protocols.adapter_protocol import REFERENCE_IMPL

    if impl == REFERENCE_IMPL:
        return ReferenceRunner(affinity=op == "affinity"), None
    from numaspec.conformance.implementations.connection import connect

    connection = connect(impl)

    def answers(steps: list[dict[str, Any]]) -> list[Any]:
        answer = connection.run(op, {"steps": steps})
        result = answer.result if answer.status == "result" else None
        if not isinstance(result, dict) or not isinstance(result.get("answers"), list) or len(
                result["answers"]) != len(steps):
            raise AdapterError(f"{impl} answered a session ({op}) with {answer.status}: "
                               f"{answer.message or json.dumps(result)[:300]}", where="--impl")
        return list(result["answers"])

    return ReplayRunner(answers), connection


@attrs.frozen
class NodesTask:
    """CHECK-10: one worker's share of the initial nodes (their indices in CHECK-1's order),
    each explored to the bounds' depth with its own runner (and its own connection to the
    implementation); picklable, for worker processes and Ray tasks."""

    bounds: Bounds
    impl: str
    max_states: int | None = None

    def __call__(self, indices: list[int], tick: Tick) -> list[tuple[int, NodeRun]]:
        bounds = self.bounds
        runner, connection = _runner(self.impl, bounds.op)
        try:
            explorer = NodeExplorer(
                bounds, runner, compare=connection is not None,
                unclaimed=None if connection is None else _unclaimed(connection, bounds.op))
            nodes = list(initial_nodes(bounds))
            # a cap on the states is reached no later in a node run alone than in the
            # whole run (Fold.bounds)
            children = None if self.max_states is None else max(1, self.max_states - 1)
            done = []
            for index in indices:
                found = explorer.run(nodes[index], bounds.depth, children)
                done.append((index, found))
                tick(1, int(found.counterexample is not None))
            return done
        finally:
            if connection is not None:
                connection.close()


def _shares(count: int, pieces: int) -> list[list[int]]:
    """The node indices ``0..count-1`` dealt round-robin into at most ``pieces`` shares (the
    nodes of a shape or policy lie together, and their costs differ)."""
    pieces = max(1, min(pieces, count))
    return [list(range(k, count, pieces)) for k in range(pieces)]


def explore_partitioned(bounds: Bounds, impl: str, engine: Engine, *,
                        max_states: int | None = None,
                        progress: Callable[[int, int], None] | None = None) -> Report:
    """CHECK-10: ``explore`` with the initial nodes shared among ``engine``'s workers (worker
    processes, or Ray tasks); each node explored whole, to the bounds' depth, and the runs
    folded into the report in the nodes' order as the one-process run folds them, so that
    the report (but its time) and the counterexample are the one-process run's.
    ``progress(done, violations)``: initial nodes explored so far."""
    started = time.monotonic()
    count = len(list(initial_nodes(bounds)))
    # several shares a worker, so that the workers finish together
    pieces = 4 * engine.jobs if engine.ray is None else max(1, count // 4)
    with Runner(engine) as workers:
        shares = workers.map(NodesTask(bounds, impl, max_states), _shares(count, pieces),
                             progress=progress,
                             measure=lambda runs: (len(runs), sum(
                                 run.counterexample is not None for _, run in runs)))
    fold = Fold(bounds, max_states)
    for _, found in sorted((pair for share in shares for pair in share),
                           key=lambda pair: pair[0]):
        if fold.add(found):
            break
    return fold.finish(started)


def default_jobs(bounds: Bounds) -> int:
    """CHECK-10: without ``--jobs``, a worker process per CPU this process may run on, and
    no more than there are initial nodes (one node: this process alone)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        os.cpu_count() or 1
    return max(1, min(cpus, len(list(initial_nodes(bounds)))))


def text(report: Report) -> str:
    """CHECK-6: the report for a person."""
    lines = [f"bounds: {report.bounds.describe()}",
             f"initial nodes: {report.initial_nodes} ({report.refused_nodes} kubelet would "
             "not start"
             + (f"; {report.unclaimed_nodes} not run, outside what the implementation claims: "
                f"{report.unclaimed_reason} ..." if report.unclaimed_nodes else "") + ")",
             f"steps run: {report.transitions:,}; distinct states: {report.distinct:,}; "
             f"depth reached: {report.depth}; nodes whose reachable states closed before the "
             f"depth: {report.closed}",
             f"time: {report.seconds:.1f} s"]
    found = report.counterexample
    if found is None and report.unclaimed_nodes == report.initial_nodes:
        lines.append("nothing was run: the implementation claims none of these nodes")
        return "\n".join(lines)
    if found is None:
        lines.append("exhausted: every sequence within the bounds was run; no violation"
                     if report.exhausted else
                     "NOT exhausted: stopped at --max-states; no violation in what was run")
        return "\n".join(lines)
    depth = sum(step["op"] == "state" for step in found.steps) - 1
    replay = "numaspec node --affinity" if report.bounds.affinity else "numaspec node"
    lines += ["", f"VIOLATION after {depth} step(s): {found.message}", "",
              f"the shortest session that shows it ({replay} replays it):", "",
              f"{replay} <<'EOF'", found.lines(), "EOF"]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from numaspec.conformance.running.reports import Progress

    bounds = bounds_from_args(args)
    engine = Engine(jobs=default_jobs(bounds) if args.jobs is None else args.jobs,
                    ray=args.ray)
    if engine.jobs > 1 or engine.ray is not None:
        bar = Progress(len(list(initial_nodes(bounds))), enabled=args.progress)
        try:
            report = explore_partitioned(
                bounds, args.impl, engine, max_states=args.max_states,
                progress=lambda done, found: bar.update(done, found, "initial nodes"))
        finally:
            bar.finish()
        return _output(args, report)
    runner, connection = _runner(args.impl, bounds.op)
    bar = Progress(0, enabled=args.progress)
    try:
        def progress(done: int, total: int, report: Report) -> None:
            bar.total = total
            bar.update(done, int(report.counterexample is not None),
                       f"{report.distinct:,} states")

        report = explore(bounds, runner, compare=connection is not None,
                         max_states=args.max_states, progress=progress,
                         unclaimed=None if connection is None else _unclaimed(connection,
                                                                              bounds.op))
    finally:
        bar.finish()
        if connection is not None:
            connection.close()
    return _output(args, report)


def _output(args: argparse.Namespace, report: Report) -> int:
    """CHECK-6: the report printed, the counterexample written to ``--out``."""
    if args.out and report.counterexample is not None:
        Path(args.out).write_text(report.counterexample.lines() + "\n", encoding="utf-8")
    print(json.dumps(report.as_json(), indent=1) if args.json else text(report))
    sys.stdout.flush()
    return 1 if report.counterexample is not None else 0
