"""QTY-1, QTY-2, QTY-4 run against kubelet 1.30's own quantity parser: apimachinery v0.30.14's
``resource.ParseQuantity`` (adapters/kubelet/quantity, built from the Go module proxy as every
adapter is, its go.sum holding the checksums) answers
every string of tools/numaspec_tools/quantity_strings.py (signs included: QTY-2's negative
quantities) exactly
as the committed table says, and tests/node/test_quantity_table.py holds numaspec's parser to that
table, so numaspec is held to the Go parser of this run, not to a table made by hand once."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

from numaspec_tools import FIXTURES
from numaspec_tools.builds import NO_DWARF
from numaspec_tools.builds import kubelet as kubelet_builds
from numaspec_tools.builds.go import built

QUANTITY = kubelet_builds.ROOT / "quantity"
TABLE = FIXTURES / "quantity" / "parse-v0.30.14.json"


def _build(out: Path) -> str | None:
    """Build the table writer into ``out``; None when built, else why not."""
    if shutil.which("go") is None:
        return "Go is not installed, so adapters/kubelet/quantity cannot be built"
    kubelet_builds.BIN.mkdir(exist_ok=True)
    # The environment's module proxy, as build.sh uses it: apimachinery v0.30.14 is in the
    # module cache only where kubelet 1.30 was built, and 1.30 rotates (found by a run with
    # empty Go caches on a commit of another group).
    env = {**os.environ, "GOFLAGS": "-mod=mod -p=1"}
    with (kubelet_builds.BIN / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(["go", "build", NO_DWARF, "-o", str(out), "."],
                              cwd=QUANTITY, env=env,
                              capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        return f"go build in adapters/kubelet/quantity failed:\n{done.stderr[-3000:]}"
    return None


def test_apimachinery_writes_the_committed_table(tmp_path: Path) -> None:
    program = built(tmp_path / "quantity", _build(tmp_path / "quantity"),
                    "go build (adapters/kubelet/quantity)")
    strings = subprocess.run([sys.executable, "-m", "numaspec_tools.quantity_strings"],
                             capture_output=True, text=True, check=True, timeout=120).stdout
    done = subprocess.run([str(program)], input=strings, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == TABLE.read_text(encoding="utf-8"), (
        "apimachinery v0.30.14 no longer writes tests/fixtures/quantity/parse-v0.30.14.json: "
        "run adapters/kubelet/quantity/gen.sh and read the difference")
