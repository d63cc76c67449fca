"""The findings about upstream code (RUN-23): every finding numaspec has made is placed in
adapters/findings/triage.toml, every exported one is a well-formed folder, and ``numaspec
findings`` lists, shows and exports them.  (Running their Go tests: tests/upstream/findings.)"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from numaspec.conformance.cases import upstream_findings as uf
from numaspec.errors import InvalidFieldError
from numaspec_tools import REPO

CLI = [sys.executable, "-m", "numaspec.conformance.cli"]
FINDINGS_MD = REPO / "spec" / "conformance" / "findings.md"
PEERS = REPO / "adapters" / "peers"


def _made() -> dict[str, str]:
    """Every finding numaspec has made, by the ID triage.toml uses, and where it is told."""
    made = {}
    for number in re.findall(r"^(\d+)\. \*\*", FINDINGS_MD.read_text(encoding="utf-8"),
                             flags=re.M):
        made[f"FINDING-{number}"] = f"spec/conformance/findings.md #{number}"
    for page in sorted(PEERS.glob("*/FINDINGS.md")):
        for ident in re.findall(r"^\| ([A-Z]+-\d+) \|", page.read_text(encoding="utf-8"),
                                flags=re.M):
            made[ident] = str(page.relative_to(REPO))
    return made


def test_every_finding_is_placed_once() -> None:
    rows = uf.triage()
    ids = [row.id for row in rows]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    made = _made()
    assert len(made) > 70
    assert sorted(set(made) - set(ids)) == [], "findings triage.toml does not place"
    assert sorted(set(ids) - set(made)) == [], "triage.toml places findings nobody made"


def test_an_exported_finding_has_a_folder_and_only_it_has_one() -> None:
    exported = {row.id for row in uf.triage() if row.kind == "exported"}
    folders = {f.id for f in uf.findings()}
    assert exported == folders


def test_every_placement_but_exported_says_why() -> None:
    for row in uf.triage():
        if row.kind != "exported":
            assert len(row.why) > 20, row


def test_an_outside_finding_is_reported_in_words() -> None:
    """The findings about code numaspec cannot pin (FINDING-39, 40, 41): a page ready to file
    without a Go test, saying why there is none, with the numaspec command that shows it."""
    outside = [row for row in uf.triage() if row.kind == "outside"]
    assert outside
    assert outside == list(uf.in_words())
    for row in outside:
        shown = uf.show(row.id)
        assert shown.startswith(f"# {row.id}: {row.title}\n")
        assert "No Go test: " + row.why.strip() in shown
        assert f"*Checked {row.checked}.*" in shown
        assert "## The fix" in shown
        assert "numaspec replay" in shown
        assert row.links or "not reported" in row.status.lower()
    # any other finding placed is named with where and why, never 'no such finding'
    behaviour = next(row for row in uf.triage() if row.kind == "behaviour")
    assert uf.show(behaviour.id.lower()).startswith(f"{behaviour.id} is placed as behaviour")


def _triage_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    (tmp_path / "triage.toml").write_text(text, encoding="utf-8")
    monkeypatch.setattr(uf, "_root", lambda: tmp_path)
    uf.triage.cache_clear()


@pytest.mark.parametrize(("row", "message"), [
    ('kind = "outside"\nwhy = "a driver not served"\n',
     "an outside finding is reported in words: it needs 'title'"),
    ('kind = "fixed"\nwhy = "fixed in 1.36"\ntitle = "t"\n',
     "only an outside finding has a report here"),
    ('kind = "fixed"\nwhy = "fixed in 1.36"\nsoruce = "x"\n', "unknown key 'soruce'"),
])
def test_a_malformed_triage_row_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         row: str, message: str) -> None:
    _triage_with(tmp_path, monkeypatch, '[[finding]]\nid = "X-1"\nsource = "here"\n' + row)
    try:
        with pytest.raises(InvalidFieldError, match=re.escape(message)) as caught:
            uf.triage()
        assert caught.value.where.startswith("adapters/findings/triage.toml finding[0]")
    finally:
        uf.triage.cache_clear()


@pytest.mark.parametrize("found", uf.findings(), ids=lambda f: f.id)
def test_a_folder_is_well_formed(found: uf.Finding) -> None:
    test = found.file(found.test_file)
    package = found.package.rsplit("/", 1)[-1]
    assert re.search(rf"^package {re.escape(package)}(_test)?$", test, flags=re.M), (
        f"{found.test_file} is not in package {package}")
    assert re.search(rf"^func {found.test}\(t \*testing\.T\)", test, flags=re.M)
    header = test.split("\nfunc ", 1)[0]  # the comments above the first function
    assert "numaspec" in header, "the header names numaspec and the finding"
    assert found.id in header
    for change in found.changes:
        patch = found.file(change.patch)
        assert re.search(r"^\+\+\+ b/", patch, flags=re.M), f"{change.patch}: not a git diff"
        assert "zz_numaspec" not in patch, f"{change.patch} must not carry the test"
    assert found.links or "not reported" in found.status.lower()


def test_a_malformed_folder_is_one_error_naming_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "X-1"
    folder.mkdir()
    (folder / "finding.toml").write_text('id = "X-1"\ntitel = "typo"\n', encoding="utf-8")
    with pytest.raises(InvalidFieldError) as caught:
        uf._load(folder)
    assert "unknown key 'titel'" in str(caught.value)
    assert caught.value.where == "adapters/findings/X-1/finding.toml"


def test_a_misspelled_key_of_a_section_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "X-1"
    folder.mkdir()
    (folder / "finding.toml").write_text(
        'id = "X-1"\nfamily = "kubelet"\ntest = "TestX"\n[upstream]\nchecked = "2026-11-30"\n'
        '[report]\nnumaspce = "numaspec replay ..."\n', encoding="utf-8")
    with pytest.raises(InvalidFieldError) as caught:
        uf._load(folder)
    assert "unknown key 'numaspce'" in str(caught.value)
    assert caught.value.where == "adapters/findings/X-1/finding.toml [report]"


def test_an_unknown_finding_is_named() -> None:
    with pytest.raises(InvalidFieldError, match="no exported finding 'NOPE-1'"):
        uf.finding("NOPE-1")
    done = subprocess.run([*CLI, "findings", "export", "--go", "NOPE-1"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode != 0
    assert "NOPE-1" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_command_lists_shows_and_exports(tmp_path: Path) -> None:
    listed = subprocess.run([*CLI, "findings", "list"], capture_output=True, text=True,
                            timeout=60, check=True).stdout
    found = uf.findings()
    for f in found:
        assert re.search(rf"^{f.id} +{re.escape(f.module)}@{re.escape(f.version)} ", listed,
                         flags=re.M), f.id
    assert "triage.toml places" in listed
    first = found[0]
    shown = subprocess.run([*CLI, "findings", "show", first.id.lower()], capture_output=True,
                           text=True, timeout=60, check=True).stdout
    assert shown.startswith(f"# {first.id}: {first.title}")
    assert f"Checked {first.checked}" in shown
    done = subprocess.run([*CLI, "findings", "export", "--go", first.family, "--out",
                           str(tmp_path)], capture_output=True, text=True, timeout=60, check=True)
    family = [f for f in found if f.family == first.family]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f.test_file for f in family)
    assert first.run_line() in done.stdout
    subprocess.run([*CLI, "findings", "export", "--fix", first.id, "--out", str(tmp_path)],
                   check=True, capture_output=True, timeout=60)
    assert (tmp_path / f"{first.id.lower()}-fix.patch").read_text(encoding="utf-8") == \
        first.file(first.fix.patch)


def test_a_full_disk_is_said_so_not_reported_as_a_broken_test(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stop 70's CI: the go command ran out of disk and four findings read 'broken'."""
    from numaspec_tools.builds import findings as runner

    module = tmp_path / "module"
    (module / uf.finding("KOORD-4").package).mkdir(parents=True)
    real_run = subprocess.run

    def go(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        if argv[:2] == ["go", "test"]:
            return subprocess.CompletedProcess(argv, 1, "", "write /tmp/go-build1/b1/vet.cfg: "
                                               "no space left on device\n")
        return real_run(argv, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(runner, "_download", lambda *_: module)
    monkeypatch.setattr(runner, "ROOT", tmp_path)
    monkeypatch.setattr(shutil, "which", lambda *_: "/usr/bin/go")
    monkeypatch.setattr(subprocess, "run", go)
    with pytest.raises(runner.DiskFull, match=r"KOORD-4 with the pinned release: the go command "
                       r"ran out of disk \(TMPDIR .*GiB free"):
        runner.check(uf.finding("KOORD-4"))
    assert list((tmp_path / "build").iterdir()) == []
