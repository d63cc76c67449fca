"""The built wheel is the suite: installed alone in a fresh environment (no pytest, mypy, ruff,
CrossHair or MkDocs), it runs the conformance vectors against the reference, and its suite is
the checkout's (the same suite version, RUN-6: the wheel carries the spec chapters, vectors,
schemas and data the suite reads).  It is built as from an sdist, with no git at hand, and
names the checkout's version (reference/about.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from numaspec.about import version
from numaspec.conformance.running.runner import suite_version
from numaspec_tools import REPO


def _sources(into: Path) -> Path:
    """A copy of the checkout's sources to build from: setuptools builds in the source tree
    (``build/``, ``*.egg-info``), and a test leaves no file behind in the checkout.  Like an
    unpacked sdist, it has no ``.git`` and a ``PKG-INFO`` naming the checkout's version, which
    the build reads (as the release's wheel is built from its sdist)."""
    def skip(folder: str, names: list[str]) -> set[str]:
        del folder
        return {n for n in names if n in (".git", ".venv", "build", "dist", "site", "bin",
                                          "__pycache__", ".hypothesis", ".mypy_cache",
                                          ".ruff_cache", ".pytest_cache", "numaspec-report")
                or n.endswith(".egg-info")}

    shutil.copytree(REPO, into, ignore=skip)
    (into / "PKG-INFO").write_text(f"Metadata-Version: 2.4\nName: numaspec\n"
                                   f"Version: {version()}\n", encoding="utf-8")
    return into


@pytest.mark.slow
def test_the_wheel_runs_the_suite_with_no_developer_tools(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                            str(wheels), str(_sources(tmp_path / "src"))], capture_output=True,
                           text=True, timeout=600, cwd=tmp_path)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = wheels.glob("numaspec-*.whl")
    with zipfile.ZipFile(wheel) as archive:  # tools/ is the checkout's, never published
        assert not [n for n in archive.namelist() if n.startswith("numaspec_tools")]
    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    installed = subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)],
                               capture_output=True, text=True, timeout=900)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    for tool in ("pytest", "mypy", "ruff", "crosshair", "mkdocs"):
        probe = subprocess.run([str(python), "-c", f"import {tool}"], capture_output=True)
        assert probe.returncode != 0, f"{tool} came with the wheel"
    run = tmp_path / "run"  # away from the checkout, so nothing is read from it
    run.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CI")}
    # every vector instance at every release, read from the wheel's data; the properties
    # are the package's own code (the suite version below covers them too, RUN-6)
    done = subprocess.run([str(env_dir / "bin" / "numaspec"), "conformance", "--no-properties",
                           "--out", "report", "--no-progress"], capture_output=True,
                          text=True, timeout=1800, cwd=run, env=env)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    header = json.loads((run / "report" / "report.jsonl").read_text("utf-8").splitlines()[0])
    assert header["suite_version"] == suite_version()
    # the checkout's version, read from the metadata once installed (no git, no PKG-INFO there)
    assert header["tool_version"] == version()
    printed = subprocess.run([str(env_dir / "bin" / "numaspec"), "--version"],
                             capture_output=True, text=True, cwd=run)
    assert printed.stdout.strip() == f"numaspec {version()}"
    rule = subprocess.run([str(env_dir / "bin" / "numaspec"), "rule", "MERGE-8", "--json"],
                          capture_output=True, text=True, cwd=run)
    assert rule.returncode == 0, rule.stderr
    assert json.loads(rule.stdout)[0]["statement"]
