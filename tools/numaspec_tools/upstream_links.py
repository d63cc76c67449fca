"""Where each rule's ``Upstream`` citations point: ``docs/upstream-links.json``.

    python -m numaspec_tools.upstream_links      # numaspec-dev regenerate --go does it

For every rule and everything its Upstream line cites in kubernetes/kubernetes (a Go file, or
a name defined in one: :func:`numaspec.rules.upstream_pieces` reads the line), the pinned
kubelet release (adapters/kubelet/releases.json) the site links it at, and the line of the
name's definition there.  The release is the newest pinned one inside the rule's ``Holds in``,
narrowed to the name's own releases where the line gives them (``compareHints (1.24-1.25)``),
whose file defines the name (a released one before a pre-release, as the site's "checked at"
release): so a function that has left the file links where it still is.  A citation no pinned
release in its range defines has ``null``: tests/upstream/kubelet/test_upstream_links.py
fails on it, and the site will not build.

The table is generated from kubernetes' sources in the Go module cache (``go env GOMODCACHE``;
a release missing there is downloaded with ``go mod download``, as adapters/kubelet/build.sh
does on a cold machine) and committed, so that the site builds without Go or the module cache:
the tags are immutable, so a line number found once stays right.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from numaspec.rules import Citation, Cite, Rule, parse_rules, upstream_pieces
from numaspec_tools import REPO
from numaspec_tools.builds import modules

TABLE = REPO / "docs" / "upstream-links.json"
MODULE = "k8s.io/kubernetes"

#: One row of the table: (path, name or None, the name's own releases or None, tag or None,
#: the definition's line or None).
Row = tuple[str, str | None, str | None, str | None, int | None]

_FUNC = re.compile(r"^func\s+(?:\(\s*(?:\w+\s+)?\*?\s*(\w+)(?:\[[^\]]*\])?\s*\)\s*)?(\w+)\s*[\[(]")
_SINGLE = re.compile(r"^(?:type|const|var)\s+(\w+)\b(?!\s*\()")
_BLOCK = re.compile(r"^(const|var|type)\s*\(\s*$")
_MEMBER = re.compile(r"^\t(\w+)\b")
_STRUCT = re.compile(r"^type\s+(\w+)(?:\[[^\]]*\])?\s+struct\s*\{\s*$")


@dataclass(frozen=True)
class Definitions:
    """The top-level names a Go file defines, each with its first line: functions, types,
    constants and variables (``names``), and by type its methods (``methods``) and, for a
    struct, its fields (``fields``)."""

    names: dict[str, int] = field(default_factory=dict)
    methods: dict[tuple[str, str], int] = field(default_factory=dict)
    fields: dict[tuple[str, str], int] = field(default_factory=dict)

    def line(self, name: str) -> int | None:
        """Where ``name`` is defined: ``Type.member`` a method of that receiver type or a field
        of that struct; a bare name a function, type, constant or variable, else a method of
        that name (the file's first)."""
        if "." in name:
            owner, member = name.split(".", 1)
            return self.methods.get((owner, member), self.fields.get((owner, member)))
        if name in self.names:
            return self.names[name]
        lines = [line for (_, method), line in self.methods.items() if method == name]
        return min(lines) if lines else None


def definitions(text: str) -> Definitions:
    """What a Go file defines at its top level (:class:`Definitions`); a line inside a
    ``const (``, ``var (`` or ``type (`` block defines the name it starts with."""
    found = Definitions()
    block = False
    struct: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if struct is not None:
            if line.startswith("}"):
                struct = None
            elif member := _MEMBER.match(line):
                found.fields.setdefault((struct, member.group(1)), number)
            continue
        if block:
            if line.startswith(")"):
                block = False
            elif (member := _MEMBER.match(line)) and not line.lstrip().startswith("//"):
                found.names.setdefault(member.group(1), number)
            continue
        if _BLOCK.match(line):
            block = True
        elif record := _STRUCT.match(line):
            found.names.setdefault(record.group(1), number)
            struct = record.group(1)
        elif func := _FUNC.match(line):
            if func.group(1):
                found.methods.setdefault((func.group(1), func.group(2)), number)
            else:
                found.names.setdefault(func.group(2), number)
        elif single := _SINGLE.match(line):
            found.names.setdefault(single.group(1), number)
    return found


@cache
def _defined(path: Path) -> Definitions | None:
    return definitions(path.read_text(encoding="utf-8")) if path.is_file() else None


def pinned() -> list[tuple[int, str]]:
    """The pinned kubelet releases as (minor, version), oldest first."""
    from numaspec_tools.builds.kubelet import TABLE_RELEASES

    return sorted((int(minor.split(".")[1]), r.version) for minor, r in TABLE_RELEASES.items())


def candidates(low: int, high: int, releases: Iterable[tuple[int, str]]) -> list[str]:
    """The pinned releases inside 1.low-1.high in the order the site prefers them: released
    ones newest first, then pre-releases (VER-1: a pre-release stands for its minor only where
    nothing is released)."""
    inside = sorted(((m, v) for m, v in releases if low <= m <= high), reverse=True)
    return [v for _, v in inside if "-" not in v] + [v for _, v in inside if "-" in v]


def rule_span(rule: Rule) -> tuple[int, int] | None:
    from numaspec.conformance.cases.vectors import parse_range
    from numaspec.errors import InvalidFieldError

    try:
        return parse_range(rule.meta.get("Holds in", "").split(" ")[0], rule.id)
    except InvalidFieldError:
        return None


def span_of(rule: Rule, citation: Citation) -> tuple[int, int] | None:
    """The releases a citation is linked within: the rule's range, narrowed to the name's own
    (None where the two do not meet)."""
    span = rule_span(rule)
    own = citation.span()
    if span is None:
        return None
    if own is None:
        return span
    low, high = max(span[0], own[0]), min(span[1], span[1] if own[1] is None else own[1])
    return (low, high) if low <= high else None


def citations(rule: Rule) -> list[Citation]:
    """Everything the rule's Upstream line cites in kubernetes/kubernetes, in order, once."""
    seen: dict[Citation, None] = {}
    for piece in upstream_pieces(rule.meta.get("Upstream", "")):
        if isinstance(piece, Cite):
            seen.update(dict.fromkeys(piece.citations))
    return list(seen)


def module_of(version: str, path: str) -> tuple[str, str, str]:
    """Where release ``version``'s file ``path`` is published as a Go module: (module, its
    version, the path inside it).  A file of ``staging/src/k8s.io/NAME/`` is in module
    k8s.io/NAME at v0.MINOR.PATCH (the same tree, published from the release's tag, so its
    lines are the tag's); any other in k8s.io/kubernetes at ``version``."""
    parts = path.split("/")
    if parts[:3] == ["staging", "src", "k8s.io"] and len(parts) > 4:
        return f"k8s.io/{parts[3]}", "v0" + version[version.index("."):], "/".join(parts[4:])
    return MODULE, version, path


#: The folder of a module at a version (in the module cache), by (module, version).
Source = Callable[[str, str], Path]


def resolve(rule: Rule, citation: Citation, source: Source,
            releases: Iterable[tuple[int, str]]) -> Row:
    """The citation's row: the first of :func:`candidates` whose file defines the name (has
    the file, for a file), with the definition's line."""
    key = (citation.path, citation.name, citation.within)
    span = span_of(rule, citation)
    for version in candidates(*span, releases) if span else []:
        module, at, inside = module_of(version, citation.path)
        path = source(module, at) / inside
        if citation.name is None:
            if path.is_file():
                return (*key, version, None)
            continue
        found = _defined(path)
        line = found.line(citation.name) if found else None
        if line is not None:
            return (*key, version, line)
    return (*key, None, None)


def table(source: Source, spec: Path = REPO / "spec") -> dict[str, list[Row]]:
    """Every rule's rows (rules citing nothing in kubernetes/kubernetes left out)."""
    releases = pinned()
    out: dict[str, list[Row]] = {}
    for rule in sorted(parse_rules(spec), key=lambda r: r.id):
        rows = [resolve(rule, c, source, releases) for c in citations(rule)]
        if rows:
            out[rule.id] = rows
    return out


def render(rows: dict[str, list[Row]]) -> str:
    """The table as docs/upstream-links.json: one row a line, so a change reads as one."""
    lines = ["{", '  "comment": "Generated by numaspec-dev regenerate --go '
             '(tools/numaspec_tools/upstream_links.py): per rule, each citation of its Upstream '
             'line as [path, name, its own releases, the pinned tag docs/build.py links it at, '
             'the line of its definition there].",', '  "rules": {']
    for index, (rule, entries) in enumerate(rows.items()):
        lines.append(f"    {json.dumps(rule)}: [")
        lines += [f"      {json.dumps(list(row), ensure_ascii=False)}"
                  + ("," if i < len(entries) - 1 else "") for i, row in enumerate(entries)]
        lines.append("    ]" + ("," if index < len(rows) - 1 else ""))
    return "\n".join([*lines, "  }", "}"]) + "\n"


def load(path: Path = TABLE) -> dict[str, list[Row]]:
    """The committed table."""
    data = json.loads(path.read_text(encoding="utf-8"))["rules"]
    return {rule: [(r[0], r[1], r[2], r[3], r[4]) for r in rows] for rule, rows in data.items()}


def module_cache() -> Path:
    """The Go module cache (``go env GOMODCACHE``)."""
    done = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True,
                          check=True, env=modules.go_environment("local"), cwd=REPO)
    return Path(done.stdout.strip())


def cached(module: str, version: str, cache_dir: Path | None = None) -> Path:
    """Where ``module`` at ``version`` is in the module cache (it may not be; the k8s.io
    modules' paths need no escaping)."""
    return (cache_dir or module_cache()) / f"{module}@{version}"


def release_of(module: str, version: str) -> str:
    """The kubelet release a module's version belongs to: k8s.io/kubernetes's own, or v1.N.P
    for a staging module's v0.N.P."""
    return version if module == MODULE else "v1" + version[version.index("."):]


def download(module: str, version: str) -> Path:
    """``module`` at ``version`` in the module cache, downloaded if it is not there;
    :class:`~numaspec_tools.builds.modules.ModuleUnavailable` (a RuntimeError) saying why
    when it cannot be had."""
    from numaspec_tools.builds.kubelet import TABLE_RELEASES

    # the release's own Go where it needs a newer one (1.38): a cold module cache cannot
    # download its modules with the machine's Go
    release = release_of(module, version)
    toolchain = next((r.toolchain for r in TABLE_RELEASES.values() if r.version == release),
                     None)
    return modules.download(module, version, toolchain=toolchain or "local")


def main() -> None:
    where = module_cache()

    def source(module: str, version: str) -> Path:
        path = cached(module, version, where)
        return path if path.is_dir() else download(module, version)

    TABLE.write_text(render(table(source)), encoding="utf-8")


if __name__ == "__main__":
    main()
