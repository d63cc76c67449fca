"""The spec and the suite agree: every rule is checked, every citation resolves, and every
'Checked by' line says what really checks the rule."""

from __future__ import annotations

import re
from pathlib import Path

from numaspec.conformance.speccheck import check, parse_rules
from numaspec.topology.versions import NEWEST, OLDEST
from numaspec_tools import REPO, vector_pieces
from numaspec_tools.regenerate import COMMAND


def test_spec_and_suite_agree() -> None:
    problems = check(REPO / "spec", REPO / "tests")
    hint = f"\n(fix: {COMMAND}, which rewrites the Checked by lines)"
    assert problems == [], "\n".join(problems) + hint


def test_rules_name_versions_and_upstream() -> None:
    rules = parse_rules(REPO / "spec")
    assert len(rules) >= 30
    for rule in rules:
        match = re.fullmatch(r"1\.(\d+)(?:\u20131\.(\d+))?", rule.meta["Holds in"])  # en dash
        assert match, rule
        first = int(match.group(1))
        last = int(match.group(2) or first)
        assert OLDEST.minor <= first <= last <= NEWEST.minor, rule
        assert rule.meta["Upstream"], rule


def _affinity_anchors() -> set[str]:
    """The labels spec/node/affinity.md defines: divergences (| D1 |), worked examples (| W1 |) and
    decisions (**Q1, ...**)."""
    chapter = (REPO / "spec" / "node" / "affinity.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| ([DW]\d+[a-z]?) \|", chapter, flags=re.MULTILINE)
    decisions = re.findall(r"^- \*\*(Q\d+),", chapter, flags=re.MULTILINE)
    return set(rows) | set(decisions)


def test_affinity_citations_resolve() -> None:
    """Every divergence, worked example and decision that an affinity vector's notes or an
    affinity test cites is defined in spec/node/affinity.md, so a reader can follow it."""
    anchors = _affinity_anchors()
    assert {"D1", "D1b", "D11", "W1", "W5", "Q1", "Q10"} <= anchors
    sources = {path.name: path.read_text(encoding="utf-8")
               for path in (*vector_pieces.pieces("affinity"),
                            REPO / "tests" / "node" / "test_affinity.py")}
    cited = {(name, label) for name, text in sources.items()
             for label in re.findall(r"\b([DWQ]\d+[a-z]?)\b", text)}
    assert {name for name, _ in cited} == set(sources)
    dangling = sorted((name, label) for name, label in cited if label not in anchors)
    assert dangling == [], f"cited but not defined in spec/node/affinity.md: {dangling}"


def test_no_citation_leaves_the_repository() -> None:
    """Docs, vectors and code cite the repository, ../shared or public sources, never a file on
    one developer's machine (such as a scratch file under /work)."""
    suffixes = {".py", ".md", ".json", ".go", ".sh"}
    offenders = [str(path.relative_to(REPO)) for path in REPO.rglob("*")
                 if path.suffix in suffixes and path.is_file() and path != Path(__file__)
                 and not {".venv", ".git", "build"} & set(path.relative_to(REPO).parts)
                 and re.search(r"/work/|scratch/", path.read_text(encoding="utf-8",
                                                                   errors="replace"))]
    assert offenders == []
