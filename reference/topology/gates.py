"""Feature gates as each kubelet release knows them (spec chapter ``versions.md``, VER-2, VER-4).

The table is ``spec/data/feature-gates.json`` (installed as ``numaspec.data``), generated from
each release's own code by ``adapters/kubelet/gates/gen.sh``: every gate kubelet's start-up
registers, with its default, pre-release stage, lock and (from 1.35) the gates it depends on.

:func:`gate_errors` is the start-up check kubelet makes on its configuration's ``featureGates``
(component-base ``featuregate``, ``SetFromMap``), read per release:

* up to 1.30, the first bad gate met stops the check: an unknown name, or a gate locked to
  its default set to the other value;
* from 1.31 (versioned gates) locked and pre-alpha gates are collected, an unknown name still
  stops the scan; from 1.35, when no gate was refused, every enabled gate whose dependencies
  are not all enabled is refused as well;
* from 1.32 kubelet's configuration defaulting sets the same map on a copy of the gate first
  and panics on any error, so the text kubelet stops with is wrapped in that panic's words.

Kubelet meets the map in Go's random order, so with several bad gates which one it reports (up
to 1.30) or the order of its combined message (from 1.31) is not determined.  numaspec takes
the gates in name order, one of the orders kubelet can meet; every error has the kind
``invalid-field`` whichever gate comes first.
"""

from __future__ import annotations

import enum
import functools
import json
from collections.abc import Mapping, Sequence
from importlib import resources

import attrs

from numaspec.errors import InvalidFieldError, NotModelledError
from numaspec.topology.versions import OLDEST, KubeletVersion

__all__ = [
    "GateSpec",
    "Maturity",
    "default_gates",
    "gate_enabled",
    "gate_errors",
    "gate_source",
    "known_gates",
    "last_known_in",
    "maturity_in",
]

#: The two gates that switch every unset alpha (beta) gate along with them.
_ALL_ALPHA, _ALL_BETA = "AllAlpha", "AllBeta"
_PANIC_PREFIX = ("failed to merge global and in-flight KubeletConfiguration while setting "
                 "defaults, error: ")


@attrs.frozen
class GateSpec:
    """One gate in one release: its spec in effect at the release's own version."""

    default: bool
    pre_release: str  # "alpha", "beta", "GA", "deprecated" or "pre-alpha"
    lock_to_default: bool
    dependencies: tuple[str, ...] = ()


@attrs.frozen
class _Release:
    source: str
    gates: Mapping[str, GateSpec]
    emulation_version: str
    min_compatibility_version: str | None


@functools.cache
def _table() -> dict[int, _Release]:
    text = resources.files("numaspec.data").joinpath("feature-gates.json").read_text("utf-8")
    releases: dict[int, _Release] = {}
    for minor_text, entry in json.loads(text)["releases"].items():
        minor = int(minor_text.split(".")[1])
        gates = {name: GateSpec(spec["default"], spec["preRelease"], spec["lockToDefault"],
                                tuple(spec.get("dependencies", ())))
                 for name, spec in entry["gates"].items()}
        releases[minor] = _Release(entry["source"], gates,
                                   entry.get("emulationVersion", minor_text),
                                   entry.get("minCompatibilityVersion"))
    return releases


def _release(version: KubeletVersion) -> _Release:
    release = _table().get(version.minor)
    # the data file covers every modelled release (tests/topology/test_gates.py)
    if release is None:
        raise NotModelledError(f"no feature gate table for kubelet {version}",
                               where="kubelet_version")
    return release


def known_gates(version: KubeletVersion) -> Mapping[str, GateSpec]:
    """VER-2: every gate kubelet ``version`` knows, by name (pre-alpha ones included: known,
    but refused when set)."""
    return _release(version).gates


def gate_source(version: KubeletVersion) -> str:
    """The module version the release's table was read from (``k8s.io/kubernetes@v1.X.Y``)."""
    return _release(version).source


def last_known_in(name: str, version: KubeletVersion) -> KubeletVersion | None:
    """The newest release before ``version`` that knew ``name`` (a removed gate), or ``None``."""
    for minor in range(version.minor - 1, OLDEST.minor - 1, -1):
        release = _table().get(minor)
        if release is not None and name in release.gates:
            return KubeletVersion(minor)
    return None


def default_gates(version: KubeletVersion) -> dict[str, bool]:
    """VER-2: each gate's default in ``version``; pre-alpha gates, which cannot be set and are
    off, are left out (as kubelet's ``GetAll`` leaves them out)."""
    return dict(_defaults(version.minor))


@functools.cache
def _defaults(minor: int) -> tuple[tuple[str, bool], ...]:
    gates = _release(KubeletVersion(minor)).gates
    return tuple((name, spec.default) for name, spec in gates.items()
                 if spec.pre_release != "pre-alpha")


def gate_enabled(gates: Mapping[str, bool], version: KubeletVersion, name: str) -> bool:
    """VER-2: whether gate ``name`` is on in kubelet ``version`` under a configuration's
    ``featureGates``: as set there, else through ``AllAlpha`` or ``AllBeta`` for a gate of
    that stage, else the release's default (off for a gate the release does not know)."""
    known = _release(version).gates
    if name not in known:
        return gates.get(name, False)
    return _enabled(name, gates, known)


class Maturity(enum.Enum):
    """The stage of a policy option (OPT-2, CPU-14), which decides the gate it needs."""

    ALPHA = "alpha"
    BETA = "beta"
    GA = "GA"


def maturity_in(table: Mapping[str, tuple[tuple[int, Maturity], ...]], name: str,
                version: KubeletVersion) -> Maturity | None:
    """The last maturity step of ``name`` in ``table`` that ``version`` reached, or ``None``
    where the option does not exist yet (shared by OPT-2 and CPU-14)."""
    found: Maturity | None = None
    for first_minor, maturity in table.get(name, ()):
        if version.minor >= first_minor:
            found = maturity
    return found


@functools.cache
def _with_dependencies(minor: int) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The release's gates that depend on others, by name, with their dependencies."""
    gates = _release(KubeletVersion(minor)).gates
    return tuple((name, gates[name].dependencies) for name in sorted(gates)
                 if gates[name].dependencies)


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


def _aggregate(texts: Sequence[str]) -> str:
    """apimachinery's aggregate error text: one error as is, several (repeats dropped) in
    brackets, joined by ", "."""
    unique = list(dict.fromkeys(texts))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _enabled(name: str, explicit: Mapping[str, bool], known: Mapping[str, GateSpec]) -> bool:
    """A gate's value after the map is set: as set, else through AllAlpha/AllBeta, else its
    default (featuregate ``featureEnabled`` over the special gates' effect)."""
    if name in explicit:
        return explicit[name]
    stage = known[name].pre_release
    if stage == "alpha" and _ALL_ALPHA in explicit:
        return explicit[_ALL_ALPHA]
    if stage == "beta" and _ALL_BETA in explicit:
        return explicit[_ALL_BETA]
    return known[name].default


def gate_errors(gates: Mapping[str, bool], version: KubeletVersion) -> list[InvalidFieldError]:
    """VER-2, VER-4: why kubelet ``version`` refuses the configuration's ``featureGates``, or
    ``[]``.  One error per refused gate, in the order kubelet meets them when it meets the
    map in name order; each carries, as ``kubelet_message``, the whole text kubelet stops
    with in that order (see the module docstring for the release differences)."""
    release = _release(version)
    if not gates:  # every release's defaults are accepted (tests/topology/test_gates.py)
        return []
    known = release.gates
    refused: list[tuple[str, str, str]] = []  # (where, numaspec's message, kubelet's text)
    for name in sorted(gates):
        value = gates[name]
        spec = known.get(name)
        if spec is None:
            last = last_known_in(name, version)
            text = f"unrecognized feature gate: {name}"
            note = f" (removed after kubelet {last})" if last else ""
            refused.append((name, text + note, text))
            break  # an unknown gate stops the scan in every release
        if spec.lock_to_default and spec.default != value:
            text = (f"cannot set feature gate {name} to {_go_bool(value)}, feature is locked "
                    f"to {_go_bool(spec.default)}")
            refused.append((name, text, text))
        elif spec.pre_release == "pre-alpha" and name not in (_ALL_ALPHA, _ALL_BETA):
            text = (f"cannot set feature gate {name} to {_go_bool(value)}, feature is PreAlpha "
                    f"at emulated version {release.emulation_version}")
            if release.min_compatibility_version is not None:
                text += f", min compatibility version {release.min_compatibility_version}"
            refused.append((name, text, text))
        else:
            continue
        if version.minor <= 30:
            break  # up to 1.30 the first refused gate is returned at once
    if not refused:
        for feature, deps in _with_dependencies(version.minor):
            if not _enabled(feature, gates, known):
                continue
            off = [dep for dep in deps if not _enabled(dep, gates, known)]
            if off:
                text = (f"{feature} is enabled, but depends on features that are disabled: "
                        f"[{' '.join(off)}]")
                # name a gate the configuration set; a caller that passes the defaults
                # merged in (the node model) sets them all, so prefer one off its default
                pair = (feature, *off)
                named = (sorted(n for n in pair if n in gates and gates[n] != known[n].default)
                         or sorted(n for n in pair if n in gates) or [feature])
                refused.append((named[0], text, text))
    if not refused:
        return []
    kubelet = _aggregate([text for _, _, text in refused])
    if version.minor >= 32:  # configuration defaulting panics first (VER-4)
        kubelet = _PANIC_PREFIX + kubelet
    return [InvalidFieldError(message, where=f"feature_gates.{name}", kubelet_message=kubelet)
            for name, message, _ in refused]

