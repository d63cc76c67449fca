"""The per-rule summary printed after a conformance run."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = ["rule_table"]


def _rule_key(rule: str) -> tuple[str, int]:
    match = re.fullmatch(r"([A-Z]+)-(\d+)", rule)
    return (match.group(1), int(match.group(2))) if match else (rule, 0)


def rule_table(results: Mapping[str, Iterable[tuple[str, str]]]) -> list[str]:
    """One line per rule: passed / failed / skipped counts and the first failing check."""
    lines = [f"{'rule':<10} {'passed':>6} {'failed':>6} {'skipped':>7}  first failure"]
    for rule in sorted(results, key=_rule_key):
        outcomes = list(results[rule])
        counts = {k: sum(1 for _, o in outcomes if o == k) for k in ("passed", "failed",
                                                                     "skipped")}
        first = next((node.split("::")[-1] for node, o in outcomes if o == "failed"), "")
        lines.append(f"{rule:<10} {counts['passed']:>6} {counts['failed']:>6} "
                     f"{counts['skipped']:>7}  {first}")
    return lines
