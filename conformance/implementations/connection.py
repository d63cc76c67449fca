"""Talking to an implementation under test: in-process, or as a supervised subprocess.

Both kinds of connection turn every request into exactly one :class:`Answer`, whatever the
implementation does (RUN-1): a result, a skip or an error it reports itself (PROTO-4), or one
of the verdicts the runner assigns when it misbehaves: ``crashed``, ``timeout``,
``protocol-error`` (RUN-2).  Nothing here raises because of what an implementation does;
only a handshake that never succeeds raises :class:`~numaspec.errors.AdapterError`.

``--impl exec:COMMAND`` (:class:`ExecConnection`): the command is split like a shell would
(no shell is run), started in its own process group, and spoken to over the adapter
protocol.  It is restarted after a crash, a timeout or a protocol error, so that the next case
starts from a clean process.

``--impl module:object`` (:class:`InProcessConnection`): ``object`` (or what calling it
returns) is either a JSON-level adapter (``start()`` and ``run(op, case)``, see
:class:`numaspec.protocols.adapter_protocol.JsonAdapter`) or a merge implementation with
``merge(request)`` (:class:`numaspec.conformance.implementations.adapter.MergeImplementation`).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import json
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import traceback
import uuid
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

import attrs
import msgspec

from numaspec.conformance.implementations.adapter import (
    MergeImplementation,
    resolve_object,
    supported_versions,
)
from numaspec.conformance.implementations.claims import Claims, claims_of
from numaspec.conformance.implementations.strict import StrictChecker
from numaspec.errors import AdapterError, NumaspecError
from numaspec.node.nodeconfig import NODE_VERSIONS
from numaspec.protocols.adapter_protocol import PROTOCOL_VERSION, JsonAdapter
from numaspec.protocols.merge_protocol import decode_merge_request, encode_error
from numaspec.protocols.operations import OPERATIONS
from numaspec.protocols.operations import TABLE as OPERATION_TABLE
from numaspec.strict_json import bounded_int, finite_float, long_integer_in

__all__ = [
    "DEFAULT_MAX_LINE",
    "DEFAULT_START_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "MAX_ANSWER_DEPTH",
    "Answer",
    "Connection",
    "ExecConnection",
    "Implementation",
    "InProcessConnection",
    "LineProcess",
    "MergeObjectAdapter",
    "connect",
]

#: RUN-2: an answer line longer than this is a protocol error (bytes, newline excluded).
DEFAULT_MAX_LINE = 1 << 20
#: RUN-2: seconds an implementation gets per case (``--timeout``).
DEFAULT_TIMEOUT = 10.0
#: RUN-2: seconds an implementation gets to answer ``start`` (``--start-timeout``): a
#: program that loads a large model or JIT-compiles may need more than a case does.
DEFAULT_START_TIMEOUT = 60.0
#: RUN-13: the deepest nesting an answer may have; no answer of any operation comes near it
#: (a node session's answers nest about ten deep), and a deeper one would exhaust the
#: runner's own stack on the way to a verdict.
MAX_ANSWER_DEPTH = 100
#: PROTO-8: the largest batch an implementation may declare
MAX_BATCH = 1024
#: PROTO-8: the most cases the runner puts in one batch, whatever is declared
_BATCH_CAP = 32
_STOP_GRACE = 2.0
_OFFENDING = 300  # bytes of an offending line kept in the report
_STDERR_KEEP = 64 * 1024

Status = Literal["result", "skipped", "errored", "crashed", "timeout", "protocol-error"]


def _created_minors(case: Any) -> list[tuple[int, str]]:
    """The releases of the nodes a session's ``create`` steps make, as minors (``"1.33"``),
    with the step's index; versions numaspec does not read are left to the case itself."""
    steps = case.get("steps") if isinstance(case, dict) else None
    found = []
    for index, step in enumerate(steps if isinstance(steps, list) else ()):
        node = step.get("node") if isinstance(step, dict) and step.get("op") == "create" else None
        version = node.get("kubeletVersion") if isinstance(node, dict) else None
        match = _VERSION.match(version.strip()) if isinstance(version, str) else None
        if match:
            found.append((index, f"1.{match.group(1)}"))
    return found


#: VER-1's reading of a kubelet version: the minor of ``1.30``, ``v1.30.4``, ``1.30.4-rc.0``.
_VERSION = re.compile(r"^v?1\.(0|[1-9][0-9]*)(?:\.\d+)?(?:[-+].*)?$")

#: PROTO-2: a declared kubelet release is a minor, ``"1.30"``.
_MINOR = re.compile(r"^1\.(0|[1-9][0-9]*)$")


def _minor_hint(text: str) -> str:
    found = re.match(r"^v?(1\.\d+)", text.strip())
    return f"here {found.group(1)!r}" if found else "for example '1.30'"


@attrs.frozen
class Implementation:
    """PROTO-2: who answered ``start``, and what it declares it can do."""

    name: str
    version: str
    language: str
    homepage: str
    issues: str
    kubelet_versions: tuple[str, ...]
    node_kubelet_versions: tuple[str, ...]
    operations: tuple[str, ...]
    raw: dict[str, Any] = attrs.field(eq=False, repr=False)
    #: DRA-10: the Kubernetes minors whose structured allocator it models (``allocate``)
    allocate_versions: tuple[str, ...] = ()
    #: DRA-10: the allocator features it models (None: every one)
    allocate_features: tuple[str, ...] | None = None
    #: PROTO-7: the part of the semantics it claims (absent: all of it, but not the format)
    claims: Claims = attrs.field(factory=Claims)
    #: NODE-0, VER-1: node releases it declares that numaspec does not model (not judged)
    unmodelled_node: tuple[str, ...] = ()
    #: PROTO-8: the most runs it answers in one batch request (1: one run a request)
    batch: int = 1

    @classmethod
    def from_json(cls, value: Any, where: str) -> Implementation:
        if not isinstance(value, dict):
            raise AdapterError("'implementation' must be an object", where=where)

        def text(key: str) -> str:
            item = value.get(key)
            if not isinstance(item, str):
                raise AdapterError(f"'implementation.{key}' must be a string, got {item!r}",
                                   where=where)
            return item

        def strings(key: str, default: tuple[str, ...] | None = None) -> tuple[str, ...]:
            item = value.get(key)
            if item is None and default is not None:
                return default
            if not isinstance(item, list) or not all(isinstance(i, str) for i in item):
                raise AdapterError(f"'implementation.{key}' must be a list of strings, "
                                   f"got {item!r}", where=where)
            return tuple(item)

        operations = strings("operations")
        unknown = sorted(set(operations) - set(OPERATIONS))
        if unknown:
            raise AdapterError(f"unknown operations {unknown} (known: {', '.join(OPERATIONS)})",
                               where=where)
        versions = strings("kubelet_versions")
        allocate_versions = strings("allocate_versions", ())
        for key, listed in (("kubelet_versions", versions),
                            ("node_kubelet_versions", strings("node_kubelet_versions", ())),
                            ("allocate_versions", allocate_versions)):
            for index, version in enumerate(listed):
                if not _MINOR.match(version):
                    raise AdapterError(
                        f"'implementation.{key}[{index}]' is {version!r}, not a kubelet minor "
                        f"release: declare \"1.<minor>\" ({_minor_hint(version)}); a patch "
                        "release goes in 'version' or 'metadata'", where=where)
        # NODE-0, VER-1: a node release numaspec does not model (1.38, read for the merge only)
        # is not judged; the report's header says so (reports.unmodelled_node_lines)
        declared_node = strings("node_kubelet_versions", versions)
        batch = value.get("batch", 1)
        if (not isinstance(batch, int) or isinstance(batch, bool)
                or not ("batch" not in value or 2 <= batch <= MAX_BATCH)):
            raise AdapterError(f"'implementation.batch' must be an integer from 2 to "
                               f"{MAX_BATCH}, got {batch!r}", where=where)
        node = tuple(v for v in declared_node if int(v.split(".")[1]) in NODE_VERSIONS)
        return cls(name=text("name"), version=text("version"), language=text("language"),
                   homepage=text("homepage"), issues=text("issues"),
                   kubelet_versions=versions,
                   node_kubelet_versions=node,
                   operations=operations, raw=dict(value),
                   allocate_versions=allocate_versions,
                   allocate_features=(strings("allocate_features")
                                      if "allocate_features" in value else None),
                   claims=Claims.from_json(value.get("claims"),
                                           f"{where}: implementation.claims"),
                   unmodelled_node=tuple(v for v in declared_node if v not in node),
                   batch=batch)

    def declared(self, op: str) -> tuple[str, ...]:
        """The releases it declares for ``op``, by the operation's family (PROTO-3): the
        merge's ``kubelet_versions``, the DRA allocator's ``allocate_versions`` (``allocate``
        and ``mixed``), else the node's ``node_kubelet_versions``."""
        family = OPERATION_TABLE[op].family if op in OPERATION_TABLE else "node"
        if family == "merge":
            return self.kubelet_versions
        return self.allocate_versions if family == "allocate" else self.node_kubelet_versions

    def declares(self, op: str, kubelet_version: str | None, case: Any = None) -> str | None:
        """Why a case is not for this implementation, or None when it is (RUN-4).  A node
        session (``case``) is the implementation's only if every node it creates is of a
        release it declares: a session that replaces a 1.30 node by a 1.33 one is not for an
        implementation of 1.30 alone."""
        if op not in self.operations:
            return f"{self.name} does not declare the {op!r} operation"
        if kubelet_version is None:
            return None
        versions = self.declared(op)
        if op == "allocate" and kubelet_version not in versions:
            return f"{self.name} does not declare the {kubelet_version} allocator"
        if kubelet_version not in versions:
            return f"{self.name} does not declare kubelet {kubelet_version} for {op!r}"
        for index, created in _created_minors(case):
            # a release numaspec does not model for the node is the case's own business: the
            # expected answer is numaspec's refusal of it (NODE-0)
            if created not in versions and int(created[2:]) in NODE_VERSIONS:
                return (f"step {index} creates a kubelet {created} node, which {self.name} "
                        f"does not declare for {op!r}")
        return None

    def outside_claims(self, op: str, case: Any, expected: Any, rules: Sequence[str]
                       ) -> str | None:
        """Why a vector lies outside what the implementation claims, or None (PROTO-7)."""
        if op == "allocate" and self.allocate_features is not None and isinstance(case, dict):
            # DRA-10: a case enabling an allocator feature it does not declare
            missing = sorted(set(case.get("features") or ()) - set(self.allocate_features))
            if missing:
                return (f"{self.name} does not claim the allocator feature "
                        f"{', '.join(map(str, missing))}")
        reason = self.claims.outside(op, case, expected, rules)
        return None if reason is None else f"{self.name} does not claim {reason}"


@attrs.frozen
class Answer:
    """RUN-1: what became of one request."""

    status: Status
    result: Any = None
    message: str = ""
    issue_url: str = ""
    context: dict[str, Any] = attrs.field(factory=dict)
    #: protocol errors: the offending bytes, truncated
    offending: str = ""
    #: what the implementation wrote on stderr while the case ran (truncated)
    stderr: str = ""
    #: the process was discarded after this answer (RUN-2), or could not be (re)started
    restarted: bool = False


class Connection(Protocol):
    implementation: Implementation
    restarts: int
    #: a reason once the connection can no longer run cases at all
    broken: str | None

    def run(self, op: str, case: Any) -> Answer: ...

    def run_many(self, op: str, cases: list[Any], *, window: int = 32,
                 stop: Callable[[Answer], bool] | None = None) -> list[Answer]: ...

    def stderr_tail(self) -> str: ...

    def close(self) -> None: ...


def _truncate(data: bytes | str, limit: int = _OFFENDING) -> str:
    text = data.decode("utf-8", "backslashreplace") if isinstance(data, bytes) else data
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters in all)"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def load_answer(line: bytes) -> Any:
    """RUN-13: one answer line as JSON, or ``ValueError``: ``NaN``, ``Infinity``, integers
    past WIRE-5's bound, numbers past a double and values nested deeper than
    :data:`MAX_ANSWER_DEPTH` are not JSON an implementation may send.  A line with no more
    opening brackets than that cannot nest deeper, and is not walked."""
    shallow = line.count(b"[") + line.count(b"{") <= MAX_ANSWER_DEPTH
    if not long_integer_in(line):  # no integer past the bound: msgspec reads it
        try:
            value = msgspec.json.decode(line)
        except (msgspec.MsgspecError, RecursionError):
            pass  # the standard reader says what is wrong
        else:
            if not shallow and too_deep(value):
                raise ValueError(f"nested deeper than {MAX_ANSWER_DEPTH} levels")
            return value
    try:
        value = json.loads(line, parse_constant=_reject_constant, parse_int=bounded_int,
                           parse_float=finite_float)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_ANSWER_DEPTH} levels") from None
    if not shallow and too_deep(value):
        raise ValueError(f"nested deeper than {MAX_ANSWER_DEPTH} levels")
    return value


_ENCODER = msgspec.json.Encoder()


def too_deep(value: Any, limit: int = MAX_ANSWER_DEPTH) -> bool:
    """Whether ``value`` nests arrays and objects more than ``limit`` deep (walked without
    recursion, so that the check itself cannot exhaust the stack)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            stack.extend((child, depth + 1)
                         for child in (item.values() if isinstance(item, dict) else item))
    return False


#: PROTO-3/PROTO-4: the fields of a run answer, each kind's own; anything else is a protocol
#: error in every run, as in a ``--strict`` one (extras belong in ``context`` or, for the
#: implementation as a whole, in the start answer's ``metadata``).
_ANSWER_FIELDS = {"result": frozenset({"seq", "result"}),
                  "skipped": frozenset({"seq", "skipped", "message", "issue_url"}),
                  "errored": frozenset({"seq", "errored", "context"})}
def _classify(answer: Any, seq: int | None, strict: StrictChecker | None, op: str, *,
              read: bool = False) -> Answer:
    """PROTO-3/PROTO-4: one decoded run answer → an Answer (a protocol error if it is none).
    ``read``: the answer came through :func:`load_answer`, which checked its depth."""
    if not read and too_deep(answer):  # an in-process answer is not read through load_answer
        return Answer("protocol-error",
                      message=f"the answer is nested deeper than {MAX_ANSWER_DEPTH} levels",
                      offending="(not shown: too deep to print)")
    if not isinstance(answer, dict):
        return Answer("protocol-error", message="the answer is not a JSON object",
                      offending=_truncate(json.dumps(answer)))
    if seq is not None and answer.get("seq") != seq:
        return Answer("protocol-error",
                      message=f"out of order: answered seq {answer.get('seq')!r} "
                              f"while seq {seq} was asked",
                      offending=_truncate(json.dumps(answer)))
    if strict is not None:
        problem = strict.answer_problem(answer, op)
        if problem:
            return Answer("protocol-error", message=f"strict: {problem}",
                          offending=_truncate(json.dumps(answer)))
    kinds = [k for k in ("result", "skipped", "errored") if k in answer]
    if len(kinds) != 1:
        return Answer("protocol-error",
                      message="a run answer holds exactly one of result, skipped, errored; "
                              f"this one has {kinds or 'none'}",
                      offending=_truncate(json.dumps(answer)))
    extra = sorted(set(answer) - _ANSWER_FIELDS[kinds[0]])
    if extra:
        return Answer("protocol-error",
                      message=f"unknown fields {extra} in a {kinds[0]} answer (allowed: "
                              f"{', '.join(sorted(_ANSWER_FIELDS[kinds[0]]))}; facts for the "
                              "report go in the start answer's implementation.metadata)",
                      offending=_truncate(json.dumps(answer)))
    if kinds == ["result"]:
        result = answer["result"]
        row = OPERATION_TABLE.get(op)
        allowed = None if row is None else row.result_fields
        if allowed is not None and isinstance(result, dict) and set(result) - allowed:
            return Answer("protocol-error",
                          message=f"unknown fields {sorted(set(result) - allowed)} in a {op} "
                                  f"result (allowed: {', '.join(sorted(allowed))})",
                          offending=_truncate(json.dumps(answer)))
        return Answer("result", result=result)
    if kinds == ["skipped"]:
        return Answer("skipped", message=str(answer.get("message", "")),
                      issue_url=str(answer.get("issue_url", "")))
    context = answer.get("context")
    context = context if isinstance(context, dict) else {}
    return Answer("errored", message=str(context.get("message", "")), context=context)


# --- in-process ------------------------------------------------------------------------------


class MergeObjectAdapter:
    """A :class:`MergeImplementation` seen as a JSON-level adapter (merge only)."""

    def __init__(self, impl: MergeImplementation) -> None:
        self.impl = impl

    def start(self) -> dict[str, Any]:
        return {"name": str(self.impl.name), "version": str(getattr(self.impl, "version", "")),
                "language": "python", "homepage": "", "issues": "",
                "kubelet_versions": [str(v) for v in supported_versions(self.impl)],
                "operations": ["merge"], "claims": claims_of(self.impl).to_json()}

    def run(self, op: str, case: Any) -> dict[str, Any]:
        from numaspec.conformance.implementations.adapter import ErrorAnswer
        from numaspec.protocols.merge_protocol import encode_outcome

        if op != "merge":
            return {"skipped": True, "message": f"a merge implementation has no {op!r}"}
        try:
            request = decode_merge_request(case)
        except NumaspecError as exc:
            # A case that is not a MergeRequest cannot reach a typed merge(): the refusal is
            # the decoder's, the same one every implementation makes (WIRE-3).
            return {"result": encode_error(exc)}
        answer = self.impl.merge(request)
        if isinstance(answer, ErrorAnswer):
            return {"result": {"error": {"kind": answer.kind, "message": answer.message}}}
        return {"result": encode_outcome(answer)}


class InProcessConnection:
    """An in-process adapter, called on one worker thread so that a hang cannot hang the run.

    A Python implementation cannot be restarted: after a timeout the worker is abandoned and
    the connection is broken (every later case is ``not-run``); after an exception escapes the
    adapter, the case is ``crashed`` and the run goes on.
    """

    def __init__(self, adapter: JsonAdapter, *, timeout: float = DEFAULT_TIMEOUT,
                 start_timeout: float = DEFAULT_START_TIMEOUT,
                 strict: StrictChecker | None = None, label: str = "") -> None:
        self.adapter = adapter
        self.timeout = timeout
        self.strict = strict
        self.restarts = 0
        self.broken: str | None = None
        self._seq = 0
        self._jobs: queue.Queue[tuple[Callable[[], Any], queue.Queue[tuple[bool, Any]]]] = (
            queue.Queue())
        threading.Thread(target=self._work, daemon=True, name="numaspec-impl").start()
        ok, value = self._call(adapter.start, start_timeout)
        if not ok:
            raise AdapterError(f"start() failed: {value}", where=label or "--impl")
        self.implementation = Implementation.from_json(value, label or "--impl")
        # PROTO-2: checked against its schema in every run, as an exec adapter's start answer
        problem = start_checker().start_problem({"ready": True, "version": PROTOCOL_VERSION,
                                                 "implementation": value})
        if problem:
            raise AdapterError(problem, where=label or "--impl")

    def _work(self) -> None:
        while True:
            job, reply = self._jobs.get()
            try:
                reply.put((True, job()))
            except Exception as exc:  # the implementation's bug, reported against the case
                reply.put((False, f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))

    def _call(self, job: Callable[[], Any], timeout: float) -> tuple[bool, Any]:
        reply: queue.Queue[tuple[bool, Any]] = queue.Queue()
        self._jobs.put((job, reply))
        try:
            return reply.get(timeout=timeout)
        except queue.Empty:
            self.broken = (f"the in-process implementation did not return within {timeout:g}s; "
                           "it cannot be restarted")
            return False, None

    def run(self, op: str, case: Any) -> Answer:
        if self.broken:
            return Answer("crashed", message=self.broken)
        self._seq += 1
        ok, value = self._call(lambda: self.adapter.run(op, case), self.timeout)
        if not ok:
            if self.broken:
                return Answer("timeout", message=f"no answer within {self.timeout:g}s",
                              restarted=True)
            return Answer("crashed", message="the implementation raised",
                          context={"traceback": value}, restarted=True)
        return _classify({"seq": self._seq, **value} if isinstance(value, dict) else value,
                         self._seq, self.strict, op)

    def run_many(self, op: str, cases: list[Any], *, window: int = 32,
                 stop: Callable[[Answer], bool] | None = None) -> list[Answer]:
        del window  # in-process calls are made one at a time
        answers = []
        for case in cases:
            answers.append(self.run(op, case))
            if stop is not None and stop(answers[-1]):
                break
        return answers

    def stderr_tail(self) -> str:
        return ""

    def close(self) -> None:
        self.broken = self.broken or "closed"


# --- subprocess ------------------------------------------------------------------------------


class _Stderr:
    """Everything a process writes on stderr, kept as a bounded tail with a running count."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.data = bytearray()
        self.total = 0
        self.done = threading.Event()

    def pump(self, stream: Any) -> None:
        try:
            while chunk := stream.read1(65536):
                with self.lock:
                    self.data += chunk
                    self.total += len(chunk)
                    del self.data[:-_STDERR_KEEP]
        except (OSError, ValueError):
            pass
        finally:
            self.done.set()

    def since(self, mark: int) -> str:
        with self.lock:
            new = min(self.total - mark, len(self.data))
            return _truncate(bytes(self.data[len(self.data) - new:]), 4000) if new else ""


_EOF = ("eof", b"")
_TAG = "NUMASPEC_IMPL_TAG"
_EXIT_POLL = 0.2
_EXIT_GRACE = 0.5


def tagged_processes(tag: str) -> list[int]:
    """RUN-14: the processes whose environment holds ``tag`` (``NAME=value``), on Linux;
    nothing elsewhere."""
    found = []
    needle = tag.encode() + b"\0"
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                if needle in handle.read() + b"\0":
                    found.append(int(entry))
        except OSError:
            continue
    return found


def kill_tagged(tag: str) -> None:
    """End every process still carrying ``tag``: the implementation's daemons and
    grandchildren, whatever session or group they moved to."""
    for _ in range(3):
        pids = tagged_processes(tag)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


class LineProcess:
    """One running instance of the command, with its reader threads and its writer thread.

    Requests are written by a thread of their own: an implementation that stops reading its
    stdin cannot block the runner on a full pipe; it only fails to answer (a timeout).

    The process gets a temp directory of its own (``TMPDIR``, under the temp dir of ``env`` or
    of this process),
    removed by :meth:`kill` once the process is gone: what an implementation leaves in its
    temp dir (the kubelet node probe's state files, when it is killed) does not outlive it.
    """

    def __init__(self, argv: list[str], max_line: int, env: dict[str, str] | None,
                 cwd: str | None) -> None:
        self.max_line = max_line
        self.lines: queue.Queue[tuple[str, bytes]] = queue.Queue()
        self.stderr = _Stderr()
        self.tmpdir: str | None = tempfile.mkdtemp(prefix="numaspec-impl-",
                                                   dir=(env or {}).get("TMPDIR"))
        # removed at the latest when this process exits, should a caller never close the
        # connection (a script that ends without close() left one per connection)
        self._tmpdir_finalizer = weakref.finalize(self, shutil.rmtree, self.tmpdir, True)
        #: RUN-14: every process the implementation starts inherits this tag, so that what
        #: it leaves behind (a daemon in a session of its own) can be found and ended.
        self.tag = f"{_TAG}={uuid.uuid4().hex}"
        env = {**(os.environ if env is None else env), "TMPDIR": self.tmpdir,
               _TAG: self.tag.split("=", 1)[1]}
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, start_new_session=True,
                                         env=env, cwd=cwd)
        except BaseException:
            self._remove_tmpdir()
            raise
        self.outbox: queue.Queue[bytes | None] = queue.Queue()
        self.write_failed = threading.Event()
        threading.Thread(target=self._pump, daemon=True, name="numaspec-stdout").start()
        threading.Thread(target=self.stderr.pump, args=(self.proc.stderr,), daemon=True,
                         name="numaspec-stderr").start()
        threading.Thread(target=self._write, daemon=True, name="numaspec-stdin").start()

    def _write(self) -> None:
        """Write queued lines to stdin; ``None`` closes it."""
        stdin = self.proc.stdin
        assert stdin is not None
        outbox = self.outbox
        try:
            while (data := outbox.get()) is not None:
                stdin.write(data)
                # what else is queued goes in the same write (a window of requests in
                # flight: one system call, one wake-up of the implementation, not one each)
                while not outbox.empty() and (data := outbox.get_nowait()) is not None:
                    stdin.write(data)
                stdin.flush()
                if data is None:
                    break
            stdin.close()
        except (OSError, ValueError):
            self.write_failed.set()

    def _pump(self) -> None:
        """RUN-2: hand over whole lines; a line over the cap is reported, then drained."""
        stream = self.proc.stdout
        assert stream is not None
        try:
            while True:
                line = stream.readline(self.max_line + 1)
                if not line:
                    break
                if len(line) > self.max_line and not line.endswith(b"\n"):
                    self.lines.put(("overflow", line[:_OFFENDING]))
                    while (rest := stream.readline(65536)) and not rest.endswith(b"\n"):
                        pass
                    continue
                self.lines.put(("line", line.rstrip(b"\r\n")))
        except (OSError, ValueError):
            pass
        self.lines.put(_EOF)

    def send(self, message: dict[str, Any]) -> bool:
        """Queue one request line; False once writing to the process has failed."""
        if self.write_failed.is_set():
            return False
        try:
            data = _ENCODER.encode(message)
        except (TypeError, ValueError, OverflowError, UnicodeError):
            data = json.dumps(message, separators=(",", ":")).encode()
        self.outbox.put(data + b"\n")
        return True

    def receive(self, deadline: float) -> tuple[str, bytes] | None:
        """The next item (("line", bytes) / ("overflow", bytes) / _EOF), or None on timeout.

        RUN-14: end of file is also read from the process's exit: once it has exited and
        its last lines are in, a descendant that keeps the pipe open does not keep the
        runner waiting."""
        with contextlib.suppress(queue.Empty):
            return self.lines.get_nowait()  # already in: no timed wait
        exited_at: float | None = None
        while True:
            now = time.monotonic()
            try:
                return self.lines.get(timeout=max(0.0, min(deadline - now, _EXIT_POLL)))
            except queue.Empty:
                pass
            now = time.monotonic()
            if self.proc.poll() is not None:
                exited_at = exited_at if exited_at is not None else now
                if now - exited_at >= _EXIT_GRACE:
                    return _EOF
            if now >= deadline:
                return None

    def exit_status(self, wait: float = 1.0) -> int | None:
        try:
            return self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # what is left of its group
        kill_tagged(self.tag)
        with contextlib.suppress(subprocess.TimeoutExpired):  # an unkillable process
            self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        if self.proc.poll() is not None:  # gone (an unkillable one keeps its temp dir)
            self._remove_tmpdir()

    def _remove_tmpdir(self) -> None:
        if self.tmpdir is not None:
            self._tmpdir_finalizer()  # shutil.rmtree(tmpdir, ignore_errors=True), once
            self.tmpdir = None

    def stop(self) -> None:
        """PROTO-5: ask politely, then kill the whole process group."""
        if self.proc.poll() is None and self.send({"cmd": "stop"}):
            self.outbox.put(None)
            self.exit_status(_STOP_GRACE)
        self.kill()


class ExecConnection:
    """RUN-1..RUN-3: an implementation as a subprocess speaking the adapter protocol."""

    def __init__(self, command: str, *, timeout: float = DEFAULT_TIMEOUT,
                 start_timeout: float = DEFAULT_START_TIMEOUT,
                 max_line: int = DEFAULT_MAX_LINE,
                 strict: StrictChecker | None = None, env: dict[str, str] | None = None,
                 cwd: str | None = None, max_failed_starts: int = 3) -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise AdapterError("exec: needs a command", where="--impl")
        self.command = command
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.max_line = max_line
        self.strict = strict
        self.env = env
        self.cwd = cwd
        self.max_failed_starts = max_failed_starts
        self.restarts = -1  # the first start is not a restart
        self.broken: str | None = None
        self._failed_starts = 0
        self._seq = 0
        self._process: LineProcess | None = None
        self._stderr_log: list[str] = []
        problem = self._start()
        if problem:
            raise AdapterError(f"{command}: {problem}", where="start")

    # -- lifecycle

    def _start(self) -> str | None:
        """Start the command and shake hands; a description of what went wrong, or None."""
        self.restarts += 1
        try:
            process = LineProcess(self.argv, self.max_line, self.env, self.cwd)
        except OSError as exc:
            return f"cannot run {self.argv[0]!r}: {exc.strerror or exc}"
        request = {"cmd": "start", "version": PROTOCOL_VERSION}
        if not process.send(request):
            return self._failed_start(process, "its stdin closed before the start request")
        item = process.receive(time.monotonic() + self.start_timeout)
        if item is None:
            return self._failed_start(process, f"no answer to start within "
                                               f"{self.start_timeout:g}s")
        if item == _EOF:
            status = process.exit_status()
            return self._failed_start(process, f"exited (status {status}) before answering "
                                               "start")
        tag, line = item
        if tag == "overflow":
            return self._failed_start(process, f"start answer longer than {self.max_line} "
                                               "bytes")
        try:
            answer = load_answer(line)
        except (ValueError, NumaspecError) as exc:
            return self._failed_start(process, f"start answer is not JSON ({exc}): "
                                               f"{_truncate(line)}")
        if not isinstance(answer, dict) or answer.get("ready") is not True:
            return self._failed_start(process, f"not ready: {_truncate(json.dumps(answer))}")
        if answer.get("version") != PROTOCOL_VERSION:
            return self._failed_start(process, f"speaks protocol version "
                                               f"{answer.get('version')!r}, numaspec speaks "
                                               f"{PROTOCOL_VERSION}")
        try:
            implementation = Implementation.from_json(answer.get("implementation"), "start")
        except AdapterError as exc:
            return self._failed_start(process, exc.describe())
        # PROTO-2: the start answer is checked against its schema in every run, so that a
        # normal run and a --strict one accept the same declarations (after the checks above,
        # whose messages say more about the common mistakes).
        problem = start_checker().start_problem(answer)
        if problem:
            return self._failed_start(process, problem)
        if not hasattr(self, "implementation"):
            self.implementation = implementation
        # PROTO-8: a batch answer line may be as long as the answers it holds
        process.max_line = self.max_line * min(self.implementation.batch, _BATCH_CAP)
        self._process = process
        self._failed_starts = 0
        return None

    def _failed_start(self, process: LineProcess, problem: str) -> str:
        process.kill()
        process.stderr.done.wait(1.0)
        tail = process.stderr.since(0)
        self._stderr_log.append(tail)
        self._failed_starts += 1
        if self._failed_starts >= self.max_failed_starts:
            self.broken = (f"{self._failed_starts} starts in a row failed; the last: "
                           f"{problem}")
        return problem + (f"; stderr: {tail}" if tail else "")

    def _discard(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.stderr.done.wait(1.0)
            self._stderr_log.append(self._process.stderr.since(0))
            self._process = None

    # -- cases

    def _ready(self) -> Answer | None:
        """A running, started process; or the Answer saying why there is none."""
        if self.broken:
            return Answer("crashed", message=self.broken)
        if self._process is None or self._process.proc.poll() is not None:
            self._discard()
            problem = self._start()
            if problem:
                return Answer("crashed", message=f"restarting the implementation failed: "
                                                 f"{problem}", restarted=True)
        return None

    def _send(self, process: LineProcess, op: str, case: Any) -> int | None:
        self._seq += 1
        request = {"cmd": "run", "seq": self._seq, "op": op, "case": case}
        if self.strict is not None:
            self.strict.check_request(request)
        return self._seq if process.send(request) else None

    def _send_batch(self, process: LineProcess, op: str, cases: Sequence[Any]
                    ) -> list[int] | None:
        """PROTO-8: one batch request holding a run request per case."""
        runs = []
        for case in cases:
            self._seq += 1
            runs.append({"cmd": "run", "seq": self._seq, "op": op, "case": case})
        request = {"cmd": "batch", "runs": runs}
        if self.strict is not None:
            self.strict.check_request(request)
        return [run["seq"] for run in runs] if process.send(request) else None

    def run(self, op: str, case: Any) -> Answer:
        return self.run_many(op, [case], window=1)[0]

    def run_many(self, op: str, cases: list[Any], *, window: int = 32,
                 stop: Callable[[Answer], bool] | None = None) -> list[Answer]:
        """PROTO-3: up to ``window`` cases in flight; answers must come back in order.
        The window slides: each answer read lets more requests go, so the implementation
        is never left idle waiting for a whole batch to be read.

        PROTO-8: to an implementation that declares ``batch``, the cases go as batch
        requests of up to half the window (so that one batch is answered while the next is
        read), each answered by one line.

        When a case crashes, times out or breaks the protocol, the process is discarded and
        the cases sent after it are sent again to a fresh one.  When a batch crashes or
        times out, which of its cases did it is not known: they are sent again one a
        request, so that the crash or the timeout lands on the case that causes it.

        ``stop``, called with each answer in order, ends the run early when it says so (the
        runner giving up on an implementation, RUN-3): the answers so far are returned.
        """
        size = min(self.implementation.batch, max(1, window // 2), _BATCH_CAP)
        answers: list[Answer] = []
        singles_until = 0  # cases before this index go one a request (PROTO-8)
        while len(answers) < len(cases):
            trouble = self._ready()
            if trouble is not None:
                answers.append(trouble)
                if stop is not None and stop(trouble):
                    return answers
                continue
            process = self._process
            assert process is not None
            mark = process.stderr.total
            # each request's seqs, and how much stderr there was when it was sent
            in_flight: collections.deque[tuple[list[int], int]] = collections.deque()
            flying = 0
            following = len(answers)
            while len(answers) < len(cases):
                while flying < window and following < len(cases):
                    count = (1 if following < singles_until
                             else min(size, len(cases) - following, window - flying))
                    if count == 1:
                        seq = self._send(process, op, cases[following])
                        seqs = None if seq is None else [seq]
                    else:
                        seqs = self._send_batch(process, op, cases[following:following + count])
                    if seqs is None:
                        break
                    in_flight.append((seqs, process.stderr.total))
                    flying += len(seqs)
                    following += len(seqs)
                if not in_flight:
                    answers.append(self._crashed(process, mark, "its stdin is closed"))
                    if stop is not None and stop(answers[-1]):
                        return answers
                    break
                unit, sent = in_flight.popleft()
                flying -= len(unit)
                if len(unit) == 1:
                    got: list[Answer] | None = [self._receive(process, unit[0], op, mark,
                                                              sent)]
                else:
                    got = self._receive_batch(process, unit, op, mark)
                    if got is None:  # crashed or timed out: isolate the case that did it
                        singles_until = len(answers) + len(unit)
                for answer in got or ():
                    answers.append(answer)
                    if stop is not None and stop(answer):
                        if self._process is process and in_flight:
                            self._discard()  # answers still on their way would be out of step
                        return answers
                mark = process.stderr.total
                if self._process is not process:
                    break  # discarded: the cases after it go to a fresh process
        return answers

    def _receive_batch(self, process: LineProcess, seqs: list[int], op: str, mark: int
                       ) -> list[Answer] | None:
        """PROTO-8: the answers to one batch, one per case up to the first that breaks the
        protocol (that one a protocol error, the process then discarded); None when the
        process crashed or timed out before answering (discarded too)."""
        item = process.receive(time.monotonic() + self.timeout)
        if item is None or item == _EOF:
            self._discard()
            return None
        tag, line = item
        problem, entries = "", None
        if tag == "overflow":
            problem = f"batch answer line longer than {process.max_line} bytes"
        else:
            try:
                decoded = load_answer(line)
            except (ValueError, NumaspecError) as exc:
                problem = f"the batch answer is not JSON ({exc})"
            else:
                entries = decoded.get("answers") if isinstance(decoded, dict) else None
                if (not isinstance(entries, list) or set(decoded) != {"answers"}
                        or len(entries) > len(seqs)):
                    problem = (f"a batch answer is an object holding only 'answers', a list of "
                               f"at most {len(seqs)} run answers (one a run, in order)")
        stderr = process.stderr.since(mark)
        if problem:
            self._discard()
            return [Answer("protocol-error", message=f"{problem}; the batch's first case, "
                           f"seq {seqs[0]}, is charged with it", offending=_truncate(line),
                           stderr=stderr, restarted=True)]
        assert entries is not None
        answers: list[Answer] = []
        for seq, entry in zip(seqs, entries, strict=False):
            answer = _classify(entry, seq, self.strict, op, read=True)
            if answer.status == "protocol-error" and "out of order" in answer.message:
                self._discard()
                answers.append(attrs.evolve(answer, restarted=True))
                break
            answers.append(answer)
        else:
            if len(entries) < len(seqs):
                self._discard()
                answers.append(Answer(
                    "protocol-error", message=f"the batch answer holds {len(entries)} answers "
                    f"for {len(seqs)} runs: none for seq {seqs[len(entries)]}",
                    offending=_truncate(line), restarted=True))
        if stderr:
            answers[0] = attrs.evolve(answers[0], stderr=stderr)
        return answers

    def _receive(self, process: LineProcess, seq: int, op: str, mark: int,
                 sent: int | None = None) -> Answer:
        """One run's answer; what was written on stderr since ``mark`` goes with it, and
        with a crash or a timeout what was written since the request was ``sent`` (with
        several requests in flight, the answer before it may have been read after the
        crashing case wrote its last words)."""
        trouble = mark if sent is None else min(mark, sent)
        item = process.receive(time.monotonic() + self.timeout)
        if item is None:
            stderr = process.stderr.since(trouble)
            self._discard()
            return Answer("timeout", message=f"no answer within {self.timeout:g}s; the "
                                             "process was killed and will be restarted",
                          stderr=stderr, restarted=True)
        if item == _EOF:
            return self._crashed(process, trouble, "it closed its stdout")
        tag, line = item
        if tag == "overflow" or len(line) > self.max_line:
            stderr = process.stderr.since(mark)
            self._discard()
            return Answer("protocol-error",
                          message=f"answer line longer than {self.max_line} bytes",
                          offending=_truncate(line), stderr=stderr, restarted=True)
        try:
            decoded = load_answer(line)
        except (ValueError, NumaspecError) as exc:
            stderr = process.stderr.since(mark)
            self._discard()
            return Answer("protocol-error", message=f"the answer is not JSON ({exc})",
                          offending=_truncate(line), stderr=stderr, restarted=True)
        answer = _classify(decoded, seq, self.strict, op, read=True)
        stderr = process.stderr.since(mark)
        if answer.status == "protocol-error" and "out of order" in answer.message:
            self._discard()  # later answers would all be shifted: start again in step
            answer = attrs.evolve(answer, restarted=True)
        return attrs.evolve(answer, stderr=stderr) if stderr else answer

    def _crashed(self, process: LineProcess, mark: int, how: str) -> Answer:
        status = process.exit_status()
        process.stderr.done.wait(1.0)
        stderr = process.stderr.since(mark)
        self._discard()
        return Answer("crashed", message=f"{how} (exit status {status}); it will be restarted",
                      stderr=stderr, restarted=True)

    def stderr_tail(self) -> str:
        current = self._process.stderr.since(0) if self._process is not None else ""
        return _truncate("".join([*self._stderr_log, current])[-4000:], 4000)

    def close(self) -> None:
        if self._process is not None:
            self._process.stop()
            self._process.stderr.done.wait(1.0)
            self._stderr_log.append(self._process.stderr.since(0))
            self._process = None


def connect(spec: str, *, timeout: float = DEFAULT_TIMEOUT, max_line: int = DEFAULT_MAX_LINE,
            strict: bool = False, start_timeout: float = DEFAULT_START_TIMEOUT) -> Connection:
    """``exec:COMMAND`` or ``module:object`` → a started connection (RUN-1)."""
    checker = StrictChecker() if strict else None
    if spec.startswith("exec:"):
        return ExecConnection(spec[len("exec:"):], timeout=timeout, max_line=max_line,
                              strict=checker, start_timeout=start_timeout)
    target = resolve_object(spec)
    if hasattr(target, "start") and hasattr(target, "run"):
        adapter: JsonAdapter = target
    elif isinstance(target, MergeImplementation):
        adapter = MergeObjectAdapter(target)
    else:
        raise AdapterError(f"{spec} is neither an adapter (start() and run(op, case)) nor a "
                           "merge implementation (name and merge(request))", where="--impl")
    return InProcessConnection(adapter, timeout=timeout, strict=checker, label=spec,
                               start_timeout=start_timeout)


@functools.cache
def start_checker() -> StrictChecker:
    """The schemas' checker, built once: every run checks the start answer with it."""
    return StrictChecker()

