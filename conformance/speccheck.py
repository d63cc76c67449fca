"""Keep the spec and the suite honest with each other.

``python -m numaspec.conformance.speccheck [--spec DIR] [--fix]`` reads every rule of the spec
chapters and reports:

* a rule without ``Holds in``, ``Upstream``, ``Judged`` or ``Checked by``, or judged otherwise
  than ``FORMAT_RULES`` says (PROTO-7);
* a rule that nothing checks;
* a property, vector or test file that cites a rule the spec does not have;
* a ``Checked by`` line that differs from what actually cites the rule (``--fix`` rewrites it).

Vectors (``spec/vectors``, every op: merge, hints and node) count as checks for every chapter.
Test files count as checks when they name the rule ID in a comment or docstring; they are
listed only for rules about numaspec's own interfaces (the ``WIRE`` and ``VER`` chapters and
node-id parsing) and for the node model's chapters, whose properties are stateful tests.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from numaspec.conformance.cases.vectors import load_vectors
from numaspec.conformance.implementations.claims import FORMAT_RULES
from numaspec.conformance.properties import PROPERTIES
from numaspec.rules import JUDGED, Rule, parse_rules, spec_dir

#: Rule, parse_rules and spec_dir moved to numaspec.rules; re-exported here.
__all__ = ["Rule", "check", "expected_checks", "parse_rules", "spec_dir"]

_RULE_REF = re.compile(r"\b([A-Z]+-\d+)\b")


#: Tests about the spec's own bookkeeping (which rules vectors cite, exemptions): they name
#: rule IDs without checking the rules.
_BOOKKEEPING_TESTS = ("test_spec.py", "test_vectors.py")


def _test_citations(tests: Path) -> dict[str, set[str]]:
    cited: dict[str, set[str]] = defaultdict(set)
    for path in sorted(tests.rglob("test_*.py")):
        if path.name in _BOOKKEEPING_TESTS:
            continue
        for rule in set(_RULE_REF.findall(path.read_text(encoding="utf-8"))):
            cited[rule].add(f"test tests/{path.relative_to(tests).as_posix()}")
    return cited


# Rules about numaspec's own interfaces, and those whose properties arrive with the node
# model (issue 3), are checked by tests.
_TEST_CHAPTERS = ("WIRE", "VER", "MASK-1", "MASK-3", "QTY", "QOS", "CPU", "NODE", "ADMIT", "DEV",
                  "MEM", "INV", "NWIRE", "PROTO", "RUN", "AFF", "SCHED", "AWIRE", "NRT", "PRED",
                  "EXPLAIN", "FAST", "SYSFS", "KCONF", "CKPT", "OPS", "RESIZE", "CHECK", "DRA")


def expected_checks(rules: Iterable[Rule], tests: Path | None) -> dict[str, list[str]]:
    """For every rule ID cited anywhere: the properties, vectors and tests that cite it."""

    ids = {r.id for r in rules}
    checks: dict[str, set[str]] = defaultdict(set)
    for prop in PROPERTIES.values():
        for rule in prop.rules:
            checks[rule].add(prop.id)
    for vector in load_vectors():
        for rule in vector.rules:
            checks[rule].add(f"vector {vector.id}")
    if tests is not None:
        for rule, files in _test_citations(tests).items():
            if rule in ids and rule.startswith(_TEST_CHAPTERS):
                checks[rule] |= files

    def order(item: str) -> tuple[int, str]:
        return ({"P": 0, "v": 1, "t": 2}.get(item[0], 3), item)

    return {rule: sorted(found, key=order) for rule, found in checks.items()}


def check(spec: Path, tests: Path | None, *, fix: bool = False) -> list[str]:
    """Every problem found, as ``file:line: message``; with ``fix``, rewrite Checked-by lines."""
    rules = parse_rules(spec)
    problems: list[str] = []
    ids = [r.id for r in rules]
    for rule_id in {i for i in ids if ids.count(i) > 1}:
        problems.append(f"rule {rule_id} is defined more than once")
    checks = expected_checks(rules, tests)
    for rule_id in sorted(set(checks) - set(ids)):
        problems.append(f"{', '.join(checks[rule_id])} cite {rule_id}, which the spec lacks")
    rewrites: dict[str, dict[int, str]] = defaultdict(dict)
    for rule in rules:
        where = f"{rule.file}:{rule.line}"
        for key in ("Holds in", "Upstream", "Judged", "Checked by"):
            if not rule.meta.get(key):
                problems.append(f"{where}: {rule.id} has no '{key}:' line")
        judged = rule.meta.get("Judged")
        if judged and judged not in JUDGED:
            problems.append(f"{where}: {rule.id} is judged {judged!r}, not one of "
                            f"{', '.join(JUDGED)}")
        elif judged and (judged == "format") != (rule.id in FORMAT_RULES):
            problems.append(f"{where}: {rule.id} is judged {judged!r} but FORMAT_RULES "
                            "(numaspec.conformance.implementations.claims) says otherwise")
        found = checks.get(rule.id, [])
        if not found:
            problems.append(f"{where}: nothing checks {rule.id}")
            continue
        line = ", ".join(found)
        if rule.meta.get("Checked by") != line:
            if fix:
                rewrites[rule.file][rule.line] = line
            else:
                problems.append(f"{where}: {rule.id} Checked by should read: {line}")
    for name, fixes in rewrites.items():
        path = spec / name
        lines = path.read_text(encoding="utf-8").splitlines()
        out: list[str] = []
        pending: str | None = None
        for number, text in enumerate(lines, 1):
            if number in fixes:
                pending = fixes[number]
            if pending is not None and text.startswith("Checked by:"):
                out.append(f"Checked by: {pending}")
                pending = None
            else:
                out.append(text)
        path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m numaspec.conformance.speccheck")
    parser.add_argument("--spec", type=Path, default=None)
    parser.add_argument("--tests", type=Path, default=None)
    parser.add_argument("--fix", action="store_true")
    args = parser.parse_args(argv)
    spec = args.spec or spec_dir()
    tests = args.tests or (spec.parent / "tests")
    from numaspec.errors import NumaspecError

    try:
        problems = check(spec, tests if tests.is_dir() else None, fix=args.fix)
    except NumaspecError as exc:  # a malformed vector file, named with its place
        print(f"speccheck: {exc.kind}: {exc.describe()}", file=sys.stderr)
        return 2
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
