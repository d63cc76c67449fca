"""``numaspec conformance``: run the suite against an implementation and report (RUN-1..RUN-7).

The suite is every vector of ``spec/vectors`` (merge, hints and node cases, compared with
their expected answers) at every release it holds in that the implementation declares (RUN-10:
one instance per release, :func:`numaspec.conformance.cases.vectors.instances`) and, for
implementations of the merge, every Hypothesis property of
:mod:`numaspec.conformance.properties`.  The runner survives any implementation: each case
ends in one verdict (:mod:`numaspec.conformance.running.reports`), the run always finishes, and the
JSON Lines report is written as it goes, its footer last, even when the run is interrupted.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import json
import os
import re
import secrets
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import attrs

from numaspec.conformance.cases.blame import booked_rules, not_exercised
from numaspec.conformance.cases.divergences import Divergence, expecting, facts, known, matches
from numaspec.conformance.cases.expectations import FAILING, Manifest, load_manifest
from numaspec.conformance.cases.judges import JUDGES
from numaspec.conformance.implementations.connection import (
    DEFAULT_MAX_LINE,
    DEFAULT_START_TIMEOUT,
    DEFAULT_TIMEOUT,
    Answer,
    Connection,
    Implementation,
    InProcessConnection,
    MergeObjectAdapter,
    connect,
)
from numaspec.conformance.running.reports import (
    BAD_VERDICTS,
    Progress,
    ReportWriter,
    junit_xml,
    markdown_summary,
    terminal_summary,
)
from numaspec.errors import InvalidFieldError, NumaspecError
from numaspec.protocols.adapter_protocol import PROTOCOL_VERSION, REFERENCE_IMPL

__all__ = ["Case", "Outcome", "RunConfig", "for_implementation", "load_cases", "run_case",
           "run_conformance", "select"]

#: RUN-3: after this many cases in a row that cost a restart (a crash, a timeout, a broken
#: line or an out-of-order answer), the implementation is given up on and the rest of the
#: cases are ``not-run``.
GIVE_UP_AFTER = 5

#: RUN-3: how many cases must have run, none passing, to call the adapter probably broken.
_BROKEN_EVIDENCE = 3

#: Exit statuses (RUN-7).  5: nothing failed, but some case inside the implementation's
#: claims could not be judged (it skipped a request it claims, or no case could be drawn
#: inside the claims): a run that did not check everything it claims is never green.
EXIT_OK, EXIT_FAILED, EXIT_BROKEN, EXIT_USAGE, EXIT_UNCHECKED = 0, 1, 3, 4, 5
#: Skip sources that mean a claimed case went unjudged (RUN-7): the implementation skipped it
#: although it lies inside its claims, or the suite could draw no case inside the claims.
UNJUDGED = ("implementation", "unjudgeable")
#: RUN-22: random merge cases a run judges against the reference by default, and the seconds
#: after which it stops drawing them (``--differential N``, ``--differential-seconds S``).
DIFFERENTIAL_CASES = 5_000
DIFFERENTIAL_SECONDS = 120.0
DIFFERENTIAL_ID = "D-MERGE-RANDOM"
#: The rules the differential's answers can speak of (P-EQUIVALENCE's, and the hints' and
#: merge rules every random merge goes through).
DIFFERENTIAL_RULES = ("HINT-2", "HINT-3", "MERGE-1", "MERGE-2", "MERGE-3", "MERGE-4", "MERGE-5",
                      "MERGE-6", "MERGE-7", "MERGE-8", "MERGE-9", "MERGE-10", "MERGE-12",
                      "POLICY-1", "POLICY-2", "POLICY-3", "POLICY-4", "POLICY-5", "POLICY-6",
                      "OPT-1", "OPT-2", "OPT-3", "OPT-4", "OPT-5", "OPT-6", "VER-2")
#: RUN-22: seconds a failed merge property's counterexample is shrunk for at most (a slow
#: implementation answers each try of a large case slowly; the smallest so far stands).
RESTATE_SECONDS = 20.0
#: RUN-15: the statuses of a run ended by SIGINT and SIGTERM, after its reports are written.
EXIT_INTERRUPTED = {signal.SIGINT: 130, signal.SIGTERM: 143}


class _Stopped(KeyboardInterrupt):
    """RUN-15: SIGTERM, raised where the run is, so that it ends as an interrupt does."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def _terminable() -> Iterator[None]:
    """SIGTERM ends the run like SIGINT: the case in flight is abandoned, the adapter is
    stopped, the footer and every report are written (in the main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        raise _Stopped(signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@attrs.frozen
class Case:
    """One thing the suite runs: a vector, or a property."""

    id: str
    kind: str  # "vector" | "property"
    op: str
    rules: tuple[str, ...]
    kubelet_version: str
    description: str
    case: Any = None
    expected: Any = None
    #: the vector's own ID (an instance at another release than its own is ``<vector>@1.N``)
    vector: str = ""

    @property
    def retargeted(self) -> bool:
        """An instance of a vector at another release than its case's own (RUN-10)."""
        return self.kind == "vector" and self.id != self.vector


@attrs.frozen
class Outcome:
    verdict: str
    message: str = ""
    actual: Any = None
    differences: tuple[str, ...] = ()
    answer: Answer | None = None
    counterexample: Any = None
    skip_source: str = ""
    issue_url: str = ""
    #: RUN-5: the known divergences a property set aside: finding, how many cases, the first
    divergences: tuple[dict[str, Any], ...] = ()
    #: more fields of the record (RUN-17, RUN-22: what was drawn and reached, the rules blamed)
    extra: dict[str, Any] = attrs.field(factory=dict)


@attrs.define
class RunConfig:
    impl: str = REFERENCE_IMPL
    out: str = "numaspec-report"
    report: str | None = None
    markdown: str | None = None
    junitxml: str | None = None
    expectations: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    start_timeout: float = DEFAULT_START_TIMEOUT
    max_line: int = DEFAULT_MAX_LINE
    strict: bool = False
    properties: bool = True
    vectors: bool = True
    vector_files: tuple[str, ...] = ()
    profile: str | None = None
    keyword: str | None = None
    #: Exactly these case IDs (for callers of the API; ``-k`` matches parts of IDs).
    ids: tuple[str, ...] | None = None
    #: RUN-10: send a vector's instances at other releases than its own only for these
    #: releases (None: every release the implementation declares).  A sample for
    #: implementations that declare many releases; a vector's own instance always runs.
    releases: tuple[str, ...] | None = None
    progress: bool | None = None
    rule_table: bool = True
    #: RUN-18: stop at the first case that fails the run (a mutation campaign's judge)
    fail_fast: bool = False
    #: RUN-21: the run's seed (None: a fresh one, or 0 under a derandomized profile)
    seed: int | None = None
    #: RUN-22: random merge cases judged against the reference in the run (0: none)
    differential: int = DIFFERENTIAL_CASES
    #: RUN-22: the differential stops drawing after this many seconds (and says so)
    differential_seconds: float = DIFFERENTIAL_SECONDS


def load_cases(*, vectors: bool = True, properties: bool = True,
               vector_files: Sequence[str] = (), releases: Sequence[str] | None = None,
               differential: bool = True) -> list[Case]:
    """The suite: vectors first (file order; each vector's own instance, then its instances
    at the other releases it holds in, oldest first, only those of ``releases`` when given),
    then the properties, then the differential (RUN-22) with them.  ``vector_files``
    replaces the spec's vectors by the given files (same format)."""
    cases: list[Case] = []
    if vectors:
        from numaspec.conformance.cases.vectors import instances, load_vector_paths, load_vectors

        loaded = load_vector_paths(vector_files) if vector_files else load_vectors()
        cases += [Case(i.id, "vector", v.op, tuple(v.rules), i.release, v.description,
                       i.case, i.expected, v.id)
                  for v in loaded for i in instances(v, releases)]
    if properties:
        from numaspec.conformance.properties import PROPERTIES

        cases += [Case(p.id, "property", p.op, tuple(p.rules), "", p.title)
                  for p in PROPERTIES.values()]
        if differential:
            cases.append(Case(DIFFERENTIAL_ID, "differential", "merge", DIFFERENTIAL_RULES, "",
                              "random merge cases inside the claims, each judged against the "
                              "reference's answer (RUN-22)"))
    return cases


def select(cases: Sequence[Case], keyword: str) -> list[Case]:
    """RUN-4: ``-k``: alternatives separated by ``or`` or commas; a case is kept when some
    alternative is part of its ID or is one of its rules.  Selecting nothing is an error."""
    terms = [t.strip() for t in re.split(r"\s+or\s+|,", keyword) if t.strip()]
    chosen = [c for c in cases if any(t in c.id or t in c.rules for t in terms)]
    if not chosen:
        raise InvalidFieldError(f"no case matches {keyword!r} (an ID part or a rule ID; "
                                "alternatives separated by 'or' or commas)", where="-k")
    return chosen


def for_implementation(cases: Sequence[Case], implementation: Implementation) -> list[Case]:
    """RUN-10: the cases an implementation is sent: a vector's instance at another release
    than its own only if the implementation declares that release for the op.  (A vector's
    own instance stays, and is reported skipped when undeclared, RUN-4.)"""
    return [c for c in cases
            if not c.retargeted or implementation.declares(c.op, c.kubelet_version) is None]


def suite_version(vector_files: Sequence[str] = ()) -> str:
    """RUN-6: numaspec's last release (``numaspec.about.RELEASE``, not the development version,
    which changes with every commit) and a digest of the whole suite (every vector instance at
    every release, every property with its rules), so two reports that say the same suite ran
    the same cases.  It never depends on a run's selection (``-k``, ``--no-vectors``,
    ``--no-properties``, the releases an implementation declares): only ``vector_files``,
    which replaces the spec's vectors, changes the suite itself."""
    digest = hashlib.sha256()
    for case in load_cases(vector_files=vector_files):
        digest.update(json.dumps([case.id, case.op, case.rules, case.case, case.expected],
                                 sort_keys=True).encode())
    from numaspec.about import RELEASE

    return f"{RELEASE}+{digest.hexdigest()[:12]}"


# --- one vector ------------------------------------------------------------------------------


def run_case(connection: Connection, case: Case, answer: Answer | None = None) -> Outcome:
    """RUN-1: send one vector, compare the answer with the expected one (``answer``: its
    answer, when it was sent with others, PROTO-8)."""
    from numaspec.conformance.cases.judges import compare
    from numaspec.protocols.adapter_protocol import sent_case

    if answer is None:
        answer = connection.run(case.op, sent_case(case.op, case.case))
    if answer.status == "result" and case.op == "predict":
        from numaspec.conformance.cases.predictions import judge

        verdict, message = judge(case.expected, answer.result)
        return Outcome(verdict, message, answer.result,
                       (message,) if verdict == "failed" else (), answer)
    if answer.status == "result":
        differences = tuple(compare(case.op, case.case, case.expected, answer.result))
        if differences:
            extra: dict[str, Any] = {}
            if case.op == "merge":  # RUN-17: booked on the rules that decided it
                from numaspec.conformance.cases.decisions import blame

                found = blame(case.case, case.expected, answer.result)
                if found.rules:
                    extra = {"blamed": list(found.rules), "why": list(found.why)}
            message = "; ".join(differences)[:2000]
            if extra:
                message += f"\ndecided by {', '.join(extra['blamed'])}: " + "; ".join(
                    extra["why"])
            return Outcome("failed", message, answer.result, differences, answer, extra=extra)
        return Outcome("passed", actual=answer.result, answer=answer)
    if answer.status == "skipped":
        return Outcome("skipped", answer.message, answer=answer, skip_source="implementation",
                       issue_url=answer.issue_url)
    return Outcome(answer.status, answer.message, answer=answer)


# --- one property ----------------------------------------------------------------------------


class _AdapterTrouble(Exception):
    def __init__(self, answer: Answer) -> None:
        super().__init__(f"{answer.status}: {answer.message}")
        self.answer = answer


class _ProtocolMerge:
    """A merge implementation for the properties, answering through a connection."""

    def __init__(self, connection: Connection, subsets: Callable[..., Any] | None) -> None:
        from numaspec.topology.versions import SUPPORTED_VERSIONS

        self.connection = connection
        impl = connection.implementation
        self.name = impl.name
        self.kubelet_versions = tuple(v for v in SUPPORTED_VERSIONS
                                      if str(v) in impl.kubelet_versions)
        self.claims = impl.claims
        self.trouble: Answer | None = None
        self.trouble_case: Any = None
        if subsets is not None:
            self.subsets = subsets
        # each served operation's channel (impl.cpus, impl.node_session, ...), as its judge
        # names it: one case through the connection
        for op in impl.operations:
            judge = JUDGES.get(op)
            if judge is not None and judge.channel is not None:
                setattr(self, judge.channel, functools.partial(self._run, op))
        self.node_kubelet_versions = impl.node_kubelet_versions
        self.unmodelled_node = impl.unmodelled_node
        self.allocate_versions = impl.allocate_versions
        self.allocate_features = impl.allocate_features

    def _run(self, op: str, case: Any) -> Any:
        if self.trouble is not None:  # one crash or hang is enough: do not shrink through it
            raise _AdapterTrouble(self.trouble)
        answer = self.connection.run(op, case)
        if op != "merge":  # (a merge property counts its own requests, with their answers)
            from numaspec.conformance.cases.decisions import sent

            sent(op, case)
        if answer.status == "errored":
            # RUN-5: an errored answer inside a known divergence (KOORD-5's nondeterminism,
            # the 1.34 allocator's panic of finding 53) is set aside like any other known
            # one; the property explores on
            from hypothesis import note, reject

            from numaspec.protocols.adapter_protocol import reference_result

            finding = known(op, case, reference_result(op, case), {"errored": answer.message})
            if finding is not None:
                note(f"set aside: {finding.finding} ({answer.message[:120]})")
                reject()
        if answer.status != "result":
            self.trouble, self.trouble_case = answer, case
            raise _AdapterTrouble(answer)
        return answer.result

    def merge(self, request: Any) -> Any:
        """RUN-13: a result that is not a merge response is a protocol error of the adapter,
        not a property's counterexample: the property stops at once (no shrinking through
        an adapter that answers the wrong operation)."""
        from numaspec.conformance.cases.judges import decode_answer
        from numaspec.protocols.merge_protocol import encode_merge_request

        case = encode_merge_request(request)
        result = self._run("merge", case)
        try:
            return decode_answer(result, "result")
        except NumaspecError as exc:
            self.trouble = Answer("protocol-error",
                                  message=f"the result is not a merge response "
                                          f"({exc.describe()})",
                                  offending=json.dumps(result)[:300])
            self.trouble_case = case
            raise _AdapterTrouble(self.trouble) from None


def _property_target(connection: Connection) -> Any:
    if isinstance(connection, InProcessConnection) and isinstance(connection.adapter,
                                                                  MergeObjectAdapter):
        return connection.adapter.impl  # a typed merge object: no JSON round trip
    adapter = getattr(connection, "adapter", None)
    return _ProtocolMerge(connection, getattr(adapter, "subsets", None))


#: The headers of what Hypothesis prints about a failing example in Python's own terms
#: (``Draw 1: [{'op': ...}]``, the test function's call): never shown, the properties note
#: the same case as protocol JSON.
_HYPOTHESIS_BLOCKS = re.compile(r"^(Failing test case|Falsifying example|Failing explicit "
                                r"example|Falsifying explicit example|Draw \d+|Explanation:|"
                                r"Trying example|Trying explicit example)")


def readable(lines: Sequence[str]) -> list[str]:
    """A property failure's lines without Hypothesis's Python reprs: a block that starts with
    one of its headers goes with its indented lines and its closing parenthesis."""
    kept: list[str] = []
    skipping = False
    for line in (part for item in lines for part in str(item).splitlines()):
        if _HYPOTHESIS_BLOCKS.match(line):
            skipping = True
            continue
        if skipping and (line[:1].isspace() or line.strip() in (")", "", "],", "]")):
            continue
        skipping = False
        kept.append(line)
    return kept


def _last_request(lines: Sequence[str]) -> Any:
    for line in reversed(lines):
        for part in line.splitlines():
            if part.startswith("request: "):
                try:
                    return json.loads(part[len("request: "):])
                except json.JSONDecodeError:
                    return None
    return None


def property_seed(seed: int, pid: str) -> int:
    """RUN-21: the seed a property draws from in a run of ``seed`` (its own, so that two
    properties do not draw the same data)."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{pid}".encode()).digest()[:8], "big")


def run_property(target: Any, case: Case, divergences: Sequence[Divergence] = (), *,
                 seed: int | None = None) -> Outcome:
    """RUN-1: a property is one case: passed, or failed with its shrunk counterexample.
    RUN-5: run under the manifest's known ``divergences`` (by input class), it sets aside
    every case inside one and explores on; it is ``xfailed`` when it met some and nothing
    else failed, naming each finding with the first case it set aside.  RUN-21: ``seed``
    (None: the profile's own draws) decides every example it draws."""
    with expecting(divergences) as seen:
        outcome = _run_property(target, case, set_aside=bool(divergences), seed=seed)
    if not seen.found:
        return outcome
    owners = {d.finding: d.owner for d in divergences}
    found = [{"finding": finding, "cases": count, "first": first,
              "owner": owners.get(finding, "implementation")}
             for finding, (count, first) in sorted(seen.found.items())]
    text = "; ".join(f"{f['finding']} ({f['cases']} cases set aside)" for f in found)
    if outcome.verdict == "passed":
        return attrs.evolve(outcome, verdict="xfailed", divergences=tuple(found),
                            message=f"holds but for the known divergences: {text}",
                            counterexample=found[0]["first"])
    return attrs.evolve(outcome, divergences=tuple(found),
                        message=f"{outcome.message}\n(known divergences set aside on the way: "
                                f"{text})")


def _run_property(target: Any, case: Case, *, set_aside: bool, seed: int | None = None
                  ) -> Outcome:
    from hypothesis.reporting import with_reporter

    from numaspec.conformance.properties import PROPERTIES
    from numaspec.conformance.properties.registry import reach_of
    from numaspec.conformance.properties.strategies import reaching
    from numaspec.conformance.running.profiles import run_as_loaded

    prop = PROPERTIES[case.id]
    reason = prop.applies_to(target)
    if reason is not None:
        return Outcome("skipped", reason, skip_source="undeclared")
    unclaimed = prop.outside_claims(target)
    if unclaimed is not None:
        return Outcome("skipped", unclaimed, skip_source="not-claimed")
    if prop.requires is not None and not hasattr(target, prop.requires):
        if prop.op != "merge":
            return Outcome("skipped", f"{target.name} does not declare the {prop.op!r} "
                                      "operation", skip_source="undeclared")
        return Outcome("skipped", f"{target.name} does not offer the {prop.requires!r} "
                                  "capability (in-process implementations only)",
                       skip_source="undeclared")
    from hypothesis.errors import FailedHealthCheck, Unsatisfiable

    from numaspec.conformance.cases.decisions import tallying

    lines: list[str] = []
    with tallying() as tally:
        try:
            with with_reporter(lambda value: lines.append(str(value))), \
                    reaching(reach_of(target)):
                run_as_loaded(prop.check, target, set_aside=set_aside, seed=seed)
        except KeyboardInterrupt:
            raise
        except (Unsatisfiable, FailedHealthCheck) as exc:
            if getattr(target, "trouble", None) is None:
                # RUN-7: the suite could draw no case inside the claims: not the
                # implementation's failure, but the property is not judged, and the run does
                # not go green on it.
                return Outcome("skipped", f"no case inside the implementation's claims could "
                                          f"be drawn ({type(exc).__name__}: {str(exc)[:300]})",
                               skip_source="unjudgeable")
            return _trouble(target)
        except BaseException as exc:
            if getattr(target, "trouble", None) is not None:
                return _trouble(target)
            # Hypothesis attaches the falsifying example and the notes to the exception
            # (PEP 678).
            lines += [str(n) for n in getattr(exc, "__notes__", ())]
            text = "\n".join([f"{type(exc).__name__}: {exc}", *readable(lines)])
            request = _last_request(lines)
            extra: dict[str, Any] = {"drawn": tally.sent}
            if prop.op == "merge" and isinstance(request, dict):
                request, more = _restated(target, request, tally.answer_to(request))
                extra.update(more)
                if "found_as" in more:  # the large case found is in the record, not here
                    text = "\n".join(_shortened(line) for line in text.splitlines())
                if more.get("blamed"):
                    text += "\n" + _blame_text(more, request)
            return Outcome("failed", _bounded(text), counterexample=request, extra=extra)
    extra = {"drawn": tally.sent}
    if prop.op == "merge":
        extra["reached"] = dict(sorted(tally.reached.items()))
    return Outcome("passed", extra=extra)


def _ask_merge(target: Any, case: dict[str, Any]) -> Any:
    """The implementation's answer (JSON) to one merge case, outside any property; None when
    it gave none."""
    connection = getattr(target, "connection", None)
    if connection is not None:
        answer = connection.run("merge", case)
        return answer.result if answer.status == "result" else None
    from numaspec.conformance.properties.merge import answer_json
    from numaspec.protocols.merge_protocol import decode_merge_request

    try:
        return answer_json(target.merge(decode_merge_request(case)))
    except Exception:  # an in-process implementation that raises: no answer to restate
        return None


def _restated(target: Any, request: dict[str, Any], actual: Any
              ) -> tuple[dict[str, Any], dict[str, Any]]:
    """RUN-22: a failed merge property's counterexample, restated on the smallest case on
    which the implementation still disagrees with the reference (greedy, as the differential
    shrinks), and the rules that decided it; unchanged when the implementation agrees with
    the reference there (an invariant broken between several of its answers)."""
    from numaspec.conformance.cases.decisions import blame
    from numaspec.conformance.cases.judges import compare
    from numaspec.conformance.properties.random_cases import shrink_merge_case
    from numaspec.protocols.adapter_protocol import reference_result

    if actual is None:
        actual = _ask_merge(target, request)
    expected = reference_result("merge", request)
    if actual is None or not compare("merge", request, expected, actual):
        return request, {}
    deadline = time.monotonic() + RESTATE_SECONDS

    def disagrees(case: Any) -> bool:
        if time.monotonic() > deadline:  # the smallest found so far stands
            return False
        answer = _ask_merge(target, case)
        return answer is not None and bool(compare("merge", case, reference_result(
            "merge", case), answer))

    extra: dict[str, Any] = {}
    small = shrink_merge_case(request, disagrees, budget=1_000)
    if small != request:
        extra["found_as"] = request
        request, actual = small, _ask_merge(target, small)
        expected = reference_result("merge", small)
    found = blame(request, expected, actual)
    extra.update({"blamed": list(found.rules), "why": list(found.why),
                  "reference": expected, "implementation": actual})
    return request, extra


def _shortened(line: str) -> str:
    """A note's request or answer line as its size, when it is too long to read (the case
    restated on a smaller one says the same)."""
    head, _, rest = line.partition(": ")
    if head in ("request", "answer") and len(rest) > 1_000:
        return f"{head}: ({len(rest):,} characters: the record's found_as)"
    return line


def _blame_text(extra: dict[str, Any], case: Any) -> str:
    """The lines a failure's message ends with: the case it was restated on, the rules that
    decided, and the two answers, whole."""
    lines = []
    if "found_as" in extra:
        lines.append(f"restated on the smallest case that still disagrees ("
                     f"{len(json.dumps(extra['found_as']))} characters found, "
                     f"{len(json.dumps(case))} now; the first is the record's found_as)")
    lines.append(f"decided by {', '.join(extra['blamed'])}: " + "; ".join(extra.get("why", ())))
    lines.append(f"reference: {json.dumps(extra['reference'], separators=(',', ':'))}")
    lines.append(f"implementation: {json.dumps(extra['implementation'], separators=(',', ':'))}")
    return "\n".join(lines)


def _trouble(target: Any) -> Outcome:
    """A property stopped by the implementation: it skipped a request (inside its claims:
    the property is not judged, RUN-7), or crashed, timed out, broke the protocol."""
    trouble = target.trouble
    # The request the implementation would not answer, so that it can be replayed.
    request = getattr(target, "trouble_case", None)
    if trouble.status == "skipped":
        return Outcome("skipped", f"the implementation skipped a request inside its claims, so "
                                  f"the property could not be judged: {trouble.message}",
                       skip_source="implementation", issue_url=trouble.issue_url,
                       counterexample=request)
    return Outcome(trouble.status, trouble.message, answer=trouble, counterexample=request)


#: The most characters of a failed property's message a record keeps.
MAX_MESSAGE = 8000


def _bounded(text: str) -> str:
    """A failure message of at most :data:`MAX_MESSAGE` characters: its start (the exception
    and the falsifying call) and its end (Hypothesis's notes: what the assertion said), the
    middle left out and marked, since a long call's repr would otherwise push the end off."""
    if len(text) <= MAX_MESSAGE:
        return text
    head = MAX_MESSAGE // 4
    tail = MAX_MESSAGE - head - 40
    return f"{text[:head]}\n[... {len(text) - head - tail} characters left out ...]\n" \
           f"{text[-tail:]}"


# --- the run ---------------------------------------------------------------------------------


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _record(seq: int, case: Case, outcome: Outcome, expectation: dict[str, Any] | None,
            duration: float = 0.0) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "case", "seq": seq, "id": case.id, "kind": case.kind, "op": case.op,
        "rules": list(case.rules), "kubelet_version": case.kubelet_version,
        "description": case.description, "duration": round(duration, 3),
        "verdict": outcome.verdict, "message": outcome.message}
    if case.kind == "vector":
        record["vector"] = case.vector
        record["case"] = case.case
        record["expected"] = case.expected
    if outcome.actual is not None:
        record["actual"] = outcome.actual
    if outcome.differences:
        record["differences"] = list(outcome.differences)
    if outcome.counterexample is not None:
        record["counterexample"] = outcome.counterexample
    if outcome.skip_source:
        record["skip_source"] = outcome.skip_source
    if outcome.issue_url:
        record["issue_url"] = outcome.issue_url
    if outcome.divergences:
        record["divergences"] = list(outcome.divergences)
    record.update(outcome.extra)
    answer = outcome.answer
    if answer is not None:
        if answer.offending:
            record["offending"] = answer.offending
        if answer.stderr:
            record["stderr"] = answer.stderr
        if answer.context:
            record["context"] = answer.context
    if expectation is not None:
        record["expectation"] = expectation
    return record


#: EXPLAIN-4: a failure's trace larger than this (characters of JSON) is left out.
_MAX_TRACE = 200_000


def _explain(record: dict[str, Any]) -> None:
    """EXPLAIN-4: a failing case's record carries the reference's reasoning for it."""
    from numaspec.protocols.explain import explain_case

    case = record.get("counterexample", record.get("case"))
    if case is None:
        return
    try:
        traces = explain_case(str(record["op"]), case)
    except Exception as exc:  # the reasoning is a help: it must never cost the verdict
        record["explain_error"] = f"{type(exc).__name__}: {exc}"
        return
    if len(json.dumps(traces)) <= _MAX_TRACE:
        record["explain"] = traces
    else:
        record["explain_error"] = "the trace is too large for the report: numaspec replay " \
                                  "--explain prints it"


def _apply(outcome: Outcome, case: Case, manifest: Manifest | None
           ) -> tuple[Outcome, dict[str, Any] | None]:
    """RUN-5: xfailed / xpassed for cases the manifest expects to fail (by ID, by rule, or, for
    a vector, by the input class its case and answers fall in)."""
    if manifest is None:
        return outcome, None
    entry = manifest.lookup(case.id, case.rules, "fail", vector=case.vector)
    if entry is None and case.kind == "vector" and outcome.verdict in ("failed", "errored"):
        actual = outcome.actual if outcome.verdict == "failed" else {"errored": outcome.message}
        found = facts(case.op, case.case, case.expected, actual)
        for divergence in manifest.divergences_for(case.id, case.kind):
            if matches(divergence.match, found):
                return attrs.evolve(outcome, verdict="xfailed",
                                    message=f"[{outcome.verdict}: {divergence.finding}] "
                                            f"{outcome.message}"
                                    ), {"finding": divergence.finding,
                                        "match": dict(divergence.match),
                                        "reason": divergence.reason, "link": divergence.link,
                                        "owner": divergence.owner}
    if entry is None:
        return outcome, None
    if outcome.verdict in FAILING:
        return attrs.evolve(outcome, verdict="xfailed",
                            message=f"[{outcome.verdict}] {outcome.message}"), entry.to_json()
    if outcome.verdict == "passed" and entry.vector is not None:
        return attrs.evolve(outcome, verdict="xpassed",
                            message=f"expected to fail ({entry.reason}; {entry.link}) but "
                                    "passed: remove the entry from the manifest"), \
            entry.to_json()
    return outcome, entry.to_json()


def _narrowed(config: RunConfig) -> bool:
    """Whether the run selects part of the suite (so a manifest may name cases it skips)."""
    return bool(config.keyword or config.ids is not None or not config.vectors
                or not config.properties or config.releases is not None)


def _stale_rule_entries(manifest: Manifest | None, records: Sequence[dict[str, Any]],
                        left_out: Collection[str] = ()) -> list[str]:
    """RUN-5: rule entries none of whose cases fails any more; a rule that some case the run
    left out cites is not judged (that case may be the failing one)."""
    if manifest is None:
        return []
    stale = []
    for entry in manifest.entries:
        if entry.rule is None or entry.outcome != "fail" or entry.rule in left_out:
            continue
        citing = [r for r in records if entry.rule in r["rules"]]
        if citing and not any(r["verdict"] == "xfailed" for r in citing):
            stale.append(f"rule {entry.rule} is expected to fail ({entry.reason}) but every "
                         "case citing it passed or was skipped: remove the entry")
    return stale


def _paths(config: RunConfig) -> tuple[Path, Path, Path]:
    out = Path(config.out)
    return (Path(config.report) if config.report else out / "report.jsonl",
            Path(config.markdown) if config.markdown else out / "summary.md",
            Path(config.junitxml) if config.junitxml else out / "junit.xml")


def run_conformance(config: RunConfig, *, stream: IO[str] | None = None) -> int:
    """Run the suite against ``config.impl``; write every report; return the exit status."""
    out = stream if stream is not None else sys.stdout
    report_path, md_path, junit_path = _paths(config)
    try:
        writer = ReportWriter(report_path)
        for path in (md_path, junit_path):
            path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"numaspec conformance: cannot write the report to {report_path}: "
              f"{exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    header: dict[str, Any] = {
        "type": "header", "tool": "numaspec", "tool_version": "", "suite_version": "",
        "protocol_version": PROTOCOL_VERSION, "started": _now(), "impl": config.impl,
        "implementation": None, "profile": None, "strict": config.strict,
        "expectations": config.expectations, "timeout": config.timeout,
        "start_timeout": config.start_timeout}
    records: list[dict[str, Any]] = []
    footer: dict[str, Any] = {"type": "footer"}
    connection: Connection | None = None
    header_written = False
    interrupted: int | None = None
    try:
        from numaspec import __version__
        from numaspec.conformance.running.profiles import load_profile

        header["tool_version"] = __version__
        header["profile"] = load_profile(config.profile) if config.properties else None
        header.update(_seeding(config, header["profile"]))
        cases = load_cases(vectors=config.vectors, properties=config.properties,
                           vector_files=config.vector_files, releases=config.releases,
                           differential=config.differential > 0)
        if config.keyword:
            cases = select(cases, config.keyword)
        if config.ids is not None:
            wanted = set(config.ids)
            cases = [c for c in cases if c.id in wanted]
        header["suite_version"] = suite_version(config.vector_files)
        manifest = load_manifest(config.expectations) if config.expectations else None
        left_out: set[str] = set()  # rules some case left out by a narrowed run cites
        if manifest is not None:
            # RUN-5: an entry must name a case of the suite; a narrowed run (-k, --no-vectors,
            # ...) checks against the whole suite, not only the cases it selected.
            known = load_cases(vector_files=config.vector_files) if _narrowed(config) else cases
            manifest.check_known([c.id for c in known] + [c.vector for c in known if c.vector],
                                 [r for c in known for r in c.rules])
            selected = {c.id for c in cases}
            left_out = {r for c in known if c.id not in selected for r in c.rules}
        connection = connect(config.impl, timeout=config.timeout, max_line=config.max_line,
                             start_timeout=config.start_timeout,
                             strict=config.strict)
        header["implementation"] = connection.implementation.raw
        cases = for_implementation(cases, connection.implementation)
        writer.write(header)
        header_written = True
        with _terminable():
            gave_up, stopped = _run_cases(connection, cases, manifest, writer, config,
                                          records=records, seed=header["seed"],
                                          derandomized=header["derandomized"])
        if gave_up:
            footer["gave_up"] = gave_up
        if stopped:
            footer["stopped"] = stopped
        footer["stale_expectations"] = _stale_rule_entries(manifest, records, left_out)
    except (NumaspecError, ValueError) as exc:
        footer["aborted"] = str(exc)
    except KeyboardInterrupt as exc:
        interrupted = getattr(exc, "signum", signal.SIGINT)
        footer["aborted"] = (f"interrupted by {signal.Signals(interrupted).name} after "
                             f"{len(records)} cases; the reports hold those")
    finally:
        with _shielded():
            if connection is not None:
                connection.close()
            if not header_written:
                writer.write(header)
            status = _finish(footer, records, connection)
            if interrupted is not None:
                status = footer["exit_status"] = EXIT_INTERRUPTED[signal.Signals(interrupted)]
            writer.write(footer)
            writer.close()
    md_path.write_text(markdown_summary(header, records, footer), encoding="utf-8")
    junit_path.write_text(junit_xml(header, records, footer), encoding="utf-8")
    try:
        for line in terminal_summary(header, records, footer, rules=config.rule_table):
            print(line, file=out)
        print(f"\nreports: {report_path}, {md_path}, {junit_path}", file=out)
        out.flush()
    except BrokenPipeError:  # the reader (| head) has gone; the reports are written
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - so that exit does not complain
    return status


@contextlib.contextmanager
def _shielded() -> Iterator[None]:
    """While the reports are written, a second SIGINT or SIGTERM waits (main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = {s: signal.signal(s, lambda signum, _f: held.append(signum))
                for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _finish(footer: dict[str, Any], records: Sequence[dict[str, Any]],
            connection: Connection | None) -> int:
    counts = Counter(r["verdict"] for r in records)
    ran = [r for r in records if r["verdict"] not in ("skipped", "xfailed")]
    # RUN-3: a handful of cases is not enough evidence to blame the adapter; a run in which
    # every case was skipped checked nothing, which is never a success.
    broken = len(ran) >= _BROKEN_EVIDENCE and not any(r["verdict"] in ("passed", "xpassed")
                                                       for r in ran)
    if records and not ran:
        footer["nothing_checked"] = True
    unjudged = [{"id": r["id"], "why": str(r.get("message", ""))[:300],
                 **({"case": r["counterexample"]} if "counterexample" in r else {})}
                for r in records if r["verdict"] == "skipped" and r.get("skip_source") in UNJUDGED]
    if unjudged:
        footer["unjudged"] = unjudged
    footer.update({
        "finished": _now(),
        "counts": dict(sorted(counts.items())),
        "restarts": max(connection.restarts, 0) if connection is not None else 0,
        "adapter_probably_broken": broken,
        "stderr_tail": connection.stderr_tail() if connection is not None else "",
    })
    footer.setdefault("stale_expectations", [])
    if footer.get("aborted"):
        status = EXIT_USAGE
    elif broken or footer.get("nothing_checked"):
        status = EXIT_BROKEN
    elif any(counts[v] for v in BAD_VERDICTS) or footer["stale_expectations"]:
        status = EXIT_FAILED
    elif unjudged:
        status = EXIT_UNCHECKED
    else:
        status = EXIT_OK
    footer["exit_status"] = status
    return status


def _seeding(config: RunConfig, profile: str | None) -> dict[str, Any]:
    """RUN-21: the run's seed (``--seed``; else a fresh one, or 0 under a derandomized
    profile, whose properties then draw their own fixed examples), and the differential's
    size (RUN-22), for the header."""
    from numaspec.conformance.running.profiles import DERANDOMIZED

    derandomized = config.seed is None and profile in DERANDOMIZED
    seed = config.seed if config.seed is not None else 0 if derandomized or profile is None \
        else secrets.randbelow(2 ** 32)
    return {"seed": seed, "derandomized": derandomized,
            "differential": {"cases": config.differential if config.properties else 0,
                             "seconds": config.differential_seconds}}


def _run_differential(connection: Connection, config: RunConfig, seed: int,
                      divergences: Sequence[Divergence]) -> Outcome:
    """RUN-22: the run's differential as one case: passed when the implementation agreed on
    every case it was sent, or disagreed only inside known divergences (xfailed); failed with
    its first disagreements, shrunk, each naming the rules that decided it."""
    from numaspec.conformance.running.differential import in_run

    if connection.implementation.claims.merge.policies == frozenset():
        return Outcome("skipped", f"{connection.implementation.name} claims no merge policy",
                       skip_source="not-claimed")
    try:
        found = in_run(connection, cases=config.differential, seed=seed,
                       seconds=config.differential_seconds, divergences=divergences)
    except NumaspecError as exc:
        return Outcome("skipped", f"the differential could not run: {exc.describe()}",
                       skip_source="unjudgeable")
    result = found.result
    extra: dict[str, Any] = {"drawn": result.cases, "seed": seed,
                             "reached": dict(sorted(found.reached.items())),
                             "verdicts": result.verdicts}
    head = (f"{result.cases} random merge cases (seed {seed}): "
            + ", ".join(f"{n} {v}" for v, n in sorted(result.verdicts.items())))
    if found.cut:
        head += f"; {found.cut}, {result.cases} of {found.asked} judged"
        extra["cut"] = found.cut
    if result.cases == 0:
        return Outcome("skipped", f"{head}: no random case lies inside the claims",
                       skip_source="unjudgeable", extra=extra)
    unexplained = result.unexplained
    if not unexplained:
        if result.explained:
            divergences_met = tuple({"finding": f, "cases": n, "first": next(
                d["case"] for d in result.disagreements if d.get("finding") == f),
                "owner": "implementation"} for f, n in sorted(result.explained.items()))
            return Outcome("xfailed", f"{head}; every disagreement inside a known divergence",
                           divergences=divergences_met, extra=extra)
        return Outcome("passed", head, extra=extra)
    extra["disagreements"] = [{k: d[k] for k in ("id", "case", "expected", "actual",
                                                  "differences", "rules", "why", "found_as")
                               if k in d} for d in unexplained[:20]]
    blamed: list[str] = []
    for item in unexplained:
        blamed += [r for r in item.get("rules", ()) if r not in blamed]
    extra["blamed"] = blamed
    lines = [f"{head}; {len(unexplained)} disagreements no known divergence explains"]
    for item in unexplained[:5]:
        lines.append(f"{item['id']}: decided by {', '.join(item.get('rules') or ['?'])}"
                     + (f": {'; '.join(item['why'])}" if item.get("why") else ""))
        lines.append(f"  case: {json.dumps(item['case'], separators=(',', ':'))}")
        lines.append(f"  {item['differences'][0]}")
    first = unexplained[0]
    return Outcome("failed", "\n".join(lines), actual=first["actual"],
                   counterexample=first["case"], extra=extra)


def _held_back(case: Case, manifest: Manifest | None, implementation: Implementation
               ) -> tuple[Outcome, dict[str, Any] | None] | None:
    """RUN-4, RUN-5: why a case is not sent (skipped by the manifest, undeclared, not
    claimed), with the manifest's entry; None when it is sent."""
    skip = (manifest.lookup(case.id, case.rules, "skip", vector=case.vector)
            if manifest else None)
    if skip is not None:
        return (Outcome("skipped", f"{skip.reason} ({skip.link})", skip_source="manifest"),
                skip.to_json())
    reason = implementation.declares(case.op, case.kubelet_version or None,
                                     case.case if case.kind == "vector" else None)
    if reason is not None:
        return Outcome("skipped", reason, skip_source="undeclared"), None
    unclaimed = None if case.kind != "vector" else implementation.outside_claims(
        case.op, case.case, case.expected, case.rules)
    if unclaimed is not None:
        return Outcome("skipped", unclaimed, skip_source="not-claimed"), None
    return None


#: PROTO-8: the most vectors sent together, in one call of run_many
_FETCH = 64


def _fetch_vectors(connection: Connection, cases: Sequence[Case], first: int,
                   manifest: Manifest | None, in_a_row: int) -> dict[int, Answer]:
    """PROTO-3, PROTO-8: the answers to vector ``first`` (numbered from 1) and the vectors
    of its operation that follow it (those that are sent, up to the next case of another
    kind or operation), asked together so that the implementation answers them in
    batches, or at least pipelined; by number.  Vectors are independent (PROTO-3), so
    their answers are the ones they get one at a time.  The asking stops where the runner
    would give up on the implementation (RUN-3): the vectors after that are not sent."""
    from numaspec.protocols.adapter_protocol import sent_case

    op = cases[first - 1].op
    numbers: list[int] = []
    for number in range(first, len(cases) + 1):
        case = cases[number - 1]
        if case.kind != "vector" or case.op != op or len(numbers) >= _FETCH:
            break
        if _held_back(case, manifest, connection.implementation) is None:
            numbers.append(number)
    streak = [in_a_row]

    def give_up(answer: Answer) -> bool:  # as _run_cases counts them
        if answer.restarted:
            streak[0] += 1
        elif answer.status != "skipped":
            streak[0] = 0
        return streak[0] >= GIVE_UP_AFTER

    answers = connection.run_many(op, [sent_case(op, cases[n - 1].case) for n in numbers],
                                  stop=give_up)
    return dict(zip(numbers, answers, strict=False))


def _run_cases(connection: Connection, cases: Sequence[Case], manifest: Manifest | None,
               writer: ReportWriter, config: RunConfig, *, records: list[dict[str, Any]],
               seed: int = 0, derandomized: bool = True) -> tuple[str | None, str | None]:
    """Run every case, appending each record to ``records`` as it is written (so that an
    interrupted run reports what it did); why the run gave up, and why it stopped early
    (RUN-18: --fail-fast), if it did."""
    progress = Progress(len(cases), enabled=config.progress)
    in_a_row = 0
    gave_up: str | None = None
    stopped: str | None = None
    target: Any = None
    implementation = connection.implementation
    failing = 0
    fetched: dict[int, Answer] = {}
    try:
        for seq, case in enumerate(cases, 1):
            started = time.monotonic()
            held = _held_back(case, manifest, implementation)
            expectation: dict[str, Any] | None = None
            if held is not None:
                outcome, expectation = held
            elif gave_up or connection.broken:
                outcome = Outcome("not-run", gave_up or str(connection.broken))
            elif case.kind == "differential":
                outcome = _run_differential(connection, config, seed, manifest.
                                            divergences_for(case.id, "property")
                                            if manifest else ())
            elif case.kind == "property":
                target = target or _property_target(connection)
                outcome = run_property(target, case, manifest.divergences_for(
                    case.id, case.kind) if manifest else (),
                    seed=None if derandomized else property_seed(seed, case.id))
                if getattr(target, "trouble", None) is not None:
                    target = None  # the next property starts with a fresh view
            else:
                if seq not in fetched and not config.fail_fast:
                    fetched = _fetch_vectors(connection, cases, seq, manifest, in_a_row)
                outcome = run_case(connection, case, fetched.pop(seq, None))
            if outcome.answer is not None and outcome.answer.restarted:
                in_a_row += 1
                if in_a_row >= GIVE_UP_AFTER and gave_up is None:
                    gave_up = (f"{GIVE_UP_AFTER} cases in a row crashed, timed out or broke "
                               "the protocol")
            elif outcome.verdict not in ("skipped", "not-run"):
                in_a_row = 0
            outcome, applied = _apply(outcome, case, manifest)
            record = _record(seq, case, outcome, expectation or applied,
                             time.monotonic() - started)
            if record["verdict"] in ("failed", "xpassed", "refused"):
                _explain(record)
            declared = implementation.declared(case.op)
            record["booked"] = booked_rules(record, implementation.claims, declared)
            unreached = not_exercised(record, implementation.claims, declared)
            if unreached:
                record["not_exercised"] = unreached
            if record.get("blamed") and record["verdict"] in BAD_VERDICTS:
                # RUN-17: what it would be booked on had it passed, and was not decided here
                would = booked_rules({**record, "verdict": "passed", "blamed": None},
                                     implementation.claims, declared)
                record["not_judged"] = [r for r in would if r not in record["booked"]]
            records.append(record)
            writer.write(record)
            failing += record["verdict"] in BAD_VERDICTS
            progress.update(seq, failing, case.id)
            if config.fail_fast and record["verdict"] in BAD_VERDICTS:
                stopped = (f"stopped at the first failure, {case.id} (--fail-fast): "
                           f"{len(cases) - seq} cases not run")
                break
    finally:
        progress.finish()
    return gave_up, stopped
