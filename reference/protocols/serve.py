"""The reference's line loops: ``numaspec merge``, ``numaspec node`` and ``numaspec serve``
(spec chapters ``merge-protocol.md``, ``node-protocol.md``, ``adapter-protocol.md``).

Each reads one request per line on stdin and writes one answer per line on stdout, in order,
flushed per line: a bad line gets an error answer and the stream goes on (WIRE-3, NWIRE-2);
a line longer than the bound is answered ``limit-exceeded`` without being kept (WIRE-5).  The
adapter protocol's loop is :func:`numaspec.protocols.adapter_protocol.serve_adapter`.
"""

from __future__ import annotations

from typing import Any, BinaryIO, TextIO

from numaspec.errors import NumaspecError
from numaspec.limits import MAX_LINE_BYTES
from numaspec.protocols.merge_protocol import (
    DEFAULT_MAX_MERGE_STEPS,
    decode_merge_request,
    encode_error,
    encode_line,
    encode_outcome,
    evaluate_request,
    request_lines,
)
from numaspec.protocols.merge_wire import read_merge_request
from numaspec.protocols.node_protocol import NodeSession
from numaspec.strict_json import decode_json_line
from numaspec.topology.trace import MergeTrace

__all__ = ["answer_merge_line", "serve_merge", "serve_node"]


def answer_merge_line(line: bytes | str, *, max_steps: int = DEFAULT_MAX_MERGE_STEPS,
                      explain: bool = False, definitional: bool = False) -> dict[str, Any]:
    """The JSON response to one request line; never raises for bad input.  ``explain``:
    the response carries the merge's trace as ``explain`` (EXPLAIN-1).  ``definitional``:
    the cross product is walked (within ``max_steps``, WIRE-4) instead of the fast merge."""
    try:
        fast = read_merge_request(line if isinstance(line, bytes) else line.encode(
            "utf-8", "surrogatepass"))
        request = fast if fast is not None else decode_merge_request(decode_json_line(line))
        if explain:
            trace = MergeTrace()
            outcome = evaluate_request(request, max_steps=max_steps, trace=trace,
                                       definitional=definitional)
            return {**encode_outcome(outcome), "explain": trace.as_json()}
        return encode_outcome(evaluate_request(request, max_steps=max_steps,
                                               definitional=definitional))
    except NumaspecError as exc:
        return encode_error(exc)
    except Exception as exc:  # a bug in the reference must not end the stream
        return {"error": {"kind": "internal-error",
                          "message": f"numaspec failed on this line: {type(exc).__name__}: {exc}"}}


def serve_merge(stdin: BinaryIO, stdout: TextIO, *, max_steps: int = DEFAULT_MAX_MERGE_STEPS,
                explain: bool = False, definitional: bool = False,
                max_line: int = MAX_LINE_BYTES) -> int:
    for line in request_lines(stdin, max_line):
        response = (encode_error(line) if isinstance(line, NumaspecError)
                    else answer_merge_line(line, max_steps=max_steps, explain=explain,
                                           definitional=definitional))
        stdout.write(encode_line(response))
        stdout.flush()
    return 0


def serve_node(stdin: BinaryIO, stdout: TextIO, *, affinity: bool = False,
               explain: bool = False, max_line: int = MAX_LINE_BYTES) -> int:
    session = NodeSession(affinity=affinity, explain=explain)
    for line in request_lines(stdin, max_line):
        response = encode_error(line) if isinstance(line, NumaspecError) else session.answer(line)
        stdout.write(encode_line(response))
        stdout.flush()
    return 0
