"""The spec's rules as data: each rule's ID, title, place and its ``Holds in``,
``Upstream``, ``Judged`` and ``Checked by`` lines (spec/README.md, "How a rule reads").

Read by the spec cross-check (:mod:`numaspec.conformance.speccheck`), the vectors (a vector
inherits its releases from its rules) and the comparison report.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

__all__ = ["JUDGED", "Rule", "parse_rules", "spec_dir"]

_HEADING = re.compile(r"^### ([A-Z]+-\d+): (.+)$")
_META = re.compile(r"^(Holds in|Upstream|Judged|Checked by): ?(.*)$")
#: PROTO-7: what a rule is about, and so whom it judges (spec/README.md, "How a rule reads").
JUDGED = ("semantics", "format", "protocol")


@attrs.frozen
class Rule:
    id: str
    title: str
    file: str
    line: int
    meta: dict[str, str]


def spec_dir() -> Path:
    here = Path(__file__).resolve().parent.parent.parent / "spec"
    return here if here.is_dir() else Path.cwd() / "spec"


def parse_rules(spec: Path) -> list[Rule]:
    rules: list[Rule] = []
    for path in sorted(spec.glob("*.md")):
        current: Rule | None = None
        fenced = False
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("```"):
                fenced = not fenced
            if fenced:
                continue
            heading = _HEADING.match(line)
            if heading:
                current = Rule(heading.group(1), heading.group(2), path.name, number, {})
                rules.append(current)
                continue
            meta = _META.match(line)
            if meta and current is not None:
                current.meta[meta.group(1)] = meta.group(2).strip()
    return rules
