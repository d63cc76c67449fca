"""The docs site in a real browser, opened from disk as a reader opens site/index.html: built
into a temporary folder by docs/build.py and read through file:// by headless Chromium
(tools/numaspec_tools/testing/browser.py installs Debian's package when it is missing).  A
chapter's rule links lead
to the rule, an anchor lands on its rule, the matrix's MERGE-8 row says where it holds under
its header row and its strip's marks under their minors, and search finds a rule by its ID,
with the worker's lunr patched (docs/assets/javascripts/lunr-tokenset.js).  No page asks
anything of the network (every request a page makes is recorded), and 404.html is styled
from disk too."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from numaspec_tools import REPO
from numaspec_tools.testing.browser import chromium, requests

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, str(REPO / "docs" / "build.py"), "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    driver = chromium(tmp_path_factory.mktemp("chromium"))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver: WebDriver, script: str, what: str) -> object:
    """Poll ``script`` (a JavaScript expression) until it is truthy; fail naming ``what``."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, 30, poll_frequency=0.1).until(
        lambda d: d.execute_script(f"return {script}"), message=what)


def _in_view(driver: WebDriver, element_id: str) -> bool:
    return bool(driver.execute_script(
        "const e = document.getElementById(arguments[0]); if (!e) return false;"
        "const r = e.getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight;",
        element_id))


def test_a_chapter_s_rule_links_lead_to_the_rule(site: Path, browser: WebDriver) -> None:
    browser.get((site / "fast-merge.html").as_uri())
    links = browser.execute_script(
        "return [...document.querySelectorAll('article a[href]')]"
        ".map(a => a.getAttribute('href')).filter(h => /^merge\\.html#MERGE-\\d+$/.test(h))")
    assert links, "fast-merge.html links no MERGE rule"
    target = links[0]
    element = browser.find_element("css selector", f'article a[href="{target}"]')
    browser.execute_script("arguments[0].click()", element)
    rule = target.split("#")[1]
    _wait(browser, f"location.pathname.endsWith('/merge.html') && location.hash === '#{rule}'",
          f"the link {target} did not open merge.html#{rule}")
    assert browser.current_url.startswith("file://")
    heading = browser.find_element("id", rule)
    assert heading.tag_name == "h3"
    assert heading.text.startswith(f"{rule}:")
    _wait(browser, f"(r => r.top >= 0 && r.top < innerHeight)("
                   f"document.getElementById('{rule}').getBoundingClientRect())",
          f"{rule}'s heading is not in view after the link")


def test_an_anchor_lands_on_its_rule(site: Path, browser: WebDriver) -> None:
    browser.get((site / "policies.html").as_uri() + "#POLICY-3")
    _wait(browser, "document.readyState === 'complete'", "policies.html did not load")
    assert browser.find_element("id", "POLICY-3").text.startswith("POLICY-3:")
    assert _in_view(browser, "POLICY-3")
    # the published site's older address (a folder) forwards to the page, anchor kept
    browser.get((site / "merge" / "index.html").as_uri() + "#MERGE-8")
    _wait(browser, "location.pathname.endsWith('/merge.html') && location.hash === '#MERGE-8'",
          "merge/#MERGE-8 did not forward to merge.html#MERGE-8")


def test_the_matrix_row_of_merge_8_says_where_it_holds(site: Path, browser: WebDriver) -> None:
    browser.get((site / "matrix.html").as_uri() + "#MERGE-8")
    _wait(browser, "document.readyState === 'complete'", "matrix.html did not load")
    assert _in_view(browser, "MERGE-8")
    row = browser.execute_script(
        "const r = document.getElementById('MERGE-8').closest('tr');"
        "return [...r.cells].map(c => ({text: c.innerText.trim(),"
        " visible: (b => b.width > 0 && b.left >= 0 && b.right <= innerWidth)"
        "(c.getBoundingClientRect())}))")
    texts = [cell["text"] for cell in row]
    assert texts[0] == "MERGE-8"
    assert all(texts), f"a blank cell in MERGE-8's row: {texts}"
    assert texts[1].startswith("1.24\u20131.38")
    assert "\u25cf" in texts[-1]  # the strip marks the pinned minors where it holds
    # every column fits the window: nothing of the row is off to the side
    assert all(cell["visible"] for cell in row), row
    sticky = browser.execute_script(
        "return getComputedStyle(document.getElementById('MERGE-8').closest('td')).position")
    assert sticky == "sticky"


def _header_row_in_view(driver: WebDriver, rule: str) -> dict[str, Any]:
    """Where ``rule``'s matrix row and its table's header row are on the screen: the header
    cells' box, the row's, and the bottom of the site's header, which nothing may be under."""
    return dict(driver.execute_script(
        "const row = document.getElementById(arguments[0]).closest('tr');"
        "const cells = [...row.closest('table').tHead.rows[0].cells];"
        "const boxes = cells.map(c => c.getBoundingClientRect());"
        "const site = document.querySelector('.md-header').getBoundingClientRect().bottom;"
        "const r = row.getBoundingClientRect();"
        "return {top: Math.min(...boxes.map(b => b.top)),"
        " bottom: Math.max(...boxes.map(b => b.bottom)), site: site, row: r.top,"
        " row_bottom: r.bottom, height: innerHeight,"
        " texts: cells.map(c => c.innerText.split('\\n')[0].trim())}", rule))


def test_an_anchored_matrix_row_shows_its_header_row(site: Path, browser: WebDriver) -> None:
    """matrix.html#MERGE-8 lands on the row with its table's header row in view above it,
    under the site's header (docs/assets/javascripts/matrix.js, numaspec.css); so does the
    last row of the longest table, which scrolls inside its block under a header row that
    sticks; on a wide screen and on a laptop's, where the tables scroll sideways too, their
    first column staying in place."""
    browser.get((site / "matrix.html").as_uri())
    _wait(browser, "document.readyState === 'complete'", "matrix.html did not load")
    rows, last = browser.execute_script(
        "const t = [...document.querySelectorAll('.numaspec-matrix table')]"
        ".sort((a, b) => b.tBodies[0].rows.length - a.tBodies[0].rows.length)[0];"
        "const rows = t.tBodies[0].rows; return [rows.length, rows[rows.length - 1]"
        ".querySelector('[id]').id]")
    assert rows > 20, rows  # taller than the screen: its block scrolls
    try:
        for width, height in ((1920, 1080), (1280, 800)):
            browser.set_window_size(width, height)
            for rule in ("MERGE-8", last):
                browser.get("about:blank")  # a new load, not a jump inside the page
                browser.get((site / "matrix.html").as_uri() + f"#{rule}")
                _wait(browser, "document.readyState === 'complete'", "matrix.html did not load")
                # a header cell: they stick, their row and its group scroll on
                _wait(browser, "(r => r.top >= 0 && r.bottom <= innerHeight)(document"
                               f".getElementById('{rule}').closest('table').tHead.rows[0]"
                               ".cells[0].getBoundingClientRect())",
                      f"matrix.html#{rule} at {width}x{height}: its header row is not in view")
                where = _header_row_in_view(browser, rule)
                assert where["texts"][:2] == ["rule", "holds in"], where
                assert where["site"] - 1 <= where["top"], (rule, width, where)  # not hidden
                assert where["bottom"] <= where["row"] + 1, (rule, width, where)  # not over it
                assert where["row_bottom"] <= where["height"], (rule, width, where)
        moved = browser.execute_script(
            "const cell = document.getElementById(arguments[0]).closest('td');"
            "const block = cell.closest('.md-typeset__scrollwrap');"
            "const before = cell.getBoundingClientRect().left; block.scrollLeft = 40;"
            "return [before, cell.getBoundingClientRect().left, block.scrollLeft,"
            " block.getBoundingClientRect().left]", last)
        assert moved[2] > 0, moved  # the table is wider than a laptop's screen
        # scrolled on, the cell would be 40 px to the left, partly out of its block
        assert moved[1] >= moved[3] > moved[0] - moved[2], moved
    finally:
        browser.set_window_size(1920, 1080)


def test_the_matrix_strip_names_each_mark_s_release(site: Path, browser: WebDriver) -> None:
    """The strip's marks stand under their minors' numbers in the header, and each mark's
    tooltip names its release."""
    browser.get((site / "matrix.html").as_uri() + "#MERGE-8")
    _wait(browser, "document.readyState === 'complete'", "matrix.html did not load")
    strip = browser.execute_script(
        "const row = document.getElementById('MERGE-8').closest('tr');"
        "const head = row.closest('table').querySelector('thead .numaspec-strip-head');"
        "const centre = e => (b => (b.left + b.right) / 2)(e.getBoundingClientRect());"
        "const marks = [...row.cells[row.cells.length - 1].querySelectorAll("
        "'.numaspec-strip > span')];"
        "return {labels: [...head.children].map(e => e.innerText),"
        " at: [...head.children].map(centre), marks: marks.map(e => e.innerText),"
        " titles: marks.map(e => e.title), under: marks.map(centre)}")
    labels = strip["labels"]
    assert labels == [str(m) for m in range(18, 39)], labels
    assert len(strip["marks"]) == len(labels)
    assert all(abs(a - b) < 1 for a, b in zip(strip["at"], strip["under"], strict=True)), strip
    assert [t.split(":")[0] for t in strip["titles"]] == [f"1.{m}" for m in labels]
    # MERGE-8 holds from 1.24: 1.23 does not, 1.24 is pinned (adapters/kubelet/releases.json)
    assert strip["marks"][5:7] == ["\u00b7", "\u25cf"], strip["marks"]
    assert strip["titles"][6].startswith("1.24: holds; kubelet 1.24."), strip["titles"][6]


def test_no_page_asks_the_network_for_anything(site: Path,
                                               tmp_path_factory: pytest.TempPathFactory) -> None:
    """Opened from disk, a page loads everything from disk: every request each page makes
    (its own, its frames', the theme's scripts' after loading, the search's) is a file://
    one, or data inside the page.  The theme's repository widget asked GitHub's API for the
    repository's stars and forks, once a browser session (it keeps the answer in the
    session's storage): hence a browser of this test's own."""
    browser = chromium(tmp_path_factory.mktemp("chromium-network"))
    browser.set_page_load_timeout(60)
    try:
        _no_request_leaves_the_disk(site, browser)
    finally:
        browser.quit()


def _no_request_leaves_the_disk(site: Path, browser: WebDriver) -> None:
    requests(browser)  # the browser's own start
    seen: list[str] = []
    pages = ["index.html", "matrix.html#MERGE-8", "merge.html", "comparison.html", "cite.html",
             "guides/benchmarks.html", "404.html", "merge/index.html#MERGE-8"]
    for page in pages:
        path, _, anchor = page.partition("#")
        browser.get((site / path).as_uri() + (f"#{anchor}" if anchor else ""))
        _wait(browser, "document.readyState === 'complete'", f"{page} did not load")
        if page == "index.html":  # the search, which loads its index and worker
            field = browser.find_element("css selector", "input.md-search__input")
            browser.execute_script("arguments[0].focus()", field)
            field.send_keys("MERGE-8")
            _wait(browser, "document.querySelector('.md-search-result__item')",
                  "the search showed no result")
        browser.execute_script("return new Promise(r => setTimeout(r, 1000))")  # what follows
        seen += requests(browser)
    assert len([u for u in seen if u.startswith("file://")]) > 2 * len(pages), seen
    # data in the page, or the browser's own (chrome://, its new-tab page); nothing else
    outside = sorted({u for u in seen if urlsplit(u).scheme not in ("file", "data", "blob",
                                                                      "about", "chrome")})
    assert not outside, f"the site asked the network for: {outside}"


def test_the_404_page_is_styled_from_disk(site: Path, browser: WebDriver) -> None:
    """404.html's stylesheets and scripts load from disk: the theme's header is sticky and its
    grid and numaspec.css's width applied, which no browser default gives."""
    browser.get((site / "404.html").as_uri())
    _wait(browser, "document.readyState === 'complete'", "404.html did not load")
    styled = browser.execute_script(
        "const h = document.querySelector('.md-header');"
        "const g = document.querySelector('.md-grid');"
        "return [h && getComputedStyle(h).position, g && getComputedStyle(g).maxWidth,"
        " [...document.styleSheets].filter(s => s.href).map(s => s.href)]")
    assert styled[0] == "sticky", styled
    assert styled[1].endswith("px"), styled  # numaspec.css's 90rem; a browser's is none
    assert styled[2], styled
    assert all(href.startswith("file://") for href in styled[2]), styled
    assert "404" in browser.find_element("css selector", "article").text
    link = browser.execute_script(
        "return document.querySelector('a.md-header__button.md-logo').getAttribute('href')")
    assert link == "index.html"


def test_search_finds_a_rule_by_its_id_from_disk(site: Path, browser: WebDriver) -> None:
    browser.get((site / "index.html").as_uri())
    _wait(browser, "document.readyState === 'complete'", "index.html did not load")
    field = browser.find_element("css selector", "input.md-search__input")
    browser.execute_script("arguments[0].focus()", field)
    field.send_keys("MERGE-8")
    _wait(browser, "[...document.querySelectorAll('.md-search-result__item')]"
                   ".some(e => e.innerText.includes('MERGE-8'))",
          "search for MERGE-8 showed no result naming it (from file://)")
    first = browser.execute_script(
        "const a = document.querySelector('.md-search-result__item a');"
        "return a && a.getAttribute('href')")
    assert first is not None
    assert "merge.html" in first


def test_search_merges_only_equal_nodes_of_its_term_automaton(site: Path,
                                                               browser: WebDriver) -> None:
    """docs/assets/javascripts/lunr-tokenset.js, appended to the theme's search worker: two
    nodes of lunr's term automaton whose edges are digits must not read alike ("1" to node
    23 then "4" to node 5; "1" to node 2 then "3" to node 45).  Unpatched, lunr 2.3.9 reads
    both as "012345" and merges them, and at a700bf0 the site's search for MERGE-8 stopped
    with "Cannot read properties of undefined (reading '_index')"."""
    browser.get((site / "index.html").as_uri())
    _wait(browser, "document.readyState === 'complete'", "index.html did not load")
    _wait(browser, "[...document.querySelectorAll('iframe')].some(f => f.contentWindow.lunr)",
          "the search worker's frame did not load lunr")
    read = browser.execute_script(
        "const L = [...document.querySelectorAll('iframe')]"
        "  .map(f => f.contentWindow.lunr).find(l => l);"
        "function node(edges) { const n = new L.TokenSet();"
        "  for (const [c, id] of edges) { const m = new L.TokenSet(); m.id = id; n.edges[c] = m; }"
        "  return n.toString(); }"
        "return [node([['1', 23], ['4', 5]]), node([['1', 2], ['3', 45]])];")
    assert read[0] != read[1], read
