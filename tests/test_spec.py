"""The spec and the suite agree: every rule is checked, every citation resolves, and every
'Checked by' line says what really checks the rule."""

from __future__ import annotations

import re

from conftest import REPO

from numaspec.conformance.speccheck import check, parse_rules
from numaspec.versions import NEWEST, OLDEST


def test_spec_and_suite_agree() -> None:
    problems = check(REPO / "spec", REPO / "tests")
    hint = "\n(fix: python -m numaspec.conformance.speccheck --fix)"
    assert problems == [], "\n".join(problems) + hint


def test_rules_name_versions_and_upstream() -> None:
    rules = parse_rules(REPO / "spec")
    assert len(rules) >= 30
    for rule in rules:
        match = re.fullmatch(r"1\.(\d+)\u20131\.(\d+)", rule.meta["Holds in"])  # an en dash
        assert match, rule
        first, last = int(match.group(1)), int(match.group(2))
        assert OLDEST.minor <= first <= last <= NEWEST.minor, rule
        assert rule.meta["Upstream"], rule
