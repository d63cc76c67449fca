"""Each finding about upstream code, run where its maintainers would run it (RUN-23): its Go test
in a copy of the module at the pinned version fails, printing the finding's line; with
numaspec's fix it passes; another change the finding names does what the finding says."""

from __future__ import annotations

import pytest

from numaspec.conformance.cases import upstream_findings as uf
from numaspec_tools.builds import findings as runner
from numaspec_tools.builds.go import built
from numaspec_tools.rotation import rotated

FOUND = uf.findings()
RUNS = [(found, change) for found in FOUND for change in (None, *found.changes)]
#: A third of the findings a commit (each with its changes): every one over three commits.
GROUPS = 3


@pytest.mark.parametrize(("found", "change"),
                         rotated(RUNS, GROUPS, "the findings' Go tests",
                                 key=lambda run: FOUND.index(run[0])),
                         ids=[f"{f.id}-{c.name if c else 'pinned'}" for f, c in RUNS])
def test_the_finding_s_test_fails_at_the_pinned_release_and_passes_with_its_fix(
        found: uf.Finding, change: uf.Change | None) -> None:
    try:
        outcome = runner.check(found, change)
    except runner.Unavailable as exc:
        built(runner.ROOT, str(exc), "numaspec-dev findings check")
        raise
    if change is None or not change.test_passes:
        assert outcome.result == "failed", outcome.output[-3000:]
        assert found.fails_with in outcome.output, outcome.output[-3000:]
    else:
        assert outcome.result == "passed", outcome.output[-3000:]
