"""Shared set-up: the Hypothesis profile (dev locally, ci under CI; see
numaspec.conformance.running.profiles), and a local Ray instance for the modules that use
Ray (``ray_instance``)."""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from numaspec.conformance.running.profiles import load_profile
from numaspec_tools.builds import dra as dra_builds
from numaspec_tools.builds import go as go_builds
from numaspec_tools.builds import kubelet as kubelet_builds

load_profile()


_CROSSHAIR: dict[str, int] = {}


#: The longest tests (a minute or more each in CI: the whole suite against an adapter), run
#: first.  pytest-xdist's worksteal hands each worker a contiguous share in collection order
#: and steals from the end, so a long test collected late can leave one core idle for its
#: whole length at the end of the run.
LONG_FIRST = (
    "tests/upstream/peers/test_peer_adapters.py::test_the_suite_passes_against_the_peer",
    "tests/suite/test_runner_reference.py::test_numaspec_serve_passes_the_whole_suite_in_strict_mode",
    "tests/upstream/kubelet/test_kubelet_adapter.py::test_the_suite_passes_against_kubelet",
    "tests/upstream/kubelet/test_node_differential.py::test_reference_agrees_with_kubelet_node",
)

TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/upstream/ (the Go-backed integration tests) is marked ``go``,
    every test under tests/suite/power/ (the suite's power: its mutants, seeded peers and the
    sampled mutation campaign) ``slow``;
    LONG_FIRST's tests move to the front, in that order; the rest keep theirs."""
    for item in items:
        if item.path.is_relative_to(TESTS / "upstream"):
            item.add_marker(pytest.mark.go)
        if item.path.is_relative_to(TESTS / "suite" / "power"):
            item.add_marker(pytest.mark.slow)

    def rank(item: pytest.Item) -> int:
        name = item.nodeid.split("[")[0]
        return next((i for i, long in enumerate(LONG_FIRST) if name.endswith(long)),
                    len(LONG_FIRST))

    items.sort(key=rank)  # stable: ties keep the collection order


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    go_builds.marked_go = item.get_closest_marker("go") is not None


def pytest_runtest_teardown() -> None:
    go_builds.marked_go = None


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    verdicts = dict(report.user_properties).get("crosshair_verdicts")
    if isinstance(verdicts, dict):
        _CROSSHAIR.update(verdicts)


def pytest_report_header() -> list[str]:
    """Which pinned kubelet and DRA allocator releases this run covers
    (tools/numaspec_tools/builds/kubelet.py and tools/numaspec_tools/builds/dra.py SELECTED)."""

    return [kubelet_builds.describe_selection(), dra_builds.describe_selection()]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _CROSSHAIR:
        terminalreporter.write_line(
            "CrossHair verdicts: " + ", ".join(
                f"{count} {verdict.rstrip('.').lower()}"
                for verdict, count in sorted(_CROSSHAIR.items())))


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[None]:
    """A local Ray instance of two CPUs for one test module (the Ray tests of
    tests/suite/test_sharding.py and tests/suite/test_checking.py), skipped without the ``ray``
    extra."""
    if importlib.util.find_spec("ray") is None:
        pytest.skip("ray is not installed (pip install 'numaspec[ray]')")
    ray = importlib.import_module("ray")  # not `import ray`: mypy runs without the extra too
    # A short directory of its own (Ray's socket paths must stay under 108 bytes), removed
    # after: Ray's session files would otherwise stay in /tmp/ray.
    temp = tempfile.mkdtemp(prefix="numaspec-ray-")
    started = time.monotonic()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=temp)
    print(f"ray.init: {time.monotonic() - started:.1f} s")
    try:
        yield
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(autouse=True)
def _no_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Text answers are as wide as ``COLUMNS`` (OPS-12): a test reads them at the default width
    whatever terminal ran pytest; a test of the width sets it itself."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
