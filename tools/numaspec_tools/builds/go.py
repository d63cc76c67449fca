"""What the kubelet and the peer adapters share about being built by the test run
(tools/numaspec_tools/builds/kubelet.py, tools/numaspec_tools/builds/peers.py): one ``build.sh`` at
a time under a file lock
(the xdist workers take turns), and a binary that cannot be had is a skip, or a failure when
``NUMASPEC_REQUIRE_KUBELET=1`` (``.ci/run`` sets it: a missing toolchain never passes)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REQUIRED = os.environ.get("NUMASPEC_REQUIRE_KUBELET", "") not in ("", "0")

#: Whether the test now running carries the ``go`` marker (tests/conftest.py sets it around
#: each test; None outside a test).  A test that builds or runs Go without it fails here, so
#: ``pytest -m "not go"`` (the fast loop) never builds Go and the marker cannot fall behind.
marked_go: bool | None = None


def _check_marked() -> None:
    if marked_go is False:
        pytest.fail("this test builds or runs Go (an adapter over upstream code) but is not "
                    "marked `go`: move it under tests/upstream/ or mark it "
                    "@pytest.mark.go (CONTRIBUTING.md, \"Where a test goes\")", pytrace=False)


def run_build(root: Path, args: list[str], what: str) -> str | None:
    """Run ``root/build.sh args`` under ``root/bin/.build.lock``; None when it built, else
    why not (``what`` names the adapters in the message)."""
    _check_marked()
    if shutil.which("go") is None:
        return f"Go is not installed, so the {what} cannot be built"
    (root / "bin").mkdir(exist_ok=True)
    with (root / "bin" / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(["bash", str(root / "build.sh"), *args], capture_output=True,
                              text=True, timeout=3600)
    if done.returncode != 0:
        name = f"{root.parent.name}/{root.name}/build.sh"
        return f"{name} failed ({done.returncode}):\n{done.stderr[-3000:]}"
    return None


def built(path: Path, problem: str | None, script: str) -> Path:
    """``path`` once built; else a skip (a failure when required) saying why."""
    _check_marked()
    if problem is None and not path.exists():
        problem = f"{path.name} was not built by {script}"
    if problem is not None:
        if REQUIRED:
            pytest.fail(f"NUMASPEC_REQUIRE_KUBELET is set, but: {problem}")
        pytest.skip(f"{problem} (set NUMASPEC_REQUIRE_KUBELET=1 to make this a failure)")
    return path
