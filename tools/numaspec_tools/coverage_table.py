"""Which pinned kubelet releases each spec rule is run against: the table in
adapters/kubelet/COVERAGE.md (tests/meta/test_kubelet_coverage.py keeps it current).

A rule is run against a release when a vector citing it is sent to that release's adapter
(RUN-10: a vector goes to every release it holds in; ``merge`` vectors to every pinned
release, ``node`` and ``hints`` vectors to those with the node probe; vectors of numaspec's
line format are not claimed by them, PROTO-7), less the instances its
expectations manifest skips, and, for rules the node differential checks
(tests/upstream/kubelet/test_node_differential.py in their Checked-by line), at 1.30 and 1.37 too.
A rule
whose upstream is ``none`` is numaspec's own, one from Katalyst's proposal (AFF, SCHED) is
not kubelet's, DRA's are the scheduler's allocator (run against adapters/dra/), and a rule whose
upstream is the NodeResourceTopology exporter's (``resource-topology-exporter ...``) describes
the exporter: none has kubelet behaviour to run.  A rule run at no pinned release says why in
adapters/kubelet/not-run.json (its reason is the table's last column).

``numaspec-dev regenerate`` rewrites the table (this file alone:
``python tools/numaspec_tools/coverage_table.py``).
"""

from __future__ import annotations

import json
import re
import sys

from numaspec.conformance.cases.vectors import holds_in, load_vectors, split_id
from numaspec.conformance.implementations.claims import Claims
from numaspec.node.nodeconfig import NODE_VERSIONS
from numaspec.rules import parse_rules
from numaspec_tools import REPO
from numaspec_tools.builds.kubelet import TABLE_RELEASES

ROOT = REPO  # the repository
TABLE = REPO / "adapters" / "kubelet" / "COVERAGE.md"
#: Why a rule is run against no pinned release: {rule: reason}.
NOT_RUN = REPO / "adapters" / "kubelet" / "not-run.json"
_RANGE = re.compile(r"^1\.(\d+)\s*[\u2013-]\s*1\.(\d+)\b")
#: Tests that run a rule against kubelet's own Go code (beside the vectors), and the pinned
#: releases each runs it at: a rule whose Checked by line names one of them is run there.
#: The node differential (tests/upstream/kubelet/test_node_differential.py) runs at 1.30 and 1.37.
GO_CHECKS: dict[str, tuple[str, ...]] = {
    "tests/upstream/kubelet/test_node_differential.py": ("1.30", "1.37"),
    # MASK-3: kubelet's IterateBitMasks at every pinned release (its run's rotation).
    "tests/upstream/kubelet/test_kubelet_mask_order.py": tuple(TABLE_RELEASES),
    # QTY-*: apimachinery v0.30.14's ParseQuantity (kubelet 1.30's) writes the quantity table.
    "tests/upstream/kubelet/test_kubelet_quantity_go.py": ("1.30",),
    # CKPT-*: kubelet's state-file writers and readers (adapters/kubelet/checkpoints; 1.36
    # with its rotation group).
    "tests/upstream/kubelet/test_kubelet_checkpoints_go.py": ("1.30", "1.36", "1.37"),
    # SYSFS-*: cadvisor's sysfs reading and topology.Discover; KCONF-*: kubelet's config
    # loading, defaulting and validation (the release shim's machine and kconf modes: every
    # node release, each with its run's rotation).
    "tests/upstream/kubelet/test_kubelet_machine.py": tuple(m for m, r in TABLE_RELEASES.items()
                                           if "node" in r.ops),
    "tests/upstream/kubelet/test_kubelet_config_go.py": tuple(m for m, r in TABLE_RELEASES.items()
                                             if "node" in r.ops
                                             and int(m.split(".")[1]) in NODE_VERSIONS),
}
_OP = {"merge": "merge", "node": "node", "hints": "hints"}
#: What the kubelet adapters claim: everything but numaspec's line format (PROTO-7).
KUBELET_CLAIMS = Claims()


def _skipped() -> set[tuple[str, str]]:
    """(vector id, release) pairs an expectations manifest skips."""
    out: set[tuple[str, str]] = set()
    for path in sorted((ROOT / "adapters" / "kubelet" / "expectations").glob("*.json")):
        minor = ".".join(path.stem.removeprefix("kubelet-v").split(".")[:2])
        for entry in json.loads(path.read_text(encoding="utf-8"))["expectations"]:
            if entry.get("outcome") == "skip" and "vector" in entry:
                base, at = split_id(entry["vector"])
                out.add((base, at or minor))
    return out


def not_run_reasons() -> dict[str, str]:
    """adapters/kubelet/not-run.json's reasons, by rule."""
    reasons: dict[str, str] = json.loads(NOT_RUN.read_text(encoding="utf-8"))["reasons"]
    return reasons


def _minor(release: str) -> int:
    return int(release.split(".")[1])


def _ranges(minors: set[int]) -> str:
    """Pinned minors as text, consecutive pinned releases as one range (en dash)."""
    pinned = sorted(_minor(m) for m in TABLE_RELEASES)
    runs: list[list[int]] = []
    for m in sorted(minors):
        if runs and pinned.index(m) == pinned.index(runs[-1][-1]) + 1:
            runs[-1].append(m)
        else:
            runs.append([m])
    return ", ".join(f"1.{r[0]}" if len(r) == 1 else f"1.{r[0]}\u20131.{r[-1]}" for r in runs)


def rows() -> list[tuple[str, str, str, str]]:
    """(rule, holds in, pinned releases run, pinned releases in range not run) per rule; a
    rule run nowhere: ``none``."""
    skipped = _skipped()
    reached: dict[str, set[int]] = {}
    for vector in load_vectors():
        op = _OP.get(vector.op)
        # The kubelet adapters claim all of kubelet but numaspec's line format (PROTO-7).
        if op is None or KUBELET_CLAIMS.outside(vector.op, vector.case, vector.expected,
                                                vector.rules) is not None:
            continue
        for release in holds_in(vector):
            pinned = TABLE_RELEASES.get(release)
            if pinned is None or op not in pinned.ops or (vector.id, release) in skipped:
                continue
            for rule_id in vector.rules:
                reached.setdefault(rule_id, set()).add(_minor(release))
    out = []
    for rule in parse_rules(ROOT / "spec"):
        holds = rule.meta.get("Holds in", "")
        match = _RANGE.match(holds)
        span = set(range(int(match.group(1)), int(match.group(2)) + 1)) if match else set()
        run = set(reached.get(rule.id, set()))
        checked_by = rule.meta.get("Checked by", "")
        for test, releases in GO_CHECKS.items():
            if test in checked_by:
                run |= {_minor(r) for r in releases} & span
        run &= span
        upstream = rule.meta.get("Upstream", "")
        if upstream.startswith("none"):
            out.append((rule.id, holds, "numaspec's own (no kubelet behaviour)", ""))
            continue
        if upstream.startswith("katalyst"):
            out.append((rule.id, holds, "Katalyst's proposal (no kubelet behaviour)", ""))
            continue
        if rule.id.startswith("DRA-"):
            out.append((rule.id, holds, "the scheduler's DRA allocator (adapters/dra/, no "
                                        "kubelet behaviour)", ""))
            continue
        if upstream.startswith("resource-topology-exporter"):
            out.append((rule.id, holds, "the NodeResourceTopology exporter's (no kubelet "
                                        "behaviour)", ""))
            continue
        missing = {_minor(m) for m in TABLE_RELEASES} & span - run
        out.append((rule.id, holds, _ranges(run) or "none", _ranges(missing)))
    return out


def render() -> str:
    lines = [
        "# Spec rules run against kubelet",
        "",
        "Generated by `numaspec-dev regenerate` (tests/meta/test_kubelet_coverage.py "
        "fails when it is stale).",
        "Per rule: where it holds, the pinned releases whose adapter runs it (a vector citing it "
        "is sent there and not skipped by the release's manifest, or the node differential "
        "checks it), and the pinned releases in its range that nothing sends it to.  1.31 is "
        "not pinned (releases.json, `uncovered`).  A rule run at none says why (adapters/kubelet/"
        "not-run.json).",
        "",
        "| rule | holds in | run against kubelet | pinned in range, not run | why not run |",
        "|---|---|---|---|---|",
    ]
    reasons = not_run_reasons()
    table = rows()
    lines += [f"| {r} | {h} | {run} | {missing} | {reasons.get(r, '') if run == 'none' else ''} |"
              for r, h, run, missing in table]
    bare = [r for r, _, run, _ in table if run == "none" and r not in reasons]
    lines += ["", "Run against nothing: "
              + (f"{len(bare)} rules without a reason ({', '.join(bare)})." if bare else
                 "every such rule says why above.")]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    TABLE.write_text(render(), encoding="utf-8")
    sys.stdout.write(f"wrote {TABLE.relative_to(ROOT)}\n")
