"""The kubelet adapters (adapters/kubelet), built by the test run itself.

``build()`` runs ``adapters/kubelet/build.sh`` once per machine state (go build is incremental:
seconds when the module and build caches are warm; a cold machine downloads the pinned
k8s.io/kubernetes releases from the Go module proxy first).  xdist workers take turns on a
file lock, so the build runs once at a time.

Without Go, or when the build fails, the kubelet tests are skipped with the reason, unless
``NUMASPEC_REQUIRE_KUBELET=1`` (``.ci/run`` sets it): then they fail, so a missing toolchain
can never pass silently.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "adapters" / "kubelet"
BIN = ROOT / "bin"
#: The pinned releases: the newest the module proxy serves, a 1.23 for the pre-1.24 merge
#: rules, and 1.30 between them.
RELEASES = {"1.23": "v1.23.17", "1.30": "v1.30.14", "1.37": "v1.37.1"}
REQUIRED = os.environ.get("NUMASPEC_REQUIRE_KUBELET", "") not in ("", "0")


@cache
def build() -> str | None:
    """Build every release's binary; None when done, else why not."""
    if shutil.which("go") is None:
        return "Go is not installed, so the kubelet adapters cannot be built"
    BIN.mkdir(exist_ok=True)
    with (BIN / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(["bash", str(ROOT / "build.sh")], capture_output=True,
                              text=True, timeout=3600)
    if done.returncode != 0:
        return f"adapters/kubelet/build.sh failed ({done.returncode}):\n{done.stderr[-3000:]}"
    return None


def binary(minor: str) -> Path:
    """The built ``kubelet-adapter-<version>`` of release ``1.<minor>`` (its one binary: the
    adapter protocol, ``node`` the node probe, ``merge`` the merge oracle); skips (or, when the
    kubelet tests are required, fails) when it cannot be built."""
    problem = build()
    path = BIN / f"kubelet-adapter-{RELEASES[minor]}"
    if problem is None and not path.exists():
        problem = f"{path.name} was not built by adapters/kubelet/build.sh"
    if problem is not None:
        if REQUIRED:
            pytest.fail(f"NUMASPEC_REQUIRE_KUBELET is set, but: {problem}")
        pytest.skip(f"{problem} (set NUMASPEC_REQUIRE_KUBELET=1 to make this a failure)")
    return path


def node_command(minor: str) -> list[str]:
    """The command that runs release ``1.<minor>``'s node probe (skips or fails as binary)."""
    return [str(binary(minor)), "node"]
