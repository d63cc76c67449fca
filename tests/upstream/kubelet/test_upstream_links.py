"""Every rule's Upstream citations, as the site links them (docs/upstream-links.json, written
by tools/numaspec_tools/upstream_links.py), against kubernetes' own sources in the Go module
cache: each cited file is there at the tag it is linked at, each cited name is defined in it
there (``func Name(``, ``func (r *Type) Name(``, a type, constant, variable or struct field)
at the line linked; a name the line gives releases of its own (``compareHints (1.24-1.25)``)
is defined at every pinned release inside them; and the table is what the sources give now
(the newest pinned release in range that defines the name), so it is never stale.

A release's sources missing from the module cache skip the rule, naming the release; where
the run requires Go (NUMASPEC_REQUIRE_KUBELET=1, which .ci/run sets) they are downloaded
with ``go mod download`` as adapters/kubelet/build.sh does on a cold machine, and a release
that cannot be had fails the test.
"""

from __future__ import annotations

import shutil
from functools import cache
from pathlib import Path

import pytest

from numaspec.rules import Rule, parse_rules
from numaspec_tools import REPO
from numaspec_tools import upstream_links as links
from numaspec_tools.builds.go import REQUIRED
from numaspec_tools.regenerate import COMMAND

RULES = {rule.id: rule for rule in parse_rules(REPO / "spec") if links.citations(rule)}
RELEASES = links.pinned()
TABLE = links.load()


class Missing(Exception):
    """A module version the check needs is not in the module cache."""


@cache
def _module_cache() -> Path:
    if shutil.which("go") is None:
        why = "Go is not installed, so the module cache cannot be found"
        if REQUIRED:
            pytest.fail(f"NUMASPEC_REQUIRE_KUBELET is set, but: {why}")
        pytest.skip(f"{why} (set NUMASPEC_REQUIRE_KUBELET=1 to make this a failure)")
    return links.module_cache()


def source(module: str, version: str) -> Path:
    """The module's folder at that version in the module cache; downloaded when the run
    requires Go, else :class:`Missing`."""
    path = links.cached(module, version, _module_cache())
    if path.is_dir():
        return path
    if not REQUIRED:
        raise Missing(f"kubelet {links.release_of(module, version)}"
                      + (f" (its {module}@{version})" if module != links.MODULE else ""))
    try:
        return links.download(module, version)
    except RuntimeError as error:
        pytest.fail(f"NUMASPEC_REQUIRE_KUBELET is set, but: {error}")


def _problems(rule: Rule) -> list[str]:
    rows = TABLE.get(rule.id, [])
    problems: list[str] = []
    for path, name, within, tag, line in rows:
        what = f"{path}" + (f" — {name}" if name else "") + (f" ({within})" if within else "")
        if tag is None:
            problems.append(f"{what}: no pinned release in its range has it")
            continue
        module, at, inside = links.module_of(tag, path)
        file = source(module, at) / inside
        if not file.is_file():
            problems.append(f"{what}: {tag} has no such file")
        elif name is not None:
            found = links.definitions(file.read_text(encoding="utf-8")).line(name)
            if found is None:
                problems.append(f"{what}: not defined in the file at {tag}")
            elif found != line:
                problems.append(f"{what}: defined at line {found} at {tag}, linked at {line}")
    for citation in links.citations(rule):
        span = links.span_of(rule, citation)
        if citation.within is None or citation.name is None:
            continue
        if span is None:
            problems.append(f"{citation.path} — {citation.name} ({citation.within}): outside "
                            f"the rule's Holds in")
            continue
        lacking = []
        for version in links.candidates(*span, RELEASES):
            module, at, inside = links.module_of(version, citation.path)
            file = source(module, at) / inside
            text = file.read_text(encoding="utf-8") if file.is_file() else ""
            if links.definitions(text).line(citation.name) is None:
                lacking.append(version)
        if lacking:
            problems.append(f"{citation.path} — {citation.name} ({citation.within}): not "
                            f"defined at {', '.join(sorted(lacking))}, inside its own releases")
    fresh = [links.resolve(rule, c, source, RELEASES) for c in links.citations(rule)]
    if fresh != rows:
        problems.append(f"docs/upstream-links.json is stale for {rule.id} (run {COMMAND} "
                        f"--go): it has {rows}, the sources give {fresh}")
    return problems


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_the_upstream_links_resolve_at_their_tags(rule_id: str) -> None:
    try:
        problems = _problems(RULES[rule_id])
    except Missing as missing:
        pytest.skip(f"{rule_id} cites the code of {missing}, which is not in the Go module "
                    f"cache ({_module_cache()}): `go mod download` fetches it; "
                    "NUMASPEC_REQUIRE_KUBELET=1 downloads it, and fails where it cannot")
    assert not problems, f"{rule_id}'s Upstream line: " + "; ".join(problems)


def test_the_table_has_no_rule_that_cites_nothing() -> None:
    extra = sorted(set(TABLE) - set(RULES))
    assert not extra, f"docs/upstream-links.json has rules that cite nothing: {extra}; run " \
                      f"{COMMAND} --go"
