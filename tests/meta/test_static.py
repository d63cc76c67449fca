"""mypy --strict and ruff over the whole project.

The repository keeps the package's sources in ``reference/`` and ``conformance/`` and maps them
to ``numaspec`` and ``numaspec.conformance`` at install time; mypy cannot follow that mapping,
so the check runs on a throwaway tree of symlinks laid out as the installed package.  The
import rules (one way, no cycle, no private name across modules) are tests/meta/test_imports.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from numaspec_tools import REPO


def package_tree(root: Path) -> Path:
    pkg = root / "numaspec"
    for source, target in ((REPO / "reference", pkg), (REPO / "conformance", pkg / "conformance")):
        for path in source.rglob("*.py"):
            link = target / path.relative_to(source)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(path)
        (target / "py.typed").touch()
    return root


@pytest.mark.static
def test_mypy_strict(tmp_path: Path) -> None:
    """One run over the package (as installed), the tools, every test module and the site's
    generator; test modules' basenames are unique (tests/meta/test_layout.py), so mypy names
    each by its basename."""
    root = package_tree(tmp_path)
    env = {**os.environ, "MYPYPATH": f"{root}{os.pathsep}{REPO / 'tools'}"}
    targets = [str(root / "numaspec"), str(REPO / "tools" / "numaspec_tools"),
               *(str(p) for p in sorted((REPO / "tests").rglob("*.py"))
                 if "fixtures" not in p.relative_to(REPO / "tests").parts),
               str(REPO / "docs" / "build.py")]
    out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--config-file",
                          str(REPO / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache"),
                          *targets], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.static
def test_ruff() -> None:
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."],
                         capture_output=True, text=True, cwd=REPO, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
