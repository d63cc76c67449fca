"""The docs site (docs/build.py): generated from spec/ and the hand-written guides of
docs/guides/, built strictly, one anchor per rule ID."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from numaspec.rules import Cite, chapter_files, parse_rules, upstream_pieces
from numaspec_tools import REPO, upstream_links, vector_pieces

BUILD = [sys.executable, str(REPO / "docs" / "build.py")]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([*BUILD, "--out", str(out)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_every_rule_s_anchor_is_its_id(site: Path) -> None:
    rules = parse_rules(REPO / "spec")
    assert len(rules) > 200
    pages: dict[str, str] = {}
    for rule in rules:
        # the page is the chapter's file name, whatever its part's folder: the site is flat
        chapter = rule.chapter.removesuffix(".md")
        html = pages.setdefault(chapter, (site / f"{chapter}.html").read_text("utf-8"))
        assert f'id="{rule.id}"' in html, rule.id
    # the anchor is the ID whatever the title: MERGE-8's heading is not a slug of its title
    assert 'id="MERGE-8"' in pages["merge"]
    assert rules[0].file.count("/") == 1  # while the chapter lives in its part's folder
    # the published site's older addresses forward to the page, anchor kept
    forward = (site / "merge" / "index.html").read_text("utf-8")
    assert 'url=../merge.html"' in forward
    assert "location.hash" in forward


def test_links_between_parts_are_the_site_s_flat_pages(site: Path) -> None:
    """A chapter links another part's chapter from its own folder (``../node/cpu.md``); the
    site's pages are flat, so the link is the page (``cpu.html``)."""
    source = (REPO / "spec" / "protocols" / "adapter-protocol.md").read_text("utf-8")
    assert "](../node/cpu.md)" in source
    assert "](../schemas/adapter-protocol.schema.json)" in source
    page = (site / "adapter-protocol.html").read_text("utf-8")
    assert 'href="cpu.html"' in page
    assert 'href="schemas/adapter-protocol.schema.json"' in page
    assert 'href="../' not in page.split('class="md-content"')[1].split("</article>")[0]


def test_the_generated_pages_link_what_checks_each_rule(site: Path) -> None:
    merge = (site / "merge.html").read_text("utf-8")
    # upstream citations are permalinks at a pinned release tag, never at a branch
    links = re.findall(r'href="(https://github.com/kubernetes/kubernetes/blob/[^"]+)"', merge)
    assert links
    assert all(re.match(r".*/blob/v1\.\d+\.\d+(-[0-9A-Za-z.]+)?/", link) for link in links)
    # a rule that holds in released kubelets cites a release, not a pre-release (VER-1)
    assert "/blob/v1.37.2/pkg/kubelet/cm/topologymanager/policy.go" in merge
    assert 'href="checks.html#merge-target-width-1.24"' in merge
    assert 'href="properties.html#P-EQUIVALENCE"' in merge
    checks = (site / "checks.html").read_text("utf-8")
    assert 'id="merge-target-width-1.24"' in checks
    # the vector files, flat whatever their part's folder; one kept in pieces also whole at
    # its older address
    assert 'href="vectors/merge-rules.json"' in checks
    assert 'href="vectors/resize-1.json"' in checks
    assert 'id="merge-rulesjson"' in checks  # each file's section keeps its anchor
    assert 'id="resizejson"' in checks
    pieces = vector_pieces.pieces("resize")
    assert len(pieces) > 1
    whole = json.loads((site / "vectors" / "resize.json").read_text("utf-8"))["vectors"]
    assert whole == vector_pieces.read("resize")
    for path in pieces:
        assert (site / "vectors" / path.name).read_bytes() == path.read_bytes()
    matrix = (site / "matrix.html").read_text("utf-8")
    assert 'id="MERGE-3"' in matrix
    assert (site / "findings.html").is_file()
    assert (site / "adapter-protocol.html").is_file()
    assert (site / "comparison.html").is_file()


def test_each_cited_name_links_where_it_is_defined(site: Path) -> None:
    """Issue 57: a name the Upstream line gives releases of its own links inside them, at its
    definition's line, and says at which release; the others at the rule's release."""
    merge = (site / "merge.html").read_text("utf-8")
    blob = "https://github.com/kubernetes/kubernetes/blob/"
    policy = "pkg/kubelet/cm/topologymanager/policy.go"
    assert re.search(rf'href="{blob}v1\.25\.16/{policy}#L\d+">compareHints</a> '
                     r"\(1\.24\u20131\.25, at v1\.25\.16\)", merge)
    assert re.search(rf'href="{blob}v1\.37\.2/{policy}#L\d+">HintMerger\.compare</a> '
                     r"\(1\.26\+\)", merge)
    # a file named relative to the one before it links at its own path
    assert f'href="{blob}v1.37.2/pkg/kubelet/cm/topologymanager/numa_info.go#L' in merge
    # another project's files are not kubernetes' (the rules citing only katalyst-core)
    katalyst = [r for r in parse_rules(REPO / "spec")
                if r.meta["Upstream"].startswith("katalyst-core") and ";" not in r.meta["Upstream"]]
    assert katalyst
    for rule in katalyst:
        page = (site / f"{rule.chapter.removesuffix('.md')}.html").read_text("utf-8")
        assert "kubernetes/kubernetes/blob/" not in page.split(f'id="{rule.id}"')[1].split(
            "<h3")[0], rule.id


def test_an_upstream_line_reads_as_spec_readme_says() -> None:
    line = ("pkg/kubelet/cm/topologymanager/policy.go — maxOfMinAffinityCounts, compareHints "
            "(1.24\u20131.25), HintMerger.compare (1.26+) (PR #108154); numa_info.go, "
            "bitmask/bitmask.go — Narrowest (only a note); cadvisor utils/sysinfo/sysinfo.go "
            "— getDistances; pkg/x.go — f; kubernetes pkg/y.go — g; policy_*.go — Merge")
    pieces = upstream_pieces(line)
    assert "".join(p if isinstance(p, str) else p.raw for p in pieces) == line
    cites = [p for p in pieces if isinstance(p, Cite)]
    folder = "pkg/kubelet/cm/topologymanager/"
    assert [(c.text, c.files, c.name, c.within) for c in cites] == [
        ("pkg/kubelet/cm/topologymanager/policy.go", (f"{folder}policy.go",), None, None),
        ("maxOfMinAffinityCounts", (f"{folder}policy.go",), "maxOfMinAffinityCounts", None),
        ("compareHints", (f"{folder}policy.go",), "compareHints", "1.24\u20131.25"),
        ("HintMerger.compare", (f"{folder}policy.go",), "HintMerger.compare", "1.26+"),
        ("numa_info.go", (f"{folder}numa_info.go",), None, None),
        ("bitmask/bitmask.go", (f"{folder}bitmask/bitmask.go",), None, None),
        ("Narrowest", (f"{folder}numa_info.go", f"{folder}bitmask/bitmask.go"), "Narrowest",
         None),
        # cadvisor's segment and the one after it are cadvisor's, until one names kubernetes
        ("pkg/y.go", ("pkg/y.go",), None, None),
        ("g", ("pkg/y.go",), "g", None)]
    assert cites[2].citations[0].span() == (24, 25)
    assert cites[3].citations[0].span() == (26, None)


def test_the_upstream_links_table_covers_every_citation() -> None:
    """docs/upstream-links.json has a row for everything each rule cites, at a release inside
    the citation's range (what it cannot say without the sources, whether the name is there,
    tests/upstream/kubelet/test_upstream_links.py checks against the module cache)."""
    table = upstream_links.load()
    for rule in parse_rules(REPO / "spec"):
        rows = {row[:3]: row[3] for row in table.get(rule.id, [])}
        for citation in upstream_links.citations(rule):
            key = (citation.path, citation.name, citation.within)
            assert key in rows, f"{rule.id}: {key} is not in docs/upstream-links.json: run " \
                                "numaspec-dev regenerate --go"
            span = upstream_links.span_of(rule, citation)
            tag = rows[key]
            assert span is not None, (rule.id, key)
            assert tag is not None, (rule.id, key)
            assert span[0] <= int(tag.split(".")[1]) <= span[1], (rule.id, key, tag)


def _commit() -> str:
    done = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                          text=True)
    return done.stdout.strip() if done.returncode == 0 else "main"


def _version() -> str:
    """The checkout's version as numaspec derives it (never an editable install's metadata,
    written when it was installed)."""
    from numaspec.about import version

    return version()


def test_every_page_names_numaspec_s_version_and_commit(site: Path) -> None:
    from numaspec.about import RELEASE

    commit = _commit()
    # between releases the version itself names the commit, so a citation of it alone does
    assert _version() == RELEASE or f"+g{commit[:7]}" in _version()
    pages = sorted(p for p in site.rglob("*.html")
                   if p.parent.name not in ("assets", "search") and p.name != "404.html"
                   and 'http-equiv="refresh"' not in p.read_text("utf-8"))
    assert len(pages) > 30
    for page in pages:
        html = page.read_text("utf-8")
        footer = html[html.index('class="md-copyright__highlight numaspec-build"'):]
        assert f"numaspec {_version()} at" in footer, page
        assert commit[:12] in footer, page
        assert "cite.html" in footer, page
    # the comparison names the numaspec that produced it and the one the site is
    comparison = (site / "comparison.html").read_text("utf-8")
    assert f"this site is numaspec {_version()}" in comparison
    assert "0.1.0" not in comparison


def test_the_site_works_from_disk(site: Path) -> None:
    """File links, not folder links; the search index inlined for file://; no font or
    script from the network; the older folder addresses forward."""
    for page in [site / "index.html", site / "merge.html", site / "guides" / "reference.html"]:
        html = page.read_text("utf-8")
        hrefs = re.findall(r'href="([^"#]*)[^"]*"', html)
        internal = [h for h in hrefs if h and not re.match(r"^[a-z]+:", h)]
        assert internal
        assert not [h for h in internal if h.endswith("/")], page
        assert not re.findall(r'<script[^>]+src="https?:', html), page
        assert "fonts.googleapis.com" not in html
        assert "unpkg.com" not in html
    assert (site / "search" / "search_index.js").read_text("utf-8").startswith("var __index")
    assert (site / "assets" / "javascripts" / "iframe-worker.js").is_file()
    forward = (site / "merge" / "index.html").read_text("utf-8")
    assert 'location.replace("../merge.html" + location.hash)' in forward


def test_the_matrix_never_leaves_a_row_blank(site: Path) -> None:
    matrix = (site / "matrix.html").read_text("utf-8")
    row = matrix[matrix.index('<span id="MERGE-8">'):]
    row = row[:row.index("</tr>")]
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.split(r"<td[^>]*>", row)]
    assert cells[0] == "MERGE-8"
    assert all(cells), cells
    assert cells[1].startswith("1.24\u20131.38")
    # no table of twenty release columns: one column per question
    assert matrix.count("<th>1.2") == 0


def test_the_entry_page_and_how_to_cite(site: Path) -> None:
    home = (site / "index.html").read_text("utf-8")
    assert "Who this is for" in home
    assert "What a rule page says" in home
    assert "This directory is the specification" not in home
    assert "This directory is the specification" in (site / "specification.html").read_text(
        "utf-8")
    cite = re.sub(r"<[^>]+>", "", (site / "cite.html").read_text("utf-8"))
    assert f"numaspec {_version()}" in cite
    assert _commit() in cite
    assert "@software{numaspec" in cite
    assert "cff-version" in cite


def test_citation_cff_names_the_package_s_version() -> None:
    """CITATION.cff names the release the package's version is or follows (a development
    version names the release before it, numaspec.about), which is CHANGELOG.md's newest
    numbered section, of the same date."""
    import yaml

    from numaspec.about import RELEASE, release_of

    cff = yaml.safe_load((REPO / "CITATION.cff").read_text("utf-8"))
    assert str(cff["version"]) == RELEASE
    assert release_of(_version()) == RELEASE, _version()
    newest = re.search(r"^## (\d+\.\d+\.\d+) \u2014 (\S+)$",
                       (REPO / "CHANGELOG.md").read_text("utf-8"), re.MULTILINE)
    assert newest is not None
    assert newest.groups() == (RELEASE, str(cff["date-released"]))


def _spec_copy(tmp_path: Path) -> Path:
    spec = tmp_path / "spec"
    shutil.copytree(REPO / "spec", spec, ignore=shutil.ignore_patterns("__pycache__"))
    return spec


@pytest.mark.parametrize(("added", "complaint"), [
    ("MASK-99 is cited here.", "MASK-99 is not a rule of the spec"),
    ("See [the rule](merge.md#MERGE-999).", "does not contain an anchor '#MERGE-999'"),
    ("See [the rule](../node/cpu.md#CPU-999).", "does not contain an anchor '#CPU-999'"),
    ("See [a page](nowhere.md).", "'nowhere.md' is not in the spec"),
    ("See [a page](cpu.md).", "'cpu.md' is not in the spec"),  # another part's folder
])
@pytest.mark.slow
def test_an_unknown_rule_or_a_broken_link_fails_the_build(tmp_path: Path, added: str,
                                                           complaint: str) -> None:
    spec = _spec_copy(tmp_path)
    masks = spec / "topology" / "masks.md"
    masks.write_text(masks.read_text("utf-8") + f"\n{added}\n", encoding="utf-8")
    done = subprocess.run([*BUILD, "--spec", str(spec), "--out", str(tmp_path / "site")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1
    assert complaint in done.stderr
    assert "Traceback" not in done.stderr


GUIDES = REPO / "docs" / "guides"


def test_the_guides_are_on_the_site(site: Path) -> None:
    guides = sorted(p.stem for p in GUIDES.glob("*.md"))
    assert "adapters" in guides
    for name in guides:
        assert (site / "guides" / f"{name}.html").is_file(), name
    # in the navigation, as its own section, before the chapters grouped by spec/README.md's
    # five parts
    home = (site / "index.html").read_text("utf-8")
    assert home.index("Guides") < home.index("Part I: the Topology Manager")
    assert home.index("Part I: the Topology Manager") < home.index("Part V: operators")
    reference = (site / "guides" / "reference.html").read_text("utf-8")
    # a link to a chapter, written relative to docs/guides/, is the chapter's page; a rule ID
    # links to its anchor; another guide is the guide's page
    assert 'href="../merge-protocol.html"' in reference
    assert 'href="../merge.html#MERGE-8"' in reference
    assert 'href="fuzzing.html"' in reference
    peers = (site / "guides" / "kubelet-and-peers.html").read_text("utf-8")
    # any other file of the checkout is its GitHub page, at the commit the site is built from
    assert f'href="https://github.com/numaspec/numaspec/blob/{_commit()}/adapters/kubelet/' \
        'README.md"' in peers


def test_the_readme_links_every_guide() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    linked = set(re.findall(r"\]\((docs/guides/[\w-]+\.md)[#)]", readme))
    assert linked == {f"docs/guides/{p.name}" for p in GUIDES.glob("*.md")}
    for target in re.findall(r"\]\((?!https?:)([^)#]+)", readme):
        assert (REPO / target).exists(), target


@pytest.mark.parametrize(("added", "complaint"), [
    ("MASK-99 is cited here.",
     "docs/guides/reference.md:{line}: MASK-99 is not a rule of the spec"),
    ("See [the rule](../../spec/topology/merge.md#merge-999).",
     "does not contain an anchor '#merge-999'"),
    ("See [a chapter](../../spec/nowhere.md).", "'../../spec/nowhere.md' is not in the spec"),
    # the chapter's old place, before the spec was grouped by part
    ("See [a chapter](../../spec/merge.md).", "'../../spec/merge.md' is not in the spec"),
    ("See [a file](../../adapters/nowhere.go).",
     "'../../adapters/nowhere.go' is not in the checkout"),
    ("See [a guide](nowhere.md).", "'nowhere.md' is not a guide"),
    ("See [a section](adapters.md#nowhere).", "does not contain an anchor '#nowhere'"),
    ("See [a file](../../../nowhere).", "points outside the repository"),
    ("See [a file](/etc/hostname).", "points outside the repository"),
])
@pytest.mark.slow
def test_a_broken_link_or_an_unknown_rule_in_a_guide_fails_the_build(
        tmp_path: Path, added: str, complaint: str) -> None:
    guides = tmp_path / "guides"
    shutil.copytree(GUIDES, guides)
    reference = guides / "reference.md"
    text = reference.read_text("utf-8") + f"\n{added}\n"
    reference.write_text(text, encoding="utf-8")
    done = subprocess.run([*BUILD, "--guides", str(guides), "--out", str(tmp_path / "site")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1
    assert complaint.format(line=len(text.splitlines())) in done.stderr
    assert "Traceback" not in done.stderr


def test_rule_links_point_at_the_site_s_anchors() -> None:
    import yaml

    from numaspec.rules import SITE_URL, rule_link

    config = yaml.safe_load((REPO / "docs" / "mkdocs.yml").read_text("utf-8"))
    assert config["site_url"] == SITE_URL
    assert rule_link("MERGE-8") == f"{SITE_URL}merge.html#MERGE-8"
    assert rule_link("NO-1") is None


def test_a_rule_quoted_in_an_example_is_quoted_as_it_stands() -> None:
    """A rule shown inside a code block (spec/README.md's "How a rule reads") has its real
    title, Holds in and Upstream lines, and names only checks the rule has."""
    import re

    rules = {r.id: r for r in parse_rules(REPO / "spec")}
    quoted = 0
    for path in [REPO / "spec" / "README.md", *chapter_files(REPO / "spec")]:
        for block in re.findall(r"^```\n(.*?)^```", path.read_text("utf-8"), re.M | re.S):
            heading = re.search(r"^### ([A-Z]+-\d+): (.+)$", block, re.M)
            if heading is None:
                continue
            quoted += 1
            rule = rules[heading.group(1)]
            assert heading.group(2) == rule.title, path.name
            for key in ("Holds in", "Upstream", "Judged"):
                line = re.search(rf"^{key}: (.*)$", block, re.M)
                assert line is None or line.group(1) == rule.meta[key], (path.name, key)
            checks = re.search(r"^Checked by: (.*)$", block, re.M)
            if checks:
                named = [c.strip() for c in checks.group(1).split(",") if c.strip() != "..."]
                assert set(named) <= {c.strip() for c in rule.meta["Checked by"].split(",")}
    assert quoted


def test_every_finding_with_a_report_has_a_page(site: Path) -> None:
    """RUN-23: an exported finding's page carries its Go test and fix; an outside finding's,
    its report in words; the index links both and places every finding."""
    from numaspec.conformance.cases import upstream_findings as uf

    index = (site / "findings" / "index.html").read_text("utf-8")
    for found in uf.findings():
        html = (site / "findings" / f"{found.id}.html").read_text("utf-8")
        assert found.test in html, found.id
        assert "git apply -p1" in html, found.id
        assert f'href="{found.id}.html"' in index
    words = uf.in_words()
    assert {row.id for row in words} >= {"FINDING-39", "FINDING-40", "FINDING-41"}
    for row in words:
        html = (site / "findings" / f"{row.id}.html").read_text("utf-8")
        assert "Reported in words" in html, row.id
        assert f"Checked {row.checked}" in html, row.id
        assert f'href="{row.id}.html"' in index
    for row in uf.triage():
        assert f">{row.id}<" in index, row.id
