"""The spec's rules as data: each rule's ID, title, place and its ``Holds in``,
``Upstream``, ``Judged`` and ``Checked by`` lines (spec/README.md, "How a rule reads").

The one place a rule is looked up: ``numaspec rule ID``, the operator's answers (a rule's
title beside its ID), the reports' links, the spec cross-check
(:mod:`numaspec.conformance.speccheck`), the vectors (a vector inherits its releases from its
rules) and the docs site all read the chapters through it.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path, PurePosixPath

import attrs

__all__ = ["JUDGED", "SITE_URL", "Chapter", "Part", "Rule", "chapter_files", "find_rule",
           "parse_rules", "parts", "rule_link", "rules_by_id", "spec_dir"]

#: Where the spec is published: the docs site built from spec/ by docs/build.py, whose
#: ``site_url`` (docs/mkdocs.yml) this must equal; a rule's anchor there is its ID.
SITE_URL = "https://numaspec.github.io/numaspec/"

_HEADING = re.compile(r"^### ([A-Z]+-\d+): (.+)$")
_META = re.compile(r"^(Holds in|Upstream|Judged|Checked by): ?(.*)$")
#: PROTO-7: what a rule is about, and so whom it judges (spec/README.md, "How a rule reads").
JUDGED = ("semantics", "format", "protocol")


@attrs.frozen
class Rule:
    id: str
    title: str
    #: the chapter's path under spec/, in its part's folder (``topology/merge.md``)
    file: str
    line: int
    meta: dict[str, str]

    @property
    def chapter(self) -> str:
        """The chapter's file name (``merge.md``), which names its page on the site whatever
        its part's folder."""
        return PurePosixPath(self.file).name

    def statement(self, spec: Path | None = None) -> str:
        """The rule's text: the lines after its metadata up to the next heading."""
        lines = (spec or spec_dir()).joinpath(self.file).read_text(
            encoding="utf-8").splitlines()[self.line:]
        body: list[str] = []
        fenced = False
        for line in lines:
            if line.startswith("```"):
                fenced = not fenced
            if not fenced and re.match(r"^#{1,3} ", line):
                break
            if not body and (not line.strip() or _META.match(line)):
                continue
            body.append(line)
        return "\n".join(body).strip()


@functools.cache
def rules_by_id() -> dict[str, Rule]:
    """Every rule of the installed spec by ID (empty where the chapters are not installed).
    Cached: the chapters are read once per process; do not change the mapping."""
    spec = spec_dir()
    return {r.id: r for r in parse_rules(spec)} if spec.is_dir() else {}


def find_rule(rule_id: str) -> Rule:
    """The rule of that ID (case-insensitive); an unknown ID is ``invalid-field`` naming the
    closest known IDs."""
    import difflib

    from numaspec.errors import InvalidFieldError

    rules = rules_by_id()
    rule = rules.get(rule_id.strip().upper())
    if rule is not None:
        return rule
    close = difflib.get_close_matches(rule_id.strip().upper(), list(rules), n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(close)}?" if close else (
        f" (known prefixes: {', '.join(sorted({r.split('-')[0] for r in rules}))})")
    raise InvalidFieldError(f"no rule {rule_id!r} in the spec{hint}", where="")


def rule_link(rule_id: str) -> str | None:
    """The URL of a rule in the published spec (``…/merge.html#MERGE-8``: the chapter's page,
    named by its file's name whatever its part's folder, and the rule's ID, never its title),
    or None for an unknown rule.  The site's file links work from disk as well as served; the
    older ``…/merge/#MERGE-8`` forwards to it."""
    rule = rules_by_id().get(rule_id)
    return None if rule is None else \
        f"{SITE_URL}{rule.chapter.removesuffix('.md')}.html#{rule.id}"


def spec_dir() -> Path:
    """The spec chapters: the installed ``numaspec.spec`` package (a checkout's ``spec/`` in an
    editable install, the copy a wheel carries otherwise)."""
    from importlib import resources

    return Path(str(resources.files("numaspec.spec")))


@attrs.frozen
class Chapter:
    """One chapter of a part (spec/parts.toml): its file (its path under spec/, in its part's
    folder: ``topology/merge.md``), its rules' prefixes, what it covers and the modules that
    read it."""

    file: str
    prefixes: tuple[str, ...]
    covers: str
    modules: str

    @property
    def name(self) -> str:
        """The file's name (``merge.md``): the chapter's page on the site."""
        return PurePosixPath(self.file).name


@attrs.frozen
class Part:
    """One part of the spec (spec/parts.toml): its number (roman, "" for the suite's own),
    title, one-line summary, the package that reads it, that package's folder, its own folder
    of spec/ (``spec``: ``topology``; its chapters are there, and its vectors in that folder of
    spec/vectors/), its chapters."""

    number: str
    title: str
    summary: str
    package: str
    folder: str
    spec: str
    chapters: tuple[Chapter, ...]

    @property
    def label(self) -> str:
        """How the spec's tables head the part: ``Part I: the Topology Manager's merge``."""
        return f"Part {self.number}: {self.title}" if self.number else self.title[:1].upper() \
            + self.title[1:]


def parts(spec: Path | None = None) -> tuple[Part, ...]:
    """The spec's parts in order, from ``parts.toml``: the one hand-kept map of chapters to
    parts and packages (spec/README.md's tables, the README's map, CONTRIBUTING.md's floors and
    the site's navigation are generated from it or checked against it)."""
    import tomllib

    table = tomllib.loads(((spec or spec_dir()) / "parts.toml").read_text(encoding="utf-8"))
    return tuple(
        Part(p["number"], p["title"], p["summary"], p["package"], p["folder"], p["spec"],
             tuple(Chapter(c["file"], tuple(c["prefixes"]), c["covers"], c["modules"])
                   for c in p["chapter"]))
        for p in table["part"])


def chapter_files(spec: Path) -> list[Path]:
    """The chapters of ``spec``: the Markdown files of its parts' folders (``topology/*.md``;
    a folder's README.md, such as the vectors' format, is not a chapter), sorted by file
    name whatever the folder (file names are unique across the parts, and name the pages)."""
    return sorted((p for p in spec.glob("*/*.md") if p.name != "README.md"),
                  key=lambda p: (p.name, p.parent.name))


def parse_rules(spec: Path) -> list[Rule]:
    """Every rule of the chapters of ``spec`` (:func:`chapter_files`, in that order), each
    with its chapter's path under ``spec``."""
    rules: list[Rule] = []
    for path in chapter_files(spec):
        current: Rule | None = None
        fenced = False
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("```"):
                fenced = not fenced
            if fenced:
                continue
            heading = _HEADING.match(line)
            if heading:
                current = Rule(heading.group(1), heading.group(2),
                               path.relative_to(spec).as_posix(), number, {})
                rules.append(current)
                continue
            meta = _META.match(line)
            if meta and current is not None:
                current.meta[meta.group(1)] = meta.group(2).strip()
    return rules
