"""The adapters over peer implementations (adapters/peers), built by the test run itself.

One Go module and one binary per peer: ``adapters/peers/<peer>`` pulls the peer as a Go module
dependency at the version its go.mod pins, and ``adapters/peers/build.sh`` builds
``adapters/peers/bin/<peer>-adapter-<version>``.  ``build()`` runs it once per run (go build is
incremental: seconds with warm caches; a cold machine downloads the peers' modules from the Go
module proxy first); xdist workers take turns on a file lock.  A run builds one of the three
merge peers, chosen by the commit (:func:`select`), with scheduler-plugins and dra-driver-cpu;
``NUMASPEC_PEERS`` chooses otherwise (``all``, or a comma-separated list of names).

Without Go, or when the build fails, the peer tests are skipped with the reason, unless
``NUMASPEC_REQUIRE_KUBELET=1`` (``.ci/run`` sets it): then they fail, so a missing toolchain
can never pass silently.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from numaspec_tools import REPO
from numaspec_tools.builds.go import built, run_build
from numaspec_tools.rotation import this_commits

ROOT = REPO / "adapters" / "peers"
BIN = ROOT / "bin"

#: peer -> the Go module its adapter module pins (build.sh has the same table)
MODULES = {
    "koordinator": "github.com/koordinator-sh/koordinator",
    "katalyst": "github.com/kubewharf/katalyst-core",
    "volcano": "volcano.sh/volcano",
}


#: The scheduler-side peer (the predict operation, spec/node/predict.md): its module, and the one
#: pinned tag the test run builds and runs (adapters/peers/scheduler-plugins/<tag>/); its
#: other tags are built by ``build.sh scheduler-plugins`` and compared by the matrix
#: (adapters/comparison/README.md).
PREDICT_MODULES = {"scheduler-plugins": "sigs.k8s.io/scheduler-plugins"}
PREDICT_TAG = {"scheduler-plugins": "v0.33.5"}

#: The peer of the CPU Manager's allocator (the cpus operation, spec/node/cpu.md CPU-21):
#: kubernetes-sigs/dra-driver-cpu, built from a copy of its pinned module (build.sh).
CPUS_MODULES = {"dra-driver-cpu": "github.com/kubernetes-sigs/dra-driver-cpu"}


def pinned(peer: str) -> str:
    """The version of the peer's module that ``adapters/peers/<peer>/go.mod`` requires
    (``v1.7.0``)."""
    module = {**MODULES, **PREDICT_MODULES, **CPUS_MODULES}[peer]
    where = f"{peer}/{PREDICT_TAG[peer]}" if peer in PREDICT_TAG else peer
    for line in (ROOT / where / "go.mod").read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0] == module and fields[1].startswith("v"):
            return fields[1]
    raise AssertionError(f"adapters/peers/{where}/go.mod does not require {module}")


#: peer -> pinned version, every peer
VERSIONS = {peer: pinned(peer) for peer in (*MODULES, *PREDICT_MODULES, *CPUS_MODULES)}


#: The merge peers rotate by commit, one a run (a third of them: numaspec_tools.rotation).
MERGE_PEER_GROUPS = 3


def select(choice: str) -> tuple[str, ...]:
    """The peers a ``NUMASPEC_PEERS`` value selects: ``all``, or a comma-separated list of
    names; empty: scheduler-plugins, dra-driver-cpu and one of the three merge peers, chosen
    by the commit (numaspec_tools.rotation.this_commits; all three under
    ``NUMASPEC_ROTATION=all``).  Each peer is pinned, so what a commit can change is
    numaspec's side, which any one merge peer's run judges; every merge peer is built and run
    over three commits."""
    every = [*MODULES, *PREDICT_MODULES, *CPUS_MODULES]
    if choice.strip() == "all":
        return tuple(every)
    chosen = [p.strip() for p in choice.split(",") if p.strip()] or [
        *this_commits(sorted(MODULES), MERGE_PEER_GROUPS), *PREDICT_MODULES, *CPUS_MODULES]
    unknown = sorted(set(chosen) - set(every))
    if unknown:
        raise pytest.UsageError(f"NUMASPEC_PEERS names unknown peers: {', '.join(unknown)} "
                                f"(known: {', '.join(every)})")
    return tuple(p for p in every if p in chosen)


CHOICE = os.environ.get("NUMASPEC_PEERS", "")
SELECTED = select(CHOICE)


@cache
def build() -> str | None:
    """Build the selected peers' adapters; None when done, else why not."""
    args = [f"{p}/{PREDICT_TAG[p]}" if p in PREDICT_TAG else p for p in SELECTED]
    return run_build(ROOT, args, "peer adapters")


def binary(peer: str) -> Path:
    """The built ``<peer>-adapter-<version>``; skips when the peer is not selected, and skips
    (or, when required, fails) when it cannot be built."""
    if peer not in SELECTED:
        why = (f"NUMASPEC_PEERS={CHOICE}" if CHOICE.strip() else
               f"the merge peers rotate by commit, one of {MERGE_PEER_GROUPS} a run")
        pytest.skip(f"{peer} is not in this run's peers ({', '.join(SELECTED)}: {why}); "
                    f"NUMASPEC_PEERS={peer}, =all or NUMASPEC_ROTATION=all runs it")
    return built(BIN / f"{peer}-adapter-{VERSIONS[peer]}", build(), "adapters/peers/build.sh")


def start_answer(adapter: Path) -> dict[str, Any]:
    """The ``implementation`` object a built adapter's ``start`` answer gives (strictly
    checked against the protocol's schema)."""
    from numaspec.conformance.implementations.connection import connect

    connection = connect(f"exec:{adapter}", timeout=60.0, strict=True)
    try:
        return dict(connection.implementation.raw)
    finally:
        connection.close()


def patched_binary(peer: str, patch: Path) -> Path:
    """The peer's adapter over its pinned module with ``patch`` applied (``build.sh --patch``:
    a finding's fix, or another change it names): ``<peer>-adapter-<version>+<folder>-<name>``.
    Skips as :func:`binary` does when the peer is not selected or cannot be built."""
    binary(peer)
    where = f"{peer}/{PREDICT_TAG[peer]}" if peer in PREDICT_TAG else peer
    problem = run_build(ROOT, ["--patch", str(patch), where], f"{peer} adapter with {patch.name}")
    name = f"{patch.parent.name}-{patch.name.removesuffix('.patch').removesuffix('.diff')}"
    return built(BIN / f"{peer}-adapter-{VERSIONS[peer]}+{name}", problem,
                 "adapters/peers/build.sh --patch")


def manifest(peer: str) -> Path:
    """The peer's expectations manifest at its pinned version."""
    return ROOT / "expectations" / f"{peer}-{VERSIONS[peer]}.json"
