"""Hypothesis settings profiles: ``quick``, ``dev``, ``ci``, ``nightly`` and ``triage``.

* ``dev``: local runs, randomized: a conformance run draws from its seed (RUN-21),
  printed, and ``--seed`` draws the same examples again.
* ``quick``: ``dev`` with half its examples (50 a property): a first look, and the test
  command's runs against upstream code, whose seed is the commit's, so that successive
  commits draw new examples (tools/numaspec_tools/rotation.py).
* ``ci``: derandomized (the same examples every run), no database, and the reproduction
  blob printed on failure, so a red CI run is reproducible anywhere.
* ``nightly``: many more examples, randomized, for hunting.
* ``triage``: ``ci``'s examples and seed, but no shrinking: whether an implementation fails,
  quickly (each property stops at its first counterexample, unshrunk).  The mutants' kill
  tests use it.

No profile runs Hypothesis's ``explain`` phase: once a property fails, that phase traces every
line of every later call (all of the shrinking) to report which lines only failing examples
ran, which a report never shows; under it, shrinking a failed P-MERGE-LARGE took minutes.

The active profile is ``$NUMASPEC_HYPOTHESIS_PROFILE``, else ``ci`` when ``$CI`` is set,
else ``dev``.

A ``@given`` test keeps the settings in force when it was *created* (its module imported),
not those in force when it runs.  The runner therefore runs each property under the profile
it loaded (:func:`run_as_loaded`), so ``run_conformance(RunConfig(profile="ci"))`` in a
process whose default is ``dev`` (pytest's, say) runs ``ci``'s examples, not ``dev``'s.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["DERANDOMIZED", "PROFILES", "active_profile", "load_profile", "register_profiles",
           "run_as_loaded", "with_settings"]

PROFILES = ("quick", "dev", "ci", "nightly", "triage")
#: The profiles whose properties draw the same examples on every run (RUN-21).
DERANDOMIZED = ("ci", "triage")


def register_profiles() -> None:
    """Register the profiles with Hypothesis (imported late: the runner must not import
    Hypothesis before pytest starts, or pytest cannot rewrite its asserts)."""
    from hypothesis import HealthCheck, Phase, settings

    common = {"deadline": None, "suppress_health_check": (HealthCheck.too_slow,),
              "phases": [p for p in Phase if p is not Phase.explain]}
    settings.register_profile("dev", max_examples=100, **common)  # type: ignore[arg-type]
    settings.register_profile("quick", max_examples=50, **common)  # type: ignore[arg-type]
    settings.register_profile("ci", max_examples=300, derandomize=True, database=None,
                              print_blob=True, **common)  # type: ignore[arg-type]
    settings.register_profile("nightly", max_examples=5000, print_blob=True,
                              **common)  # type: ignore[arg-type]
    settings.register_profile("triage", max_examples=300, derandomize=True, database=None,
                              report_multiple_bugs=False, **{  # type: ignore[arg-type]
                                  **common, "phases": [Phase.explicit, Phase.generate]})


def active_profile(explicit: str | None = None) -> str:
    name = explicit or os.environ.get("NUMASPEC_HYPOTHESIS_PROFILE") or (
        "ci" if os.environ.get("CI") else "dev")
    if name not in PROFILES:
        raise ValueError(f"unknown Hypothesis profile {name!r}; use one of {', '.join(PROFILES)}")
    return name


def load_profile(explicit: str | None = None) -> str:
    from hypothesis import settings

    name = active_profile(explicit)
    register_profiles()
    settings.load_profile(name)
    return name


#: Where ``hypothesis.seed()``, ``@settings`` and ``@given`` record themselves on a test
#: function (Hypothesis has no public way to change a created test's settings).
_MARKS = ("_hypothesis_internal_use_seed", "_hypothesis_internal_use_settings",
          "_hypothesis_internal_settings_applied")


@contextlib.contextmanager
def with_settings(test: Callable[..., Any], chosen: Any, *,
                  seed: int | None = None) -> Iterator[Callable[..., Any]]:
    """``test`` (a ``@given`` test) run under ``chosen`` settings (and ``seed``) while the
    block lasts; afterwards the test is exactly as it was."""
    import hypothesis

    if not getattr(test, "is_hypothesis_test", False):
        raise TypeError(f"{getattr(test, '__name__', test)!r} is not a Hypothesis test")
    saved = {mark: getattr(test, mark) for mark in _MARKS if hasattr(test, mark)}
    for mark in _MARKS[1:]:  # the seed mark stays: @given reads it on every call
        if hasattr(test, mark):
            delattr(test, mark)
    try:
        run = chosen(test)
        yield run if seed is None else hypothesis.seed(seed)(run)
    finally:
        for mark in _MARKS:
            if hasattr(test, mark):
                delattr(test, mark)
        for mark, value in saved.items():
            setattr(test, mark, value)


def run_as_loaded(test: Callable[..., Any], *args: Any, set_aside: bool = False,
                  seed: int | None = None) -> None:
    """Call the ``@given`` test with the settings of the profile loaded now (not of the one
    loaded when its module was imported).  ``set_aside``: the property sets aside the cases
    of known divergences (RUN-5), which may be most of what it draws; Hypothesis is not to
    call that unhealthy (a property that can draw nothing else is reported unjudgeable).
    ``seed`` (RUN-21): every example is drawn from it, and no example database is read or
    written, so the same seed draws the same examples again (None: the profile's own draws,
    derandomized under ``ci`` and ``triage``)."""
    from hypothesis import HealthCheck, settings

    chosen = settings(settings.default)
    if set_aside:
        chosen = settings(chosen, suppress_health_check=(
            *chosen.suppress_health_check, HealthCheck.filter_too_much))
    if seed is not None:
        chosen = settings(chosen, database=None, derandomize=False)
    with with_settings(test, chosen, seed=seed) as run:
        run(*args)
