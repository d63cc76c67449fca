"""What a test run rotates by commit, so that one run stays inside its budget and the runs
over consecutive commits cover the whole (README, "What CI runs"):

* which pinned kubelet and DRA allocator releases a run builds and runs beyond the every-run
  ones (:func:`commit_group`, numaspec_tools.builds), and which one of the three merge peers
  (:func:`this_commits`, numaspec_tools.builds.peers);
* the examples the suite draws against a kubelet release: the ``quick`` profile's 50 per
  property (not ``ci``'s derandomized 300, the same every run), from the run seed
  :func:`commit_seed` (RUN-21), and the in-run differential's 5,000 random merges from the
  same seed (RUN-22); and the node differential's 50 sessions a release; so every commit
  draws new ones.  (The merge peers, scheduler-plugins, dra-driver-cpu and the DRA allocator
  keep ``ci``: their manifests pin divergences by input class, which a new seed could meet in
  a new form on a commit that changed nothing of theirs.)

Both come from the commit being tested, never from the clock: a commit always runs the same
releases and draws the same examples, and a failure names the seed that replays it
(``numaspec conformance --seed N --profile quick``).  ``NUMASPEC_ROTATION_SEED`` overrides the
seed (to replay a CI run elsewhere)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from numaspec_tools import REPO

T = TypeVar("T")

#: The profile the suite runs with against upstream code (50 examples a property).
ROTATING_PROFILE = "quick"
#: Examples a run draws where a test drives upstream code with Hypothesis itself (the node
#: differential's sessions), from :func:`commit_seed`.
ROTATING_EXAMPLES = 50


def commit_hash(cwd: Path = REPO) -> str | None:
    """``git rev-parse HEAD`` of the checkout, None without git."""
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True,
                              text=True, timeout=30, check=True).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def commit_group(groups: int, cwd: Path = REPO) -> int:
    """The rotation group of the commit being tested (group 0 without git)."""
    head = commit_hash(cwd)
    try:
        return int(head, 16) % groups if head else 0
    except ValueError:
        return 0


def commit_seed(cwd: Path = REPO) -> int:
    """The run seed of the commit being tested: its hash's first 8 hex digits (0 without
    git), or ``NUMASPEC_ROTATION_SEED``."""
    given = os.environ.get("NUMASPEC_ROTATION_SEED", "").strip()
    if given:
        return int(given)
    head = commit_hash(cwd)
    try:
        return int(head[:8], 16) if head else 0
    except ValueError:
        return 0


def runs_all() -> bool:
    """``NUMASPEC_ROTATION=all``: every rotated item runs on this commit."""
    return os.environ.get("NUMASPEC_ROTATION", "").strip() == "all"


def _group(groups: int) -> int | None:
    """The commit's group of ``groups`` (:func:`commit_seed` modulo ``groups``); None under
    ``NUMASPEC_ROTATION=all``."""
    return None if runs_all() else commit_seed() % groups


def this_commits(items: Sequence[T], groups: int) -> list[T]:
    """The share of ``items`` this commit runs (as :func:`rotated` chooses it: item ``i``
    when ``i % groups`` is the commit's group), or all of them under
    ``NUMASPEC_ROTATION=all``."""
    group = _group(groups)
    return [item for index, item in enumerate(items)
            if group is None or index % groups == group]


def rotated(items: Sequence[T], groups: int, what: str,
            key: Callable[[T], int] | None = None) -> list[Any]:
    """``items`` as pytest parameters, a share of them run on this commit: item ``i`` runs
    when ``i % groups`` is the commit's group (:func:`commit_seed` modulo ``groups``), the rest
    are skipped saying which commits run them; ``NUMASPEC_ROTATION=all`` runs every item.
    Over the commits of every group each item runs; a commit always runs the same share.
    ``key`` numbers the items instead of their position (items of one number run together)."""
    import pytest

    group = _group(groups)
    if group is None:
        return list(items)
    return [item if index % groups == group else pytest.param(
        *(item if isinstance(item, tuple) else (item,)), marks=pytest.mark.skip(
        reason=f"{what} rotate by commit: this one runs on commits of group {index % groups} "
               f"of {groups} (this is {group}); NUMASPEC_ROTATION=all runs every one"))
            for index, item in ((key(item) if key else i, item) for i, item in enumerate(items))]
