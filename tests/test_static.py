"""mypy --strict and ruff over the whole project.

The repository keeps the package's sources in ``reference/`` and ``conformance/`` and maps them
to ``numaspec`` and ``numaspec.conformance`` at install time; mypy cannot follow that mapping,
so the check runs on a throwaway tree of symlinks laid out as the installed package."""

from __future__ import annotations

import ast
import graphlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO


def package_tree(root: Path) -> Path:
    pkg = root / "numaspec"
    (pkg / "conformance").mkdir(parents=True)
    for source, target in ((REPO / "reference", pkg), (REPO / "conformance", pkg / "conformance")):
        for path in source.glob("*.py"):
            (target / path.name).symlink_to(path)
        (target / "py.typed").touch()
    return root


@pytest.mark.static
def test_mypy_strict(tmp_path: Path) -> None:
    root = package_tree(tmp_path)
    env = {**os.environ, "MYPYPATH": f"{root}{os.pathsep}{REPO / 'tests'}"}
    base = [sys.executable, "-m", "mypy", "--strict", "--config-file",
            str(REPO / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache")]
    for targets in (["-p", "numaspec", "-p", "mutants"],
                    [str(p) for p in sorted((REPO / "tests").glob("*.py"))]):
        out = subprocess.run([*base, *targets], capture_output=True, text=True, env=env,
                             cwd=tmp_path, timeout=600)
        assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.static
def test_ruff() -> None:
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."],
                         capture_output=True, text=True, cwd=REPO, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


def _imports(path: Path, package: str) -> set[str]:
    """The modules of ``package`` that ``path`` imports, at module level or in a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == package:
                found |= {alias.name for alias in node.names}
            elif node.module.startswith(package + "."):
                found.add(node.module[len(package) + 1:].split(".")[0])
        elif isinstance(node, ast.Import):
            found |= {a.name[len(package) + 1:].split(".")[0] for a in node.names
                      if a.name.startswith(package + ".")}
    return found


@pytest.mark.static
def test_the_conformance_package_has_no_import_cycle() -> None:
    """Modules of numaspec.conformance import each other one way only (late imports in
    functions count), so each can be read, and loaded, on its own."""
    graph = {path.stem: _imports(path, "numaspec.conformance") - {path.stem}
             for path in (REPO / "conformance").glob("*.py")}
    order = list(graphlib.TopologicalSorter(graph).static_order())  # raises on a cycle
    assert set(order) >= set(graph)
