"""The spec's rules as data: each rule's ID, title, place and its ``Holds in``,
``Upstream``, ``Judged`` and ``Checked by`` lines (spec/README.md, "How a rule reads").

The one place a rule is looked up: ``numaspec rule ID``, the operator's answers (a rule's
title beside its ID), the reports' links, the spec cross-check
(:mod:`numaspec.conformance.speccheck`), the vectors (a vector inherits its releases from its
rules) and the docs site all read the chapters through it.
"""

from __future__ import annotations

import functools
import posixpath
import re
from pathlib import Path, PurePosixPath

import attrs

__all__ = ["JUDGED", "SITE_URL", "Chapter", "Citation", "Cite", "Part", "Rule", "chapter_files",
           "find_rule", "parse_rules", "parts", "rule_link", "rules_by_id", "spec_dir",
           "upstream_pieces"]

#: Where the spec is published: the docs site built from spec/ by docs/build.py, whose
#: ``site_url`` (docs/mkdocs.yml) this must equal; a rule's anchor there is its ID.
SITE_URL = "https://numaspec.github.io/numaspec/"

_HEADING = re.compile(r"^### ([A-Z]+-\d+): (.+)$")
_META = re.compile(r"^(Holds in|Upstream|Judged|Checked by): ?(.*)$")
#: An Upstream line's pieces (spec/README.md, "How a rule reads": :func:`upstream_pieces`).
_IDENT = r"[A-Za-z_]\w*"
_CITED_NAME = re.compile(rf"^({_IDENT}(?:\.{_IDENT})?)(\s*\(([^()]*)\))?")
_GO_PATH = re.compile(r"^[\w.-]+(?:/[\w.-]+)*\.go$")
_PATH_WORD = re.compile(r"^[\w.*-]*(?:/[\w.*-]*)+$|^[\w.*-]+\.go$")
_PROJECT = re.compile(r"^[a-z][\w-]*$")
#: The folders at the top of kubernetes/kubernetes: a cited path that starts with one is
#: the repository's; any other is relative to the folder of the file cited before it.
_TOP = ("pkg/", "cmd/", "plugin/", "staging/", "test/", "vendor/")
_WITHIN = re.compile(r"^(?:1\.(?P<low>\d+)(?:\s?[\u2013-]\s?1\.(?P<high>\d+)|(?P<on>\+| on))?"
                     r"|from 1\.(?P<from>\d+)|(?:up to|to|until) 1\.(?P<to>\d+))$")
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


@attrs.frozen
class Citation:
    """One thing an Upstream line cites in kubernetes/kubernetes: a Go file (``name`` None)
    or a name defined in one (a function, a type, ``Type.method``), with the releases the
    line gives that name (``within``, as written: ``1.24-1.25``; None: the rule's)."""

    path: str
    name: str | None = None
    within: str | None = None

    def span(self) -> tuple[int, int | None] | None:
        """``within`` as minors, (first, last), last None where it is open (``1.26+``);
        None where the line gives none."""
        return None if self.within is None else _span(self.within)


@attrs.frozen
class Cite:
    """A cited piece of an Upstream line: a Go file (``name`` None: ``files`` is that file's
    path) or a name (``files``: the paths of its segment's files, one or several), with
    ``raw`` the line's text for it (a name's with its ``within`` annotation)."""

    raw: str
    text: str
    files: tuple[str, ...]
    name: str | None = None
    within: str | None = None

    @property
    def citations(self) -> tuple[Citation, ...]:
        return tuple(Citation(path, self.name, self.within) for path in self.files)


def upstream_pieces(line: str) -> list[str | Cite]:
    """An Upstream line as plain text and :class:`Cite` pieces, in order (their ``raw`` and the
    texts join to the line again).  How it reads (spec/README.md, "How a rule reads"):
    segments apart by ``;``, each ``files — names``; the files apart by commas, each a path in
    kubernetes/kubernetes or one relative to the folder of the file before it; a segment whose
    first file is preceded by a project's name (``cadvisor utils/…``) is that project's, and
    so are the segments after it until one names ``kubernetes``; the names apart by commas,
    each ``Name`` (a function, type, constant or variable, or a method of the file) or
    ``Type.method``, optionally followed by its own releases in parentheses (``(1.24-1.25)``,
    ``(1.26+)``, ``(1.33)``, ``(up to 1.37)``, ``(from 1.38)``).  Anything else (a segment
    with no Go file, a glob, another project's files, a note) is text."""
    pieces: list[str | Cite] = []
    project = "kubernetes"
    previous: str | None = None
    for number, segment in enumerate(_split(line, "; ")):
        if number:
            pieces.append("; ")
        head, dash, tail = _partition(segment, " — ")
        items = _split(head, ", ")
        first = items[0].rsplit(" ", 1)
        prefix = first[0] + " " if len(first) == 2 and _PATH_WORD.match(first[1]) else ""
        if prefix and _PROJECT.match(prefix.split(" ")[0]):
            project = prefix.split(" ")[0]
            items[0] = first[1]
        elif prefix:
            prefix = ""
        files: list[str] = []
        for item in items if project == "kubernetes" else []:
            path = _resolve(item, files[-1] if files else previous)
            if path is None:
                break
            files.append(path)
        if not files or len(files) < len(items):
            pieces.append(segment)
            continue
        previous = files[-1]
        if prefix:
            pieces.append(prefix)
        for index, (item, path) in enumerate(zip(items, files, strict=True)):
            pieces += [", "] if index else []
            pieces.append(Cite(item, item, (path,)))
        if dash:
            pieces.append(dash)
            pieces += _names(tail, files)
    return _joined(pieces)


def _names(tail: str, files: list[str]) -> list[str | Cite]:
    pieces: list[str | Cite] = []
    for index, item in enumerate(_split(tail, ", ")):
        pieces += [", "] if index else []
        match = _CITED_NAME.match(item)
        rest = item[match.end():] if match else item
        if match is None or (rest.strip() and not rest.lstrip().startswith("(")):
            pieces.append(item)
            continue
        within = match.group(3)
        if within is not None and _span(within) is None:
            within = None  # a note, not releases: left as text
        raw = match.group(0) if within is not None else match.group(1)
        pieces.append(Cite(raw, match.group(1), tuple(files), match.group(1), within))
        pieces.append(item[len(raw):])
    return pieces


def _span(text: str) -> tuple[int, int | None] | None:
    match = _WITHIN.match(text.strip())
    if match is None:
        return None
    if match["to"]:
        return 0, int(match["to"])
    if match["from"] or match["on"]:
        return int(match["from"] or match["low"]), None
    return int(match["low"]), int(match["high"] or match["low"])


def _resolve(item: str, previous: str | None) -> str | None:
    """A cited file's path in kubernetes/kubernetes (None: not a Go file, a glob, or a relative
    path with no file before it)."""
    if not _GO_PATH.match(item):
        return None
    if item.startswith(_TOP):
        return item
    if previous is None:
        return None
    return posixpath.normpath(posixpath.join(posixpath.dirname(previous), item))


def _split(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside parentheses and code spans."""
    parts: list[str] = []
    depth, code, start, index = 0, False, 0, 0
    while index < len(text):
        char = text[index]
        if char == "`":
            code = not code
        elif not code and char == "(":
            depth += 1
        elif not code and char == ")":
            depth = max(0, depth - 1)
        elif not code and depth == 0 and text.startswith(separator, index):
            parts.append(text[start:index])
            index += len(separator)
            start = index
            continue
        index += 1
    parts.append(text[start:])
    return parts


def _partition(text: str, separator: str) -> tuple[str, str, str]:
    parts = _split(text, separator)
    if len(parts) == 1:
        return text, "", ""
    return parts[0], separator, separator.join(parts[1:])


def _joined(pieces: list[str | Cite]) -> list[str | Cite]:
    """Adjacent texts joined, empty ones dropped."""
    out: list[str | Cite] = []
    for piece in pieces:
        if isinstance(piece, str):
            if not piece:
                continue
            if out and isinstance(out[-1], str):
                out[-1] += piece
                continue
        out.append(piece)
    return out
