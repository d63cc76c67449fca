"""``numaspec findings``: the findings about upstream code, each as its maintainers would take
it (RUN-23).

A finding numaspec made about someone else's code (kubelet's, a peer's, the DRA allocator's,
a driver's) is a paragraph, a vector and a numaspec command; a maintainer acts on a failing
test in their own package and a patch they can review.  Each such finding has a folder in
``adapters/findings/<ID>/`` (installed as the data package ``numaspec.findings``):

* ``finding.toml``: what it is about (the Go module, the pinned version, the package), the
  test (its file, its function, a line its failure prints), the proposed fix, the report
  (what happens, impact, the fix in words, the versions read, numaspec's own command) and
  where it stands upstream, dated;
* the Go test, in the package's own test style, to drop into that package of a copy of the
  module at the pinned version: it fails there;
* ``fix.patch``, numaspec's minimal fix (a unified diff against the module's root), under
  which the test passes; and any other change checked the same way (an upstream pull
  request, reconstructed), each with what it fixes.

``adapters/findings/triage.toml`` places every finding numaspec has made (the numbered
findings of ``spec/conformance/findings.md`` and each peer's ``FINDINGS.md``): an upstream
defect still open at the pinned release has a folder; the others say why not (fixed
upstream, deliberate behaviour, numaspec's own error, or not yet exported, with why).

The test command runs every folder's test in a copy of the pinned module, without and with
the fix (``tests/upstream/findings``); ``docs/build.py`` writes one page per finding from the
same files.
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import attrs

from numaspec.errors import InputFileError, InvalidFieldError

__all__ = [
    "FAMILIES",
    "TRIAGE_KINDS",
    "Change",
    "Finding",
    "Link",
    "Triage",
    "export",
    "finding",
    "findings",
    "in_words",
    "main",
    "page",
    "page_in_words",
    "show",
    "triage",
]

#: The families of upstream code a finding can be about, as the site groups them.
FAMILIES = {
    "kubelet": "kubelet (k8s.io/kubernetes)",
    "apimachinery": "apimachinery (k8s.io/apimachinery)",
    "cadvisor": "cadvisor (github.com/google/cadvisor), as kubelet reads the machine",
    "dra": "the DRA structured allocator (k8s.io/dynamic-resource-allocation)",
    "dra-driver-cpu": "dra-driver-cpu (kubernetes-sigs)",
    "dra-drivers": "DRA device drivers",
    "scheduler-plugins": "scheduler-plugins NodeResourceTopology (kubernetes-sigs)",
    "koordinator": "Koordinator",
    "katalyst": "Katalyst",
    "volcano": "Volcano",
}
#: How triage.toml may place a finding.
TRIAGE_KINDS = {
    "exported": "an upstream defect open at the pinned release: test, fix and page",
    "pending": "an upstream defect open at the pinned release, not yet exported (why given)",
    "fixed": "an upstream defect fixed upstream at or before the pinned release",
    "behaviour": "deliberate or harmless behaviour worth knowing: nothing to fix",
    "numaspec": "numaspec's own error, fixed in numaspec",
    "outside": "about code numaspec does not pin (a driver's documentation, an API), reported "
               "in words only",
}
_ID = re.compile(r"^[A-Z][A-Z0-9]*(-[A-Z0-9]+)*-[0-9]+$")
_GO_NAME = re.compile(r"^Test[A-Za-z0-9_]+$")
_DATE = re.compile(r"^20[0-9]{2}-[01][0-9]-[0-3][0-9]$")


@attrs.frozen
class Link:
    title: str
    url: str


@attrs.frozen
class Change:
    """A change checked against a finding's test: numaspec's fix, or another (an upstream pull
    request, reconstructed)."""

    name: str
    patch: str
    title: str
    #: whether the finding's test passes with the change applied
    test_passes: bool
    #: what the change fixes and what it leaves, in words
    says: str = ""


@attrs.frozen
class Finding:
    id: str
    title: str
    family: str
    module: str
    version: str
    package: str
    test_file: str
    test: str
    fails_with: str
    fix: Change
    others: tuple[Change, ...]
    report: Mapping[str, Any]
    checked: str
    status: str
    links: tuple[Link, ...]
    #: a folder of this repository whose go.mod pins the module's dependencies (a module
    #: such as k8s.io/kubernetes, whose own go.mod points into a tree the module lacks)
    host: str = ""
    #: the Go toolchain the module needs when it is newer than the machine's (GOTOOLCHAIN)
    toolchain: str = ""
    #: the vectors that show the finding against numaspec's adapter of the code, where there
    #: is one (the suite's, or the peer's findings.json): a fix must make them pass
    vectors: tuple[str, ...] = ()
    #: the fix changes only how refusals are worded (a panic becomes an error, a message is
    #: readable): any answer it changes is a refusal of the same kind before and after
    refusals_only: bool = False
    folder: Traversable | None = attrs.field(default=None, eq=False, repr=False)

    def file(self, name: str) -> str:
        """A file of the finding's folder, as text."""
        if self.folder is None:
            raise InputFileError("the finding has no folder", where=self.id)
        path = self.folder / name
        if not path.is_file():
            raise InputFileError(f"no file {name} in the finding's folder", where=self.id)
        return path.read_text(encoding="utf-8")

    @property
    def changes(self) -> tuple[Change, ...]:
        return (self.fix, *self.others)

    def run_line(self) -> str:
        """The command that runs the test in the module's copy, from the module's root."""
        return f"go test -count=1 -run '^{self.test}$' ./{self.package}/"


@attrs.frozen
class Triage:
    id: str
    kind: str
    why: str
    #: the page of numaspec's that tells it (findings.md's number, a peer's FINDINGS.md)
    source: str
    #: an ``outside`` finding's report in words (no Go test: see ``why``), ready to file
    title: str = ""
    report: Mapping[str, Any] = attrs.field(factory=dict)
    checked: str = ""
    status: str = ""
    links: tuple[Link, ...] = ()


def _root() -> Traversable:
    return resources.files("numaspec.findings")


def _text(table: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = table.get(key, "" if not required else None)
    if not isinstance(value, str) or (required and not value.strip()):
        raise InvalidFieldError(f"expected a non-empty string for {key!r}", where=where)
    return value


def _known(table: Mapping[str, Any], keys: set[str], where: str) -> None:
    """A misspelled key is an error, never a field silently left out."""
    unknown = sorted(set(table) - keys)
    if unknown:
        raise InvalidFieldError(f"unknown key {unknown[0]!r} (known: {', '.join(sorted(keys))})",
                                where=where)


def _change(table: Mapping[str, Any], where: str) -> Change:
    """Another change a finding names (``[[change]]``)."""
    _known(table, {"name", "patch", "title", "test_passes", "says"}, where)
    passes = table.get("test_passes", True)
    if not isinstance(passes, bool):
        raise InvalidFieldError("expected true or false for 'test_passes'", where=where)
    return Change(name=_text(table, "name", where), patch=_text(table, "patch", where),
                  title=_text(table, "title", where), test_passes=passes,
                  says=_text(table, "says", where, required=False))


def _upstream(table: Mapping[str, Any], where: str) -> tuple[str, str, tuple[Link, ...]]:
    """``[upstream]``: the date it was checked, where it stands, and the links found."""
    where += " [upstream]"
    _known(table, {"checked", "status", "links"}, where)
    checked = _text(table, "checked", where)
    if not _DATE.match(checked):
        raise InvalidFieldError(f"checked {checked!r} is not a date such as 2026-11-30",
                                where=where)
    for link in table.get("links", ()):
        _known(link, {"title", "url"}, where + " links")
    links = tuple(Link(title=_text(link, "title", where), url=_text(link, "url", where))
                  for link in table.get("links", ()))
    return checked, _text(table, "status", where), links


def _report(table: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    """``[report]``: what happens, the impact, the fix and the versions read (required), and
    numaspec's own command."""
    where += " [report]"
    _known(table, {"what", "impact", "fix", "read", "numaspec"}, where)
    for key in ("what", "impact", "fix", "read"):
        if not table.get(key):
            raise InvalidFieldError(f"the report needs {key!r}", where=where)
    return table


def _load(folder: Traversable) -> Finding:
    where = f"adapters/findings/{folder.name}/finding.toml"
    toml = folder / "finding.toml"
    try:
        data = tomllib.loads(toml.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputFileError(f"not TOML: {exc}", where=where) from None
    _known(data, {"id", "title", "family", "module", "version", "package", "test_file", "test",
                  "fails_with", "fix", "host", "toolchain", "vectors", "refusals_only",
                  "report", "upstream", "change"}, where)
    ident = _text(data, "id", where)
    if ident != folder.name or not _ID.match(ident):
        raise InvalidFieldError(f"id {ident!r} must be the folder's name, such as DRACPU-1",
                                where=where)
    family = _text(data, "family", where)
    if family not in FAMILIES:
        raise InvalidFieldError(f"unknown family {family!r} (known: {', '.join(FAMILIES)})",
                                where=where)
    test = _text(data, "test", where)
    if not _GO_NAME.match(test):
        raise InvalidFieldError(f"{test!r} is not a Go test function's name", where=where)
    report = _report(data.get("report") or {}, where)
    checked, status, links = _upstream(data.get("upstream") or {}, where)
    found = Finding(
        id=ident, title=_text(data, "title", where), family=family,
        module=_text(data, "module", where), version=_text(data, "version", where),
        package=_text(data, "package", where).strip("/"),
        test_file=_text(data, "test_file", where), test=test,
        fails_with=_text(data, "fails_with", where),
        fix=Change(name="fix", patch=_text(data, "fix", where), title="numaspec's fix",
                   test_passes=True),
        others=tuple(_change(change, f"{where} [[change]]") for change in data.get("change", ())),
        report=report, checked=checked, status=status, links=links,
        host=_text(data, "host", where, required=False),
        toolchain=_text(data, "toolchain", where, required=False),
        vectors=tuple(str(v) for v in data.get("vectors", ())),
        refusals_only=data.get("refusals_only") is True, folder=folder)
    for name in (found.test_file, *(change.patch for change in found.changes)):
        if not (folder / name).is_file():
            raise InputFileError(f"names {name}, which the folder lacks", where=where)
    if not found.test_file.endswith("_test.go"):
        raise InvalidFieldError(f"{found.test_file!r}: a Go test file ends in _test.go",
                                where=where)
    return found


@cache
def findings() -> tuple[Finding, ...]:
    """Every exported finding, by ID (read once: the folders are installed data)."""
    folders = sorted((f for f in _root().iterdir()
                      if f.is_dir() and (f / "finding.toml").is_file()),
                     key=lambda f: _sort_key(f.name))
    return tuple(_load(folder) for folder in folders)


def _sort_key(ident: str) -> tuple[str, int]:
    stem, _, number = ident.rpartition("-")
    return (stem, int(number) if number.isdigit() else 0)


def finding(ident: str) -> Finding:
    """One exported finding by its ID (any case)."""
    wanted = ident.strip().upper()
    for found in findings():
        if found.id == wanted:
            return found
    raise InvalidFieldError(
        f"no exported finding {ident!r} (numaspec findings list shows them; "
        f"adapters/findings/triage.toml says why a finding has no test)", where="FINDING")


@cache
def triage() -> tuple[Triage, ...]:
    """How every finding numaspec has made is placed (adapters/findings/triage.toml)."""
    where = "adapters/findings/triage.toml"
    try:
        data = tomllib.loads((_root() / "triage.toml").read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputFileError(f"not TOML: {exc}", where=where) from None
    rows = []
    for i, row in enumerate(data.get("finding", ())):
        at = f"{where} finding[{i}]"
        kind = _text(row, "kind", at)
        if kind not in TRIAGE_KINDS:
            raise InvalidFieldError(f"unknown kind {kind!r} (known: {', '.join(TRIAGE_KINDS)})",
                                    where=at)
        _known(row, {"id", "kind", "why", "source", "title", "report", "upstream"}, at)
        ident = _text(row, "id", at)
        placed = Triage(id=ident, kind=kind,
                        why=_text(row, "why", at, required=kind != "exported"),
                        source=_text(row, "source", at))
        if kind == "outside":
            # outside code numaspec pins: no Go test, so the report in words is all there is
            for key in ("title", "report", "upstream"):
                if key not in row:
                    raise InvalidFieldError(f"an outside finding is reported in words: it "
                                            f"needs {key!r}", where=f"{at} ({ident})")
            report = _report(row["report"], f"{at} ({ident})")
            checked, status, links = _upstream(row["upstream"], f"{at} ({ident})")
            placed = attrs.evolve(placed, title=_text(row, "title", at), report=report,
                                  checked=checked, status=status, links=links)
        elif {"title", "report", "upstream"} & set(row):
            raise InvalidFieldError(f"only an outside finding has a report here ({ident} is "
                                    f"{kind}: an exported one has it in its folder)", where=at)
        rows.append(placed)
    return tuple(rows)


def in_words() -> tuple[Triage, ...]:
    """The findings about code numaspec does not pin, each with a report in words."""
    return tuple(row for row in triage() if row.report)


def show(ident: str) -> str:
    """``numaspec findings show``: an exported finding's page, an outside finding's report in
    words, or, for any other finding placed, where it is placed and why."""
    wanted = ident.strip().upper()
    for row in triage():
        if row.id == wanted:
            if row.kind == "exported":
                return page(finding(wanted))
            if row.report:
                return page_in_words(row)
            return (f"{row.id} is placed as {row.kind} ({TRIAGE_KINDS[row.kind]}): {row.why}\n"
                    f"Told in {row.source}.\n")
    raise InvalidFieldError(
        f"no finding {ident!r} (numaspec findings list shows them; "
        f"adapters/findings/triage.toml places every finding)", where="FINDING")


def export(found: Finding, what: str, out: Path) -> Path:
    """Write the finding's Go test (``go``) or fix (``fix``) into the folder ``out`` (made if
    missing); returns the file written."""
    name = found.test_file if what == "go" else f"{found.id.lower()}-fix.patch"
    text = found.file(found.test_file if what == "go" else found.fix.patch)
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    path.write_text(text, encoding="utf-8")
    return path


def _family(name: str) -> list[Finding]:
    return [f for f in findings() if f.family == name]


def main(names: Sequence[str], *, what: str, out: str | None, listing: bool) -> int:
    """``numaspec findings list``, ``findings export --go|--fix FINDING...``."""
    if listing:
        rows = findings()
        width = max((len(f.id) for f in rows), default=2)
        for f in rows:
            print(f"{f.id:<{width}}  {f.module}@{f.version} {f.package}: {f.title}")
        words = in_words()
        if words:
            print("reported in words (no Go test; numaspec findings show ID):")
            for row in words:
                print(f"{row.id:<{width}}  {row.title}")
        counts = Counter(row.kind for row in triage())
        print(f"{len(rows)} exported; triage.toml places {sum(counts.values())} findings: "
              + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
        return 0
    chosen: list[Finding] = []
    for name in names:
        chosen.extend(_family(name) if name in FAMILIES else [finding(name)])
    if not chosen:
        raise InvalidFieldError("name a finding (such as DRACPU-1) or a family "
                                f"({', '.join(FAMILIES)})", where="FINDING")
    for found in chosen:
        target = Path(out) if out else Path(".")
        path = export(found, what, target)
        if what == "go":
            print(f"{found.id}: wrote {path}; copy it into {found.package}/ of "
                  f"{found.module}@{found.version} and run, from the module's root: "
                  f"{found.run_line()}  (it fails: {found.fails_with})")
        else:
            print(f"{found.id}: wrote {path}; apply it from the root of "
                  f"{found.module}@{found.version} with: git apply -p1 {path.resolve()}")
    return 0


def _head(ident: str, title: str, about: str, checked: str,
          report: Mapping[str, Any]) -> list[str]:
    """A report's title, what happens, its impact and the versions read."""
    read = report["read"]
    lines = [f"# {ident}: {title}", "", f"{about} · upstream status checked {checked}", "",
             "## What happens", "", str(report["what"]).strip(), "",
             "## Impact", "", str(report["impact"]).strip(), "",
             "## Versions read", ""]
    return lines + [f"- {item}" for item in (read if isinstance(read, list) else [read])] + [""]


def _tail(checked: str, status: str, links: Sequence[Link], stamp: str) -> list[str]:
    """Where a finding stands upstream, dated, with what was found."""
    lines = ["## Where it stands upstream", "", f"*Checked {checked}.*  " + status.strip(), ""]
    lines += [f"- [{link.title}]({link.url})" for link in links]
    return lines + (["", f"*numaspec {stamp}*"] if stamp else [])


def _numaspec(report: Mapping[str, Any]) -> list[str]:
    if not report.get("numaspec"):
        return []
    return ["With numaspec itself:", "", "```sh", str(report["numaspec"]).strip(), "```", ""]


def page(found: Finding, *, numaspec_version: str = "") -> str:
    """The finding's report, ready to file (markdown): the site's page and ``findings show``."""
    report = found.report
    lines = _head(found.id, found.title, f"**{FAMILIES[found.family]}**, `{found.module}` "
                  f"`{found.package}`", found.checked, report)
    lines += ["## Reproduce", "",
              f"A Go test in the package's own style, `{found.test_file}`: put it in "
              f"`{found.package}/` of `{found.module}` at `{found.version}`, then, from the "
              "module's root:", "",
              "```sh", found.run_line(), "```", "",
              f"It fails there, printing `{found.fails_with}`.  numaspec writes the file with "
              f"`numaspec findings export --go {found.id}`.", ""]
    lines += _numaspec(report)
    lines += ["```go", found.file(found.test_file).rstrip(), "```", "",
              "## The fix", "", str(report["fix"]).strip(), "",
              f"Under this patch the test passes (`numaspec findings export --fix {found.id}`; "
              "`git apply -p1` from the module's root):", "",
              "```diff", found.file(found.fix.patch).rstrip(), "```", ""]
    for change in found.others:
        verdict = "the test passes" if change.test_passes else "the test still fails"
        lines += [f"### {change.title}", "", f"Checked the same way: {verdict}.  "
                  + change.says.strip(), ""]
    lines += _tail(found.checked, found.status, found.links, numaspec_version)
    return "\n".join(lines).rstrip() + "\n"


def page_in_words(row: Triage, *, numaspec_version: str = "") -> str:
    """An outside finding's report, ready to file (markdown): no Go test, and why not."""
    if not row.report:
        raise InvalidFieldError(f"{row.id} is placed as {row.kind}, with no report in words",
                                where="adapters/findings/triage.toml")
    lines = _head(row.id, row.title, "**Reported in words**: no Go test (see Reproduce)",
                  row.checked, row.report)
    lines += ["## Reproduce", "", "No Go test: " + row.why.strip() + ".", ""]
    lines += _numaspec(row.report)
    lines += ["## The fix", "", str(row.report["fix"]).strip(), ""]
    lines += _tail(row.checked, row.status, row.links, numaspec_version)
    lines += ["", f"*Told in numaspec's {row.source}.*"]
    return "\n".join(lines).rstrip() + "\n"
