"""A node-protocol implementation that runs as a subprocess (one JSON line in, one out).

Used for the Go node probe over real kubelet code.  A process that dies, hangs past the
timeout or answers with something other than one JSON object is reported as an
:class:`~numaspec.errors.AdapterError` naming the command and what it printed.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Sequence
from typing import Any

from numaspec.errors import AdapterError

__all__ = ["ExecNode"]


class ExecNode:
    """``handle`` sends a request line to the subprocess and reads its answer line."""

    def __init__(self, command: Sequence[str], *, timeout: float = 30.0,
                 name: str | None = None) -> None:
        self.command = list(command)
        self.name = name or " ".join(self.command)
        self.timeout = timeout
        self.process = subprocess.Popen(
            self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(request, separators=(",", ":")) + "\n")
            self.process.stdin.flush()
            line = self.lines.get(timeout=self.timeout)
        except (BrokenPipeError, queue.Empty) as exc:
            self.close()
            raise AdapterError(f"{self.name} did not answer ({type(exc).__name__})") from None
        if line is None:
            raise AdapterError(f"{self.name} exited (code {self.process.poll()})")
        try:
            answer = json.loads(line)
        except json.JSONDecodeError:
            raise AdapterError(f"{self.name} answered with non-JSON: {line[:200]!r}") from None
        if not isinstance(answer, dict):
            raise AdapterError(f"{self.name} answered with {line[:200]!r}, not an object")
        return answer

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
