"""Node sessions through the adapter protocol (spec chapter ``admission.md``: INV-1..INV-9,
ADMIT-10; NWIRE-1..NWIRE-4).

The in-process state machine (``node_machine``) drives a node one request at a time; an
implementation behind the adapter protocol answers whole sessions instead (a ``node`` or
``hints`` case is ``{"steps": [...]}`` on a fresh node, PROTO-3).  So each example here is one
session, drawn whole inside what the implementation claims (PROTO-7): a node, then admits,
removes, steps every node refuses, and finally the removal of every pod, with a ``state`` step
after each.  The session goes over the protocol as one case; the implementation's own answers
are checked against INV-1..INV-9 and ADMIT-10 step by step, and each answer is compared with
the reference's (RUN-12's device equivalence included).  Hypothesis shrinks a failing session
to a minimal one, which ``numaspec replay`` re-runs from the report and ``numaspec node``
reads as JSON lines.

Where kubelet names one of several failing resources in Go map order (ADMIT-8: two
hugepage or extended resources the pod does not fit), any of them agrees.  Where kubelet
itself is not deterministic beyond that, the comparison stops and the invariants go on:
from the first step after which the reference's memory groups are irregular on a release
before 1.32, or after a step that reserved memory across NUMA nodes there, even for a pod
then refused (spec/conformance/findings.md, F-MEM-OVERLAP), and from the first admission where
a Go map order picks the NUMA nodes of a container's devices (F-DEV-CHOICE).
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, Protocol

from hypothesis import example, given, note
from hypothesis import strategies as st

from numaspec.conformance.cases.vectors import stored_case
from numaspec.conformance.implementations.claims import NodeClaims, claims_of
from numaspec.conformance.properties.node_machine import (
    StateChecks,
    bad_steps,
    deferred_resize_change,
    irregular_memory_groups,
    rejected_step_change,
    restored,
    spanning_reservations,
    without_memory,
)
from numaspec.conformance.properties.node_strategies import (
    misconfigured_requests,
    node_requests,
    pods,
    resize_steps,
    startup_requests,
)
from numaspec.conformance.properties.registry import register

__all__ = ["NodeSessionImplementation", "SessionChecks", "check_answers", "fitted", "judge_session",
           "judge_startup", "node_sessions", "resize_sessions", "session_versions"]

#: The releases a session is drawn at when the implementation declares them.
_PREFERRED = ("1.30", "1.33", "1.37")


class NodeSessionImplementation(Protocol):
    name: str
    node_kubelet_versions: tuple[str, ...]

    def node_session(self, case: Any) -> Any: ...

    def hints_session(self, case: Any) -> Any: ...


def session_versions(impl: object) -> tuple[str, ...]:
    """The node releases a session may name: every one of the node model's (NODE-0) the
    implementation declares, 1.30, 1.33 and 1.37 first (:func:`node_requests` draws the first
    ones more often); 1.30, 1.33 and 1.37 when it declares none.  Every release, not three: the
    options' and gates' maturity steps (CPU-14, OPT-2, NODE-10) fall between them (issue 33)."""
    from numaspec.node.nodeconfig import NODE_VERSIONS

    declared = sorted({v for v in getattr(impl, "node_kubelet_versions", ())
                       if isinstance(v, str) and v[:2] == "1." and v[2:].isdigit()
                       and int(v[2:]) in NODE_VERSIONS}, key=lambda v: int(v[2:]))
    if not declared:
        return _PREFERRED
    return (*[v for v in _PREFERRED if v in declared],
            *[v for v in declared if v not in _PREFERRED])


@st.composite
def node_sessions(draw: st.DrawFn, claims: NodeClaims | None = None,
                  versions: tuple[str, ...] = _PREFERRED, hints: bool = False
                  ) -> list[dict[str, Any]]:
    """create, state, then 1-8 of (admit | remove | a refused step), each followed by a state
    step, then the removal of every pod and a last state (INV-9).  ``hints``: each admission is
    preceded by the pod's hints (NWIRE-4), pod-wide or for one of its containers."""
    create = draw(node_requests(versions, claims=claims))
    steps: list[dict[str, Any]] = [create, {"op": "state"}]
    devices = sorted(create["node"]["machine"].get("devices", {}))
    tried: list[str] = []
    for index in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["admit", "admit", "admit", "remove", "bad"]))
        if kind == "remove" and tried:
            steps.append({"op": "remove", "uid": draw(st.sampled_from(tried))})
        elif kind == "bad":
            # Never a tried pod again: whether it is live is the implementation's answer, and
            # re-admitting a refused pod's UID is a case kubelet never meets (findings.md 19).
            steps.append(draw(bad_steps({}, index)))
        else:
            pod = draw(pods(f"pod{index}", devices, machine=create["node"]["machine"]))
            if hints:
                names = [c["name"] for c in (*pod.get("initContainers", []), *pod["containers"])]
                which = draw(st.sampled_from([None, *names]))
                steps.append({"op": "hints", "pod": pod,
                              **({"container": which} if which is not None else {})})
            steps.append({"op": "admit", "pod": pod})
            tried.append(pod["uid"])
        steps.append({"op": "state"})
    steps += [{"op": "remove", "uid": uid} for uid in tried]
    steps.append({"op": "state"})
    return steps



@st.composite
def resize_sessions(draw: st.DrawFn, claims: NodeClaims | None = None,
                    versions: tuple[str, ...] = ("1.34", "1.37")) -> list[dict[str, Any]]:
    """create, state, 1-3 admissions, then 1-5 of (resize | admit | remove), each followed by
    a state step, a last admission (whose resource fit counts what the resizes left), the
    removal of every pod and a last state.  A resize names a pod the reference admitted (it
    is followed while the session is drawn), now and then one it refused or removed (an
    unknown pod, NWIRE-6)."""
    from numaspec.errors import NumaspecError
    from numaspec.protocols.node_protocol import NodeSession

    create = draw(node_requests(versions, claims=claims))
    steps: list[dict[str, Any]] = [create, {"op": "state"}]
    devices = sorted(create["node"]["machine"].get("devices", {}))
    tried: list[dict[str, Any]] = []
    live: dict[str, dict[str, Any]] = {}
    follower = NodeSession()

    def send(step: dict[str, Any]) -> Any:
        steps.extend([step, {"op": "state"}])
        try:
            return follower.handle(step)
        except NumaspecError:
            return None

    def admit(index: int) -> None:
        pod = draw(pods(f"pod{index}", devices if draw(st.booleans()) else [],
                        small=draw(st.integers(0, 3)) > 0, machine=create["node"]["machine"]))
        tried.append(pod)
        answer = send({"op": "admit", "pod": pod})
        if isinstance(answer, dict) and answer.get("decision", {}).get("admitted"):
            live[pod["uid"]] = pod

    # A node that does not start answers every later step with an error, followed as such.
    with contextlib.suppress(NumaspecError):
        follower.handle(create)
    first = draw(st.integers(1, 3))
    for index in range(first):
        admit(index)
    for index in range(first, first + draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["resize", "resize", "resize", "admit", "remove"]))
        if kind == "admit":
            admit(index)
            continue
        mostly_live = bool(live) and draw(st.integers(0, 5)) > 0
        pod: dict[str, Any] = draw(st.sampled_from(list(live.values()) if mostly_live
                                                   else tried))
        if kind == "remove":
            send({"op": "remove", "uid": pod["uid"]})
            live.pop(pod["uid"], None)
        else:
            send(draw(resize_steps(pod)))
    admit(len(steps))
    steps += [{"op": "remove", "uid": pod["uid"]} for pod in tried]
    steps.append({"op": "state"})
    return steps


#: (reason, message) pairs kubelet may give instead of the reference's, per step index.
Alternatives = dict[int, list[tuple[str, str]]]


def _fit_alternatives(session: Any, step: dict[str, Any]) -> list[tuple[str, str]]:
    """ADMIT-8: when an admission would fail the resource fit on a hugepage or extended
    resource first, kubelet names any of the failing ones (its Go map order)."""
    from numaspec.errors import NumaspecError
    from numaspec.node.fit import fit_rejections
    from numaspec.protocols.node_protocol import decode_pod

    node = session.node
    if node is None or step.get("op") != "admit":
        return []
    try:
        pod = decode_pod(step.get("pod"))
    except NumaspecError:
        return []
    found = fit_rejections(pod, node.pods.values(), node.allocatable)
    scalars = [(r.reason, r.message) for r in found
               if r.reason.removeprefix("OutOf") not in ("pods", "cpu", "memory")]
    return scalars if found and (found[0].reason, found[0].message) in scalars else []


def _reference_answers(steps: list[dict[str, Any]], affinity: bool = False
                       ) -> tuple[list[Any], int, Alternatives, int]:
    """The reference's answers; how many of the first steps kubelet answers
    deterministically (F-MEM-OVERLAP, F-DEV-CHOICE: the comparison stops after them); and the
    other rejections kubelet may give where its Go map order picks one (ADMIT-8); and the
    first step from which kubelet before 1.32 may leak or move memory (F-MEM-OVERLAP: ADMIT-10
    is not checked on memory from there on).  ``affinity``: an ``affinity`` session
    (AWIRE-1)."""
    from numaspec.errors import NumaspecError
    from numaspec.protocols.merge_protocol import encode_error
    from numaspec.protocols.node_protocol import NodeSession

    session = NodeSession(affinity=affinity)
    answers: list[Any] = []
    comparable = len(steps)
    alternatives: Alternatives = {}
    overlap = len(steps)
    for index, step in enumerate(steps):
        choices = _fit_alternatives(session, step)
        with spanning_reservations() as spans:
            try:
                answers.append(session.handle(step))
            except NumaspecError as exc:
                answers.append(encode_error(exc))
        decision = answers[-1].get("decision") if isinstance(answers[-1], dict) else None
        if len(choices) > 1 and isinstance(decision, dict) and \
                (decision.get("reason"), decision.get("message")) in choices:
            alternatives[index] = choices
        node = session.node
        if node is not None and node.version.minor < 32 and spans:
            overlap = min(overlap, index)
        if comparable < len(steps) or node is None:
            continue
        if node.devices.numa_choices:
            comparable = index  # F-DEV-CHOICE: this admission's devices are one of several
        elif node.version.minor < 32 and spans:
            # F-MEM-OVERLAP: a block across NUMA nodes, even one a refusal released at once:
            # kubelet before 1.32 releases (init containers' blocks too, MEM-10) in Go map
            # order from here on, this step's own answer included.
            comparable = index
        elif node.version.minor < 32 and irregular_memory_groups(
                {"memory": node.memory.state() if node.memory else None}) is not None:
            comparable = index + 1
    return answers, comparable, alternatives, overlap


def _as_expected(answers: list[Any], expected: list[Any], alternatives: Alternatives
                 ) -> list[Any]:
    """``answers`` with a rejection kubelet may give in the reference's place (ADMIT-8's map
    order) written as the reference's."""
    out = list(answers)
    for index, choices in alternatives.items():
        got = out[index].get("decision") if index < len(out) and isinstance(
            out[index], dict) else None
        if isinstance(got, dict) and (got.get("reason"), got.get("message")) in choices:
            want = expected[index]["decision"]
            out[index] = {"decision": {**got, "reason": want["reason"],
                                       "message": want["message"]}}
    return out


def _check_session(steps: list[dict[str, Any]], answers: list[Any],
                   overlap: int | None = None) -> None:
    """INV-1..INV-9 and ADMIT-10 on the implementation's own answers; from step ``overlap``
    on (F-MEM-OVERLAP), ADMIT-10 leaves the memory out."""
    checks = SessionChecks(steps, answers)
    checks.advance(steps, answers, overlap)
    checks.end(steps, answers)


class SessionChecks:
    """INV-1..INV-9 and ADMIT-10 on a session's answers, step by step (``_check_session``):
    what the checks carry from one step to the next, so that a session's continuation is
    checked from where its prefix left off (the model checker's paths, CHECK-3).  Each check
    raises ``AssertionError`` naming the step."""

    def __init__(self, steps: list[dict[str, Any]], answers: list[Any]) -> None:
        assert "ok" in answers[0], f"the node did not start: {json.dumps(answers[0])[:300]}"
        node = steps[0]["node"]
        self.checks = StateChecks(node)
        self.policy = node.get("config", {}).get("topologyManagerPolicy", "none")
        self.live: dict[str, dict[str, Any]] = {}
        self.initial = answers[1]
        self.last_state: Any = None
        self.refused: str | None = None  # the uid of a pod refused since the last state
        self.errored = False  # a step answered with an error since the last state
        self.changed = False  # a step that may change the node succeeded since the last state
        # RESIZE-6: re-admitted, refused pods
        self.deferred: list[tuple[str, frozenset[str]]] = []
        self.minor = _minor(steps)
        #: how many of the session's first steps are checked
        self.checked = 0

    def copy(self) -> SessionChecks:
        """The checks so far, to continue on another continuation of the same prefix."""
        twin = object.__new__(SessionChecks)
        twin.__dict__.update(self.__dict__)
        twin.live = dict(self.live)
        twin.deferred = list(self.deferred)
        return twin

    def advance(self, steps: list[dict[str, Any]], answers: list[Any],
                overlap: int | None = None) -> None:
        """Check the steps after the ones checked so far (``steps`` and ``answers`` begin
        with those)."""
        for index in range(self.checked, len(steps)):
            self._step(steps, index, answers[index], overlap)
        self.checked = len(steps)

    def _step(self, steps: list[dict[str, Any]], index: int, answer: Any,
              overlap: int | None) -> None:
        def fail(message: str) -> None:
            raise AssertionError(f"step {index + 1} ({steps[index]['op']}): {message}")

        step = steps[index]
        checks, live = self.checks, self.live
        op = step["op"]
        if op == "state":
            state = answer.get("state") if isinstance(answer, dict) else None
            if not isinstance(state, dict):
                fail(f"state answered {json.dumps(answer)[:200]}")
            assert isinstance(state, dict)
            if "pods" in state and sorted(state["pods"]) != sorted(live):
                fail(f"the node holds pods {state['pods']}, expected {sorted(live)}")
            checks.memory(state, fail)
            checks.cpus(state, live, fail)
            if "devices" in state:
                checks.devices_held(state, live, fail)
            if self.last_state is not None and not self.changed and (
                    self.refused is not None or self.errored or self.deferred):
                before, after = self.last_state, answer
                if overlap is not None and index >= overlap:
                    before, after = without_memory(before), without_memory(after)
                # RESIZE-6: only a Deferred resize that added init-container blocks may move
                # reserved bytes as a refused admission's release does.
                adjusted = deferred_resize_change(before, after, self.deferred) \
                    if self.deferred else before
                change = rejected_step_change(adjusted, after,
                                              refused_admission=self.refused is not None
                                              or adjusted is not before, uid=self.refused,
                                              uneven=checks.uneven)
                if change is not None:
                    fail(f"ADMIT-10: a refused step changed the node: {change}")
            self.last_state, self.refused, self.errored, self.changed = \
                answer, None, False, False
            self.deferred = []
            return
        if isinstance(answer, dict) and "error" in answer:
            self.errored = True
            return
        if op == "admit":
            decision = answer.get("decision") if isinstance(answer, dict) else None
            if not isinstance(decision, dict):
                fail(f"admit answered {json.dumps(answer)[:200]}, not a decision")
            assert isinstance(decision, dict)
            if decision.get("admitted"):
                self.changed = True
                live[step["pod"]["uid"]] = step["pod"]
                checks.decision(step["pod"], decision, self.policy, fail)
            else:
                if decision.get("containers"):
                    fail("ADMIT-6: a rejected pod lists containers")
                self.refused = step["pod"]["uid"]
        elif op == "remove" and answer == {"ok": True}:
            self.changed = True
            live.pop(step["uid"], None)
        elif op == "resize":
            resize = answer.get("resize") if isinstance(answer, dict) else None
            if not isinstance(resize, dict):
                fail(f"resize answered {json.dumps(answer)[:200]}, not a resize status")
            assert isinstance(resize, dict)
            if resize.get("status") == "InProgress":
                self.changed = True
            elif resize.get("status") == "Deferred" and 33 <= self.minor <= 36 \
                    and step["uid"] in live:
                # RESIZE-6 (finding 32): the second admission may give the pod's finished
                # init containers memory blocks again, and they stay though it is refused.
                pod = live[step["uid"]]
                self.deferred.append((step["uid"], frozenset(
                    str(c.get("name")) for c in pod.get("initContainers") or ()
                    if isinstance(c, dict))))
            else:
                self.errored = True  # RESIZE-7: Deferred, Infeasible or Unchanged change nothing

    def end(self, steps: list[dict[str, Any]], answers: list[Any]) -> None:
        """INV-9: at the end of the session (the steps checked so far), no pod left: the
        initial state again."""
        if not self.live and self.checks.groups_guaranteed() and not restored(
                self.initial, answers[-1], self.checks.uneven):
            index = len(steps) - 1
            raise AssertionError(f"step {index + 1} ({steps[index]['op']}): INV-9: the "
                                 "state after removing every pod is not the initial one")


def check_answers(steps: list[dict[str, Any]], answers: list[Any], *, compare: bool = True,
                  format_claimed: bool = True, op: str = "node",
                  reference: tuple[list[Any], int, Alternatives, int] | None = None
                  ) -> str | None:
    """What is wrong with an implementation's answers to a session, or None: with
    ``compare``, the first answers that differ from the reference's (as far as kubelet answers
    deterministically, ADMIT-8's alternatives accepted; error kinds only when the format is
    claimed, PROTO-7); then INV-1..INV-9's and ADMIT-10's checks on its own answers.  Shared
    by the session properties and the exhaustive checker (spec/conformance/checking.md, CHECK-3).
    ``reference``: the reference's answers to ``steps`` when already at hand."""
    from numaspec.conformance.cases.judges import compare as compare_answers

    minor = _minor(steps)
    if compare or minor < 32:
        expected, comparable, alternatives, overlap = reference or _reference_answers(
            steps, affinity=op == "affinity")
    if compare:
        seen = _as_expected(answers, expected, alternatives)
        want = expected
        if not format_claimed:
            # PROTO-7: an error's kind is numaspec's line format (NWIRE-3); a peer is judged
            # on refusing the step, and on the step changing nothing (ADMIT-10).
            def plain(items: list[Any]) -> list[Any]:
                return [{"error": {"kind": "refused"}} if isinstance(a, dict) and "error" in a
                        else a for a in items]
            want, seen = plain(want), plain(seen)
        differences = compare_answers(op, {"steps": steps[:comparable]},
                                      {"answers": want[:comparable]},
                                      {"answers": seen[:comparable]})
        if differences:
            return "; ".join(differences)
    try:
        _check_session(steps, answers, overlap if minor < 32 else None)
    except AssertionError as exc:
        return str(exc)
    return None


def _minor(steps: list[dict[str, Any]]) -> int:
    node = steps[0].get("node") if steps and isinstance(steps[0], dict) else None
    version = str(node.get("kubeletVersion", "")) if isinstance(node, dict) else ""
    try:
        return int(version.lstrip("v").split(".")[1])
    except (IndexError, ValueError):
        return 0


def judge_session(impl: Any, steps: list[dict[str, Any]], op: str) -> None:
    case = {"steps": steps}
    note(f"request: {json.dumps(case, separators=(',', ':'))}")
    note("numaspec node <<'EOF'\n" + "\n".join(json.dumps(s, separators=(",", ":"))
                                               for s in steps) + "\nEOF")
    result = impl.node_session(case) if op == "node" else impl.hints_session(case)
    assert isinstance(result, dict) and isinstance(result.get("answers"), list), (
        f"not a session result: {json.dumps(result)[:300]}")
    answers = result["answers"]
    assert len(answers) == len(steps), f"{len(answers)} answers to {len(steps)} steps"
    reference = _reference_answers(steps)
    if reference[1] < len(steps):
        note(f"compared with the reference up to step {reference[1]} (F-MEM-OVERLAP or "
             "F-DEV-CHOICE); invariants checked throughout")
    problem = check_answers(steps, answers, format_claimed=claims_of(impl).format, op=op,
                            reference=reference)
    assert problem is None, problem


@register("P-NODE-SESSION", rules=["INV-1", "INV-2", "INV-3", "INV-4", "INV-5", "INV-6",
                                   "INV-7", "INV-8", "INV-9", "ADMIT-1", "ADMIT-10",
                                   "NWIRE-1", "NWIRE-2"],
          level="equivalence", requires="node_session", since=29, op="node")
@given(data=st.data())
def node_sessions_hold(impl: NodeSessionImplementation, data: st.DataObject) -> None:
    """Random node sessions: every answer is the reference's, and the invariants hold on the
    implementation's own states."""
    claims = claims_of(impl).node
    steps = data.draw(node_sessions(claims, session_versions(impl)), label="session")
    judge_session(impl, steps, "node")


#: The counterexample P-NODE-RESIZE found against kubelet 1.34's probe and numaspec fixed
#: (finding 32), run first at every run: the vector of that name.
RESIZE_EXAMPLE = "resize-deferred-init-memory-blocks-1.34"

#: The counterexample P-NODE-STARTUP found against kubelet's probes and numaspec fixed
#: (finding 31), run first at every run: the vector of that name.
STARTUP_EXAMPLE = "node-eviction-threshold-zero"


def fitted(steps: list[dict[str, Any]], claims: NodeClaims) -> list[dict[str, Any]]:
    """A stored session's steps with the nodes' Topology Manager policy and scope moved inside
    the claims (PROTO-7): the stored counterexamples are about something else."""
    for step in steps:
        if step.get("op") != "create" or not isinstance(step.get("node"), dict):
            continue
        config = step["node"].setdefault("config", {})
        for field, claimed, default in (("topologyManagerPolicy", claims.policies, "none"),
                                        ("topologyManagerScope", claims.scopes, "container")):
            if claimed and config.get(field, default) not in claimed:
                config[field] = sorted(claimed)[0]
    return steps


@register("P-NODE-STARTUP", rules=["NODE-2", "NODE-3", "NODE-10", "OPT-1", "OPT-2", "CPU-14",
                                   "MEM-2"],
          level="equivalence", requires="node_session", since=29, op="node")
@given(data=st.data())
@example(data=None)  # STARTUP_EXAMPLE: finding 31's eviction threshold of zero
def node_startups_hold(impl: NodeSessionImplementation, data: st.DataObject | None) -> None:
    """Nodes whose options' feature gates are sometimes off, or whose Memory Manager's
    reservations are set wrong: the node starts, or refuses to start, as the reference does
    (the error's kind where the format is claimed, PROTO-7), at every declared release, where
    the options' maturity steps show (issue 33)."""
    claims = claims_of(impl).node
    if data is None:
        create = fitted(stored_case(STARTUP_EXAMPLE, session_versions(impl))["steps"][:1],
                         claims)[0]
    else:
        create = data.draw(st.one_of(
            startup_requests(session_versions(impl), claims),
            node_requests(session_versions(impl), claims=claims, refusals=True),
            misconfigured_requests(session_versions(impl), claims)), label="create")
    judge_startup(impl, create)


def judge_startup(impl: Any, create: dict[str, Any]) -> None:
    """A node created and its state asked: it starts, or refuses to start, as the reference
    does (the error's kind where the format is claimed, PROTO-7); started, every answer is
    the reference's and the invariants hold."""
    steps = [create, {"op": "state"}]
    note("numaspec node <<'EOF'\n" + "\n".join(json.dumps(s, separators=(",", ":"))
                                               for s in steps) + "\nEOF")
    result = impl.node_session({"steps": steps})
    assert isinstance(result, dict) and isinstance(result.get("answers"), list) and len(
        result["answers"]) == len(steps), f"not a session result: {json.dumps(result)[:300]}"
    reference = _reference_answers(steps)
    expected = reference[0]
    seen = result["answers"]
    started = [isinstance(a, dict) and "ok" in a for a in (expected[0], seen[0])]
    assert started[0] == started[1], (
        f"the reference {'starts' if started[0] else 'refuses'} the node "
        f"({json.dumps(expected[0])[:300]}); the implementation answers "
        f"{json.dumps(seen[0])[:300]}")
    if not started[0] and claims_of(impl).format:
        assert seen[0]["error"].get("kind") == expected[0]["error"]["kind"], (
            f"refused as {seen[0]['error'].get('kind')!r}, the reference as "
            f"{expected[0]['error']['kind']!r}: {json.dumps(expected[0])[:300]}")
    if started[0]:
        problem = check_answers(steps, seen, format_claimed=claims_of(impl).format,
                                op="node", reference=reference)
        assert problem is None, problem


@register("P-NODE-RESIZE", rules=["RESIZE-1", "RESIZE-4", "RESIZE-5", "RESIZE-6", "RESIZE-7",
                                  "NWIRE-6"],
          level="equivalence", requires="node_session", since=34, op="node")
@given(data=st.data())
@example(data=None)  # RESIZE_EXAMPLE: finding 32's init-container blocks of a Deferred resize
def node_resizes_hold(impl: NodeSessionImplementation, data: st.DataObject | None) -> None:
    """Random sessions that resize live pods in place (issue 33: the suite drew no resize):
    every answer is the reference's, and a resize that is not accepted changes nothing but
    what RESIZE-6 lets it (finding 32).  Drawn at the declared releases from 1.34 (1.33's
    resize is checked by vectors)."""
    claims = claims_of(impl).node
    versions = tuple(v for v in session_versions(impl) if int(v[2:]) >= 34) or ("1.34", "1.37")
    if data is None:
        steps = fitted(stored_case(RESIZE_EXAMPLE, versions)["steps"], claims)
        if claims.outside({"steps": steps}) is not None:
            return  # e.g. an implementation without the static Memory Manager
    else:
        steps = data.draw(resize_sessions(claims, versions), label="session")
    judge_session(impl, steps, "node")


@register("P-HINTS-SESSION", rules=["NWIRE-4", "INV-1", "INV-4", "ADMIT-10"],
          level="equivalence", requires="hints_session", since=29, op="hints")
@given(data=st.data())
def hints_sessions_hold(impl: NodeSessionImplementation, data: st.DataObject) -> None:
    """Random sessions that ask each pod's hints before admitting it: every answer is the
    reference's (hints compared without regard to order), and the invariants hold."""
    claims = claims_of(impl).node
    steps = data.draw(node_sessions(claims, session_versions(impl), hints=True),
                      label="session")
    judge_session(impl, steps, "hints")
