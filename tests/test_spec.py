"""The spec and the suite agree: every rule is checked, every citation resolves, and every
'Checked by' line says what really checks the rule."""

from __future__ import annotations

from conftest import REPO

from numaspec.conformance.speccheck import check, parse_rules


def test_spec_and_suite_agree() -> None:
    problems = check(REPO / "spec", REPO / "tests")
    hint = "\n(fix: python -m numaspec.conformance.speccheck --fix)"
    assert problems == [], "\n".join(problems) + hint


def test_rules_name_versions_and_upstream() -> None:
    rules = parse_rules(REPO / "spec")
    assert len(rules) >= 30
    for rule in rules:
        assert rule.meta["Holds in"][:4] in ("1.18", "1.20", "1.24", "1.26", "1.31"), rule
        assert rule.meta["Upstream"], rule
