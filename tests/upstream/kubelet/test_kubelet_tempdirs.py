"""No temp file outlives its session (issue 13): the kubelet node probe keeps its managers'
state files in a directory under ``$TMPDIR``. The probe removes it when a node is replaced, at
the end of its input and on SIGTERM; a SIGKILL cannot be caught, so the Python side
(:class:`~numaspec.conformance.implementations.connection.LineProcess`, under both the runner
and :class:`~numaspec.conformance.implementations.exec_node.ExecNode`) gives every process a
temp dir of its own and removes it once the process is gone.

Each test points ``TMPDIR`` at a directory of its own, so that parallel tests cannot disturb
the check that nothing new is left in it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from numaspec.conformance.implementations.connection import ExecConnection, LineProcess
from numaspec.conformance.implementations.exec_node import ExecNode
from numaspec_tools.builds.kubelet import binary, node_command

NODE: dict[str, Any] = {
    "kubeletVersion": "1.37",
    "machine": {"numaNodes": [
        {"id": 0, "memory": "4Gi", "hugepages": {}, "distances": [10, 20],
         "cores": [{"socket": 0, "threads": [0, 1]}, {"socket": 0, "threads": [2, 3]}]},
        {"id": 1, "memory": "4Gi", "hugepages": {}, "distances": [20, 10],
         "cores": [{"socket": 1, "threads": [4, 5]}, {"socket": 1, "threads": [6, 7]}]}],
        "devices": {}},
    "config": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0",
               "memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node",
               "systemReserved": {"memory": "256Mi"},
               "reservedMemory": [{"numaNode": 0, "limits": {"memory": "356Mi"}}]},
}
POD: dict[str, Any] = {"uid": "pod1", "containers": [
    {"name": "app", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]}


@pytest.fixture
def temp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty directory that is the system temp dir for this test and what it starts."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setenv("TMPDIR", str(root))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    return root


def state_dirs(root: Path) -> list[Path]:
    return sorted(root.rglob("kubelet-node-probe-*"))


def test_a_killed_process_leaves_nothing_in_the_temp_dir(temp_root: Path) -> None:
    child = ("import os, tempfile, time\n"
             "fd, path = tempfile.mkstemp(); os.close(fd)\n"
             "print(path, flush=True)\n"
             "time.sleep(60)\n")
    process = LineProcess([sys.executable, "-c", child], 1 << 16, None, None)
    item = process.receive(time.monotonic() + 30)
    assert item is not None
    tag, line = item
    assert tag == "line", item
    made = Path(line.decode())
    assert made.is_file()
    assert made.is_relative_to(temp_root)
    assert made.parent != temp_root  # a temp dir of the process's own
    process.kill()  # SIGKILL to the process group
    assert process.proc.returncode == -signal.SIGKILL
    assert list(temp_root.iterdir()) == []


def test_a_node_probe_killed_mid_session_leaves_nothing(temp_root: Path) -> None:
    probe = ExecNode(node_command("1.37"))
    try:
        assert probe.handle({"op": "create", "node": NODE}) == {"ok": True}
        assert probe.handle({"op": "admit", "pod": POD})["decision"]["admitted"] is True
        # The managers' checkpoint files are in the probe's own temp dir, under ours.
        [state] = state_dirs(temp_root)
        assert {p.name for p in state.iterdir()} >= {"cpu_manager_state"}
        assert state.parent.parent == temp_root
    finally:
        probe.close()  # SIGKILL: the probe cannot clean up, LineProcess does
    assert probe.process.proc.returncode == -signal.SIGKILL
    assert list(temp_root.iterdir()) == []


def test_an_adapter_killed_after_a_node_case_leaves_nothing(temp_root: Path) -> None:
    connection = ExecConnection(str(binary("1.37")), timeout=60.0)
    try:
        steps = [{"op": "create", "node": NODE}, {"op": "admit", "pod": POD}, {"op": "state"}]
        answer = connection.run("node", {"steps": steps})
        assert answer.status == "result", answer
        assert state_dirs(temp_root) == []  # the case's node was closed with the case
        process = connection._process
        assert process is not None
        os.killpg(process.proc.pid, signal.SIGKILL)
        process.proc.wait(timeout=10)
    finally:
        connection.close()
    assert list(temp_root.iterdir()) == []


def run_probe(temp_root: Path, requests: list[dict[str, Any]]) -> subprocess.Popen[str]:
    """The node probe run directly (no LineProcess), TMPDIR the test's, after ``requests``."""
    proc = subprocess.Popen(node_command("1.37"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "TMPDIR": str(temp_root)})
    assert proc.stdin is not None
    assert proc.stdout is not None
    for request in requests:
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        assert "error" not in json.loads(proc.stdout.readline())
    return proc


def test_the_probe_removes_its_state_dir_itself(temp_root: Path) -> None:
    create = {"op": "create", "node": NODE}
    proc = run_probe(temp_root, [create, {"op": "admit", "pod": POD}])
    assert proc.stdin is not None
    assert proc.stdout is not None
    [first] = state_dirs(temp_root)
    # A new node replaces the old one and its directory.
    proc.stdin.write(json.dumps(create) + "\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline()) == {"ok": True}
    [second] = state_dirs(temp_root)
    assert second != first
    # End of input.
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    assert list(temp_root.iterdir()) == []
    proc.stdout.close()


def test_the_probe_removes_its_state_dir_on_sigterm(temp_root: Path) -> None:
    proc = run_probe(temp_root, [{"op": "create", "node": NODE}])
    assert len(state_dirs(temp_root)) == 1
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert list(temp_root.iterdir()) == []
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()
