"""Exhaustive bounded exploration of the node, breadth-first (spec/checking.md, CHECK-1..6).

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

import copy
import functools
import json
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import attrs

from numaspec.conformance.checking.bounds import Bounds, initial_nodes, pod_alphabet
from numaspec.conformance.properties.affinity import affinity_violation
from numaspec.conformance.properties.node_machine import allocatable_violation
from numaspec.conformance.properties.node_sessions import check_answers
from numaspec.protocols.node_protocol import NodeSession

__all__ = ["Counterexample", "Report", "explore"]

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

    def as_json(self) -> dict[str, Any]:
        found = self.counterexample
        return {"bounds": attrs.asdict(self.bounds), "initial_nodes": self.initial_nodes,
                "nodes_kubelet_refuses": self.refused_nodes,
                "nodes_not_claimed": self.unclaimed_nodes,
                "not_claimed_reason": self.unclaimed_reason or None,
                "transitions": self.transitions,
                "distinct_states": self.distinct, "depth": self.depth,
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


class ReferenceRunner:
    """The reference in process, continuing from a copy of the parent state instead of
    replaying the trace (the same answers, in a fraction of the time).  ``affinity``: the
    sessions are ``affinity`` sessions (AWIRE-1).  In process, its node is at hand, so the
    explorer also checks INV-10 (CHECK-3)."""

    def __init__(self, *, affinity: bool = False) -> None:
        self._new = functools.partial(NodeSession, affinity=affinity)

    def session_of(self, handle: Any) -> NodeSession:
        """The node session a handle stands for (INV-10 reads its node)."""
        assert isinstance(handle, NodeSession)
        return handle

    def answers(self, steps: list[dict[str, Any]]) -> list[Any]:
        session = self._new()
        return [session.answer(json.dumps(step)) for step in steps]

    def start(self, create: dict[str, Any]) -> tuple[Any, list[Any]]:
        session = self._new()
        return session, [session.answer(json.dumps(create)), session.answer(json.dumps(STATE))]

    def extend(self, parent: Any, answers: list[Any], move: Move
               ) -> tuple[Any, list[Any]]:
        session = copy.deepcopy(parent)
        return session, [*answers, *(session.answer(json.dumps(step)) for step in move),
                         session.answer(json.dumps(STATE))]


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


def _key(answer: Any, live: frozenset[str]) -> tuple[str, frozenset[str]]:
    """CHECK-2: a state: the ``state`` answer's content, and the pods on the node."""
    state = answer.get("state") if isinstance(answer, dict) else answer
    return json.dumps(state, sort_keys=True, separators=(",", ":")), live


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
        kind = uid.rsplit("-", 1)[0]
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


def _check(bounds: Bounds, steps: list[dict[str, Any]], answers: list[Any], compare: bool
           ) -> str | None:
    """CHECK-3, CHECK-4, CHECK-7: what is wrong with a path's answers, or None."""
    found = check_answers(steps, answers, compare=compare, op=bounds.op)
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
    report = Report(bounds)
    started = time.monotonic()
    alphabet = pod_alphabet(bounds)
    bodies = dict(alphabet)
    in_process = getattr(runner, "session_of", None)
    nodes = list(initial_nodes(bounds))
    limit = bounds.depth
    cut = False
    for number, create in enumerate(nodes, 1):
        report.initial_nodes += 1
        reason = unclaimed(create) if unclaimed is not None else None
        if reason is not None:
            report.unclaimed_nodes += 1
            report.unclaimed_reason = report.unclaimed_reason or reason
            continue
        handle, (created, state) = runner.start(create)
        if "ok" not in created:
            report.refused_nodes += 1  # kubelet would not start: nothing to explore
            continue
        trace: list[dict[str, Any]] = [create, STATE]
        answers: list[Any] = [created, state]
        found = _check(bounds, trace, answers, compare)
        if found is not None:
            report.counterexample = Counterexample(tuple(trace), tuple(answers), found)
            break  # nothing is shorter than no step at all
        seen = {_key(state, frozenset())}
        report.distinct += 1
        level = [(handle, frozenset[str](), trace, answers)]
        depth = 0
        violated = False
        while level and depth < limit and not violated:
            depth += 1
            following = []
            for parent, live, steps, said in level:
                for move in _moves(alphabet, live, bounds):
                    child, child_answers = runner.extend(parent, said, move)
                    answer, state = child_answers[-2:]
                    report.transitions += 1
                    child_steps = [*steps, *move, STATE]
                    found = _check(bounds, child_steps, child_answers, compare)
                    after = _live_after(live, move[-1], answer)
                    key = _key(state, after)
                    new = key not in seen
                    if found is None and new and in_process is not None:
                        # CHECK-3: INV-10 depends on the pods and the node alone: checked once
                        # per distinct state, when a shortest path first reaches it
                        found = allocatable_violation(in_process(child),
                                                      {uid: bodies[uid] for uid in after})
                    if found is not None:
                        report.counterexample = Counterexample(
                            tuple(child_steps), tuple(child_answers), found)
                        limit = depth - 1
                        violated = True
                        break
                    if not new:
                        continue
                    seen.add(key)
                    report.distinct += 1
                    following.append((child, after, child_steps, child_answers))
                    if max_states is not None and report.distinct >= max_states:
                        cut = True
                        break
                if cut or violated:
                    break
            if cut:
                break
            level = following
        report.depth = max(report.depth, depth)
        if not cut and not violated and not level:
            report.closed += 1
        if progress is not None:
            progress(number, len(nodes), report)
        if cut or (violated and limit < 0):
            break
    report.exhausted = (not cut and report.counterexample is None
                        and report.unclaimed_nodes < report.initial_nodes)
    report.seconds = time.monotonic() - started
    return report
