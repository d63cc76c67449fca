"""The tables generated from spec/parts.toml, the one hand-kept map of the spec (issue 54):
spec/README.md's part tables (between its markers), the README's rows of the wings in "Where
things are" and CONTRIBUTING.md's rows of the parts among the floors (each rewritten in place,
found by its first cell).  ``numaspec-dev regenerate --only parts`` writes them;
tests/meta/test_parts.py fails naming that command when one is stale, and checks what is not
generated (each wing's docstring, the import floors' order, the site's navigation)."""

from __future__ import annotations

import re
from pathlib import Path

from numaspec.rules import Part, parts
from numaspec_tools import REPO

BEGIN = ("<!-- The part tables are generated from parts.toml (numaspec-dev regenerate --only "
         "parts): edit parts.toml, not them. -->")
END = "<!-- end of the generated part tables -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def part_tables(spec_parts: tuple[Part, ...]) -> str:
    """spec/README.md's tables, a heading and a table per part; a chapter by its name,
    linked to its file in the part's folder."""
    out: list[str] = []
    for part in spec_parts:
        head = f"**{part.label}**"
        out.append(f"{head} (`{part.spec}/`; `{part.package}`)" if part.number
                   else f"{head} (`{part.spec}/`)")
        out += ["", "| chapter | prefix | what it covers | modules |", "|---|---|---|---|"]
        for chapter in part.chapters:
            prefixes = ", ".join(f"`{p}`" for p in chapter.prefixes) or "—"
            out.append(f"| [{chapter.name}]({chapter.file}) | {prefixes} | "
                       f"{_cell(chapter.covers)} | {_cell(chapter.modules)} |")
        out.append("")
    return "\n".join(out)


def readme_row(part: Part) -> tuple[str, str]:
    """The README's row of a part's folder: its first cell, and the whole row."""
    first = f"| `{part.folder}/` |"
    what = f"Part {part.number}, {part.summary}" if part.number else part.summary
    return first, f"{first} `{part.package}` | {_cell(what)} |"


def contributing_row(part: Part) -> tuple[str, str] | None:
    """CONTRIBUTING.md's floor row of a numbered part."""
    if not part.number:
        return None
    first = f"| Part {part.number} |"
    return first, f"{first} `{part.folder}/` | {_cell(part.summary)} |"


def _rows(text: str, rows: list[tuple[str, str]], where: str) -> str:
    lines = text.splitlines()
    for first, row in rows:
        found = [i for i, line in enumerate(lines) if line.startswith(first)]
        if len(found) != 1:
            raise ValueError(f"{where}: {len(found)} rows start with {first!r} (want one)")
        lines[found[0]] = row
    return "\n".join(lines) + "\n"


def rendered(repo: Path = REPO) -> dict[Path, str]:
    """Each generated file's text as parts.toml says it should be."""
    spec_parts = parts(repo / "spec")
    readme = (repo / "spec" / "README.md").read_text("utf-8")
    start, end = readme.index(BEGIN) + len(BEGIN), readme.index(END)
    spec_readme = readme[:start] + "\n\n" + part_tables(spec_parts) + "\n" + readme[end:]
    top = repo / "README.md"
    contributing = repo / "CONTRIBUTING.md"
    return {
        repo / "spec" / "README.md": spec_readme,
        top: _rows(top.read_text("utf-8"), [readme_row(p) for p in spec_parts], "README.md"),
        contributing: _rows(contributing.read_text("utf-8"),
                            [r for p in spec_parts if (r := contributing_row(p))],
                            "CONTRIBUTING.md"),
    }


def write(repo: Path = REPO) -> None:
    for path, text in rendered(repo).items():
        if path.read_text("utf-8") != text:
            path.write_text(text, "utf-8")


def wing_docstring_problems(repo: Path = REPO) -> list[str]:
    """Each reference wing's docstring names its part's number and every chapter of it (by
    its file's name: ``merge.md``)."""
    problems = []
    for part in parts(repo / "spec"):
        init = repo / part.folder / "__init__.py"
        if not part.number or not init.is_file():
            continue
        head = init.read_text("utf-8").split('"""')[1]
        flat = re.sub(r"\s+", " ", head)
        if f"spec part {part.number}:" not in flat:
            problems.append(f"{init.relative_to(repo)}: its docstring must say "
                            f"'spec part {part.number}:' (spec/parts.toml)")
        missing = [c.name for c in part.chapters if f"``{c.name}``" not in flat]
        if missing:
            problems.append(f"{init.relative_to(repo)}: its docstring does not name "
                            f"{', '.join(missing)}")
    return problems
