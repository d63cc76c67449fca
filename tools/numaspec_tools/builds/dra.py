"""The adapters over the scheduler's DRA allocator (adapters/dra), built by the test run
itself, rotated as the kubelet adapters are.

``adapters/dra/releases.json`` pins one k8s.io/dynamic-resource-allocation release per
Kubernetes minor; each row says whether every run builds and judges it (``every-run``) or
which rotation group does (the kubelet adapters' groups: ``kubelet_builds.GROUP``, from the
commit tested), and the ``-variant`` values judged.  ``NUMASPEC_DRA_RELEASES`` chooses
otherwise: ``all``, ``every-run``, ``group:N`` or a list of minors (``1.33,1.37``).

Without Go, or when the build fails, the tests are skipped with the reason, unless
``NUMASPEC_REQUIRE_KUBELET=1`` (``.ci/run`` sets it): then they fail.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from numaspec_tools import REPO
from numaspec_tools.builds.go import built, run_build
from numaspec_tools.builds.kubelet import GROUP, select

ROOT = REPO / "adapters" / "dra"
BIN = ROOT / "bin"
TABLE = ROOT / "releases.json"


@dataclass(frozen=True)
class Release:
    """One row of adapters/dra/releases.json."""

    minor: str
    version: str
    run: int | str
    variants: tuple[str, ...]


RELEASES = {r["minor"]: Release(r["minor"], r["version"], r["run"], tuple(r["test_variants"]))
            for r in json.loads(TABLE.read_text(encoding="utf-8"))["releases"]}


SELECTED = select(os.environ.get("NUMASPEC_DRA_RELEASES", ""), RELEASES, GROUP,
                  variable="NUMASPEC_DRA_RELEASES", table="adapters/dra/releases.json")
#: (minor, variant) pairs the run judges, every release's (the unselected ones skip).
PAIRS = [(m, v) for m, r in RELEASES.items() for v in r.variants]


def describe_selection() -> str:
    skipped = [m for m in RELEASES if m not in SELECTED]
    return (f"DRA allocator releases: {', '.join(RELEASES[m].version for m in SELECTED)}; "
            f"not run: {', '.join(skipped) if skipped else 'none'}")


@cache
def build() -> str | None:
    """Build the selected releases' adapters; None when done, else why not."""
    return run_build(ROOT, list(SELECTED), "DRA allocator adapters")


def binary(minor: str) -> Path:
    """The built ``dra-allocator-<version>``; skips when the release is not selected, and
    skips (or, when required, fails) when it cannot be built."""
    if minor not in SELECTED:
        pytest.skip(f"DRA allocator {minor} is not in this run ({describe_selection()})")
    return built(BIN / f"dra-allocator-{RELEASES[minor].version}", build(),
                 "adapters/dra/build.sh")


def manifest(minor: str) -> str:
    """The release's expectations manifest (adapters/dra/expectations/)."""
    return str(ROOT / "expectations" / f"dra-allocator-{RELEASES[minor].version}.json")
