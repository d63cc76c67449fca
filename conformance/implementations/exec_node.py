"""A node-protocol implementation that runs as a subprocess (one JSON line in, one out).

Used for the Go node probe over real kubelet code.  The process is a
:class:`~numaspec.conformance.implementations.connection.LineProcess` (the runner's
supervised subprocess);
one that dies, hangs past the timeout or answers with something other than one JSON object is
reported as an :class:`~numaspec.errors.AdapterError` naming the command and what it printed.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from numaspec.conformance.implementations.connection import (
    DEFAULT_MAX_LINE,
    LineProcess,
    load_answer,
)
from numaspec.errors import AdapterError, NumaspecError

__all__ = ["ExecNode"]


class ExecNode:
    """``handle`` sends a request line to the subprocess and reads its answer line."""

    def __init__(self, command: Sequence[str], *, timeout: float = 30.0,
                 name: str | None = None) -> None:
        self.command = list(command)
        self.name = name or " ".join(self.command)
        self.timeout = timeout
        self.process = LineProcess(self.command, DEFAULT_MAX_LINE, None, None)

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        if not self.process.send(request):
            self.close()
            raise AdapterError(f"{self.name} did not answer (its stdin is closed)")
        item = self.process.receive(time.monotonic() + self.timeout)
        if item is None:
            self.close()
            raise AdapterError(f"{self.name} did not answer within {self.timeout:g}s")
        tag, line = item
        if tag == "eof":
            raise AdapterError(f"{self.name} exited (code {self.process.exit_status()})")
        if tag == "overflow":
            raise AdapterError(f"{self.name} answered with a line over {DEFAULT_MAX_LINE} "
                               f"bytes: {line[:200]!r}")
        try:
            answer = load_answer(line)
        except (ValueError, NumaspecError) as exc:
            raise AdapterError(f"{self.name} answered with non-JSON ({exc}): "
                               f"{line[:200]!r}") from None
        if not isinstance(answer, dict):
            raise AdapterError(f"{self.name} answered with {line[:200]!r}, not an object")
        return answer

    def close(self) -> None:
        self.process.kill()
