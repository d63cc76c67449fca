"""numaspec's version (reference/about.py, CONTRIBUTING.md "Versions"): the release on its own
commit, else a PEP 440 development version naming the distance from the release and the
commit; derived from git in a checkout, from PKG-INFO in an sdist, from the metadata once
installed."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaspec import about
from numaspec_tools import REPO

#: PEP 440's grammar, as far as numaspec's versions go (packaging's canonical form)
PEP440 = re.compile(r"\d+\.\d+\.\d+(\.dev\d+)?(\+[a-z0-9]+(\.[a-z0-9]+)*)?")


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=True)
    return done.stdout.strip()


def test_the_checkout_s_version_names_its_distance_from_the_release_and_its_commit() -> None:
    head = _git(REPO, "rev-parse", "HEAD")
    distance = int(_git(REPO, "rev-list", "--count", f"{about.RELEASE_COMMIT}..HEAD"))
    dirty = bool(_git(REPO, "status", "--porcelain", "--untracked-files=no"))
    major, minor, patch = about.RELEASE.split(".")
    expected = (about.RELEASE if distance == 0 and not dirty else
                f"{major}.{minor}.{int(patch) + 1}.dev{distance}+g{head[:7]}"
                + (".dirty" if dirty else ""))
    assert about.version() == expected
    import numaspec

    assert numaspec.__version__ == about.__version__ == expected
    # the release's commit is the last one of CHANGELOG.md's 0.2.0 section, before Unreleased
    assert _git(REPO, "cat-file", "-t", about.RELEASE_COMMIT) == "commit"
    opened = _git(REPO, "log", "--format=%H", "-S## Unreleased", "--reverse", "--",
                  "CHANGELOG.md").splitlines()[0]
    assert _git(REPO, "rev-list", "--count", f"{about.RELEASE_COMMIT}..{opened}") != "0"
    assert "## Unreleased" not in _git(REPO, "show", f"{about.RELEASE_COMMIT}:CHANGELOG.md")


@given(st.tuples(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30)),
       st.none() | st.integers(0, 10**6), st.text("0123456789abcdef", min_size=40, max_size=40),
       st.booleans())
def test_a_composed_version_is_pep_440_and_names_its_release(
        release: tuple[int, int, int], distance: int | None, commit: str, dirty: bool) -> None:
    name = ".".join(map(str, release))
    composed = about.compose(name, distance, commit, dirty=dirty)
    assert PEP440.fullmatch(composed), composed
    assert about.release_of(composed) == name
    if distance == 0 and not dirty:
        assert composed == name
    else:
        assert f"+g{commit[:7]}" in composed
        assert f".dev{distance or 0}+" in composed
        assert composed.endswith(".dirty") == dirty


def _about_in(root: Path) -> ModuleType:
    """reference/about.py copied into ``root`` and loaded from there."""
    (root / "reference").mkdir(parents=True)
    shutil.copy(REPO / "reference" / "about.py", root / "reference" / "about.py")
    spec = importlib.util.spec_from_file_location("about_copy", root / "reference" / "about.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_sdist_reads_the_version_its_pkg_info_names(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "PKG-INFO").write_text("Metadata-Version: 2.4\nName: numaspec\n"
                                       "Version: 0.2.1.dev7+gabcdef0\n\nREADME\nVersion: 9\n",
                                       encoding="utf-8")
    copy = _about_in(tmp_path)
    assert copy.version() == "0.2.1.dev7+gabcdef0"
    assert copy.__version__ == "0.2.1.dev7+gabcdef0"


def test_a_release_commit_is_the_last_to_change_the_release_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A release commit sets RELEASE and empties RELEASE_COMMIT: the distance is then counted
    from the last commit that changed RELEASE's line, with no tag and no hash to write."""
    copy = _about_in(tmp_path)
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    about_py = tmp_path / "reference" / "about.py"

    def commit(message: str) -> str:
        _git(tmp_path, "add", "-A")
        _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
             "--allow-empty", "-m", message)
        return _git(tmp_path, "rev-parse", "HEAD")

    _git(tmp_path, "init", "-q")
    commit("before")
    about_py.write_text(about_py.read_text("utf-8").replace('RELEASE = "0.2.0"',
                                                            'RELEASE = "0.3.0"'), "utf-8")
    released = commit("release 0.3.0")
    monkeypatch.setattr(copy, "RELEASE", "0.3.0")
    monkeypatch.setattr(copy, "RELEASE_COMMIT", "")
    assert copy.from_git(tmp_path) == "0.3.0"
    (tmp_path / "CHANGELOG.md").write_text("## Unreleased\n", encoding="utf-8")
    assert copy.from_git(tmp_path) == "0.3.0"  # an untracked file changes nothing
    commit("after")
    head = commit("after that")
    assert copy.from_git(tmp_path) == f"0.3.1.dev2+g{head[:7]}"
    (tmp_path / "CHANGELOG.md").write_text("## Unreleased\n\n- more\n", encoding="utf-8")
    assert copy.from_git(tmp_path) == f"0.3.1.dev2+g{head[:7]}.dirty"
    _git(tmp_path, "checkout", "-q", "--", "CHANGELOG.md")
    _git(tmp_path, "checkout", "-q", released)
    assert copy.from_git(tmp_path) == "0.3.0"
    about_py.write_text(about_py.read_text("utf-8") + "# changed\n", "utf-8")
    assert copy.from_git(tmp_path) == f"0.3.1.dev0+g{released[:7]}.dirty"


def test_outside_a_checkout_git_is_not_asked(tmp_path: Path) -> None:
    """An installed wheel's about.py is in site-packages, which may sit inside some checkout
    (a venv in the project's folder): only a .git beside reference/ counts."""
    (tmp_path / ".git").mkdir()  # a checkout above: never looked at
    inner = tmp_path / "venv" / "site-packages"
    inner.mkdir(parents=True)
    assert about.from_git(inner) is None
