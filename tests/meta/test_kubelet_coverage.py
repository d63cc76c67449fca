"""Every behaviour switch is reached by a pinned kubelet release (adapters/kubelet/releases.json).

Builds nothing and runs always.  The switch points are the minors of spec/topology/versions.md's
table and, for every rule, the first release of its ``Holds in`` range and the one after its last
(RUN-10 runs a vector at every release it holds in: a release on each side of each switch is
what tells them apart).  Between two consecutive switch points, inside the modelled 1.18-1.38,
kubelet behaves the same for numaspec's rules, so one pinned release whose adapter runs the
merge must fall in each such interval; and every release of the node model
(numaspec.node.nodeconfig.NODE_VERSIONS) needs a pinned release that runs the node probe.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from numaspec.node.nodeconfig import NODE_VERSIONS
from numaspec.rules import parse_rules
from numaspec_tools import REPO
from numaspec_tools.builds.kubelet import (
    EVERY_RUN,
    GROUPS,
    TABLE_RELEASES,
    UNCOVERED,
    Release,
    select,
)
from numaspec_tools.coverage_table import TABLE, not_run_reasons, render, rows
from numaspec_tools.regenerate import COMMAND

SPEC = REPO / "spec"
OLDEST, NEWEST = 18, 38
_RANGE = re.compile(r"^1\.(\d+)(?:\s*[\u2013-]\s*1\.(\d+))?\b")  # en dash or hyphen
_TABLE_ROW = re.compile(r"^\| 1\.(\d+) \|")


def switch_points(spec: Path = SPEC) -> list[int]:
    """The minors where some modelled behaviour changes, inside 1.18-1.38."""
    points = {OLDEST}
    for line in (spec / "topology" / "versions.md").read_text(encoding="utf-8").splitlines():
        row = _TABLE_ROW.match(line)
        if row:
            points.add(int(row.group(1)))
    for rule in parse_rules(spec):
        holds = _RANGE.match(rule.meta.get("Holds in", ""))
        assert holds, f"{rule.id} ({rule.file}:{rule.line}): unreadable Holds in"
        points.update((int(holds.group(1)), int(holds.group(2) or holds.group(1)) + 1))
    return sorted(p for p in points if OLDEST <= p <= NEWEST)


def coverage_gaps(releases: dict[str, Release], spec: Path = SPEC) -> list[str]:
    """What no pinned release covers: each interval between switch points without a merge
    release, each node-model minor without a node release."""
    merge = {int(m.split(".")[1]) for m, r in releases.items() if "merge" in r.ops}
    node = {int(m.split(".")[1]) for m, r in releases.items() if "node" in r.ops}
    points = switch_points(spec)
    gaps = []
    for start, after in zip(points, [*points[1:], NEWEST + 1], strict=True):
        if not merge & set(range(start, after)):
            gaps.append(f"merge: no pinned release in 1.{start}-1.{after - 1}")
    gaps += [f"node: no pinned release runs the node probe at 1.{m}"
             for m in NODE_VERSIONS if m not in node]
    return gaps


def test_switch_points_are_read() -> None:
    points = switch_points()
    # versions.md's table and the rules' ranges: 1.24 (MERGE-3), 1.25 (CPU-5), 1.29 (the
    # node model) and 1.32 (a node rule that held until 1.31) are among them.
    assert {18, 20, 24, 25, 26, 28, 29, 31, 32, 33, 35, 36, 37, 38} <= set(points)


def _minors(gap: str) -> set[int]:
    found = [int(m) for m in re.findall(r"1\.(\d+)", gap)]
    return set(range(found[0], found[-1] + 1))


def test_every_switch_and_node_release_is_covered_by_a_pinned_release() -> None:
    """Except where releases.json declares a range uncovered, with the reason (no release of
    it builds here); a declared range with no gap left in it (a release now covers it) fails
    too, so the declaration cannot go stale."""
    gaps = coverage_gaps(TABLE_RELEASES)
    declared = [set(range(start, end + 1)) for start, end, _ in UNCOVERED]
    undeclared = [gap for gap in gaps if not any(_minors(gap) <= d for d in declared)]
    assert undeclared == [], "switches no pinned release covers: " + "; ".join(undeclared)
    stale = [d for d in declared if not any(_minors(gap) <= d for gap in gaps)]
    assert stale == [], f"declared uncovered in releases.json but covered: {stale}"


@pytest.mark.parametrize("dropped", ["1.18", "1.23", "1.24", "1.26", "1.28", "1.29", "1.33",
                                     "1.35", "1.36", "1.37", "1.38"])
def test_dropping_a_release_leaves_a_gap(dropped: str) -> None:
    """The check can fail: each of these releases is the only one in its interval (without
    1.24 the 1.24 interval has no merge release; without 1.33 nothing runs the 1.33-1.34
    merge nor the 1.33 node model; ...)."""
    releases = {m: r for m, r in TABLE_RELEASES.items() if m != dropped}
    gaps = set(coverage_gaps(releases)) - set(coverage_gaps(TABLE_RELEASES))
    assert gaps
    assert all(f"1.{dropped.split('.')[1]}" in gap for gap in gaps), gaps


def test_a_merge_only_release_does_not_cover_the_node_model() -> None:
    releases = {**TABLE_RELEASES, "1.34": replace(TABLE_RELEASES["1.34"], ops=("merge",))}
    assert (set(coverage_gaps(releases)) - set(coverage_gaps(TABLE_RELEASES))
            == {"node: no pinned release runs the node probe at 1.34"})


def test_the_table_is_consistent() -> None:
    root = REPO / "adapters" / "kubelet"
    for minor, release in TABLE_RELEASES.items():
        assert release.version.startswith(f"v{minor}."), release
        assert release.dir == f"v1_{minor.split('.')[1]}", release
        assert set(release.ops) <= {"merge", "node", "hints"}
        assert "merge" in release.ops
        assert release.run == EVERY_RUN or release.run in range(GROUPS), release
        gomod = (root / release.dir / "go.mod").read_text(encoding="utf-8")
        assert f"k8s.io/kubernetes {release.version}\n" in gomod, release
    # Every group is used, and together with the every-run releases they cover the table.
    assert {r.run for r in TABLE_RELEASES.values()} == {EVERY_RUN, *range(GROUPS)}


def test_selection() -> None:
    every = select(EVERY_RUN, TABLE_RELEASES, 0)
    assert every == tuple(m for m, r in TABLE_RELEASES.items() if r.run == EVERY_RUN)
    union: set[str] = set()
    for group in range(GROUPS):
        chosen = select("", TABLE_RELEASES, group)
        assert set(every) <= set(chosen)
        assert chosen == select(f"group:{group}", TABLE_RELEASES, 0)
        union |= set(chosen)
    assert union == set(TABLE_RELEASES) == set(select("all", TABLE_RELEASES, 0))
    assert select("1.33, 1.29", TABLE_RELEASES, 0) == ("1.29", "1.33")
    with pytest.raises(pytest.UsageError, match=r"1\.99"):
        select("1.99", TABLE_RELEASES, 0)


def test_the_rule_coverage_table_is_current() -> None:
    """adapters/kubelet/COVERAGE.md says, per rule, which pinned releases run it; it follows
    the vectors, the manifests and the spec (regenerate: numaspec-dev regenerate)."""
    assert TABLE.read_text(encoding="utf-8") == render(), \
        f"adapters/kubelet/COVERAGE.md is stale: run {COMMAND}"


def test_every_reason_for_not_running_a_rule_is_current() -> None:
    """adapters/kubelet/not-run.json says why a rule is run against no pinned release: each
    of its rules exists and is still run nowhere (a rule that now runs loses its reason)."""
    run = {rule: where for rule, _, where, _ in rows()}
    reasons = not_run_reasons()
    assert reasons, "adapters/kubelet/not-run.json holds no reason"
    stale = {rule: run.get(rule, "no such rule") for rule in reasons if run.get(rule) != "none"}
    assert stale == {}, f"reasons for rules that run or do not exist: {stale}"
    assert all(len(reason) > 40 for reason in reasons.values())
