"""Exhaustive bounded exploration of the node, breadth-first (spec/conformance/checking.md,
CHECK-1..6).

From each initial node within the bounds, every sequence of admits and removes of the pod
alphabet up to the depth is run, level by level.  A state is the node's answer to ``state``
(NODE-8) together with the pods on it; each distinct state is expanded once (CHECK-2).  After
every step the invariants INV-1..INV-9 and ADMIT-10 are checked on the implementation's own
answers, exactly as P-NODE-SESSION checks a random session, and INV-10 on every distinct
state of an implementation in process (CHECK-3); on affinity nodes the affinity invariants
too (CHECK-7).  Against another implementation than the reference every answer is also
compared with the reference's (CHECK-4).  The first violation found is on a shortest trace,
since the levels are explored in order; it is reported as the session that shows it
(CHECK-5)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import attrs

from numaspec.conformance.checking.bounds import Bounds, initial_nodes, pod_alphabet
from numaspec.conformance.checking.symmetry import Key, canonical_key, kind_of, plain_key
from numaspec.conformance.properties.affinity import affinity_violation
from numaspec.conformance.properties.node_machine import (
    allocatable_violation,
    spanning_reservations,
)
from numaspec.conformance.properties.node_sessions import SessionChecks, check_answers
from numaspec.protocols.node_protocol import NodeSession

__all__ = ["Counterexample", "Fold", "NodeExplorer", "NodeRun", "Report", "explore"]

STATE = {"op": "state"}


@attrs.frozen
class Counterexample:
    """CHECK-5: a shortest session that breaks an invariant (or, against another
    implementation, where its answers leave the reference's)."""

    steps: tuple[dict[str, Any], ...]
    answers: tuple[Any, ...]
    message: str

    def lines(self) -> str:
        """The session as JSON lines, for ``numaspec node``."""
        return "\n".join(json.dumps(step, separators=(",", ":")) for step in self.steps)


@attrs.define
class Report:
    """CHECK-6: what was explored and what was found."""

    bounds: Bounds
    initial_nodes: int = 0
    transitions: int = 0
    distinct: int = 0
    depth: int = 0
    #: initial nodes whose reachable states were all found before the depth bound (the last
    #: level added no new state)
    closed: int = 0
    refused_nodes: int = 0
    #: initial nodes outside what the implementation declares or claims (PROTO-7), not run;
    #: and the first reason
    unclaimed_nodes: int = 0
    unclaimed_reason: str = ""
    exhausted: bool = False
    seconds: float = 0.0
    counterexample: Counterexample | None = None
    #: CHECK-6: the distinct states (canonical forms, CHECK-11) first reached at each depth,
    #: from 0 (the initial states); they sum to ``distinct``
    by_depth: list[int] = attrs.Factory(list)

    def count_depths(self, firsts: list[int]) -> None:
        """Add a node's new states per depth (``firsts[d]``: first reached at depth d)."""
        for depth, count in enumerate(firsts):
            if depth == len(self.by_depth):
                self.by_depth.append(0)
            self.by_depth[depth] += count

    def as_json(self) -> dict[str, Any]:
        found = self.counterexample
        return {"bounds": attrs.asdict(self.bounds), "initial_nodes": self.initial_nodes,
                "nodes_kubelet_refuses": self.refused_nodes,
                "nodes_not_claimed": self.unclaimed_nodes,
                "not_claimed_reason": self.unclaimed_reason or None,
                "transitions": self.transitions,
                "distinct_states": self.distinct, "depth": self.depth,
                "distinct_states_by_depth": list(self.by_depth),
                "closed_nodes": self.closed, "exhausted": self.exhausted,
                "seconds": round(self.seconds, 3),
                "counterexample": None if found is None else {
                    "message": found.message, "steps": list(found.steps),
                    "answers": list(found.answers)}}


Move = tuple[dict[str, Any], ...]


class Runner(Protocol):
    """How paths are run: ``start`` a node (its handle, and the answers to ``create`` and
    ``state``), ``extend`` a path by one move (the child's handle, and the answers to the
    whole path).  A runner in process may also offer ``session_of(handle)``, the node session
    itself, so that INV-10 is checked too."""

    def start(self, create: dict[str, Any]) -> tuple[Any, list[Any]]: ...

    def extend(self, parent: Any, answers: list[Any], move: Move
               ) -> tuple[Any, list[Any]]: ...


@attrs.frozen
class _Path:
    """Where the reference stands after a path: its session, and the index of the path's
    first step that reserved memory across NUMA nodes on a release before 1.32
    (F-MEM-OVERLAP), if any."""

    session: NodeSession
    overlap: int | None = None


class ReferenceRunner:
    """The reference in process, continuing from a copy of the parent state instead of
    replaying the trace (the same answers, in a fraction of the time): the copy is the
    node's own (``NodeSession.fork``), of its mutable state alone, and the few pods of the
    alphabet are decoded once.  ``affinity``: the sessions are ``affinity`` sessions
    (AWIRE-1).  In process, its node is at hand, so the explorer also checks INV-10
    (CHECK-3); and what the checks need of the reference's own answers to a path
    (F-MEM-OVERLAP's first step) is kept along the path (``reference``) rather than found by
    replaying it."""

    def __init__(self, *, affinity: bool = False) -> None:
        self._affinity = affinity
        self._pods: dict[str, Any] = {}

    def _new(self) -> NodeSession:
        session = NodeSession(affinity=self._affinity)
        session.pod_memo = self._pods
        return session

    def session_of(self, handle: Any) -> NodeSession:
        """The node session a handle stands for (INV-10 reads its node)."""
        assert isinstance(handle, _Path)
        return handle.session

    def answers(self, steps: list[dict[str, Any]]) -> list[Any]:
        session = self._new()
        return [session.answer(json.dumps(step)) for step in steps]

    def start(self, create: dict[str, Any]) -> tuple[Any, list[Any]]:
        session = self._new()
        return _Path(session), [session.answer(json.dumps(create)),
                                session.answer(json.dumps(STATE))]

    def extend(self, parent: Any, answers: list[Any], move: Move
               ) -> tuple[Any, list[Any]]:
        assert isinstance(parent, _Path)
        session = parent.session.fork()
        said = list(answers)
        overlap = parent.overlap
        node = session.node
        watch = overlap is None and node is not None and node.version.minor < 32
        for step in move:
            if watch:
                # as check_answers' replay of the path finds it (node_sessions)
                with spanning_reservations() as spans:
                    said.append(session.answer(json.dumps(step)))
                if spans:
                    overlap, watch = len(said) - 1, False
            else:
                said.append(session.answer(json.dumps(step)))
        said.append(session.answer(json.dumps(STATE)))
        return _Path(session, overlap), said

    def reference(self, handle: Any, steps: list[dict[str, Any]], answers: list[Any]
                  ) -> tuple[list[Any], int, dict[int, Any], int]:
        """CHECK-3: what ``check_answers`` would find by replaying the path on the reference,
        as far as it reads it without a comparison: the first step of F-MEM-OVERLAP (the
        answers are the reference's own, so nothing else differs)."""
        assert isinstance(handle, _Path)
        return (answers, len(steps), {},
                len(steps) if handle.overlap is None else handle.overlap)


class SessionReplayRunner:
    """Any node session in process (a deliberately wrong one, say), each path replayed on a
    fresh session rather than copied: a copy would not carry methods patched on its node.
    Its node is at hand, so the explorer also checks INV-10."""

    def __init__(self, new: Callable[[], NodeSession]) -> None:
        self._new = new

    def answers(self, steps: list[dict[str, Any]]) -> tuple[NodeSession, list[Any]]:
        session = self._new()
        return session, [session.answer(json.dumps(step)) for step in steps]

    def start(self, create: dict[str, Any]) -> tuple[Any, list[Any]]:
        steps = [create, STATE]
        session, answers = self.answers(steps)
        return (steps, session), answers

    def extend(self, parent: Any, answers: list[Any],  # noqa: ARG002 - replayed whole
               move: Move) -> tuple[Any, list[Any]]:
        steps = [*parent[0], *move, STATE]
        session, replayed = self.answers(steps)
        return (steps, session), replayed

    def session_of(self, handle: Any) -> NodeSession:
        session = handle[1]
        assert isinstance(session, NodeSession)
        return session


class ReplayRunner:
    """Any implementation: each trace is sent whole, as one session (a ``node`` case)."""

    def __init__(self, run: Callable[[list[dict[str, Any]]], list[Any]]) -> None:
        self.answers = run

    def start(self, create: dict[str, Any]) -> tuple[Any, list[Any]]:
        steps = [create, STATE]
        return steps, self.answers(steps)

    def extend(self, parent: Any, answers: list[Any],  # noqa: ARG002 - see below
               move: Move) -> tuple[Any, list[Any]]:
        """Every answer of the new run, not the parent's ``answers``: an implementation that
        is not deterministic (Go map order, F-DEV-CHOICE) may answer the common prefix
        otherwise than the parent's run did, and a trace never mixes two runs."""
        steps = [*parent, *move, STATE]
        return steps, self.answers(steps)


#: A uid no pod of the alphabet has: removing it is an error that must change nothing.
GHOST = "ghost"


def _moves(alphabet: list[tuple[str, dict[str, Any]]], live: frozenset[str], bounds: Bounds
           ) -> Iterator[Move]:
    """CHECK-2: admit each kind's lowest absent instance (instances of a kind are the same
    pod under another uid), remove each pod on the node, remove a pod that is not there (an
    error, ADMIT-10); with ``hints``, ask each kind's hints.  CHECK-7: on affinity nodes the
    scheduler checks each pod just before it is admitted."""
    offered: set[str] = set()
    for uid, pod in alphabet:
        kind = kind_of(uid)
        if uid in live or kind in offered:
            continue
        offered.add(kind)
        admit = {"op": "admit", "pod": pod}
        yield ({"op": "schedule", "pod": pod}, admit) if bounds.affinity else (admit,)
        if bounds.hints:
            yield ({"op": "hints", "pod": pod},)
    for uid in sorted(live):
        yield ({"op": "remove", "uid": uid},)
    yield ({"op": "remove", "uid": GHOST},)


def _check(bounds: Bounds, steps: list[dict[str, Any]], answers: list[Any], compare: bool,
           reference: Any = None) -> str | None:
    """CHECK-3, CHECK-4, CHECK-7: what is wrong with a path's answers, or None.
    ``reference``: the runner's own account of the reference's answers (``check_answers``)."""
    found = check_answers(steps, answers, compare=compare, op=bounds.op, reference=reference)
    if found is None and bounds.affinity:
        found = affinity_violation(steps, answers)
    return found


def _live_after(live: frozenset[str], step: dict[str, Any], answer: Any) -> frozenset[str]:
    if step["op"] == "admit" and isinstance(answer, dict) and isinstance(
            answer.get("decision"), dict) and answer["decision"].get("admitted"):
        return live | {step["pod"]["uid"]}
    if step["op"] == "remove" and answer == {"ok": True}:
        return live - {step["uid"]}
    return live


@attrs.define
class NodeRun:
    """CHECK-2, CHECK-5: what exploring one initial node found, enough to fold it into the
    report as the one-process run would at any depth limit up to the one it was explored to:
    the exploration to a smaller limit is a prefix of it, level by level."""

    #: "unclaimed" (not run, ``reason``), "refused" (kubelet would not start), "broken" (its
    #: initial state breaks a check: ``counterexample``), "run"
    kind: str
    reason: str = ""
    #: after each level run to its end: the steps run and the distinct states found from
    #: this node (its initial state counted), level 0 being the initial state alone
    levels: list[tuple[int, int]] = attrs.Factory(lambda: [(0, 1)])
    #: the last level in ``levels`` added no state: every reachable state was found
    emptied: bool = False
    #: the first violation: its depth, the steps run and the distinct states found then
    violation: tuple[int, int, int] | None = None
    counterexample: Counterexample | None = None
    #: with a cap on the states: the steps run and the depth at each new state found
    marks: list[tuple[int, int]] = attrs.Factory(list)


def _firsts(levels: list[tuple[int, int]], total: int) -> list[int]:
    """CHECK-6: how many of a node's first ``total`` states (its initial state first) were
    first reached at each depth, from its levels (each the distinct states found by its end);
    states past the last level lie on the level after it."""
    firsts: list[int] = []
    counted = 0
    for _, found in levels:
        if counted >= total:
            break
        firsts.append(min(found, total) - counted)
        counted += firsts[-1]
    if counted < total:
        firsts.append(total - counted)
    return firsts


class Fold:
    """CHECK-5, CHECK-6: the report of the initial nodes' runs taken in the nodes' order,
    as the one-process run makes it: once a violation is found, the later nodes count only
    to one step less (:meth:`bounds` says how far each next node need be run); at
    ``max_states`` distinct states the run stops."""

    def __init__(self, bounds: Bounds, max_states: int | None) -> None:
        self.report = Report(bounds)
        self.limit = bounds.depth
        self.max_states = max_states
        self.stopped = False
        self.cut = False

    def bounds(self) -> tuple[int, int | None]:
        """How deep the next node need be run, and after how many new states (besides its
        initial state) it may stop."""
        if self.max_states is None:
            return self.limit, None
        return self.limit, max(1, self.max_states - self.report.distinct - 1)

    def add(self, run: NodeRun) -> bool:
        """Count the next node's run; True when the run of the nodes stops here."""
        report = self.report
        report.initial_nodes += 1
        if run.kind == "unclaimed":
            report.unclaimed_nodes += 1
            report.unclaimed_reason = report.unclaimed_reason or run.reason
            return False
        if run.kind == "refused":
            report.refused_nodes += 1  # kubelet would not start: nothing to explore
            return False
        if run.kind == "broken":
            report.counterexample = run.counterexample
            self.stopped = True  # nothing is shorter than no step at all
            return True
        limit = self.limit
        _, children = self.bounds()
        report.distinct += 1
        if self.max_states is not None and report.distinct >= self.max_states:
            # the node's initial state is the last the cap lets in
            report.count_depths([1])
            self.stopped = self.cut = True
            return True
        cut: tuple[int, int] | None = None
        if children is not None and children <= len(run.marks):
            cut = run.marks[children - 1]
            if cut[1] > limit:
                cut = None
        violation = run.violation
        if violation is not None and violation[0] <= limit and (
                cut is None or violation[1] < cut[0]):
            depth, steps, distinct = violation
            report.transitions += steps
            report.distinct += distinct - 1
            report.count_depths(_firsts(run.levels, distinct))
            report.depth = max(report.depth, depth)
            report.counterexample = run.counterexample
            self.limit = depth - 1
            return False
        if cut is not None:
            assert children is not None
            report.transitions += cut[0]
            report.distinct += children
            report.count_depths(_firsts(run.levels, children + 1))
            report.depth = max(report.depth, cut[1])
            self.stopped = self.cut = True
            return True
        emptied = len(run.levels) - 1 if run.emptied else None
        depth = limit if emptied is None or emptied > limit else emptied
        steps, distinct = run.levels[depth]
        report.transitions += steps
        report.distinct += distinct - 1
        report.count_depths(_firsts(run.levels[:depth + 1], distinct))
        report.depth = max(report.depth, depth)
        if emptied is not None:
            report.closed += 1
        return False

    def finish(self, started: float) -> Report:
        report = self.report
        report.exhausted = (not self.cut and report.counterexample is None
                            and report.unclaimed_nodes < report.initial_nodes)
        report.seconds = time.monotonic() - started
        return report


class NodeExplorer:
    """CHECK-1..CHECK-4, CHECK-7: one initial node explored breadth-first (CHECK-5: so its
    first violation is on one of its shortest paths)."""

    def __init__(self, bounds: Bounds, runner: Runner, *, compare: bool = False,
                 unclaimed: Callable[[dict[str, Any]], str | None] | None = None,
                 key: Callable[[Any, frozenset[str]], Key] | None = None,
                 visit: Callable[[int, Any, frozenset[str]], None] | None = None) -> None:
        self.bounds = bounds
        #: CHECK-2, CHECK-11: what makes two states one: the instances of a kind renamed
        #: (the default), or not (``Bounds.symmetry`` off)
        self.key = key or (canonical_key if bounds.symmetry else plain_key)
        #: called with the depth, the ``state`` answer and the pods of each distinct state
        #: when first reached
        self.visit = visit
        self.runner = runner
        self.compare = compare
        self.unclaimed = unclaimed
        self.alphabet = pod_alphabet(bounds)
        self.bodies = dict(self.alphabet)
        self.in_process = getattr(runner, "session_of", None)
        # what the checks need of the reference's answers, when the runner is the reference
        self.reference = None if compare else getattr(runner, "reference", None)

    def _check(self, handle: Any, steps: list[dict[str, Any]], answers: list[Any]
               ) -> str | None:
        reference = None if self.reference is None else self.reference(handle, steps, answers)
        return _check(self.bounds, steps, answers, self.compare, reference)

    def _overlap(self, checks: SessionChecks, handle: Any, steps: list[dict[str, Any]],
                 answers: list[Any]) -> int | None:
        """F-MEM-OVERLAP's first step, as ``check_answers`` passes it on (before 1.32)."""
        if checks.minor >= 32 or self.reference is None:
            return None
        return int(self.reference(handle, steps, answers)[3])

    def _continue(self, checks: SessionChecks, handle: Any, steps: list[dict[str, Any]],
                  answers: list[Any]) -> str | None:
        """CHECK-3: ``_check`` on a path whose parent passed it, its checks continued from
        the parent's (the same verdict: ``check_answers`` without a comparison checks the
        session step by step, with what the reference's replay would add)."""
        try:
            checks.advance(steps, answers, self._overlap(checks, handle, steps, answers))
            checks.end(steps, answers)
        except AssertionError as exc:
            return str(exc)
        if self.bounds.affinity:
            return affinity_violation(steps, answers)
        return None

    def run(self, create: dict[str, Any], limit: int, children: int | None = None) -> NodeRun:
        """The node ``create`` explored to ``limit`` steps; with ``children``, stopped at that
        many new states (the report's cap, ``max_states``, ``Fold.bounds``)."""
        reason = self.unclaimed(create) if self.unclaimed is not None else None
        if reason is not None:
            return NodeRun("unclaimed", reason)
        runner, bounds = self.runner, self.bounds
        handle, (created, state) = runner.start(create)
        if "ok" not in created:
            return NodeRun("refused")
        trace: list[dict[str, Any]] = [create, STATE]
        answers: list[Any] = [created, state]
        found = self._check(handle, trace, answers)
        if found is not None:
            return NodeRun("broken", counterexample=Counterexample(tuple(trace),
                                                                   tuple(answers), found))
        run = NodeRun("run")
        # CHECK-3: along the reference's own paths the checks go on from where the parent's
        # left off: its answers to the parent path are the parent's
        checks = None
        if self.reference is not None:
            checks = SessionChecks(trace, answers)
            checks.advance(trace, answers, self._overlap(checks, handle, trace, answers))
        seen = {self.key(state, frozenset())}
        if self.visit is not None:
            self.visit(0, state, frozenset())
        # CHECK-3: INV-10 depends on the machine, the configuration and the pods on the node
        # alone, so once per set of pods of this node
        allocatable: dict[frozenset[str], str | None] = {}
        memo: dict[Any, Any] = {}
        level = [(handle, frozenset[str](), trace, answers, checks)]
        depth = steps_run = 0
        distinct = 1
        while level and depth < limit:
            depth += 1
            following = []
            for parent, live, steps, said, checked in level:
                for move in _moves(self.alphabet, live, bounds):
                    child, child_answers = runner.extend(parent, said, move)
                    answer, state = child_answers[-2:]
                    steps_run += 1
                    child_steps = [*steps, *move, STATE]
                    if checked is None:
                        child_checks = None
                        found = self._check(child, child_steps, child_answers)
                    else:
                        child_checks = checked.copy()
                        found = self._continue(child_checks, child, child_steps,
                                               child_answers)
                    after = _live_after(live, move[-1], answer)
                    key = self.key(state, after)
                    new = key not in seen
                    if found is None and new and self.in_process is not None:
                        # CHECK-3: INV-10 in every distinct state, when a shortest path first
                        # reaches it
                        if after not in allocatable:
                            allocatable[after] = allocatable_violation(
                                self.in_process(child),
                                {uid: self.bodies[uid] for uid in after}, memo)
                        found = allocatable[after]
                    if found is not None:
                        run.violation = (depth, steps_run, distinct)
                        run.counterexample = Counterexample(
                            tuple(child_steps), tuple(child_answers), found)
                        return run
                    if not new:
                        continue
                    seen.add(key)
                    if self.visit is not None:
                        self.visit(depth, state, after)
                    distinct += 1
                    following.append((child, after, child_steps, child_answers,
                                      child_checks))
                    if children is not None:
                        run.marks.append((steps_run, depth))
                        if distinct - 1 >= children:
                            return run
            level = following
            run.levels.append((steps_run, distinct))
            run.emptied = not level
        return run


def explore(bounds: Bounds, runner: Runner, *, compare: bool = False,
            max_states: int | None = None,
            unclaimed: Callable[[dict[str, Any]], str | None] | None = None,
            progress: Callable[[int, int, Report], None] | None = None) -> Report:
    """CHECK-1..CHECK-6 over every initial node of ``bounds``.  ``compare``: also compare
    every answer with the reference's (CHECK-4); ``unclaimed``: why a ``create`` request lies
    outside what the implementation declares or claims (such nodes are counted, not run).

    CHECK-5: each initial node is explored breadth-first, so its first violation is on one of
    its shortest paths; once one is found, the remaining initial nodes are explored only to
    one step less, so the violation reported is a shortest one over all of them."""
    started = time.monotonic()
    explorer = NodeExplorer(bounds, runner, compare=compare, unclaimed=unclaimed)
    fold = Fold(bounds, max_states)
    nodes = list(initial_nodes(bounds))
    for number, create in enumerate(nodes, 1):
        run = explorer.run(create, *fold.bounds())
        stop = fold.add(run)
        if progress is not None and run.kind == "run":
            progress(number, len(nodes), fold.report)
        if stop:
            break
    return fold.finish(started)
