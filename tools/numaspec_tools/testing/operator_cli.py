"""numaspec explain's command line as the operator tests call it: the fixtures' paths, the
argument lists of the two-socket machine and of the seeds' worked examples, and a run that
returns the exit status and what was printed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from numaspec.conformance.cli import main
from numaspec_tools import FIXTURES

OPERATOR = FIXTURES / "operator"


SYSFS = FIXTURES / "sysfs" / "two-socket-4numa"


KUBE = FIXTURES / "kube"


def two_socket_args(pod: Path, *extra: str) -> list[str]:
    return ["explain", "--sysfs", str(SYSFS),
            "--devices", str(FIXTURES / "sysfs" / "two-socket-4numa.devices.yaml"),
            "--kubelet-config", str(KUBE / "kubelet-config.yaml"),
            "--node", str(KUBE / "node.yaml"),
            "--state-dir", str(OPERATOR / "two-socket" / "state"),
            "--pods", str(KUBE / "pods.yaml"), "--pod", str(pod), *extra]


def seed_args(seed: str, version: str, *extra: str, state: Path | None = None) -> list[str]:
    here = OPERATOR / seed
    return ["explain", "--machine", str(here / "machine.json"),
            "--kubelet-config", str(here / "kubelet-config.yaml"),
            "--kubelet-version", version, "--state-dir", str(state or here / "state"),
            "--pods", str(here / "running.yaml"), "--pod", str(here / "pod.yaml"), *extra]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(args)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def run_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    status, out, err = run([*args, "--json"], capsys)
    assert err == ""
    return status, json.loads(out)
