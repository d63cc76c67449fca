"""spec/parts.toml is the one hand-kept map of the spec (issue 54): every chapter is in it
once, the tables generated from it are current, and what is written by hand elsewhere agrees
with it (each wing's docstring here; the import floors' order in tests/meta/test_imports.py;
the site's navigation reads it, docs/build.py)."""

from __future__ import annotations

from numaspec.rules import chapter_files, parts
from numaspec_tools import REPO, parts_tables
from numaspec_tools.regenerate import COMMAND

SPEC = REPO / "spec"


def test_every_chapter_is_in_one_part() -> None:
    listed = [c.file for part in parts(SPEC) for c in part.chapters]
    assert len(listed) == len(set(listed)), "a chapter listed twice in spec/parts.toml"
    on_disk = sorted(p.relative_to(SPEC).as_posix() for p in chapter_files(SPEC))
    assert sorted(listed) == on_disk, "spec/parts.toml and spec/*/*.md differ"
    # the top of spec/ holds the map and the README, no chapter
    assert sorted(p.name for p in SPEC.glob("*.md")) == ["README.md"]


def test_each_chapter_is_in_its_part_s_folder() -> None:
    """A chapter lives in its part's folder of spec/ (parts.toml's ``spec``), and its file's
    name, which names its page on the site (``merge.html``), is unique across the parts."""
    spec_parts = parts(SPEC)
    folders = [part.spec for part in spec_parts]
    assert len(folders) == len(set(folders)), "two parts share a folder of spec/"
    assert not set(folders) & {"vectors", "schemas", "data"}
    for part in spec_parts:
        for chapter in part.chapters:
            assert chapter.file == f"{part.spec}/{chapter.name}", (part.label, chapter.file)
    names = [c.name for part in spec_parts for c in part.chapters]
    assert len(names) == len(set(names)), "two chapters share a file name (and a page)"


def test_the_generated_tables_are_current() -> None:
    stale = [str(path.relative_to(REPO)) for path, text in parts_tables.rendered().items()
             if path.read_text("utf-8") != text]
    assert stale == [], f"{', '.join(stale)} stale: run {COMMAND} --only parts"


def test_each_wing_names_its_part_and_chapters() -> None:
    assert parts_tables.wing_docstring_problems() == []


def test_the_wheel_carries_every_part_s_folder() -> None:
    """pyproject.toml's package data for ``numaspec.spec`` names each part's folder, so the
    wheel carries every chapter (tests/meta/test_wheel.py reads a rule from it)."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    data = config["tool"]["setuptools"]["package-data"]["numaspec.spec"]
    assert sorted(data) == sorted(["*.md", "parts.toml",
                                   *(f"{part.spec}/*.md" for part in parts(SPEC))])


def test_the_vectors_are_in_the_parts_folders() -> None:
    """spec/vectors/ holds its README and a folder per part that has vectors, named as the
    part's folder of spec/ (the vectors of the chapters they mostly illustrate); the wheel
    carries every such folder."""
    import tomllib

    vectors = SPEC / "vectors"
    assert sorted(p.name for p in vectors.glob("*.json")) == []
    folders = {p.name for p in vectors.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders <= {part.spec for part in parts(SPEC)}
    assert all(list((vectors / folder).glob("*.json")) for folder in folders)
    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    assert "*/*.json" in config["tool"]["setuptools"]["package-data"]["numaspec.vectors"]
