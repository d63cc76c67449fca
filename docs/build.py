"""Build numaspec's documentation site from the spec and the guides, strictly.

    python docs/build.py [--out DIR] [--spec DIR] [--guides DIR]

The site is generated: every page is made at build time from what the checkout already has,
so nothing in it is written twice.

* a page per chapter of ``spec/`` (in spec/parts.toml's order, grouped by its parts), named
  by the chapter's file name whatever its part's folder (``spec/topology/merge.md`` is
  ``merge.html``: the site stays flat, and its links are resolved from the chapter's own
  folder), where each rule's heading carries its ID as its anchor (``merge.html#MERGE-8``),
  whatever its title;
* under each rule, its ``Upstream`` files and the names it cites in them as permalinks at a
  pinned kubelet release (``adapters/kubelet/releases.json``), a name's at the line of its
  definition: the release and line ``docs/upstream-links.json`` gives (generated from the
  sources in the Go module cache by ``numaspec-dev regenerate --go``, committed so that the
  site builds without them): the newest pinned release inside the rule's ``Holds in``,
  narrowed to the name's own releases where the line gives them (``compareHints
  (1.24-1.25)``), whose file defines the name, a released one before a pre-release.  The line
  ends with the release the rule was checked against, "(at v1.37.2)", and a link at another
  release says which, "(1.24-1.25, at v1.25.16)".  Its ``Checked by`` entries are linked to
  the vectors, the properties and the tests;
* the version matrix (rule x kubelet minor), the vectors and the properties, read from the
  spec's vector files and the property registry; the vector files themselves at
  ``vectors/<name>.json`` whatever their part's folder, and a file kept in numbered pieces also
  whole at the address it had before it was split (``vectors/resize.json``);
* the comparison of implementations (``adapters/comparison/matrix.md``) when the checkout
  has it, under a line naming the numaspec that produced it and the one the site is;
* "How to cite" (``cite.md``), from ``CITATION.cff`` and the build's version and commit;
* the entry page (``docs/index.md``) and the guides (``docs/guides/*.md``), the parts written
  by hand.  Their links are written relative to their own folder so that they also work when
  browsing the repository: a link to a guide or to a spec chapter becomes the site's page, a
  link to any other file of the checkout a GitHub link at the build's commit.

Every page's footer names numaspec's version (the installed distribution's metadata) and the
commit it was built from (``git rev-parse HEAD``; "unknown" outside a checkout).  The site
works where it is opened: every internal link is a file link (``merge.html#MERGE-8``), search
runs from ``file://`` (the theme's offline plugin inlines the index; ``docs/assets/`` has the
shim that runs the search worker in a frame, since browsers refuse a worker script from
disk, and the fix appended to the worker for a lunr bug that made some searches find nothing,
``lunr-tokenset.js``), and nothing is loaded from the network.  For the published site's
older addresses (``merge/#MERGE-8``, which earlier citations use) each page also has a folder
whose index sends the reader on, anchor kept.

Strict: a rule ID of a known prefix that is not a rule, a link to a page, a file or an anchor
that does not exist, and any MkDocs warning stop the build with one line per problem.
"""

from __future__ import annotations

import argparse
import html
import json
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

import yaml

from numaspec.rules import Cite, Rule, chapter_files, parse_rules, parts, upstream_pieces

REPO = Path(__file__).resolve().parent.parent
REPOSITORY = "https://github.com/numaspec/numaspec"
KUBERNETES = "https://github.com/kubernetes/kubernetes/blob/"
GUIDES = REPO / "docs" / "guides"
#: The entry page and the site's own assets (written by hand, like the guides).
HOME = REPO / "docs" / "index.md"
ASSETS = REPO / "docs" / "assets"
#: The guides in the site's order; a guide not named here follows them, by file name.
GUIDE_ORDER = ("reference.md", "adapters.md", "operators.md", "fuzzing.md",
               "kubelet-and-peers.md", "model-checking.md", "what-is-checked.md",
               "benchmarks.md")

_HEADING = re.compile(r"^### ([A-Z]+-\d+): (.+)$")
_META = re.compile(r"^(Holds in|Upstream|Judged|Checked by): ?(.*)$")
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")
#: Where each rule's Upstream citations link (tools/numaspec_tools/upstream_links.py).
UPSTREAM_LINKS = REPO / "docs" / "upstream-links.json"
_PULL = re.compile(r"\b(PR|kubernetes)\s?#(\d{4,6})\b")


class SiteError(Exception):
    """The spec cannot be published as it stands; the message lists every problem."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python docs/build.py", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("--out", default=str(REPO / "site"), metavar="DIR",
                        help="where the HTML goes (default: site/ in the checkout)")
    parser.add_argument("--spec", default=str(REPO / "spec"), metavar="DIR",
                        help="the spec chapters to publish (default: the checkout's spec/)")
    parser.add_argument("--guides", default=str(GUIDES), metavar="DIR",
                        help="the hand-written guides to publish (default: docs/guides/; their "
                             "links are read as if they were there)")
    parser.add_argument("--keep-sources", default=None, metavar="DIR",
                        help="also keep the generated Markdown and mkdocs.yml here")
    args = parser.parse_args(argv)
    from numaspec.errors import NumaspecError

    try:
        pages = build(Path(args.spec), Path(args.out), keep=args.keep_sources,
                      guides=Path(args.guides))
    except NumaspecError as exc:
        print(f"docs: the spec does not read: {exc.describe()}", file=sys.stderr)
        return 1
    except SiteError as exc:
        print(f"docs: {exc}", file=sys.stderr)
        return 1
    print(f"docs: {pages} pages in {args.out} (entry page {Path(args.out) / 'index.html'})")
    return 0


def build(spec: Path, out: Path, *, keep: str | None = None, guides: Path = GUIDES) -> int:
    """Generate the Markdown from ``spec`` and ``guides`` and build it with MkDocs strictly
    into ``out``."""
    version, commit = provenance()
    with tempfile.TemporaryDirectory(prefix="numaspec-docs-") as tmp:
        source = Path(tmp) / "docs"
        nav = generate(spec, source, guides, version=version, commit=commit)
        config = yaml.safe_load((REPO / "docs" / "mkdocs.yml").read_text(encoding="utf-8"))
        theme = Path(tmp) / "theme"
        _footer(theme, version, commit)
        _source_link(theme)
        config["theme"]["custom_dir"] = str(theme)
        config.setdefault("extra", {}).update(numaspec_version=version, numaspec_commit=commit)
        config.update(docs_dir=str(source), site_dir=str(out.resolve()), nav=nav,
                      strict=True)
        config_file = Path(tmp) / "mkdocs.yml"
        config_file.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        if keep:
            shutil.copytree(tmp, keep, dirs_exist_ok=True)
        _mkdocs(config_file)
        _patch_search_worker(out.resolve())
        _forwarders(out.resolve())
        _relative_404(out.resolve(), str(config.get("site_url") or ""))
        return sum(1 for _ in source.rglob("*.md"))


def provenance() -> tuple[str, str]:
    """numaspec's version, derived from the checkout (numaspec.about: the release, or the
    development version that names the distance from it and the commit; never the metadata an
    editable install wrote when it was installed), and the commit of the checkout the site is
    built from ("unknown" outside a git checkout)."""
    from numaspec.about import from_git
    from numaspec.about import version as numaspec_version

    version = from_git(REPO) or numaspec_version()
    try:
        done = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", "HEAD"],
                              capture_output=True, text=True, timeout=30, check=False)
    except OSError:  # no git on this machine
        return version, "unknown"
    commit = done.stdout.strip()
    return version, commit if done.returncode == 0 and re.fullmatch(
        r"[0-9a-f]{40}", commit) else "unknown"


def _footer(theme: Path, version: str, commit: str) -> None:
    """The theme's copyright partial, overridden: every page's footer names numaspec's version
    and commit and links "How to cite"."""
    (theme / "partials").mkdir(parents=True)
    at = (f'<a href="{REPOSITORY}/tree/{commit}"><code>{commit[:12]}</code></a>'
          if commit != "unknown" else "commit unknown (built outside a git checkout)")
    (theme / "partials" / "copyright.html").write_text(
        '<div class="md-copyright">\n  <div class="md-copyright__highlight numaspec-build">\n'
        f"    numaspec {html.escape(version)} at {at} \u00b7 "
        "<a href=\"{{ 'cite.html' | url }}\">How to cite</a> \u00b7 Apache-2.0\n"
        "  </div>\n</div>\n", encoding="utf-8")


def _source_link(theme: Path) -> None:
    """The theme's repository link (``repo_url``), overridden without its
    ``data-md-component="source"``: the theme's script would otherwise ask GitHub's API for the
    repository's stars and forks from the reader's browser, and the site loads nothing from
    the network.  The link, its icon and the repository's name stay."""
    (theme / "partials" / "source.html").write_text(
        '<a href="{{ config.repo_url }}" title="{{ lang.t(\'source\') }}" class="md-source">\n'
        '  <div class="md-source__icon md-icon">\n'
        '    {% set icon = config.theme.icon.repo or "fontawesome/brands/git-alt" %}\n'
        '    {% include ".icons/" ~ icon ~ ".svg" %}\n'
        "  </div>\n"
        '  <div class="md-source__repository">{{ config.repo_name }}</div>\n'
        "</a>\n", encoding="utf-8")


def _relative_404(site: Path, site_url: str) -> None:
    """The theme writes ``404.html`` with absolute paths under ``site_url``'s path
    (``/numaspec/assets/...``), for a server that answers it at any depth; from disk those
    name nothing and the page is unstyled.  Its paths become relative to the site's root,
    where the page is, and where it is served (not ``file:``) a ``<base>`` naming the root is
    set before any of them is read, so it works at any depth there too."""
    page = site / "404.html"
    if not page.is_file():
        return
    root = urllib.parse.urlsplit(site_url).path or "/"
    if not root.endswith("/"):
        root += "/"
    text = page.read_text(encoding="utf-8")
    if root == "/" or f'"{root}' not in text:
        return
    text = text.replace(f'"base": "{root}"', '"base": "."')
    text = text.replace(f'="{root}"', '="index.html"').replace(f'="{root}', '="')
    text = text.replace(f'"search": "{root}', '"search": "')
    base = ("<script>if (location.protocol !== \"file:\") {const b = "
            "document.createElement(\"base\"); b.href = " + json.dumps(root)
            + "; document.head.appendChild(b)}</script>")
    head = re.search(r"<head>\s*", text)
    if head is None:
        raise SiteError("404.html has no <head>: the theme changed, so check _relative_404")
    page.write_text(text[:head.end()] + base + "\n" + text[head.end():], encoding="utf-8")


def _patch_search_worker(site: Path) -> None:
    """Append ``assets/javascripts/lunr-tokenset.js`` (why: its comment) to the theme's search
    worker, so the lunr it bundles merges only equal nodes of its term automaton."""
    workers = sorted((site / "assets" / "javascripts" / "workers").glob("search.*.min.js"))
    if len(workers) != 1:
        raise SiteError(f"expected one search worker in {site}/assets/javascripts/workers, "
                        f"found {[w.name for w in workers]}: the theme changed, so check "
                        "docs/assets/javascripts/lunr-tokenset.js against its lunr")
    patch = (ASSETS / "javascripts" / "lunr-tokenset.js").read_text(encoding="utf-8")
    with workers[0].open("a", encoding="utf-8") as worker:
        worker.write("\n" + patch)


def _forwarders(site: Path) -> None:
    """For every page ``x.html`` (but the entry page), ``x/index.html`` sending the reader on
    to it with the anchor kept: the published site's older addresses (``merge/#MERGE-8``)
    keep working."""
    for page in sorted(site.rglob("*.html")):
        relative = page.relative_to(site)
        if page.name in ("index.html", "404.html") or relative.parts[0] in ("assets", "search"):
            continue
        folder = page.with_suffix("")
        if folder.exists():
            continue
        folder.mkdir()
        target = f"../{page.name}"
        (folder / "index.html").write_text(
            '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(relative.as_posix())}</title>"
            f'<link rel="canonical" href="{target}">'
            f'<meta http-equiv="refresh" content="0; url={target}">'
            f"<script>location.replace({json.dumps(target)} + location.hash)</script>"
            f'</head><body><a href="{target}">{html.escape(relative.as_posix())}</a>'
            "</body></html>\n", encoding="utf-8")


def _mkdocs(config_file: Path) -> None:
    import logging

    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, MkDocsException

    warnings: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                warnings.append(record.getMessage())

    handler = Collect()
    log = logging.getLogger("mkdocs")
    log.addHandler(handler)
    try:
        mkdocs_build(load_config(str(config_file)))
    except (Abort, MkDocsException) as exc:
        raise SiteError("\n".join([*warnings, str(exc)])) from None
    finally:
        log.removeHandler(handler)
    if warnings:
        raise SiteError("\n".join(warnings))


# --- the pages -------------------------------------------------------------------------------


def generate(spec: Path, docs: Path, guides: Path = GUIDES, *, version: str = "unknown",
             commit: str = "unknown") -> list[object]:
    """Write the site's Markdown into ``docs``; the navigation, in order."""
    rules = parse_rules(spec)
    site = _Site(spec, {r.id: r.chapter.removesuffix(".md") for r in rules},
                 {r.id: r.meta for r in rules}, version=version, commit=commit)
    docs.mkdir(parents=True)
    if ASSETS.is_dir():
        shutil.copytree(ASSETS, docs / "assets")
    for folder in ("schemas", "data"):
        if (spec / folder).is_dir():
            shutil.copytree(spec / folder, docs / folder,
                            ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    from numaspec.conformance.cases.vectors import vector_paths

    (docs / "vectors").mkdir()
    for path in vector_paths(spec / "vectors"):  # flat on the site, whatever the part
        shutil.copy(path, docs / vector_page(path.relative_to(spec).as_posix()))
    _whole_vector_files(docs / "vectors")
    chapters = site.chapters()
    nav: list[object] = [{"Home": "index.md"}]
    guide_names = _guides(guides)
    home = HOME.read_text(encoding="utf-8") if HOME.is_file() else None
    (docs / "index.md").write_text(
        site.guide(home, "index.md", guide_names, folder="docs") if home is not None
        else site.page((spec / "README.md").read_text(encoding="utf-8"), "README.md"),
        encoding="utf-8")
    if guide_names:
        (docs / "guides").mkdir()
        for name in guide_names:
            text = (guides / name).read_text(encoding="utf-8")
            (docs / "guides" / name).write_text(site.guide(text, name, guide_names),
                                                encoding="utf-8")
        nav.append({"Guides": [f"guides/{name}" for name in guide_names]})
    spec_nav: list[object] = []
    if home is not None:
        (docs / SPEC_PAGE).write_text(site.page(
            (spec / "README.md").read_text(encoding="utf-8"), "README.md"), encoding="utf-8")
        spec_nav.append({"Its chapters, and how a rule reads": SPEC_PAGE})
    for part, files in site.parts():
        names = [site.page_of(file) for file in files]
        for file, name in zip(files, names, strict=True):
            text = (spec / file).read_text(encoding="utf-8")
            (docs / name).write_text(site.page(text, name, file), encoding="utf-8")
        if part:
            spec_nav.append({part: names})
        else:
            spec_nav.extend(names)
    if (spec / "vectors" / "README.md").is_file():
        (docs / "vectors" / "README.md").write_text(site.page(
            (spec / "vectors" / "README.md").read_text(encoding="utf-8"), "vectors/README.md"),
            encoding="utf-8")
        spec_nav.append({"The vectors' format": "vectors/README.md"})
    nav.append({"The specification": spec_nav})
    (docs / "matrix.md").write_text(site.version_matrix(rules, chapters), encoding="utf-8")
    (docs / "checks.md").write_text(site.vectors_page(), encoding="utf-8")
    (docs / "properties.md").write_text(site.properties_page(), encoding="utf-8")
    nav.append({"Where each rule holds": "matrix.md"})
    nav.append({"Vectors": "checks.md"})
    nav.append({"Properties": "properties.md"})
    comparison = REPO / "adapters" / "comparison" / "matrix.md"
    if comparison.is_file():
        (docs / "comparison.md").write_text(site.comparison(comparison), encoding="utf-8")
        nav.append({"Implementations compared": "comparison.md"})
    nav.append({"Findings upstream": _findings_pages(docs / "findings", version, commit)})
    (docs / "cite.md").write_text(site.cite_page(), encoding="utf-8")
    nav.append({"How to cite": "cite.md"})
    if site.problems:
        raise SiteError("\n".join(sorted(set(site.problems))))
    return nav


def _findings_pages(folder: Path, version: str, commit: str) -> list[object]:
    """One page per finding about upstream code, ready to file (an exported one's with its Go
    test and fix, an outside one's in words), and an index placing every finding numaspec has
    made (RUN-23: adapters/findings); the pages' names, index first."""
    from numaspec.conformance.cases import upstream_findings as uf

    folder.mkdir()
    found = uf.findings()
    names = [f"findings/{f.id}.md" for f in found]
    stamp = f"{version}, commit {commit[:12]}" if commit != "unknown" else version
    for f in found:
        # the site's search ranks a finding's page below the spec's: a rule ID such as MERGE-8
        # shares its number with SCHEDPLUG-8, and the rule is what a reader searching it wants
        (folder / f"{f.id}.md").write_text("---\nsearch:\n  boost: 0.5\n---\n\n"
                                           + uf.page(f, numaspec_version=stamp),
                                           encoding="utf-8")
    words = uf.in_words()
    for row in words:
        (folder / f"{row.id}.md").write_text("---\nsearch:\n  boost: 0.5\n---\n\n"
                                             + uf.page_in_words(row, numaspec_version=stamp),
                                             encoding="utf-8")
    pages = {f.id for f in found} | {row.id for row in words}
    lines = ["# Findings upstream", "",
             "Each finding numaspec made about someone else's code that still holds at the "
             "release numaspec pins has a page ready to file: what happens, the impact, the "
             "versions read, a failing Go test in the upstream package's own style, a minimal "
             "fix under which it passes, and where it stands upstream, dated "
             "(`numaspec findings show ID`; `adapters/findings/README.md`).", "",
             "| finding | code | what | upstream, checked |", "|---|---|---|---|"]
    for f in found:
        lines.append(f"| [{f.id}]({f.id}.md) | `{f.module}` {f.version} | {f.title} | "
                     f"{f.checked} |")
    lines += ["", "## Reported in words", "",
              "Findings about code numaspec cannot pin for a Go test (a driver the module proxy "
              "does not serve, a project's documentation): the same report, with the numaspec "
              "command that shows it and the fix in words.", "",
              "| finding | what | upstream, checked |", "|---|---|---|"]
    lines += [f"| [{row.id}]({row.id}.md) | {row.title} | {row.checked} |" for row in words]
    lines += ["", "## Every finding, placed", "",
              "The numbered findings of the specification's findings page and each peer's "
              "findings: why a finding without a page has none.", "",
              "| finding | placed | why |", "|---|---|---|"]
    for row in uf.triage():
        ident = f"[{row.id}]({row.id}.md)" if row.id in pages else row.id
        lines.append(f"| {ident} | {row.kind} | {row.why.replace(chr(10), ' ')} |")
    lines += ["", "| placed | meaning |", "|---|---|"]
    lines += [f"| {kind} | {meaning} |" for kind, meaning in uf.TRIAGE_KINDS.items()]
    (folder / "index.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # the navigation names each page by its finding's ID: the titles are sentences
    return [{"Every finding, placed": "findings/index.md"},
            *({f.id: name} for f, name in zip(found, names, strict=True)),
            *({row.id: f"findings/{row.id}.md"} for row in words)]


def _guides(folder: Path) -> list[str]:
    """The guides' file names, in the site's order."""
    found = {p.name for p in folder.glob("*.md")} if folder.is_dir() else set()
    return [n for n in GUIDE_ORDER if n in found] + sorted(found - set(GUIDE_ORDER))


#: Where the site puts spec/README.md (the chapters' table and how a rule reads) when the
#: entry page is docs/index.md.
SPEC_PAGE = "specification.md"
#: The pages the generator writes that a hand-written page may link (as ``docs/<page>``).
GENERATED = ("matrix.md", "checks.md", "properties.md", "comparison.md", "cite.md", SPEC_PAGE)


class _Site:
    def __init__(self, spec: Path, chapter_of: dict[str, str],
                 meta: dict[str, dict[str, str]], *, version: str = "unknown",
                 commit: str = "unknown") -> None:
        self.spec = spec
        self.version = version
        self.commit = commit
        #: numaspec's own files are linked at the build's commit (main outside a checkout)
        self.github = f"{REPOSITORY}/blob/{commit if commit != 'unknown' else 'main'}/"
        self.chapter_of = chapter_of
        self.meta = meta
        self.prefixes = {rule.split("-")[0] for rule in chapter_of}
        self.problems: list[str] = []
        self._chapters: list[str] | None = None
        self.releases = {r["minor"]: r["version"] for r in json.loads(
            (REPO / "adapters" / "kubelet" / "releases.json").read_text(encoding="utf-8"))[
            "releases"]}
        #: (rule, path, name, its own releases) -> (tag, line), from docs/upstream-links.json
        self.upstream: dict[tuple[str, str, str | None, str | None],
                            tuple[str | None, int | None]] = {
            (rule, path, name, within): (tag, line)
            for rule, rows in json.loads(UPSTREAM_LINKS.read_text(encoding="utf-8"))[
                "rules"].items()
            for path, name, within, tag, line in rows}
        from numaspec.conformance.properties import PROPERTIES

        self.properties = PROPERTIES

    # -- chapters ----------------------------------------------------------------------------

    def chapters(self) -> list[str]:
        """The chapters (their paths under spec/: ``topology/merge.md``) in spec/parts.toml's
        order, then any other chapter."""
        if self._chapters is None:
            listed = [file for _, files in self.parts() for file in files]
            self._chapters = listed + [
                path for path in (p.relative_to(self.spec).as_posix()
                                  for p in chapter_files(self.spec)) if path not in listed]
        return self._chapters

    def parts(self) -> list[tuple[str | None, list[str]]]:
        """The chapters' paths under spec/ grouped by part, as spec/parts.toml (the one map of
        the spec) says, each under its label ("Part I: ..."); chapters it does not list are
        refused by tests/meta/test_parts.py."""
        return [(part.label, [c.file for c in part.chapters if (self.spec / c.file).is_file()])
                for part in parts(self.spec)]

    @staticmethod
    def page_of(chapter: str) -> str:
        """A chapter's page on the site: its file's name, whatever its part's folder (the site
        is flat: ``topology/merge.md`` is ``merge.md``, built as ``merge.html``)."""
        return posixpath.basename(chapter)

    def page(self, text: str, name: str, source: str | None = None) -> str:
        """A file of spec/ (``source``, its path under spec/; ``name`` unless given) as the
        site's page ``name``: its links resolved from the file's own folder, written for the
        page's place on the site."""
        source = source or name
        out: list[str] = []
        fenced = False
        rule: str | None = None
        for number, line in enumerate(text.splitlines(), 1):
            where = f"spec/{source}:{number}"
            linked = partial(self.target, name=name, source=source, where=where)
            if line.startswith("```"):
                fenced = not fenced
                out.append(line)
                continue
            if fenced:
                out.append(line)
                continue
            heading = _HEADING.match(line)
            if heading:
                rule = heading.group(1)
                out.append(f"### {rule}: {self.inline(heading.group(2), name, where, linked)} "
                           f"{{ #{rule} }}")
                continue
            meta = _META.match(line)
            if meta and rule is not None:
                out.append(self.meta_line(rule, meta.group(1), meta.group(2), name, where))
                continue
            if line.startswith("#"):
                rule = None
            out.append(self.inline(line, name, where, linked))
        return "\n".join(out) + "\n"

    def meta_line(self, rule: str, key: str, value: str, name: str, where: str) -> str:
        depth = "../" * name.count("/")
        if key == "Holds in":
            return (f"**Holds in:** {value} · [in the matrix]({depth}matrix.md#{rule})"
                    "  ")
        if key == "Upstream":
            tag = self.checked_at(rule)
            out: list[str] = []
            at_tag = False  # whether a link is at the rule's release, which the line ends with
            for piece in upstream_pieces(value):
                if isinstance(piece, str):
                    out.append(_PULL.sub(lambda m: f"[{m.group(0)}](https://github.com/"
                                         f"kubernetes/kubernetes/pull/{m.group(2)})", piece))
                    continue
                text, at = self.cite(rule, piece, tag, where)
                out.append(text)
                at_tag = at_tag or at == tag
            note = f" (at {tag})" if at_tag else ""
            return f"**Upstream:** {''.join(out)}{note}  "
        if key == "Judged":
            return f"**Judged:** {value}  "
        items = [item.strip() for item in value.split(",") if item.strip()]
        return "**Checked by:** " + ", ".join(self.check_link(i, depth, where) for i in items)

    def cite(self, rule: str, piece: Cite, tag: str | None, where: str
             ) -> tuple[str, str | None]:
        """A cited file, or a name in one, linked at the release docs/upstream-links.json
        gives it (a name at its definition's line), that release said where it is not the
        line's ``tag``; and the release (None: not linked).  A name cited in several files at
        once is left as it is (each file is linked)."""
        if len(piece.files) > 1:
            return piece.raw, None
        cited = (piece.files[0], piece.name, piece.within)
        found = self.upstream.get((rule, *cited))
        what = f"{piece.files[0]}" + (f" — {piece.name}" if piece.name else "")
        if found is None:
            self.problems.append(f"{where}: {what} is not in docs/upstream-links.json: run "
                                 "numaspec-dev regenerate --go")
            return piece.raw, None
        at, line = found
        if at is None:
            self.problems.append(f"{where}: no pinned release in the range of {what} has it "
                                 "(docs/upstream-links.json; "
                                 "tests/upstream/kubelet/test_upstream_links.py says more)")
            return piece.raw, None
        anchor = f"#L{line}" if line else ""
        notes = [n for n in (piece.within, None if at == tag else f"at {at}") if n]
        return (f"[{piece.text}]({KUBERNETES}{at}/{piece.files[0]}{anchor})"
                + (f" ({', '.join(notes)})" if notes else "")), at

    def check_link(self, item: str, depth: str, where: str) -> str:
        if item.startswith("vector "):
            vid = item.removeprefix("vector ")
            return f"[{vid}]({depth}checks.md#{vid})"
        if item.startswith("test "):
            path = item.removeprefix("test ")
            return f"[{path}]({self.github}{path})"
        if item in self.properties:
            return f"[{item}]({depth}properties.md#{item})"
        self.problems.append(f"{where}: Checked by names {item!r}, which is neither a vector, "
                             "a test nor a property")
        return item

    def checked_at(self, rule: str) -> str | None:
        """The newest pinned kubelet release inside the rule's Holds in range."""
        span = self.span(rule)
        if span is None:
            return None
        low, high = span
        pinned = [(int(minor.split(".")[1]), version) for minor, version in self.releases.items()
                  if low <= int(minor.split(".")[1]) <= high]
        # a released kubelet rather than a pre-release, where the range has one (VER-1)
        released = [item for item in pinned if "-" not in item[1]]
        return max(released or pinned)[1] if pinned else f"v1.{high}.0"

    def span(self, rule: str) -> tuple[int, int] | None:
        """The rule's Holds in range as minors (None where it names no release)."""
        from numaspec.conformance.cases.vectors import parse_range
        from numaspec.errors import InvalidFieldError

        holds = self.meta.get(rule, {}).get("Holds in", "").split(" ")[0]
        try:
            return parse_range(holds, rule)
        except InvalidFieldError:
            return None

    def inline(self, line: str, name: str, where: str,
               target: Callable[[str], str] | None = None) -> str:
        """Links rewritten for the site (by ``target``, a chapter's rewriting unless given),
        and rule IDs linked outside code spans."""
        pieces: list[str] = []
        last = 0
        for link in _LINK.finditer(line):
            if line[:link.start()].count("`") % 2:
                continue  # inside a code span
            pieces.append(self._plain(line[last:link.start()], name, where))
            rewritten = target(link.group(2)) if target else self.target(link.group(2), name)
            pieces.append(f"[{link.group(1)}]({rewritten})")
            last = link.end()
        pieces.append(self._plain(line[last:], name, where))
        return "".join(pieces)

    def _plain(self, text: str, name: str, where: str) -> str:
        parts = re.split(r"(`[^`]*`)", text)
        return "".join(part if part.startswith("`") else self._ids(part, name, where)
                       for part in parts)

    def _ids(self, text: str, name: str, where: str) -> str:
        depth = "../" * name.count("/")

        def link(match: re.Match[str]) -> str:
            rule = match.group(0)
            if match.group(1) not in self.prefixes:
                return rule
            chapter = self.chapter_of.get(rule)
            if chapter is None:
                self.problems.append(f"{where}: {rule} is not a rule of the spec")
                return rule
            return f"[{rule}]({depth}{chapter}.md#{rule})"

        return re.sub(r"(?<![\w/#-])([A-Z]+)-(\d+)(?![\w])", link, text)

    def target(self, target: str, name: str, source: str | None = None,
               where: str | None = None) -> str:
        """A link of a file of spec/ (``source``, its path under spec/; ``name`` unless given)
        as the site's page ``name`` needs it: resolved from the file's own folder, a chapter
        becomes its (flat) page, a file the site copies its copy, any other file of the
        checkout its GitHub page; a file of spec/ that is not there is a problem."""
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            return self._fragment(target) if target.startswith("#") else target
        source = source or name
        path, _, fragment = target.partition("#")
        base = Path("spec") / Path(source).parent
        resolved = Path(posixpath.normpath((base / path).as_posix())) if path else \
            Path("spec") / source
        if resolved.parts[0] != "spec" or len(resolved.parts) == 1:
            return f"{self.github}{resolved.as_posix()}" + (f"#{fragment}" if fragment else "")
        inside = Path(*resolved.parts[1:]).as_posix()
        site = self._spec_page(inside)
        if site is not None:
            return _relative(site, name) + (self._fragment("#" + fragment) if fragment else "")
        if (self.spec / inside).is_dir():
            return f"{self.github.replace('/blob/', '/tree/')}{resolved.as_posix()}"
        if not (self.spec / inside).exists():
            self.problems.append(f"{where or f'spec/{source}'}: {target!r} is not in the spec")
            return target
        return f"{self.github}{resolved.as_posix()}" + (f"#{fragment}" if fragment else "")

    # -- guides ------------------------------------------------------------------------------

    def guide(self, text: str, name: str, guides: list[str],
              folder: str = "docs/guides") -> str:
        """A hand-written page (``<folder>/<name>``: a guide, or the entry page in docs/) as
        the site needs it: its links rewritten and checked, rule IDs linked and checked, code
        blocks left alone."""
        out: list[str] = []
        fenced = False
        page = posixpath.join(posixpath.relpath(folder, "docs"), name).removeprefix("./")
        for number, line in enumerate(text.splitlines(), 1):
            where = f"{folder}/{name}:{number}"
            if line.lstrip().startswith("```"):
                fenced = not fenced
                out.append(line)
                continue
            if fenced:
                out.append(line)
                continue
            out.append(self.inline(line, page, where, partial(
                self.guide_target, guides=guides, where=where, folder=folder)))
        return "\n".join(out) + "\n"

    def guide_target(self, target: str, guides: list[str], where: str,
                     folder: str = "docs/guides") -> str:
        """A hand-written page's link, written relative to its folder, as the site needs it:
        a guide, the entry page, a spec chapter (or a file the site copies from spec/) or
        the site's own generated pages (``matrix.md``, ``cite.md``: docs/ has no such file,
        the site does) is the site's page, any other file of the checkout its GitHub page;
        a file that is not there is a problem.  Anchors are left to MkDocs, which checks
        them."""
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            return target
        path, _, fragment = target.partition("#")
        anchor = f"#{fragment}" if fragment else ""
        resolved = posixpath.normpath(posixpath.join(folder, path))
        up = "../" * (folder.count("/"))  # from the page's folder to the site's root
        if path.startswith("/") or resolved == ".." or resolved.startswith("../"):
            self.problems.append(f"{where}: {target!r} points outside the repository")
            return target
        if posixpath.dirname(resolved) == "docs/guides" and resolved.endswith(".md"):
            guide = posixpath.basename(resolved)
            if guide not in guides:
                self.problems.append(f"{where}: {target!r} is not a guide")
            return up + "guides/" + guide + anchor
        if resolved in ("docs/index.md", *(f"docs/{page}" for page in GENERATED)):
            return up + resolved.removeprefix("docs/") + anchor
        local = REPO / resolved
        if resolved == "spec" or resolved.startswith("spec/"):
            inside = resolved.removeprefix("spec").lstrip("/")
            site = self._spec_page(inside)
            if site is not None:
                return up + site + (self._fragment(anchor) if anchor else "")
            local = self.spec / inside
            if not local.exists():
                self.problems.append(f"{where}: {target!r} is not in the spec")
                return target
        elif not local.exists():
            self.problems.append(f"{where}: {target!r} is not in the checkout")
            return target
        kind = "tree" if local.is_dir() else "blob"
        return f"{self.github.replace('/blob/', f'/{kind}/')}{resolved}{anchor}"

    def _spec_page(self, inside: str) -> str | None:
        """Where the site has a file of spec/ (``inside`` that folder), if it has it: a
        chapter's page is its file's name (``topology/merge.md`` is ``merge.md``)."""
        if inside in ("", "README.md"):
            return SPEC_PAGE if HOME.is_file() else "index.md"
        if (self.spec / inside).is_dir():
            readme = f"{inside}/README.md"
            return readme if readme == "vectors/README.md" and (
                self.spec / readme).is_file() else None
        if not (self.spec / inside).is_file():
            return None
        if inside in self.chapters():
            return self.page_of(inside)
        if inside == "vectors/README.md" or (
                inside.split("/", maxsplit=1)[0] in ("schemas", "data")
                and inside.endswith(".json")):
            return inside
        if inside.startswith("vectors/") and inside.endswith(".json"):
            return vector_page(inside)
        return None

    def _fragment(self, fragment: str) -> str:
        """A GitHub heading slug of a rule becomes the rule's ID."""
        found = re.match(r"^#([a-z]+-\d+)(?:-|$)", fragment)
        if found and found.group(1).upper() in self.chapter_of:
            return "#" + found.group(1).upper()
        return fragment

    # -- generated pages ---------------------------------------------------------------------

    def version_matrix(self, rules: Iterable[Rule], chapters: list[str]) -> str:
        """Where each rule holds, one row a rule and never a blank one: its ``Holds in``
        range, the pinned kubelet releases inside it, where the test run runs it against
        kubelet (``adapters/kubelet/COVERAGE.md``, when the checkout has it) and a strip of
        one mark per minor, under the minors' numbers, each mark titled with its release.  Each
        chapter's table is in a ``numaspec-matrix`` block, whose header row stays in view
        (docs/assets/stylesheets/numaspec.css, docs/assets/javascripts/matrix.js)."""
        minors = sorted({int(m.split(".")[1]) for m in self.releases} | set(range(18, 39)))
        pinned = {int(m.split(".")[1]) for m in self.releases}
        version_of = {int(m.split(".")[1]): v for m, v in self.releases.items()}
        run = _coverage(REPO / "adapters" / "kubelet" / "COVERAGE.md")
        first, last = minors[0], minors[-1]
        lines = ["# Where each rule holds", "",
                 "Each rule with the kubelet minors where it holds (its `Holds in` line), the "
                 "pinned kubelet releases inside that range (`adapters/kubelet/releases.json`: "
                 "the releases numaspec builds kubelet's own code at), and the releases the "
                 "test run actually sends the rule's cases to (`adapters/kubelet/COVERAGE.md`"
                 "; a rule with no kubelet behaviour says whose it is)."
                 if run else "Each rule with the kubelet minors where it holds (its `Holds "
                 "in` line) and the pinned kubelet releases inside that range "
                 "(`adapters/kubelet/releases.json`).", "",
                 f"The last column has one mark per minor, 1.{first} on the left to 1.{last} "
                 "on the right, under the minor's number (a mark's tooltip names it): ● the "
                 "rule holds there and a release of that minor is pinned; ○ it holds there and "
                 "no release of that minor is built; · it does not hold there.", ""]
        by_chapter: dict[str, list[Rule]] = {}
        for rule in rules:
            by_chapter.setdefault(rule.file, []).append(rule)
        head = ["rule", "holds in", "pinned releases in range"]
        if run:
            head.append("run against kubelet")
        head.append(f'kubelet 1.{first}\u20131.{last}<br><span class="numaspec-strip '
                    f'numaspec-strip-head" aria-hidden="true">'
                    + "".join(f"<span>{m}</span>" for m in minors) + "</span>")

        def mark(m: int, span: tuple[int, int] | None) -> str:
            if span is None or not span[0] <= m <= span[1]:
                return f'<span title="1.{m}: does not hold">\u00b7</span>'
            if m in pinned:
                return (f'<span title="1.{m}: holds; kubelet {version_of[m].removeprefix("v")} '
                        'pinned">\u25cf</span>')
            return f'<span title="1.{m}: holds; no release pinned">\u25cb</span>'

        for chapter in chapters:
            if chapter not in by_chapter:
                continue
            page = self.page_of(chapter)
            lines += [f"## {page.removesuffix('.md')}", "",
                      '<div class="numaspec-matrix" markdown>', "",
                      "| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
            for rule in by_chapter[chapter]:
                rid = rule.id
                span = self.span(rid)
                holds = rule.meta.get("Holds in", "").replace("|", "\\|") or "(no range)"
                inside = [m for m in sorted(pinned) if span and span[0] <= m <= span[1]]
                strip = "".join(mark(m, span) for m in minors)
                cells = [f'<span id="{rid}"></span>[{rid}]({page}#{rid})', holds,
                         _minor_ranges(inside) or "none"]
                if run:
                    cells.append(run.get(rid, "not in COVERAGE.md"))
                cells.append(f'<span class="numaspec-strip">{strip}</span>')
                lines.append("| " + " | ".join(cells) + " |")
            lines += ["", "</div>", ""]
        return "\n".join(lines) + "\n"

    def cite_page(self) -> str:
        """How to cite: the rule's ID and the release, numaspec's version and commit, from
        CITATION.cff and the build."""
        cff = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
        title = str(cff.get("title", "numaspec"))
        authors = " and ".join(str(a.get("name", "")) for a in cff.get("authors", []))
        url = str(cff.get("repository-code", REPOSITORY))
        released = str(cff.get("date-released", ""))
        year = released[:4] or "n.d."
        commit = self.commit
        at = f"commit {commit}" if commit != "unknown" else "commit unknown (built outside a " \
            "git checkout: cite the version alone)"
        note = (f"version {self.version}, commit {commit[:12]}" if commit != "unknown"
                else f"version {self.version}")
        example = self.chapter_of.get("MERGE-8")
        rule_line = (f"[MERGE-8]({example}.md#MERGE-8) (its `Holds in`: "
                     f"{self.meta['MERGE-8'].get('Holds in', '')})" if example else "a rule")
        from numaspec.about import release_of

        cited = str(cff.get("version", ""))
        mismatch = ("" if cited == self.version else
                    f"\n!!! note \"Between releases\"\n"
                    f"    CITATION.cff names the last release, {cited}; this site is numaspec "
                    f"{self.version}, a development version after it, whose version names its "
                    "distance from the release and its commit: cite the version the site "
                    "names.\n" if release_of(self.version) == cited else
                    f"\n!!! warning \"CITATION.cff names version {cited}\"\n"
                    f"    This site was built from numaspec {self.version}; cite the version "
                    "the site names.\n")
        return f"""# How to cite

This site is **numaspec {self.version}** at **{at}**.  A rule's wording, the kubelet
releases it was checked against and the vectors that check it are fixed by that version, so a
citation names three things:

1. **the rule's ID**, for example {rule_line}: IDs are stable, a rule that stops holding has
   its range closed, never its ID reused;
2. **the kubelet release** the claim is about (a minor inside the rule's `Holds in`, e.g.
   "kubelet 1.30"): the rule's page links the upstream code at the pinned release it was
   checked against;
3. **numaspec's version and commit**, as in every page's footer.

In prose: "kubelet 1.30 never chooses an empty affinity (numaspec {self.version}, rule
MERGE-4)".
{mismatch}
## BibTeX

```bibtex
@software{{numaspec,
  title   = {{{{{title}}}}},
  author  = {{{{{authors}}}}},
  year    = {{{year}}},
  version = {{{self.version}}},
  url     = {{{url}}},
  note    = {{{note}; rule MERGE-8 at kubelet 1.30}}
}}
```

## CITATION.cff

The repository's [CITATION.cff]({self.github}CITATION.cff)
says the same in the Citation File Format, which GitHub and reference managers read:

```yaml
cff-version: {cff.get("cff-version", "1.2.0")}
title: "{title}"
type: software
authors:
  - name: "{authors}"
version: {self.version}
commit: "{commit}"
repository-code: "{url}"
```
"""

    def vectors_page(self) -> str:
        from numaspec.conformance.cases.vectors import holds_in, load_vector_file, vector_paths

        lines = ["# Vectors", "",
                 "Every vector of `spec/vectors/`, by file in the suite's order (each file in "
                 "the folder of the part whose chapters it mostly illustrates): its ID (the "
                 "anchor), the operation, the kubelet releases it is run at, the rules it "
                 "checks and what it shows.  The file holds the case and the expected answer.",
                 ""]
        for path in vector_paths(self.spec / "vectors"):
            name = path.relative_to(self.spec / "vectors").as_posix()
            # headed by the file's name (the anchor it always had); the first piece of a file
            # kept in pieces also answers to the whole file's anchor (resize-1.json: resizejson)
            piece = re.match(r"^(.+)-1\.json$", path.name)
            older = (f'<span id="{re.sub(r"[^a-z0-9-]", "", piece.group(1) + "json")}"></span>'
                     if piece else "")
            lines += [f"## {path.name}", "",
                      f"{older}[The file]({vector_page(path.relative_to(self.spec).as_posix())})"
                      f" (`spec/vectors/{name}`)", "",
                      "| vector | op | releases | rules | what it shows |",
                      "|---|---|---|---|---|"]
            for vector in load_vector_file(name, path.read_text(encoding="utf-8")):
                releases = holds_in(vector)
                span = (f"{releases[0]}\u2013{releases[-1]}" if len(releases) > 1
                        else releases[0] or "any")
                rules = ", ".join(self._ids(r, "checks.md", f"vector {vector.id}")
                                  for r in vector.rules)
                text = vector.description.replace("|", "\\|")
                lines.append(f'| <span id="{vector.id}"></span>`{vector.id}` | {vector.op} '
                             f"| {span} | {rules} | {text} |")
            lines.append("")
        return "\n".join(lines) + "\n"

    def properties_page(self) -> str:
        lines = ["# Properties", "",
                 "The Hypothesis properties of the conformance suite: each draws cases, sends "
                 "them to the implementation and checks the answers.", "",
                 "| property | op | rules | what it checks |", "|---|---|---|---|"]
        for pid, prop in sorted(self.properties.items()):
            rules = ", ".join(self._ids(r, "properties.md", f"property {pid}")
                              for r in prop.rules)
            title = prop.title.replace("|", "\\|")
            lines.append(f'| <span id="{pid}"></span>`{pid}` | {prop.op} | {rules} | '
                         f"{title} |")
        return "\n".join(lines) + "\n"

    def comparison(self, path: Path) -> str:
        """The comparison report under a line naming the numaspec that produced it (the
        report's ``tool_version``) and the one this site is; rule IDs linked; long code
        cells (the "run by" commands) breakable at their slashes only."""
        text = path.read_text(encoding="utf-8")
        base = "adapters/comparison/"
        produced = None
        report = path.with_suffix(".json")
        if report.is_file():
            try:
                produced = json.loads(report.read_text(encoding="utf-8")).get("tool_version")
            except (ValueError, AttributeError):
                produced = None
        from numaspec.about import release_of

        made = (f"by numaspec {produced}" if produced else "by numaspec")
        # a version names its commit between releases, so only another release is worth a word
        older = produced and release_of(produced) != release_of(self.version)
        note = (f"This report was produced {made}; this site is numaspec {self.version}"
                + (f" at commit `{self.commit[:12]}`" if self.commit != "unknown" else "")
                + (".  The report predates this release: `numaspec-dev regenerate --all` "
                   "remakes it." if older else ".")
                + "  Its table scrolls sideways, the rule column stays in place.")

        def link(target: str) -> str:
            if target.startswith(("./", "runs/")):
                return self.github + base + target.removeprefix("./")
            found = re.match(r"^https://github\.com/numaspec/numaspec/blob/[^/]+/spec/(.*)$",
                             target)
            if found:
                inside, _, fragment = found.group(1).partition("#")
                chapter = self._spec_page(inside) or inside
                return chapter + self._fragment("#" + fragment) if fragment else chapter
            return target

        def breakable(match: re.Match[str]) -> str:
            code = html.escape(match.group(1))
            return "<code>" + code.replace("/", "/<wbr>") + "</code>"

        out: list[str] = []
        for number, source in enumerate(text.splitlines(), 1):
            line = self.inline(source, "comparison.md", f"{base}matrix.md:{number}", link)
            if line.startswith("|"):
                line = re.sub(r"`([^`|]{24,})`", breakable, line)
            out.append(line)
            if number == 1 and line.startswith("# "):
                out += ["", f'<p class="numaspec-provenance">{note}</p>']
        return "\n".join(out) + "\n"


def _coverage(path: Path) -> dict[str, str]:
    """Per rule, the "run against kubelet" cell of ``adapters/kubelet/COVERAGE.md`` (found by
    its header, so the table may gain columns); empty when the checkout has no such table."""
    if not path.is_file():
        return {}
    out: dict[str, str] = {}
    columns: list[str] | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            columns = None
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if columns is None:
            columns = cells
            continue
        if "rule" in columns and "run against kubelet" in columns and \
                not set(cells) <= {"---", ""} and len(cells) == len(columns):
            out[cells[columns.index("rule")]] = cells[columns.index("run against kubelet")]
    return out


def _minor_ranges(minors: list[int]) -> str:
    """Minors as text, consecutive minors as one range (1.32\u20131.37)."""
    runs: list[list[int]] = []
    for minor in sorted(minors):
        if runs and minor == runs[-1][-1] + 1:
            runs[-1].append(minor)
        else:
            runs.append([minor])
    return ", ".join(f"1.{r[0]}" if len(r) == 1 else f"1.{r[0]}\u20131.{r[-1]}" for r in runs)


def vector_page(inside: str) -> str:
    """Where the site has a vector file of spec/ (``inside`` that folder:
    ``vectors/node/resize-1.json``): ``vectors/`` and its file's name, whatever its part's
    folder, as the files were before they were grouped (names are unique across the parts)."""
    return f"vectors/{posixpath.basename(inside)}"


def _whole_vector_files(folder: Path) -> None:
    """A vector file kept in numbered pieces (``resize-1.json``, ``resize-2.json``: larger than
    a file is kept whole, numaspec_tools.vector_pieces) is also on the site whole, at the
    address it had before it was split (``vectors/resize.json``): its pieces' vectors in
    order, as the file held them."""
    from numaspec_tools import vector_pieces

    for stem in sorted({vector_pieces.stem(path.name) for path in folder.glob("*.json")}):
        whole = folder / f"{stem}.json"
        if not whole.exists():
            whole.write_text(vector_pieces.dump(vector_pieces.read(stem, folder)),
                             encoding="utf-8")


def _relative(target: str, page: str) -> str:
    depth = page.count("/")
    return "../" * depth + target


if __name__ == "__main__":
    sys.exit(main())
