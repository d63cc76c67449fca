"""pytest plugin of the conformance suite (registered by the ``pytest11`` entry point).

It stays inert unless the suite module ``numaspec.conformance.suite`` is collected: it only
adds the ``--numaspec-impl`` and ``--numaspec-profile`` options, the ``numaspec_impl``
fixture and, when suite tests ran, a per-rule summary at the end of the run.
Disable it with ``-p no:numaspec``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

__all__ = ["numaspec_impl", "pytest_addoption", "pytest_configure"]

_RESULTS: dict[str, list[tuple[str, str]]] = defaultdict(list)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("numaspec", "numaspec conformance suite")
    group.addoption("--numaspec-impl",
                    default="numaspec.conformance.implementations.adapter:reference",
                    help="module:object of the implementation under test")
    group.addoption("--numaspec-profile", default=None,
                    help="Hypothesis profile: quick, dev, ci, nightly or triage")


def pytest_configure(config: pytest.Config) -> None:
    """Load ``--numaspec-profile`` before collection: a @given test keeps the Hypothesis
    settings in force when its module is imported, so a profile loaded later (in a fixture)
    would never reach the properties.  Without the option the session's own profile stays."""
    profile = config.getoption("--numaspec-profile")
    if profile is not None:
        from numaspec.conformance.running.profiles import load_profile

        load_profile(profile)


@pytest.fixture(scope="session")
def numaspec_impl(request: pytest.FixtureRequest) -> Any:
    from numaspec.conformance.implementations.adapter import load_implementation
    from numaspec.errors import AdapterError

    try:
        return load_implementation(request.config.getoption("--numaspec-impl"))
    except AdapterError as exc:
        pytest.exit(f"numaspec: {exc}", returncode=4)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    rules = dict(report.user_properties).get("numaspec_rules")
    if rules is None:
        return
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        for rule in str(rules).split():
            _RESULTS[rule].append((report.nodeid, report.outcome))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _RESULTS:
        return
    from numaspec.conformance.running.summary import rule_table

    terminalreporter.section("numaspec: conformance per rule")
    for line in rule_table(_RESULTS):
        terminalreporter.write_line(line)
