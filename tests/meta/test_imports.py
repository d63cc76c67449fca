"""The house rules of the package's imports (CONTRIBUTING.md, "House rules"), over the whole
distribution as it installs: the import graph is built from every module's source (imports at
the top, inside functions and under ``TYPE_CHECKING`` alike) with the folder-to-package mapping
of ``pyproject.toml``, and must be

* one way: every module sits on one floor of :data:`FLOORS` and imports only its own floor and
  the floors below it, so the reference never imports the suite and no wing of the reference
  climbs into a later one;
* without a cycle, even inside a floor;
* without a private name (``_name``) taken from another module, by ``from m import _name`` or
  by ``m._name`` on an imported module: what modules share is public in the module that owns
  it.

Each rule is shown biting on a small tree of its own (the ``*_bites`` tests)."""

from __future__ import annotations

import ast
import graphlib
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from numaspec.rules import parts
from numaspec_tools import REPO

#: The floors of the house, lowest first: a module is on the floor of the longest prefix
#: that names it, and imports from its own floor or lower ones only.
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the spec's data: chapters, vectors, schemas, tables (spec/); the findings "
     "(adapters/findings); no code",
     ("numaspec.spec", "numaspec.vectors", "numaspec.schemas", "numaspec.data",
      "numaspec.findings")),
    ("base: errors, bounds, strict JSON, the spec's rules, the version",
     ("numaspec.errors", "numaspec.limits", "numaspec.strict_json", "numaspec.rules",
      "numaspec.about")),
    ("the Topology Manager's merge", ("numaspec.topology",)),
    ("the node", ("numaspec.node",)),
    ("DRA device co-placement", ("numaspec.dra",)),
    ("the protocols", ("numaspec.protocols",)),
    ("the operators' tooling", ("numaspec.operators",)),
    ("the public API", ("numaspec",)),
    ("the suite: talking to implementations", ("numaspec.conformance.implementations",)),
    ("the suite: the cases", ("numaspec.conformance.cases",)),
    ("the suite: the properties", ("numaspec.conformance.properties",)),
    ("the suite: running and reporting", ("numaspec.conformance.running",)),
    ("the suite: model checking", ("numaspec.conformance.checking",)),
    ("the suite's entry points", ("numaspec.conformance",)),
    ("the command line", ("numaspec.conformance.cli",)),
    # python -m numaspec: the program, which nothing imports
    ("the program", ("numaspec.__main__",)),
    # tools/ (numaspec-tools, never published): a checkout's toolbox and what tests share;
    # nothing in numaspec imports it
    ("the tools", ("numaspec_tools",)),
)


def package_dirs(pyproject: Path = REPO / "pyproject.toml") -> dict[str, Path]:
    """Each installed package that holds code, by name, and the folder it is read from
    (``[tool.setuptools]``'s ``package-dir``, a package without an entry below its parent's)."""
    setup = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["setuptools"]
    mapped: dict[str, str] = setup.get("package-dir") or {
        p.split(".")[0]: p.split(".")[0] for p in setup["packages"]}
    folders: dict[str, Path] = {}
    for package in setup["packages"]:
        parts = package.split(".")
        for cut in range(len(parts), 0, -1):
            base = ".".join(parts[:cut])
            if base in mapped:
                folders[package] = pyproject.parent.joinpath(mapped[base], *parts[cut:])
                break
    return {name: path for name, path in folders.items() if (path / "__init__.py").exists()}


def modules(packages: Mapping[str, Path]) -> dict[str, Path]:
    """Every module of the distribution by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for package, folder in packages.items():
        for path in folder.glob("*.py"):
            found[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    return found


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    base = base[:len(base) - node.level + (1 if is_package else 0)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports(name: str, path: Path, known: Iterable[str]
            ) -> tuple[set[str], list[tuple[int, str]]]:
    """The modules of the distribution ``name`` imports, and the private names it takes from
    other modules, each with its line: ``(line, "numaspec.x._y")``."""
    known = set(known)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    targets: set[str] = set()
    private: list[tuple[int, str]] = []
    aliases: dict[str, str] = {}  # a local name bound to a module of the distribution
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    targets.add(alias.name)
                    aliases[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(node, name, path.name == "__init__.py")
            if not source.startswith("numaspec"):
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if full in known:  # from package import module
                    targets.add(full)
                    aliases[alias.asname or alias.name] = full
                    continue
                targets.add(source)
                if alias.name.startswith("_") and not alias.name.startswith("__") \
                        and source != name:
                    private.append((node.lineno, full))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and not node.attr.startswith("__"):
            dotted = _dotted(node.value)
            if dotted is not None:
                head, _, rest = dotted.partition(".")
                module = aliases.get(head, head if head == "numaspec" else None)
                target = f"{module}.{rest}" if module and rest else module
                if target in known and target != name:
                    private.append((node.lineno, f"{target}.{node.attr}"))
    return targets & known, private


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


#: Prefixes that name one module only, not the modules below it: a new module at the top of
#: the package must be given a floor, not land on the public API's.
EXACT = frozenset({"numaspec"})
#: The deliberately wrong implementations replace private pieces of the reference on purpose
#: (a mutant is the reference with one internal function changed), so the private-name rule
#: does not apply to them; the floors and the no-cycle rule do.
MUTANTS = "numaspec_tools.mutants"


def floor(module: str) -> int:
    """The floor a module lives on: that of the longest prefix naming it."""
    best, length = -1, -1
    for index, (_, prefixes) in enumerate(FLOORS):
        for prefix in prefixes:
            below = module.startswith(prefix + ".") and prefix not in EXACT
            if (module == prefix or below) and len(prefix) > length:
                best, length = index, len(prefix)
    return best


def house_problems(found: Mapping[str, Path]) -> list[str]:
    """Every breach of the house rules among ``found`` modules, one line each."""
    problems: list[str] = []
    graph: dict[str, set[str]] = {}
    for name, path in sorted(found.items()):
        where = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        targets, private = imports(name, path, found)
        graph[name] = targets - {name}
        if floor(name) < 0:
            problems.append(f"{where}: {name} is on no floor of tests/meta/test_imports.py FLOORS "
                            "(place it, and say where in CONTRIBUTING.md)")
            continue
        for target in sorted(graph[name]):
            if floor(target) > floor(name):
                problems.append(
                    f"{where}: {name} ({FLOORS[floor(name)][0]}) imports {target}, "
                    f"which is on a higher floor ({FLOORS[floor(target)][0]})")
        for line, taken in private if not name.startswith(MUTANTS) else ():
            problems.append(f"{where}:{line}: takes the private {taken} from another module "
                            "(make it public in the module that owns it)")
    try:
        list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        problems.append("an import cycle: " + " -> ".join(exc.args[1]))
    return problems


PACKAGES = package_dirs() | package_dirs(REPO / "tools" / "pyproject.toml")
MODULES = modules(PACKAGES)


def test_every_package_of_the_distribution_is_read() -> None:
    """The graph covers the whole distribution: both top folders and every wing."""
    assert {"numaspec", "numaspec.topology", "numaspec.node", "numaspec.protocols",
            "numaspec.operators", "numaspec.operators.importers",
            "numaspec.conformance"} <= set(PACKAGES)
    assert len(MODULES) > 100
    assert "numaspec.conformance.cli" in MODULES
    assert "numaspec.topology.masks" in MODULES
    assert {"numaspec_tools", "numaspec_tools.builds", "numaspec_tools.mutants",
            "numaspec_tools.testing", "numaspec_tools.adapters"} <= set(PACKAGES)


def test_the_wing_floors_follow_the_spec_parts() -> None:
    """The reference's wings sit on floors in the order of the spec's parts
    (spec/parts.toml, the one map of the spec)."""
    wings = [p.package for p in parts(REPO / "spec") if p.number]
    assert [prefixes[0] for _, prefixes in FLOORS if prefixes[0] in wings] == wings


@pytest.mark.static
def test_the_house_rules_hold() -> None:
    problems = house_problems(MODULES)
    assert not problems, "\n".join(problems)


@pytest.mark.static
def test_the_reference_never_imports_the_suite() -> None:
    """Said apart because it is the rule that matters most: the reference is the spec's
    reading and stands alone; the suite and the command line sit on it."""
    for name, path in MODULES.items():
        if name.startswith(("numaspec.conformance", "numaspec_tools")) \
                or name == "numaspec.__main__":
            continue
        targets, _ = imports(name, path, MODULES)
        assert not {t for t in targets if t.startswith("numaspec.conformance")}, name


# --- each rule bites --------------------------------------------------------------------------


def _tree(tmp_path: Path, sources: Mapping[str, str]) -> dict[str, Path]:
    found = {}
    for name, text in sources.items():
        path = tmp_path / (name.replace(".", "/") + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        found[name] = path
    return found


def test_a_climb_bites(tmp_path: Path) -> None:
    problems = house_problems(_tree(tmp_path, {
        "numaspec.topology.masks": "def f():\n    from numaspec.node.pods import Pod\n",
        "numaspec.node.pods": "Pod = 1\n"}))
    assert len(problems) == 1
    assert "higher floor (the node)" in problems[0]


def test_the_reference_importing_the_suite_bites(tmp_path: Path) -> None:
    problems = house_problems(_tree(tmp_path, {
        "numaspec.operators.render": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                     "    from numaspec.conformance.cases.rules import Rule\n",
        "numaspec.conformance.cases.rules": "Rule = 1\n"}))
    assert len(problems) == 1
    assert "numaspec.conformance.cases.rules" in problems[0]


def test_a_cycle_inside_a_floor_bites(tmp_path: Path) -> None:
    problems = house_problems(_tree(tmp_path, {
        "numaspec.topology.gates": "from numaspec.topology import versions\n",
        "numaspec.topology.versions": "def f():\n    from numaspec.topology.gates import g\n"}))
    assert len(problems) == 1
    assert problems[0].startswith("an import cycle")


def test_a_private_name_across_modules_bites(tmp_path: Path) -> None:
    problems = house_problems(_tree(tmp_path, {
        "numaspec.node.quantity": "_scan = 1\n",
        "numaspec.node.go_quantity": "from numaspec.node.quantity import _scan\n",
        "numaspec.node.fit": "import numaspec.node.quantity as q\nx = q._scan\n",
        "numaspec.node.pods": "from numaspec.node import quantity\ny = quantity._scan\n",
        "numaspec.node.cpu": "import numaspec.node.quantity\nz = numaspec.node.quantity._scan\n"}))
    assert len(problems) == 4
    assert all("private numaspec.node.quantity._scan" in p
                                      for p in problems)


def test_a_module_on_no_floor_bites(tmp_path: Path) -> None:
    problems = house_problems(_tree(tmp_path, {"elsewhere.tool": "x = 1\n",
                                               "numaspec.new_helper": "y = 2\n"}))
    assert len(problems) == 2
    assert all("on no floor" in p for p in problems)
