"""``numaspec fuzz``: a seeded campaign against the reference's own commands (FUZZ-1..FUZZ-3).

Each of ``numaspec merge``, ``node``, ``node --affinity`` and ``serve`` runs as a subprocess,
exactly as a user runs it, and is sent request lines from three families:

* ``wild``: the requests of the spec vectors with some values replaced by extreme ones
  (integers of thousands of digits, 2**63, negative numbers, non-finite and huge floats, long
  strings, cpusets and quantities at the edge of what parses, long lists);
* ``mutate``: the same requests with their structure broken (a field dropped, an unknown one
  added, a value of another JSON type, a subtree copied somewhere else);
* ``garbage``: bytes that are not a request (random bytes, truncated JSON, invalid UTF-8,
  deep nesting, a very long line).

What counts as a finding (each written with the line that caused it, replayable):

* ``crash``: the process exited; ``traceback``: it wrote a Python traceback on stderr;
* ``hang``: no answer within the time limit (the process is killed and restarted);
* ``internal-error``: an answer of that kind (a bug: every bad input has a typed error);
* ``not-json``: an answer line that is not one JSON object;
* ``state-change``: a node step answered with an error, or an admission that was refused,
  changed the node's state beyond what kubelet's own release changes (read with ``state``
  before and after; ADMIT-10,
  :func:`~numaspec.conformance.properties.node_machine.rejected_step_change`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import attrs

from numaspec.conformance.properties.node_machine import rejected_step_change
from numaspec.conformance.running.reports import Progress

__all__ = ["COMMANDS", "FAMILIES", "PROGRAM", "Finding", "main", "run_campaign"]

#: The commands fuzzed, as ``numaspec`` argument lists.
COMMANDS: dict[str, tuple[str, ...]] = {
    "merge": ("merge",),
    "node": ("node",),
    "affinity": ("node", "--affinity"),
    "serve": ("serve",),
}
FAMILIES = ("wild", "mutate", "garbage")
_PREVIEW = 200


@attrs.frozen
class Finding:
    """One thing the campaign found: what, on which command, and the line that did it."""

    command: str
    family: str
    kind: str
    detail: str
    line: bytes
    #: the node session's lines up to and including the offending one (node commands)
    session: tuple[bytes, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "command": self.command, "family": self.family, "kind": self.kind,
            "detail": self.detail, "preview": self.line[:_PREVIEW].decode("utf-8", "replace"),
            "line_base64": base64.b64encode(self.line).decode(),
            "session_base64": [base64.b64encode(s).decode() for s in self.session],
        }


# --- generation ------------------------------------------------------------------------------

#: A placeholder for a value json.dumps cannot write (an integer beyond Python's digit limit,
#: a bare NaN): the text that replaces the quoted placeholder after encoding.
_RAW = "\x00raw:"


def _huge_int(rng: random.Random) -> str:
    digits = rng.choice((20, 40, 400, 4300, 4301, 5000, 100_000))
    return rng.choice(("", "-")) + "9" + "".join(rng.choice("0123456789")
                                                 for _ in range(digits - 1))


def _wild_value(rng: random.Random, current: Any) -> Any:
    """An extreme value, often of the type already there."""
    choice = rng.randrange(14)
    if choice == 0:
        return _RAW + _huge_int(rng)
    if choice == 1:
        return rng.choice((2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -(2**63) - 1,
                           10**30, -1, 0, 1, 63, 64, 65, 255, 1023, 99_999_999_999))
    if choice == 2:
        return _RAW + rng.choice(("NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1e-999",
                                  "0.5", "-0.0", "1E400", "123456789.123456789e300"))
    if choice == 3:
        return rng.choice(("0-99999999999", "0-10000000", "0-4294967295", "99999999999",
                           "0-3,5-99999999", "-1", "3-1", "0--1", "0-", ",", "0-3,,4",
                           " 0-3 ", "0-63"))
    if choice == 4:
        return rng.choice(("1e999999999", "1e-999999999", "9" * 5000, "0." + "0" * 5000 + "1",
                           "1" + "0" * 30 + "Ei", "99999999999999999999999Ei", "-1Gi",
                           "1e9223372036854775807", "1e-9223372036854775808", "1e" + "9" * 30,
                           "9223372036854775807", "9223372036854775808", "1.5Gi", "0.0001",
                           "1m", "100000000000000000000m", "+-1", "", "1Qi", "Infinity"))
    if choice == 5:
        return "x" * rng.choice((0, 1, 64, 65, 253, 254, 10_000, 1_000_000))
    if choice == 6 and isinstance(current, list) and current:
        return current * rng.choice((2, 50, 1000, 20_000))
    if choice == 7 and isinstance(current, list):
        return list(range(rng.choice((9, 17, 20, 64, 65, 1000, 100_000))))
    if choice == 8:
        return rng.choice((None, True, False, [], {}, "", 0))
    if choice == 9 and isinstance(current, int) and not isinstance(current, bool):
        return current + rng.choice((1, -1, 64, -current - 1, 2**40))
    if choice == 10 and isinstance(current, str):
        return current + rng.choice(("0", "9" * 30, "\u0000", "é", "-"))
    if choice == 11:
        return [[[[[[[[[[[[]]]]]]]]]]]] if rng.random() < 0.5 else {"a": {"b": {"c": {}}}}
    if choice == 12 and isinstance(current, dict):
        return {**current, **{f"k{i}": i for i in range(rng.choice((1, 100, 10_000)))}}
    return rng.choice((-(2**63), 2**63 - 1, 10**19, -(10**19), 1 << 100))


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    _get(value, path[:-1])[path[-1]] = new
    return value


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _grow_machine(rng: random.Random, request: Any) -> Any:
    """A node's machine made large: more NUMA nodes (up to 64 and past it), more CPUs."""
    machine = (request.get("node") or {}).get("machine") if isinstance(request, dict) else None
    if not isinstance(machine, dict) or not isinstance(machine.get("numaNodes"), list) or \
            not machine["numaNodes"]:
        return request
    template = machine["numaNodes"][0]
    count = rng.choice((8, 9, 12, 13, 16, 20, 64, 65))
    threads = rng.choice((1, 2, 64, 200))
    nodes = []
    for n in range(count):
        node = _copy(template)
        if isinstance(node, dict):
            node["id"] = n
            node["cores"] = [{"socket": n // 2, "threads": [n * threads + t]}
                             for t in range(threads)]
        nodes.append(node)
    machine["numaNodes"] = nodes
    config = request["node"].setdefault("config", {})
    if isinstance(config, dict) and rng.random() < 0.7:
        config["topologyManagerPolicyOptions"] = {"max-allowable-numa-nodes": str(count)}
        config.setdefault("topologyManagerPolicy", "best-effort")
    return request


def _wild(rng: random.Random, request: Any) -> Any:
    request = _copy(request)
    if rng.random() < 0.15:
        return _grow_machine(rng, request)
    paths = list(_paths(request))[1:] or [()]
    for _ in range(rng.choice((1, 1, 2, 3))):
        path = rng.choice(paths)
        try:
            request = _set(request, path, _wild_value(rng, _get(request, path)))
        except (KeyError, IndexError, TypeError):
            continue
        paths = list(_paths(request))[1:] or [()]
        if len(paths) > 5000:
            break
    return request


def _mutate(rng: random.Random, request: Any) -> Any:
    request = _copy(request)
    paths = list(_paths(request))
    for _ in range(rng.choice((1, 1, 2))):
        path = rng.choice(paths)
        try:
            target = _get(request, path)
            how = rng.randrange(6)
            if how == 0 and isinstance(target, dict) and target:
                del target[rng.choice(sorted(target))]
            elif how == 1 and isinstance(target, dict):
                target[rng.choice(("extra", "numaNodes", "uid", "op", "cpu", "0"))] = \
                    rng.choice((1, "x", None, [], {}))
            elif how == 2:
                other = _get(request, rng.choice(paths))
                request = _set(request, path, _copy(other))
            elif how == 3 and isinstance(target, list) and target:
                target.insert(rng.randrange(len(target) + 1), _copy(rng.choice(target)))
            elif how == 4 and isinstance(target, list) and target:
                del target[rng.randrange(len(target))]
            else:
                request = _set(request, path, rng.choice(
                    (str(target)[:50], [target], {"value": target}, None, True, 1.5)))
        except (KeyError, IndexError, TypeError, RecursionError):
            continue
        paths = list(_paths(request))
    return request


def _encode(request: Any) -> bytes:
    text = json.dumps(request, separators=(",", ":"), ensure_ascii=False)
    while (start := text.find('"' + _RAW.encode("unicode_escape").decode())) >= 0:
        end = text.index('"', start + 1)
        raw = json.loads(text[start:end + 1])[len(_RAW):]
        text = text[:start] + raw + text[end + 1:]
    return text.encode("utf-8", "surrogatepass")


def _garbage(rng: random.Random, line: bytes) -> bytes:
    choice = rng.randrange(9)
    if choice == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).replace(b"\n", b"")
    if choice == 1:
        return line[:rng.randrange(max(1, len(line)))]
    if choice == 2:
        return b"\xff\xfe" + line
    if choice == 3:
        depth = rng.choice((100, 1000, 100_000))
        return b"[" * depth + b"]" * depth
    if choice == 4:
        return b"{" + b'"a":' * rng.choice((10, 10_000)) + b"1" + b"}" * 10
    if choice == 5:
        return rng.choice((b"", b" ", b"\t", b"null", b"[]", b"1", b'"x"', b"true", b"\x00"))
    if choice == 6:
        return b'{"op":"' + b"x" * rng.choice((1000, 5_000_000)) + b'"}'
    if choice == 7:
        return b"9" * rng.choice((4301, 100_000))
    position = rng.randrange(max(1, len(line)))
    return line[:position] + bytes([rng.randrange(256)]) + line[position + 1:]


def _one_line(line: bytes) -> bytes:
    """A request is one line: a newline inside would make it two requests, two answers."""
    return line.replace(b"\n", b" ")


def _corpus() -> dict[str, list[Any]]:
    """Per command, the spec vectors' cases: merge requests, node sessions (steps lists)."""
    from numaspec.conformance.cases.vectors import load_vectors

    merges, nodes, affinity = [], [], []
    for vector in load_vectors():
        if vector.op == "merge":
            merges.append(vector.case)
        elif vector.op in ("node", "hints") and isinstance(vector.case, dict):
            nodes.append(vector.case["steps"])
        elif vector.op == "affinity" and isinstance(vector.case, dict):
            affinity.append(vector.case["steps"])
    return {"merge": merges, "node": nodes, "affinity": affinity,
            "serve": [("merge", c) for c in merges] + [("node", {"steps": s}) for s in nodes]
            + [("affinity", {"steps": s}) for s in affinity]}


# --- driving a command -----------------------------------------------------------------------


class _Process:
    """One running ``numaspec`` command: a line in, a line out, within a time limit."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        os.set_blocking(self.proc.stderr.fileno(), False)
        self.stderr = bytearray()
        self.buffer = bytearray()

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        try:
            while chunk := self.proc.stderr.read(65536):
                self.stderr += chunk
                del self.stderr[:-65536]
        except (BlockingIOError, OSError, ValueError):
            pass

    def ask(self, line: bytes, timeout: float) -> bytes | str:
        """The answer line, or ``"hang"`` / ``"crash"``."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(line + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return "crash"
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return "hang"
            assert self.proc.stderr is not None
            err = self.proc.stderr.fileno()
            ready, _, _ = select.select([fd, err], [], [], min(left, 1.0))
            if err in ready:
                self._drain_stderr()
            if fd in ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return "crash"
                self.buffer += chunk
        answer, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer = bytearray(rest)
        self._drain_stderr()
        return answer

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


#: How the commands are run: this Python's ``numaspec``.
PROGRAM = (sys.executable, "-m", "numaspec")


@attrs.define
class _Campaign:
    command: str
    timeout: float
    rng: random.Random
    findings: list[Finding]
    program: tuple[str, ...] = PROGRAM
    process: _Process | None = None
    session: list[bytes] = attrs.field(factory=list)
    sent: int = 0

    def _argv(self) -> list[str]:
        return [*self.program, *COMMANDS[self.command]]

    def _restart(self) -> None:
        if self.process is not None:
            self.process.close()
        self.process = _Process(self._argv())
        self.session = []
        if self.command == "serve":
            self._ask(b'{"cmd":"start","version":1}', "start", count=False)

    def _finding(self, family: str, kind: str, detail: str, line: bytes) -> None:
        self.findings.append(Finding(self.command, family, kind, detail, line,
                                     tuple(self.session)))

    def _ask(self, line: bytes, family: str, *, count: bool = True) -> Any:
        """Send one line; the decoded answer, or None after recording what went wrong."""
        if self.process is None:
            self._restart()
        assert self.process is not None
        line = _one_line(line)
        self.session.append(line)
        if count:
            self.sent += 1
        answer = self.process.ask(line, self.timeout)
        stderr = bytes(self.process.stderr)
        if b"Traceback" in stderr:
            self._finding(family, "traceback", stderr[-2000:].decode("utf-8", "replace"), line)
            self.process.stderr.clear()
        if answer in ("hang", "crash"):
            assert isinstance(answer, str)
            detail = (f"no answer within {self.timeout:g}s" if answer == "hang"
                      else f"the process exited: {stderr[-2000:].decode('utf-8', 'replace')}")
            self._finding(family, answer, detail, line)
            self._restart()
            return None
        assert isinstance(answer, bytes)
        try:
            decoded = json.loads(answer)
            if not isinstance(decoded, dict):
                raise ValueError("not an object")
        except ValueError as exc:
            self._finding(family, "not-json", f"{exc}: {answer[:_PREVIEW]!r}", line)
            return None
        error = decoded.get("error") or (decoded.get("context") if decoded.get("errored")
                                         else None)
        if isinstance(error, dict) and (error.get("kind") == "internal-error"
                                        or "numaspec failed" in str(error.get("message"))):
            self._finding(family, "internal-error", str(error.get("message"))[:2000], line)
        return decoded

    # -- one unit of work per command kind

    def merge_line(self, family: str, case: Any) -> None:
        line = self._line(family, case)
        self.session = []  # each merge line stands alone: nothing to keep for a replay
        self._ask(line, family)

    def _line(self, family: str, request: Any) -> bytes:
        if family == "wild":
            return _encode(_wild(self.rng, request))
        if family == "mutate":
            return _encode(_mutate(self.rng, request))
        return _garbage(self.rng, _encode(request))

    def serve_line(self, family: str, op_case: tuple[str, Any]) -> None:
        op, case = op_case
        request = {"cmd": "run", "seq": self.sent + 1, "op": op, "case": case}
        self.session = []  # likewise: the start line is sent again by a replay
        self._ask(self._line(family, request), family)

    def node_session(self, family: str, steps: list[Any], budget: int) -> None:
        """A session of the corpus with some steps fuzzed; around each non-create step, the
        state is read before and after, and a rejected step must not have changed it.  The
        session's process is reused: each corpus session starts with ``create``."""
        self.session = []
        for step in steps:
            if self.sent >= budget:
                return
            fuzz = self.rng.random() < 0.35
            line = self._line(family, step) if fuzz else _encode(step)
            is_create = isinstance(step, dict) and step.get("op") == "create"
            check = not is_create
            before = self._ask(b'{"op":"state"}', family, count=False) if check else None
            answer = self._ask(line, family)
            if answer is None or before is None or "error" in before:
                continue
            refused = isinstance(answer.get("decision"), dict) and \
                answer["decision"].get("admitted") is False
            if "error" not in answer and not refused and "schedule" not in answer and \
                    "hints" not in answer:
                continue
            after = self._ask(b'{"op":"state"}', family, count=False)
            if after is None:
                continue
            pod = step.get("pod") if isinstance(step, dict) else None
            uid = pod.get("uid") if isinstance(pod, dict) else None
            problem = rejected_step_change(before, after, refused_admission=refused,
                                           uid=uid if isinstance(uid, str) else None)
            if problem:
                what = answer.get("error", {}).get("kind") if "error" in answer else \
                    answer.get("decision", {}).get("reason", "a read-only step")
                self._finding(family, "state-change", f"{what}: {problem}", line)

    def close(self) -> None:
        if self.process is not None:
            self.process.close()
            self.process = None


def run_campaign(requests: int, *, seed: int = 0, commands: tuple[str, ...] = tuple(COMMANDS),
                 families: tuple[str, ...] = FAMILIES, timeout: float = 10.0,
                 progress: Callable[[int, int], None] | None = None,
                 program: tuple[str, ...] = PROGRAM) -> tuple[list[Finding], int]:
    """Send about ``requests`` fuzzed lines, spread over the commands; (findings, lines sent).

    Deterministic for a seed: the same lines in the same order (what the commands answer may
    still differ when a line hangs).  ``program`` is how a command is run (``numaspec`` of
    this Python by default; the tests run mutants of it)."""
    corpus = _corpus()
    findings: list[Finding] = []
    total = 0
    share = max(1, requests // len(commands))
    for command in commands:
        rng = random.Random(f"{seed}:{command}")
        campaign = _Campaign(command, timeout, rng, findings, program)
        try:
            while campaign.sent < share:
                family = rng.choice(families)
                if command == "merge":
                    campaign.merge_line(family, rng.choice(corpus["merge"]))
                elif command == "serve":
                    campaign.serve_line(family, rng.choice(corpus["serve"]))
                else:
                    campaign.node_session(family, rng.choice(corpus[command]), share)
                if progress is not None:
                    progress(total + campaign.sent, len(findings))
        finally:
            campaign.close()
        total += campaign.sent
    return findings, total


def _summary(findings: list[Finding], sent: int, stream: IO[str]) -> None:
    counts: dict[tuple[str, str], int] = {}
    for finding in findings:
        counts[(finding.command, finding.kind)] = counts.get((finding.command, finding.kind),
                                                             0) + 1
    stream.write(f"numaspec fuzz: {sent} requests, {len(findings)} findings\n")
    for (command, kind), count in sorted(counts.items()):
        stream.write(f"  {command:9} {kind:15} {count}\n")
    shown: set[tuple[str, str, str]] = set()
    for finding in findings:
        key = (finding.command, finding.kind, finding.detail[:60])
        if key in shown or len(shown) >= 20:
            continue
        shown.add(key)
        stream.write(f"- {finding.command} ({finding.family}) {finding.kind}: "
                     f"{finding.detail[:300]}\n    line: "
                     f"{finding.line[:_PREVIEW].decode('utf-8', 'replace')}\n")


def main(requests: int, *, seed: int, commands: tuple[str, ...], timeout: float,
         out: str | None, progress: bool | None) -> int:
    """The ``numaspec fuzz`` command: 0 when nothing was found, 1 otherwise."""
    bar = Progress(requests, enabled=progress)
    findings, sent = run_campaign(requests, seed=seed, commands=commands, timeout=timeout,
                                  progress=bar.update)
    bar.finish()
    if out is not None:
        with Path(out).open("w", encoding="utf-8") as handle:
            for finding in findings:
                handle.write(json.dumps(finding.as_json()) + "\n")
    _summary(findings, sent, sys.stdout)
    return 1 if findings else 0
