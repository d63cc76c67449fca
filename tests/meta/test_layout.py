"""The test tree's layout (CONTRIBUTING.md, "Where a test goes"): tests grouped by wing and
kind, each module importing installed packages only, and no ``sys.path`` edit anywhere."""

from __future__ import annotations

import ast
import subprocess
from collections import Counter
from pathlib import Path

from numaspec_tools import REPO

TESTS = REPO / "tests"
#: The folders a test module may live in.
FOLDERS = {"topology", "node", "dra", "protocols", "operators", "suite", "suite/power",
           "upstream/kubelet", "upstream/peers", "upstream/dra", "upstream/findings", "meta"}


def _modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py")
                  if "fixtures" not in p.relative_to(TESTS).parts)


def test_every_test_module_is_in_a_known_folder() -> None:
    misplaced = [str(p.relative_to(TESTS)) for p in _modules()
                 if p.name != "conftest.py"
                 and p.parent.relative_to(TESTS).as_posix() not in FOLDERS]
    assert not misplaced, f"test modules outside {sorted(FOLDERS)}: {misplaced}"
    assert sorted(p.name for p in TESTS.glob("*.py")) == ["conftest.py"]


def test_basenames_are_unique() -> None:
    """mypy (tests/meta/test_static.py) and pytest's importlib mode name a module by its
    basename's path; two ``test_x.py`` would be one name to a reader."""
    counts = Counter(p.name for p in _modules())
    assert [n for n, c in counts.items() if c > 1] == []


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level:
            names.add("." * node.level + (node.module or ""))
    return names


def test_no_test_module_imports_another() -> None:
    """What tests share lives in an installed package (numaspec_tools.testing), so that a
    test module imports without any folder on sys.path."""
    local = {p.stem for p in _modules()} | {"tests", "fixtures", "conftest", "mutants"}
    found = {str(p.relative_to(TESTS)): sorted(n for n in _imports(p)
                                               if n.startswith(".") or n.split(".")[0] in local)
             for p in _modules()}
    assert {k: v for k, v in found.items() if v} == {}


def test_no_sys_path_edit_anywhere() -> None:
    """Neither the project's code nor its tests put a folder on ``sys.path``; pytest's
    ``importlib`` mode adds none either (pyproject.toml)."""
    edits = []
    tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True,
                             text=True, check=False).stdout.split()
    paths = [REPO / p for p in tracked] or sorted(
        p for root in ("reference", "conformance", "tests", "tools", "docs")
        for p in (REPO / root).rglob("*.py"))
    for path in paths:
        if path.exists():
            tree = ast.parse(path.read_text("utf-8"))
            for node in ast.walk(tree):
                if (isinstance(node, ast.Attribute) and node.attr == "path"
                        and isinstance(node.value, ast.Name) and node.value.id == "sys"):
                    edits.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert edits == []
    config = (REPO / "pyproject.toml").read_text("utf-8")
    assert "--import-mode=importlib" in config
    assert "pythonpath" not in config
