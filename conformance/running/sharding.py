"""Deterministic sharding of a seeded campaign: in this process, in local worker processes, or
on a Ray cluster.

A campaign (``numaspec differential``, ``numaspec bench``) is a range of case indices, and case
``i`` is drawn from its own generator seeded with ``(seed, i)``
(:func:`~numaspec.conformance.properties.random_cases.random_merge_case_at`), so any piece of
the range can be drawn and run anywhere and comes out as it does in the whole campaign.  This
module cuts a range into pieces (:func:`shard_ranges`, :func:`chunk_ranges`), runs a task on
each piece (:func:`run_sharded`) and gives the results back in the pieces' order, so that what
the caller makes of them does not depend on how they were run:

* ``--jobs 1``: the pieces run one after the other in this process;
* ``--jobs N``: ``N`` spawned worker processes, one piece each (each task opens its own
  connection to the implementation);
* ``--ray [ADDRESS]``: one Ray task per piece of ``--chunk`` cases, on the cluster at
  ``ADDRESS`` (``pip install 'numaspec[ray]'``; every node needs the same numaspec and Ray).

A task is a picklable callable ``task(piece, tick)``: a module-level function or an instance of
a module-level class (workers import it by name).  ``tick(done, failed)`` reports progress from
inside a piece; Ray tasks do not tick, their pieces count when they finish (``measure``).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import multiprocessing
import queue
import socket
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ProcessPoolExecutor, wait
from typing import Any, TypeVar

import attrs

from numaspec.errors import InvalidFieldError

__all__ = ["DEFAULT_CHUNK", "Engine", "Runner", "add_arguments", "chunk_ranges",
           "engine_from_args", "run_sharded", "shard_ranges"]

T = TypeVar("T")
R = TypeVar("R")
#: ``tick(done, failed)``: cases finished and failures found since the last tick.
Tick = Callable[[int, int], None]
#: ``progress(done, failed)``: the totals so far.
Progress = Callable[[int, int], None]

#: Cases per Ray task unless told (``--chunk``).
DEFAULT_CHUNK = 10_000
_RAY_EXTRA = "pip install 'numaspec[ray]'"


def shard_ranges(count: int, jobs: int, start: int = 0) -> list[range]:
    """``count`` indices from ``start`` in ``jobs`` contiguous pieces, the first ones one
    longer; no empty piece (fewer pieces when ``count < jobs``)."""
    jobs = max(1, min(jobs, count))
    size, extra = divmod(count, jobs)
    pieces, low = [], start
    for k in range(jobs):
        high = low + size + (k < extra)
        pieces.append(range(low, high))
        low = high
    return [p for p in pieces if p]


def chunk_ranges(count: int, size: int, start: int = 0) -> list[range]:
    """``count`` indices from ``start`` in contiguous pieces of ``size`` (the last shorter)."""
    return [range(low, min(low + size, start + count))
            for low in range(start, start + count, max(1, size))]


@attrs.frozen
class Engine:
    """Where the pieces of a campaign run."""

    #: worker processes (1: this process); with ``ray == "local"``, the local instance's CPUs
    jobs: int = 1
    #: None: no Ray; "": Ray's default (RAY_ADDRESS, or the cluster ``ray start`` made on this
    #: machine, else a new local instance); "local": a new local instance; else an address
    ray: str | None = None
    #: cases per Ray task
    chunk: int = DEFAULT_CHUNK

    def __attrs_post_init__(self) -> None:
        if self.jobs < 1:
            raise InvalidFieldError(f"must be at least 1, got {self.jobs}", where="--jobs")
        if self.chunk < 1:
            raise InvalidFieldError(f"must be at least 1, got {self.chunk}", where="--chunk")

    def pieces(self, start: int, count: int) -> list[range]:
        """The pieces ``count`` cases from ``start`` are run as."""
        if self.ray is not None:
            return chunk_ranges(count, self.chunk, start)
        return shard_ranges(count, self.jobs, start)

    def describe(self) -> str:
        if self.ray is not None:
            return f"Ray ({self.ray or 'default address'}), {self.chunk} cases per task"
        return "this process" if self.jobs == 1 else f"{self.jobs} processes"


def run_sharded(task: Callable[[T, Tick], R], items: Sequence[T], *, engine: Engine,
                progress: Progress | None = None,
                measure: Callable[[R], tuple[int, int]] | None = None) -> list[R]:
    """``task(item, tick)`` for every item, on ``engine``; the results in the items' order.
    ``progress`` gets the totals of the ticks (Ray: of ``measure(result)`` per finished
    item).  An exception of a task is raised here, after the other tasks are cancelled.

    Worker processes are spawned: a script that calls this needs the usual
    ``if __name__ == "__main__":`` guard.  Several calls in a row: :class:`Runner`."""
    with Runner(engine) as runner:
        return runner.map(task, items, progress=progress, measure=measure)


class Runner:
    """An engine's workers (the process pool, the Ray connection), kept for several
    :meth:`map` calls (a campaign's rounds, then its shrinking) and let go on exit."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._pool: ProcessPoolExecutor | None = None
        self._ticks: Any = None
        self._ray: Any = None
        self._ray_started = False

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._ticks.close()
            self._ticks.join_thread()
        if self._ray_started:
            self._ray.shutdown()

    def map(self, task: Callable[[T, Tick], R], items: Sequence[T], *,
            progress: Progress | None = None,
            measure: Callable[[R], tuple[int, int]] | None = None) -> list[R]:
        """``task(item, tick)`` for every item; the results in the items' order."""
        totals = _Totals(progress)
        if not items:
            return []
        if self.engine.ray is not None:
            return self._map_ray(task, items, totals, measure)
        if self.engine.jobs == 1 or len(items) == 1:
            return [task(item, totals.add) for item in items]
        return self._map_processes(task, items, totals)

    # --- local worker processes

    def _map_processes(self, task: Callable[[T, Tick], R], items: Sequence[T],
                       totals: _Totals) -> list[R]:
        """Spawned worker processes (no thread or connection of this process is inherited);
        the ticks come back on a queue the workers get as they start."""
        if self._pool is None:
            context = multiprocessing.get_context("spawn")
            self._ticks = context.Queue()
            self._pool = ProcessPoolExecutor(max_workers=self.engine.jobs, mp_context=context,
                                             initializer=_start_worker,
                                             initargs=(self._ticks,))
        futures = [self._pool.submit(_in_worker, task, item) for item in items]
        pending: set[Future[R]] = set(futures)
        while pending:
            finished, pending = wait(pending, timeout=0.2, return_when=FIRST_EXCEPTION)
            _drain(self._ticks, totals)
            failed = next((f for f in finished if f.exception() is not None), None)
            if failed is not None:
                for other in pending:
                    other.cancel()
                failed.result()  # raises the task's exception
        _drain(self._ticks, totals)
        return [future.result() for future in futures]

    # --- Ray

    def _map_ray(self, task: Callable[[T, Tick], R], items: Sequence[T], totals: _Totals,
                 measure: Callable[[R], tuple[int, int]] | None) -> list[R]:
        """One Ray task per item (one CPU each)."""
        if self._ray is None:
            self._ray = _import_ray()
            if not self._ray.is_initialized():
                _ray_init(self._ray, self.engine)
                self._ray_started = True
        ray = self._ray
        remote = ray.remote(num_cpus=1)(_in_ray)
        refs = [remote.remote(task, item) for item in items]
        pending = list(refs)
        while pending:
            finished, pending = ray.wait(pending, num_returns=1)
            for ref in finished:
                result = ray.get(ref)
                totals.add(*(measure(result) if measure is not None else (0, 0)))
        return [ray.get(ref) for ref in refs]


class _Totals:
    """The ticks added up, passed on to ``progress``."""

    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress
        self.done = self.failed = 0

    def add(self, done: int, failed: int) -> None:
        self.done += done
        self.failed += failed
        if self.progress is not None:
            self.progress(self.done, self.failed)


# --- in the workers ---------------------------------------------------------------------------

#: In a worker process: where its ticks go (set by the pool's initializer).
_TICKS: Any = None


def _start_worker(ticks: Any) -> None:
    global _TICKS  # noqa: PLW0603 - one per worker process, set once as it starts
    _TICKS = ticks


def _worker_tick(done: int, failed: int) -> None:
    if _TICKS is not None:
        _TICKS.put((done, failed))


def _in_worker(task: Callable[[T, Tick], R], item: T) -> R:
    return task(item, _worker_tick)


def _drain(ticks: Any, totals: _Totals) -> None:
    while True:
        try:
            done, failed = ticks.get_nowait()
        except queue.Empty:
            return
        totals.add(done, failed)


def _no_tick(done: int, failed: int) -> None:
    del done, failed  # a Ray task's piece counts when it finishes


def _in_ray(task: Callable[[T, Tick], R], item: T) -> R:
    return task(item, _no_tick)


def _import_ray() -> Any:
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise InvalidFieldError(f"Ray is not installed here; install the extra: {_RAY_EXTRA}",
                                where="--ray") from None


def _reachable(address: str) -> None:
    """A cluster address (``host:port``, ``ray://host:port``) answers a TCP connection:
    Ray itself would retry an unreachable one for minutes."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # "local", "auto", or a form Ray reads itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5.0).close()
    except OSError as exc:
        raise InvalidFieldError(f"cannot connect to Ray at {address}: "
                                f"{exc.strerror or exc}", where="--ray") from None


def _ray_init(ray: Any, engine: Engine) -> None:
    if engine.ray:
        _reachable(engine.ray)
    options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    if engine.ray == "local" and engine.jobs > 1:
        options["num_cpus"] = engine.jobs
    try:
        ray.init(address=engine.ray or None, **options)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidFieldError(f"cannot connect to Ray at {engine.ray or 'its default'}: "
                                f"{first}", where="--ray") from None


# --- the command line -------------------------------------------------------------------------


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least ``minimum``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value
    return parse


_positive = at_least(1)


def add_arguments(parser: argparse.ArgumentParser, *, ray: bool = True) -> None:
    """``--jobs`` (and ``--ray``, ``--chunk``) for a campaign's command."""
    parser.add_argument("--jobs", type=_positive, default=1, metavar="N",
                        help="run the cases in N worker processes, each with its own "
                             "connection to the implementation (default 1: this process); "
                             "the results are those of --jobs 1")
    if not ray:
        return
    parser.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                        help="run the cases as Ray tasks (pip install 'numaspec[ray]'): on "
                             "the cluster at ADDRESS (host:6379), on a new local instance "
                             "('local'; --jobs N gives it N CPUs), or without ADDRESS where "
                             "Ray looks by default (RAY_ADDRESS, a 'ray start' on this "
                             "machine, else a new local instance)")
    parser.add_argument("--chunk", type=_positive, default=DEFAULT_CHUNK, metavar="N",
                        help=f"with --ray: cases per Ray task (default {DEFAULT_CHUNK})")


def engine_from_args(args: argparse.Namespace) -> Engine:
    """The engine ``add_arguments``' options ask for."""
    return Engine(jobs=args.jobs, ray=getattr(args, "ray", None),
                  chunk=getattr(args, "chunk", DEFAULT_CHUNK))
