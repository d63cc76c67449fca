"""tools/numaspec_tools/regenerate.py, the one command that regenerates every generated file: it
finds a
stale file and, with --check, leaves it as it was; the quick steps find nothing stale on a
clean checkout; and every test that fails on a stale generated file names it."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from numaspec_tools import REPO, regenerate


def test_check_finds_a_stale_file_and_leaves_it(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "table.md"
    table.write_text("old\n", encoding="utf-8")

    def write() -> None:
        table.write_text("new\n", encoding="utf-8")
        (tmp_path / "extra.md").write_text("made\n", encoding="utf-8")

    monkeypatch.setattr(regenerate, "REPO", tmp_path)
    monkeypatch.setattr(regenerate, "STEPS", (
        regenerate.Step("table", "a table", ("*.md",), False, False, write),))
    assert regenerate.main(["--check"]) == 1
    out = capsys.readouterr().out
    assert "stale: table.md" in out
    assert "stale: extra.md" in out
    assert f"run {regenerate.COMMAND}" in out
    assert table.read_text(encoding="utf-8") == "old\n"
    assert not (tmp_path / "extra.md").exists()
    assert regenerate.main([]) == 0  # without --check it writes
    assert table.read_text(encoding="utf-8") == "new\n"
    assert regenerate.main(["--check"]) == 0


def test_the_steps_chosen() -> None:
    def names(*argv: str) -> list[str]:
        args = argparse.Namespace(go="--go" in argv, all="--all" in argv, only=None,
                                  check=False)
        return [s.name for s in regenerate.chosen(args)]

    assert names() == ["parts", "checked-by", "coverage", "operator-state", "transcripts"]
    assert names("--go") == [*names(), "kube-fields", "upstream-links", "quantity-table",
                             "checkpoints", "dracpu"]
    assert names("--all") == [s.name for s in regenerate.STEPS]
    with pytest.raises(SystemExit, match="no step nope"):
        regenerate.main(["--only", "nope"])


def test_the_quick_steps_find_nothing_stale(capsys: pytest.CaptureFixture[str]) -> None:
    assert regenerate.main(["--check"]) == 0, capsys.readouterr().out


#: The tests that compare a committed file with what its generator writes.
STALENESS_TESTS = ("test_spec.py", "test_kubelet_coverage.py", "test_operator.py",
                   "test_regenerate.py", "test_dracpu.py")


@pytest.mark.parametrize("name", STALENESS_TESTS)
def test_every_staleness_test_names_the_command(name: str) -> None:
    (path,) = (REPO / "tests").rglob(name)
    text = path.read_text(encoding="utf-8")
    assert regenerate.COMMAND in text or "from numaspec_tools.regenerate import COMMAND" in text
    # and no other way to regenerate is given as the fix
    assert not re.search(r"fix: python -m numaspec\.conformance\.speccheck", text)


def test_the_stored_comparison_is_of_this_suite() -> None:
    """RUN-16: adapters/comparison/ is cited as the comparison of kubelet and its peers, so it
    must be the suite of this checkout: every column ran the suite version the checkout has
    (any change to the vectors or the properties changes it, RUN-6)."""
    import json

    from numaspec.conformance.running.runner import suite_version

    matrix = json.loads((REPO / "adapters" / "comparison" / "matrix.json").read_text("utf-8"))
    current = suite_version()
    stale = sorted({i["label"] for i in matrix["implementations"]
                    if i["suite_version"] != current})
    assert not stale, (f"adapters/comparison/ was made with another suite than this checkout's "
                       f"{current} ({', '.join(stale)}): run {regenerate.COMMAND} --only "
                       "comparison")
