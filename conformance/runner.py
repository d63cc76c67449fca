"""``numaspec conformance``: the suite under pytest, with the per-rule summary."""

from __future__ import annotations

import pytest

from numaspec.conformance.adapter import load_implementation
from numaspec.conformance.profiles import active_profile
from numaspec.errors import NumaspecError

__all__ = ["run_conformance"]


def run_conformance(*, impl: str, profile: str | None = None, keyword: str | None = None,
                    junitxml: str | None = None) -> int:
    """Run every property and vector against ``impl``; the exit status is pytest's."""
    try:
        chosen = active_profile(profile)
        loaded = load_implementation(impl)  # fail early, with a clear message
    except (NumaspecError, ValueError) as exc:
        print(f"numaspec conformance: {exc}")
        return 4
    print(f"numaspec conformance: {loaded.name} ({impl}), Hypothesis profile {chosen}")
    args = ["--pyargs", "numaspec.conformance.suite", f"--numaspec-impl={impl}",
            f"--numaspec-profile={chosen}", "-q", "-p", "no:cacheprovider",
            "-o", "addopts=", "-o", "testpaths=", "--rootdir", "."]
    if keyword:
        args += ["-k", keyword]
    if junitxml:
        args += ["--junitxml", junitxml]
    return int(pytest.main(args))
