"""The adapters' shared protocol plumbing (``adapters/protocol``, PROTO-1..5) and the DRA
adapters' envelope (``adapters/dra/common``) pass their own Go unit tests: the line loop,
start and stop, the panic and encoding guards, the case envelope and the watchdog."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from numaspec_tools import REPO
from numaspec_tools.builds.go import REQUIRED

ADAPTERS = REPO / "adapters"

pytestmark = pytest.mark.go  # runs Go (tests/conftest.py marks only tests/upstream/ itself)


def _go_test(module_dir: Path, *packages: str) -> None:
    if shutil.which("go") is None:
        problem = "Go is not installed, so the adapters' Go unit tests cannot run"
        if REQUIRED:
            pytest.fail(f"NUMASPEC_REQUIRE_KUBELET is set, but: {problem}")
        pytest.skip(problem)
    done = subprocess.run(["go", "test", *packages], cwd=module_dir, capture_output=True,
                          text=True, timeout=1200, env={**os.environ, "GOFLAGS": "-count=1"})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]


def test_the_protocol_module_passes_its_go_tests() -> None:
    _go_test(ADAPTERS / "protocol", "./...")


def test_the_dra_envelope_passes_its_go_tests() -> None:
    # common has no go.sum of its own: it is tested inside a release module, with that
    # release's versions (adapters/dra/README.md, "Build")
    _go_test(ADAPTERS / "dra" / "v0_37", "numaspec.invalid/dra-adapter/common")
