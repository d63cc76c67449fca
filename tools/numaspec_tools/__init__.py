"""numaspec's own toolbox, over a checkout (tools/pyproject.toml): what regenerates the
generated files (``numaspec-dev regenerate``), builds the Go adapters the test run uses
(:mod:`numaspec_tools.builds`), the mutants the tests hold the suite to
(:mod:`numaspec_tools.mutants`) and the helpers several test modules share
(:mod:`numaspec_tools.testing`).

It is installed editable from the checkout it maintains, so :data:`REPO` is that checkout;
installed any other way it refuses to load, naming the fix."""

from __future__ import annotations

from pathlib import Path

#: The checkout these tools maintain (tools/numaspec_tools/ is two levels below it).
REPO = Path(__file__).resolve().parents[2]
#: The test data (sysfs trees, kubelet state files, configurations, recorded tables).
FIXTURES = REPO / "tests" / "fixtures"
#: The project's own small implementations behind the adapter protocol (numaspec_tools.adapters:
#: a partial one, a seeded peer, a misbehaving one, a scheduler), run as ``exec:`` adapters.
ADAPTERS = Path(__file__).resolve().parent / "adapters"

if not ((REPO / "spec").is_dir() and (REPO / "tools" / "pyproject.toml").is_file()):
    raise ImportError(
        f"numaspec_tools works on a numaspec checkout and must be installed editable from it "
        f"(pip install -e tools); {Path(__file__).parent} is not inside one")

__all__ = ["ADAPTERS", "FIXTURES", "REPO"]
