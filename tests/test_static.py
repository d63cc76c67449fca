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
from collections.abc import Collection
from pathlib import Path

import pytest
from conftest import REPO


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


def _modules(source: Path) -> dict[str, Path]:
    """A package's modules by dotted name relative to it (``cases.vectors``; a subpackage by
    its own name, ``properties``)."""
    names = {}
    for path in source.rglob("*.py"):
        parts = path.relative_to(source).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        if parts:
            names[".".join(parts)] = path
    return names


def _imports(path: Path, package: str, modules: Collection[str]) -> set[str]:
    """The modules of ``package`` that ``path`` imports, at module level or in a function
    (``from P import m`` counts as ``P.m`` where that is a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and (
                node.module == package or node.module.startswith(package + ".")):
            base = node.module[len(package) + 1:]
            for alias in node.names:
                name = f"{base}.{alias.name}" if base else alias.name
                found.add(name if name in modules else base)
        elif isinstance(node, ast.Import):
            found |= {a.name[len(package) + 1:] for a in node.names
                      if a.name.startswith(package + ".")}
    return found - {""}


@pytest.mark.static
def test_the_conformance_package_has_no_import_cycle() -> None:
    """Modules of numaspec.conformance import each other one way only (late imports in
    functions count), so each can be read, and loaded, on its own."""
    modules = _modules(REPO / "conformance")
    graph = {name: _imports(path, "numaspec.conformance", modules) - {name}
             for name, path in modules.items()}
    order = list(graphlib.TopologicalSorter(graph).static_order())  # raises on a cycle
    assert set(order) >= set(graph)
