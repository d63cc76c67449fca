"""The kubelet adapters (adapters/kubelet), built by the test run itself.

The pinned releases are adapters/kubelet/releases.json (one table: build.sh, these helpers, the
tests and the READMEs read it).  A run covers only some of them (``SELECTED``): the releases
marked ``every-run``, plus one rotation group chosen from the commit being tested (``git
rev-parse HEAD`` as a number modulo the number of groups, so a given commit always runs the
same group; group 0 without git).  ``NUMASPEC_KUBELET_RELEASES`` overrides that: ``all``,
``every-run`` (no rotation group), ``group:N``, or a comma-separated list of minors
(``1.31,1.32``).  Only the selected releases are built; a kubelet test of another release is
skipped, saying why.

``build()`` runs ``adapters/kubelet/build.sh`` for the selected releases once per machine
state (go build is incremental: seconds when the module and build caches are warm; a cold
machine downloads the pinned k8s.io/kubernetes releases from the Go module proxy first).
xdist workers take turns on a file lock, so the build runs once at a time.

Without Go, or when the build fails, the kubelet tests are skipped with the reason, unless
``NUMASPEC_REQUIRE_KUBELET=1`` (``.ci/run`` sets it): then they fail, so a missing toolchain
can never pass silently.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Protocol

import pytest

from numaspec.conformance.implementations.exec_node import ExecNode
from numaspec_tools import REPO, rotation
from numaspec_tools.builds.go import built, run_build

ROOT = REPO / "adapters" / "kubelet"
BIN = ROOT / "bin"
TABLE = ROOT / "releases.json"
EVERY_RUN = "every-run"


@dataclass(frozen=True)
class Release:
    """One row of adapters/kubelet/releases.json."""

    minor: str
    version: str
    dir: str
    ops: tuple[str, ...]
    switches: tuple[str, ...]
    run: str | int  # "every-run" or a rotation group
    toolchain: str | None = None  # the Go its module needs, newer than the machine's (1.38)

    def go_environment(self) -> dict[str, str]:
        """This process's environment, with ``GOTOOLCHAIN`` set to the row's ``toolchain``
        where it names one, as adapters/kubelet/build.sh sets it for the adapters."""
        return {**os.environ, **({"GOTOOLCHAIN": self.toolchain} if self.toolchain else {})}


def load_table(path: Path = TABLE) -> tuple[int, dict[str, Release]]:
    """The rotation's number of groups and the pinned releases by minor ("1.30")."""
    data = json.loads(path.read_text(encoding="utf-8"))
    releases = {}
    for row in data["releases"]:
        release = Release(row["minor"], row["version"], row["dir"], tuple(row["ops"]),
                          tuple(row["switches"]), row["run"], row.get("toolchain"))
        releases[release.minor] = release
    return int(data["groups"]), releases


GROUPS, TABLE_RELEASES = load_table()
#: Releases the table declares uncovered on purpose: (first minor, last minor, why).
UNCOVERED = tuple((int(u["from"].split(".")[1]), int(u["to"].split(".")[1]), u["why"])
                  for u in json.loads(TABLE.read_text(encoding="utf-8")).get("uncovered", []))
#: minor -> pinned k8s.io/kubernetes version, every release in the table.
RELEASES = {minor: r.version for minor, r in TABLE_RELEASES.items()}


def commit_group(groups: int = GROUPS, cwd: Path = ROOT) -> int:
    """The rotation group of the commit being tested (group 0 without git)."""
    return rotation.commit_group(groups, cwd)


class Rotated(Protocol):
    """A pinned release with its rotation: ``every-run`` or a group number."""

    @property
    def run(self) -> int | str: ...


def select(choice: str, releases: Mapping[str, Rotated], group: int, *,
           variable: str = "NUMASPEC_KUBELET_RELEASES", table: str = TABLE.name
           ) -> tuple[str, ...]:
    """The minors a run covers for a ``variable`` value (empty: the every-run releases and
    rotation group ``group``); ``table`` is where the releases are pinned.  The DRA
    allocator's releases rotate the same way (tools/numaspec_tools/builds/dra.py)."""
    choice = choice.strip()
    if choice == "all":
        chosen = set(releases)
    elif choice == EVERY_RUN:
        chosen = {m for m, r in releases.items() if r.run == EVERY_RUN}
    elif choice.startswith("group:"):
        wanted = int(choice.removeprefix("group:"))
        chosen = {m for m, r in releases.items() if r.run in (EVERY_RUN, wanted)}
    elif choice:
        chosen = {m.strip() for m in choice.split(",") if m.strip()}
        unknown = chosen - set(releases)
        if unknown:
            raise pytest.UsageError(
                f"{variable} names releases not in {table}: "
                f"{', '.join(sorted(unknown))} (pinned: {', '.join(sorted(releases, key=_key))})")
    else:
        chosen = {m for m, r in releases.items() if r.run in (EVERY_RUN, group)}
    return tuple(sorted(chosen, key=_key))


def _key(minor: str) -> tuple[int, ...]:
    return tuple(int(p) for p in minor.split("."))


CHOICE = os.environ.get("NUMASPEC_KUBELET_RELEASES", "")
GROUP = commit_group()
SELECTED = select(CHOICE, TABLE_RELEASES, GROUP)


def describe_selection() -> str:
    """One line for the test report's header: what this run covers and why."""
    how = (f"NUMASPEC_KUBELET_RELEASES={CHOICE}" if CHOICE.strip()
           else f"every-run releases + rotation group {GROUP} of {GROUPS} (from git HEAD)")
    skipped = sorted(set(TABLE_RELEASES) - set(SELECTED), key=_key)
    return (f"kubelet releases: {', '.join(RELEASES[m] for m in SELECTED)} ({how}); "
            f"not run: {', '.join(skipped) if skipped else 'none'}")


@cache
def build() -> str | None:
    """Build the selected releases' binaries; None when done, else why not."""
    return run_build(ROOT, [TABLE_RELEASES[m].dir for m in SELECTED], "kubelet adapters")


def binary(minor: str) -> Path:
    """The built ``kubelet-adapter-<version>`` of release ``1.<minor>`` (its one binary: the
    adapter protocol, ``node`` the node probe, ``merge`` the merge oracle); skips when the
    release is not selected for this run, and skips (or, when the kubelet tests are required,
    fails) when it cannot be built."""
    if minor not in SELECTED:
        pytest.skip(f"kubelet {minor} is not in this run's releases (the report header names "
                    f"them); NUMASPEC_KUBELET_RELEASES={minor} or =all runs it")
    return built(BIN / f"kubelet-adapter-{RELEASES[minor]}", build(), "adapters/kubelet/build.sh")


@contextmanager
def node_probe(minor: str) -> Iterator[ExecNode]:
    """Release ``1.<minor>``'s node probe, running (skips or fails as :func:`node_command`),
    closed on the way out."""
    command = node_command(minor)
    probe = ExecNode(command, name=" ".join(Path(c).name for c in command))
    try:
        yield probe
    finally:
        probe.close()


def node_command(minor: str) -> list[str]:
    """The command that runs release ``1.<minor>``'s node probe (skips or fails as binary;
    skips a release whose adapter has no node probe)."""
    if "node" not in TABLE_RELEASES[minor].ops:
        pytest.skip(f"kubelet {minor}'s adapter runs the merge only (no node probe)")
    return [str(binary(minor)), "node"]


#: kubernetes#137701 reconstructed (adapters/kubelet/patches), and the release it is checked on.
PATCHES = ROOT / "patches"
PATCHED_RELEASE = "1.37"


def patched_binary(patch: Path, minor: str = PATCHED_RELEASE) -> Path:
    """``kubelet-adapter-<version>+<patch name>``: release ``minor`` with ``patch`` applied
    (``build.sh --patch``; cached), built after the release itself, as binary() skips or
    fails."""
    base = binary(minor)
    del base  # the release as released must build first (and be selected)
    problem = run_build(ROOT, ["--patch", str(patch), minor], "patched kubelet adapter")
    name = patch.name.removesuffix(".patch").removesuffix(".diff")
    return built(BIN / f"kubelet-adapter-{RELEASES[minor]}+{name}", problem,
                 "adapters/kubelet/build.sh --patch")


def go_test(test_file: Path, minor: str, patch: Path | None = None
            ) -> subprocess.CompletedProcess[str]:
    """kubelet's own ``go test`` of pkg/kubelet/cm/topologymanager at release ``minor``
    (patched when asked) with ``test_file`` dropped in (``build.sh --go-test``), under the
    build lock; skips or fails as binary() when the release is not selected or Go is
    missing."""
    binary(minor)
    args = ["--go-test", str(test_file), *(["--patch", str(patch)] if patch else []), minor]
    BIN.mkdir(exist_ok=True)
    with (BIN / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return subprocess.run(["bash", str(ROOT / "build.sh"), *args], capture_output=True,
                              text=True, timeout=3600)
