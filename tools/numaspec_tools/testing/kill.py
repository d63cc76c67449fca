"""Holding a property to a mutant as a fixed fact: one seed, no shrinking, the ci budget."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from hypothesis import HealthCheck, Phase, settings

from numaspec.conformance.running.profiles import with_settings

#: Whether the suite rejects a mutant must be a fixed fact, not a property of the run: one
#: seed, no shrinking (the mutant only has to be caught), and the ci profile's budget in every
#: environment.  They are applied to the property itself: a @given test keeps the settings it
#: was created under, so a profile loaded later (say, by a fixture) would not reach it.
KILL_SEED = 20261121


KILL_SETTINGS = settings(max_examples=300, phases=[Phase.explicit, Phase.generate],
                         report_multiple_bugs=False, database=None, derandomize=False,
                         deadline=None, suppress_health_check=[HealthCheck.too_slow])


def for_kill(check: Callable[..., None]) -> AbstractContextManager[Callable[..., None]]:
    """``check`` with KILL_SEED and KILL_SETTINGS for the duration; afterwards it is as it was,
    so the property's other tests run as the active profile says."""
    return with_settings(check, KILL_SETTINGS, seed=KILL_SEED)
