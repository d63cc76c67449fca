"""Hypothesis settings profiles: ``dev``, ``ci`` and ``nightly``.

* ``dev``: quick local runs, with the example database so failures replay.
* ``ci``: derandomized (the same examples every run), no database, and the reproduction
  blob printed on failure, so a red CI run is reproducible anywhere.
* ``nightly``: many more examples, randomized, for hunting.
* ``triage``: ``ci``'s examples and seed, but no shrinking: whether an implementation fails,
  quickly (each property stops at its first counterexample, unshrunk).  The mutants' kill
  tests use it.

The active profile is ``$NUMASPEC_HYPOTHESIS_PROFILE``, else ``ci`` when ``$CI`` is set,
else ``dev``.
"""

from __future__ import annotations

import os

__all__ = ["PROFILES", "active_profile", "load_profile", "register_profiles"]

PROFILES = ("dev", "ci", "nightly", "triage")


def register_profiles() -> None:
    """Register the three profiles with Hypothesis (imported late: the runner must not import
    Hypothesis before pytest starts, or pytest cannot rewrite its asserts)."""
    from hypothesis import HealthCheck, Phase, settings

    common = {"deadline": None, "suppress_health_check": (HealthCheck.too_slow,)}
    settings.register_profile("dev", max_examples=100, **common)  # type: ignore[arg-type]
    settings.register_profile("ci", max_examples=300, derandomize=True, database=None,
                              print_blob=True, **common)  # type: ignore[arg-type]
    settings.register_profile("nightly", max_examples=5000, print_blob=True,
                              **common)  # type: ignore[arg-type]
    settings.register_profile("triage", max_examples=300, derandomize=True, database=None,
                              phases=[Phase.explicit, Phase.generate],
                              report_multiple_bugs=False, **common)  # type: ignore[arg-type]


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
