"""The adapter protocol, implementation side (spec chapter ``adapter-protocol.md``).

An implementation runs as a long-lived process: it reads one JSON request per line on stdin
and writes one JSON answer per line on stdout; stderr is for diagnostics only.

* ``{"cmd": "start", "version": 1}`` → ``{"ready": true, "version": 1, "implementation":
  {...}}`` (PROTO-2);
* ``{"cmd": "run", "seq": n, "op": "merge" | "hints" | "node" | "affinity" | "predict" |
  "allocate", "case": {...}}``
  → exactly one
  of ``{"seq": n, "result": ...}``, ``{"seq": n, "skipped": true, "message": ...}`` or
  ``{"seq": n, "errored": true, "context": {"message": ...}}`` (PROTO-3, PROTO-4);
* ``{"cmd": "stop"}`` → no answer; the process exits (PROTO-5).

This module holds the reference's own answers (:func:`reference_result`), the reference as an
adapter (:class:`ReferenceAdapter`) and :func:`serve_adapter`, the loop that puts any
in-process adapter (an object with ``start()`` and ``run(op, case)``) behind the protocol:
``numaspec serve`` is ``serve_adapter(ReferenceAdapter())``.  The ``predict`` operation's
cases are here too (spec chapter ``predict.md``, PRED-1, PRED-2): what a scheduler-side
implementation is sent (:func:`predict_case`, :func:`scheduler_case`) and the reference's
answer, the node's own admission (:func:`reference_predict`).
"""

from __future__ import annotations

import copy
import re
import traceback
from collections.abc import Mapping, Sequence
from typing import Any, BinaryIO, Protocol, TextIO

from numaspec.about import version as numaspec_version
from numaspec.errors import InvalidFieldError, MalformedJSONError, NumaspecError
from numaspec.limits import MAX_LINE_BYTES
from numaspec.node.admission import Node
from numaspec.node.fit import fit_rejection
from numaspec.node.nodeconfig import NODE_VERSIONS
from numaspec.node.predict import scheduler_view
from numaspec.protocols.allocate_protocol import ALLOCATE_RELEASES
from numaspec.protocols.merge_protocol import (
    MergeRequest,
    decode_merge_request,
    encode_error,
    encode_line,
    encode_outcome,
    evaluate_request,
    request_lines,
)
from numaspec.protocols.merge_wire import read_batch_merges, read_run_merge
from numaspec.protocols.node_protocol import NodeSession, decode_pod
from numaspec.protocols.operations import (
    NODE_SESSION_OPERATIONS,
    OPERATIONS,
    REFERENCE_OPERATIONS,
)
from numaspec.protocols.operations import (
    TABLE as OPERATION_TABLE,
)
from numaspec.strict_json import decode_json_line
from numaspec.topology.masks import iterate_masks
from numaspec.topology.versions import SUPPORTED_VERSIONS

__all__ = [
    "PROTOCOL_VERSION",
    "REFERENCE_IMPL",
    "SCHEDULER_FIELDS",
    "JsonAdapter",
    "ReferenceAdapter",
    "predict_case",
    "reference_predict",
    "reference_result",
    "scheduler_case",
    "sent_case",
    "serve_adapter",
]

#: PROTO-2: the protocol version this numaspec speaks.
PROTOCOL_VERSION = 1
#: PROTO-8: the most runs ``numaspec serve`` answers in one batch request; a batch line may be
#: as long as that many request lines (WIRE-5)
SERVE_BATCH = 16

#: The reference, in-process: the default ``--impl``.
REFERENCE_IMPL = "numaspec.protocols.adapter_protocol:ReferenceAdapter"

class JsonAdapter(Protocol):
    """An implementation at the JSON level, in-process: what :func:`serve_adapter` serves.

    ``start()`` returns the ``implementation`` object of the start answer; ``run(op, case)``
    returns the answer without ``seq`` (``{"result": ...}``, ``{"skipped": true, ...}`` or
    ``{"errored": true, ...}``).
    """

    def start(self) -> dict[str, Any]: ...

    def run(self, op: str, case: Any) -> dict[str, Any]: ...


def _steps(case: Any) -> list[Any]:
    if not isinstance(case, dict) or set(case) != {"steps"} or not isinstance(case["steps"],
                                                                                list):
        raise InvalidFieldError('a hints or node case is {"steps": [request, ...]}',
                                where="case")
    return case["steps"]


def reference_result(op: str, case: Any, *, definitional: bool = False) -> Any:
    """PROTO-3: the reference's ``result`` for one case.

    ``merge``: the merge response of ``spec/protocols/merge-protocol.md`` (an ``{"error": ...}``
    object for a request the reference refuses).  ``hints`` and ``node``: ``{"answers":
    [...]}``, one node-protocol answer per step of a fresh node session
    (``spec/protocols/node-protocol.md``).
    ``predict``: the node's own admission of the case's pod after its steps (PRED-2).
    ``allocate``: the structured allocator's answer, the node's pools in first-listed order
    (DRA-10).  ``mixed``: a pod's DRA allocation, its admission and each container's
    placements and pairs (DRA-13).  ``cpus``: the CPUs the static policy's allocator takes
    (CPU-21).
    Raises :class:`InvalidFieldError` only when the case is not shaped like a case at all.
    ``definitional``: a merge is answered by walking the cross product (the spec's meaning,
    FAST-7), within WIRE-4's budget, instead of by the fast merge.
    """
    if op == "merge":
        try:
            return _merge_result(decode_merge_request(case), definitional=definitional)
        except NumaspecError as exc:
            return encode_error(exc)
    if op in NODE_SESSION_OPERATIONS:
        session = NodeSession(affinity=op == "affinity")
        answers = []
        for step in _steps(case):
            try:
                answers.append(session.handle(step))
            except NumaspecError as exc:
                answers.append(encode_error(exc))
        return {"answers": answers}
    row = OPERATION_TABLE.get(op)
    one_case = row.answerer() if row is not None else None
    if one_case is not None:
        try:
            return one_case(case)
        except NumaspecError as exc:
            return encode_error(exc)
    raise InvalidFieldError(f"unknown op {op!r} (known: {', '.join(OPERATIONS)})", where="op")


def _merge_result(request: MergeRequest, *, definitional: bool = False) -> dict[str, Any]:
    """PROTO-3: a merge's result, the refusal's error object when the reference refuses."""
    try:
        return encode_outcome(evaluate_request(request, definitional=definitional))
    except NumaspecError as exc:
        return encode_error(exc)


def sent_case(op: str, case: Any) -> Any:
    """PRED-1: what an implementation is sent for a case: the case itself, except that a
    predict case goes without the node session it was derived from (the scheduler sees the
    node only through its NodeResourceTopology)."""
    if op == "predict" and isinstance(case, dict):
        return scheduler_case(case)
    return case


class ReferenceAdapter:
    """numaspec's reference behind the adapter protocol.  ``definitional``: merges walk the
    cross product (``numaspec serve --definitional``), so that the walk itself can be judged
    as an implementation; the answers are the fast merge's (FAST-1).  ``batch``: it declares
    batches of :data:`SERVE_BATCH` runs (PROTO-8; ``numaspec serve --no-batch``: it does not,
    and is sent one run a request)."""

    def __init__(self, *, definitional: bool = False, batch: bool = True) -> None:
        self.definitional = definitional
        self.batch = batch

    def start(self) -> dict[str, Any]:
        return {
            "name": "numaspec-reference",
            "version": numaspec_version(),
            "language": "python",
            "homepage": "https://github.com/numaspec/numaspec",
            "issues": "https://github.com/numaspec/numaspec/issues",
            "kubelet_versions": [str(v) for v in SUPPORTED_VERSIONS],
            "node_kubelet_versions": [f"1.{m}" for m in NODE_VERSIONS],
            "allocate_versions": list(ALLOCATE_RELEASES),
            "operations": list(REFERENCE_OPERATIONS),
            # PROTO-7: numaspec's line format is the reference's own interface.
            "claims": {"format": True},
            # PROTO-8: many runs a round trip
            **({"batch": SERVE_BATCH} if self.batch else {}),
            # PROTO-2: every operation it serves it claims whole; predict it does not serve
            "metadata": {"not_served": {
                "predict": "the reference judges a scheduler's predict answers by the node's "
                           "own admission (PRED-2); it is not a scheduler"}},
        }

    def subsets(self, nodes: list[int]) -> list[tuple[int, ...]]:
        """MASK-3: the reference's subset enumeration (an in-process capability)."""
        return [mask.nodes for mask in iterate_masks(nodes)]

    def answer_merge_line(self, line: bytes) -> dict[str, Any] | None:
        """WIRE-7: the whole answer to a line that is a run request of a merge, read by the
        fast reading (:mod:`numaspec.protocols.merge_wire`); ``None`` for any other line, and
        for one the strict decoders must read."""
        if self.definitional:
            return None
        found = read_run_merge(line)
        if found is None:
            return None
        answers = _merge_answers([found])
        return None if answers is None else answers[0]

    def answer_batch_line(self, line: bytes) -> dict[str, Any] | None:
        """PROTO-8, WIRE-7: the whole answer to a line that is a batch of merge runs the
        fast reading takes whole; ``None`` for any other line (the strict decoders read it,
        and each of its runs is answered as a run request)."""
        if self.definitional:
            return None
        found = read_batch_merges(line, SERVE_BATCH)
        answers = None if found is None else _merge_answers(found)
        return None if answers is None else {"answers": answers}

    def run(self, op: str, case: Any) -> dict[str, Any]:
        try:
            return {"result": reference_result(op, case, definitional=self.definitional)}
        except NumaspecError as exc:
            return {"errored": True, "context": {"message": exc.describe()}}


def _merge_answers(runs: Sequence[tuple[int, MergeRequest]]) -> list[dict[str, Any]] | None:
    """WIRE-7: the run answers to merge requests the fast reading took, or ``None`` when the
    reference fails on one (the strict path then answers the line, traceback and all)."""
    answers = []
    for seq, request in runs:
        try:
            answers.append({"seq": seq, "result": _merge_result(request)})
        except Exception:
            return None
    return answers


def _answer(adapter: JsonAdapter, request: Mapping[str, Any]) -> dict[str, Any] | None:
    cmd = request.get("cmd")
    if cmd == "start":
        version = request.get("version")
        if version != PROTOCOL_VERSION:
            return {"ready": False, "version": PROTOCOL_VERSION,
                    "message": f"this adapter speaks protocol version {PROTOCOL_VERSION}, "
                               f"not {version!r}"}
        return {"ready": True, "version": PROTOCOL_VERSION, "implementation": adapter.start()}
    if cmd == "run":
        seq = request.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool):
            return {"seq": None, "errored": True,
                    "context": {"message": "run: 'seq' must be an integer"}}
        try:
            body = adapter.run(str(request.get("op")), request.get("case"))
        except Exception as exc:  # the adapter's own bug: caught, reported, stream goes on
            body = {"errored": True, "context": {
                "message": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc()}}
        return {"seq": seq, **body}
    if cmd == "batch":
        return _batch(adapter, request)
    raise InvalidFieldError(f"unknown cmd {cmd!r} (known: start, run, batch, stop)", where="cmd")


#: PROTO-8: how a batch request line begins
_BATCH_LINE = re.compile(rb'\s*\{\s*"cmd"\s*:\s*"batch"')


def _batch(adapter: JsonAdapter, request: Mapping[str, Any]) -> dict[str, Any]:
    """PROTO-8: a batch request's answer, each run answered as it would be alone (for any
    adapter :func:`serve_adapter` serves, so that one that declares batches as the
    reference's start answer does is served them); a batch
    that is not one (no list of 1 to :data:`SERVE_BATCH` run requests, or another field) is
    refused whole, as any line that is no request."""
    runs = request.get("runs")
    if set(request) != {"cmd", "runs"} or not isinstance(runs, list) or not (
            0 < len(runs) <= SERVE_BATCH) or not all(
            isinstance(run, dict) and run.get("cmd") == "run" for run in runs):
        raise InvalidFieldError(f"a batch is {{\"cmd\": \"batch\", \"runs\": [...]}}, 1 to "
                                f"{SERVE_BATCH} run requests", where="runs")
    return {"answers": [_answer(adapter, run) for run in runs]}


def serve_adapter(adapter: JsonAdapter, stdin: BinaryIO, stdout: TextIO, *,
                  max_line: int = MAX_LINE_BYTES) -> int:
    """Answer the adapter protocol on ``stdin``/``stdout`` until ``stop`` or end of input.

    PROTO-1, WIRE-5: every line gets one answer, whatever it holds; a line that is not a
    request, or that the adapter fails on, is answered as ``errored`` and the stream goes
    on."""
    fast = getattr(adapter, "answer_merge_line", None)
    batch = getattr(adapter, "answer_batch_line", None)
    # PROTO-8: a batch line may be as long as the run lines it holds
    for line in request_lines(stdin, max_line, longer=(_BATCH_LINE, SERVE_BATCH)):
        try:
            if isinstance(line, NumaspecError):
                raise line
            answer = fast(line) if fast is not None else None
            if answer is None and batch is not None:
                answer = batch(line)
            if answer is None:  # not a merge the fast reading takes whole (WIRE-7)
                request = decode_json_line(line)
                if not isinstance(request, dict):
                    raise MalformedJSONError("a request is a JSON object")
                if request.get("cmd") == "stop":
                    return 0
                answer = _answer(adapter, request)
        except NumaspecError as exc:
            answer = {"seq": None, "errored": True, "context": {"message": exc.describe()}}
        except Exception as exc:  # a bug in the reference must not end the stream
            answer = {"seq": None, "errored": True, "context": {
                "message": f"numaspec failed on this line: {type(exc).__name__}: {exc}"}}
        stdout.write(encode_line(answer))
        stdout.flush()
    return 0


# --- predict: a scheduler's view of a node, judged by the node (PRED-1, PRED-2) ----------------

#: PRED-1: the fields of a predict case a scheduler-side implementation receives.
SCHEDULER_FIELDS = ("kubelet_version", "nrt", "node", "pod")


def _session(steps: Sequence[Any], where: str) -> tuple[Node, str]:
    """The node after ``steps`` (create, admit, remove), which must all succeed."""
    session = NodeSession()
    for index, step in enumerate(steps):
        if not isinstance(step, dict) or step.get("op") not in ("create", "admit", "remove"):
            raise InvalidFieldError("a predict case's steps are create, admit and remove "
                                    "requests of the node protocol", where=f"{where}[{index}]")
        try:
            session.handle(step)
        except NumaspecError as exc:
            raise InvalidFieldError(f"step {index} of the node session fails: "
                                    f"{exc.describe()}", where=f"{where}[{index}]") from None
    if session.node is None:
        raise InvalidFieldError("the steps create no node", where=where)
    version = str(session.node.version)
    return session.node, version


def predict_case(case: Mapping[str, Any]) -> dict[str, Any]:
    """PRED-1: a stored predict case (``{"steps", "pod"}``) with what the scheduler sees
    derived from it: ``kubelet_version``, ``nrt`` and ``node`` added."""
    if not isinstance(case, Mapping) or set(case) - {"steps", "pod", *SCHEDULER_FIELDS} \
            or not isinstance(case.get("steps"), list) or "pod" not in case:
        raise InvalidFieldError("a predict case is {\"steps\": [node-protocol create/admit/"
                                "remove requests], \"pod\": <admit pod>}", where="case")
    node, version = _session(case["steps"], "case.steps")
    return {"kubelet_version": version, "steps": case["steps"], **scheduler_view(node),
            "pod": case["pod"]}


def scheduler_case(case: Mapping[str, Any]) -> dict[str, Any]:
    """PRED-1: the part of a predict case sent to an implementation: never the steps."""
    return {k: case[k] for k in SCHEDULER_FIELDS if k in case}


def reference_predict(case: Mapping[str, Any]) -> dict[str, Any]:
    """PRED-2: the reference's answer: the node's own admission of the pod, on a copy of the
    node after the steps (the whole admission, resource fit included)."""
    if not isinstance(case, Mapping) or not isinstance(case.get("steps"), list):
        raise InvalidFieldError("a predict case needs its node session's steps",
                                where="case.steps")
    node, _ = _session(case["steps"], "case.steps")
    pod = decode_pod(case.get("pod"))
    decision = copy.deepcopy(node).admit(pod)
    if not decision.admitted:
        answer: dict[str, Any] = {"fits": False, "reason": decision.reason,
                                  "message": decision.message}
        if fit_rejection(pod, node.pods.values(), node.allocatable) is not None:
            # PRED-3: the pod does not fit the node's allocatable as a whole (ADMIT-8),
            # whichever of kubelet's handlers rejected it first.
            answer["node_fit"] = False
        return answer
    placed = {c.name: list(c.hint.numa_affinity.nodes) for c in decision.containers
              if c.hint.numa_affinity is not None}
    answer = {"fits": True}
    if placed:
        answer["numa_nodes"] = placed
    return answer
