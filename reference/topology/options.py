"""Topology Manager policy options (spec chapter ``options.md``).

Source: ``pkg/kubelet/cm/topologymanager/policy_options.go`` (``NewPolicyOptions``,
``CheckPolicyOptionAvailable``) and the option gate in kubelet's configuration validation
(``pkg/kubelet/apis/config/validation/validation.go``).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from numaspec.errors import (
    InvalidPolicyOptionValueError,
    NumaspecError,
    PolicyOptionNotEnabledError,
    UnknownPolicyOptionError,
)
from numaspec.topology.gates import Maturity, gate_enabled, gate_errors, maturity_in
from numaspec.topology.golang import GoSyntaxError, go_atoi, go_map, go_parse_bool, go_quote
from numaspec.topology.versions import KubeletVersion

__all__ = [
    "DEFAULT_MAX_ALLOWABLE_NUMA_NODES",
    "MAX_ALLOWABLE_NUMA_NODES",
    "PREFER_CLOSEST_NUMA_NODES",
    "PolicyOptions",
    "feature_gate_errors",
    "option_maturity",
    "options_allowed_errors",
    "parse_policy_options",
    "policy_option_errors",
]

PREFER_CLOSEST_NUMA_NODES = "prefer-closest-numa-nodes"
MAX_ALLOWABLE_NUMA_NODES = "max-allowable-numa-nodes"
#: OPT-5: the NUMA node limit when the option is absent (and the fixed limit before 1.31).
DEFAULT_MAX_ALLOWABLE_NUMA_NODES = 8


# OPT-2: (first minor, maturity) steps for each option.
_MATURITY: Mapping[str, tuple[tuple[int, Maturity], ...]] = {
    PREFER_CLOSEST_NUMA_NODES: ((26, Maturity.ALPHA), (28, Maturity.BETA), (32, Maturity.GA)),
    MAX_ALLOWABLE_NUMA_NODES: ((31, Maturity.BETA), (35, Maturity.GA)),
}

_GATE_FOR = {
    Maturity.ALPHA: "TopologyManagerPolicyAlphaOptions",
    Maturity.BETA: "TopologyManagerPolicyBetaOptions",
}


def option_maturity(name: str, version: KubeletVersion) -> Maturity | None:
    """OPT-2: the option's maturity in ``version``, or ``None`` where it does not exist."""
    return maturity_in(_MATURITY, name, version)


@attrs.frozen
class PolicyOptions:
    """The parsed options; the defaults are kubelet's."""

    prefer_closest_numa_nodes: bool = False
    max_allowable_numa_nodes: int = DEFAULT_MAX_ALLOWABLE_NUMA_NODES


# --- parsing ---------------------------------------------------------------------------------


def _check_option(
    name: str, value: str, version: KubeletVersion, gates: Mapping[str, bool]
) -> PolicyOptionNotEnabledError | UnknownPolicyOptionError | InvalidPolicyOptionValueError | None:
    """The error kubelet gives for one option, or ``None`` if it accepts it."""
    where = f"policy_options.{name}"
    maturity = option_maturity(name, version)
    if maturity is None:
        msg = f'unknown Topology Manager Policy option: "{name}"'
        return UnknownPolicyOptionError(msg, where=where, kubelet_message=msg)
    gate = _GATE_FOR.get(maturity)
    if gate is not None and not gate_enabled(gates, version, gate):
        level = "Alpha" if maturity is Maturity.ALPHA else "Beta"
        msg = (f"Topology Manager Policy {level}-level Options not enabled, but option "
               f"{go_quote(name)} provided")
        if version.minor >= 33:  # the message went lower-case in 1.33
            msg = msg.lower().replace(go_quote(name).lower(), go_quote(name))
        return PolicyOptionNotEnabledError(
            f"{msg} (feature gate {gate} is off)", where=where, kubelet_message=msg
        )
    try:
        if name == PREFER_CLOSEST_NUMA_NODES:
            go_parse_bool(value)
        else:
            number = go_atoi(value)
            if number < DEFAULT_MAX_ALLOWABLE_NUMA_NODES:
                msg = (f'the minimum value of "{MAX_ALLOWABLE_NUMA_NODES}" should not be less '
                       f"than {DEFAULT_MAX_ALLOWABLE_NUMA_NODES}")
                return InvalidPolicyOptionValueError(msg, where=where, kubelet_message=msg)
    except GoSyntaxError as exc:
        if name == PREFER_CLOSEST_NUMA_NODES:
            msg = f'bad value for option "{name}": {exc}'
        else:
            msg = f"unable to convert policy option to integer {go_quote(name)}: {exc}"
        return InvalidPolicyOptionValueError(msg, where=where, kubelet_message=msg)
    return None


def feature_gate_errors(gates: Mapping[str, bool], version: KubeletVersion
                        ) -> list[NumaspecError]:
    """VER-2, VER-4: kubelet sets the configuration's feature gates before anything else looks
    at the configuration, and stops at a gate its release does not know (never had, or
    removed), one set against its lock, one still pre-alpha, or (from 1.35) an enabled gate
    whose dependencies are off: ``invalid-field`` naming the gate, with kubelet's text
    (:func:`numaspec.topology.gates.gate_errors`, from the per-release table of every gate kubelet
    registers).  The first error is the one numaspec reports."""
    return list(gate_errors(gates, version))


def options_allowed_errors(
    raw: Mapping[str, str], version: KubeletVersion, gates: Mapping[str, bool] | None = None
) -> list[NumaspecError]:
    """OPT-1: whether kubelet passes the options on to the Topology Manager at all.

    Before 1.26 the options do not exist: a configuration file carrying them is decoded
    leniently and the field is dropped, so they are ignored (no error).  From 1.26 a non-empty
    map with the ``TopologyManagerPolicyOptions`` gate off stops the kubelet before the
    Topology Manager starts, whatever the policy (``cmd/kubelet/app/server.go``, ``run``).
    """
    gates = {} if gates is None else gates
    if not raw or not version.has_policy_options:
        return []
    if not gate_enabled(gates, version, "TopologyManagerPolicyOptions"):
        required = '"TopologyManager", ' if version.minor < 28 else ""
        msg = (f"topology manager policy options {go_map(raw)} require feature gates "
               f'{required}"TopologyManagerPolicyOptions" enabled')
        return [PolicyOptionNotEnabledError(msg, where="policy_options", kubelet_message=msg)]
    return []


def policy_option_errors(
    raw: Mapping[str, str], version: KubeletVersion, gates: Mapping[str, bool] | None = None
) -> list[NumaspecError]:
    """Every error kubelet could report for ``raw``, one per offending option, by name.

    OPT-1: kubelet stops at the first bad option in Go's random map order, so when several
    options are bad, which error it reports is not determined.  Any of these is a correct
    answer; :func:`parse_policy_options` raises the first by name.
    """
    errors = options_allowed_errors(raw, version, gates)
    if errors or not raw or not version.has_policy_options:
        return errors
    for name in sorted(raw):
        error = _check_option(name, raw[name], version, gates or {})
        if error is not None:
            errors.append(error)
    return errors


def parse_policy_options(
    raw: Mapping[str, str], version: KubeletVersion, gates: Mapping[str, bool] | None = None
) -> PolicyOptions:
    """OPT-1..OPT-4: the options kubelet ``version`` would run with, or the error it gives."""
    errors = policy_option_errors(raw, version, gates)
    if errors:
        raise errors[0]
    if not version.has_policy_options:
        return PolicyOptions()
    prefer = raw.get(PREFER_CLOSEST_NUMA_NODES)
    limit = raw.get(MAX_ALLOWABLE_NUMA_NODES)
    return PolicyOptions(
        prefer_closest_numa_nodes=go_parse_bool(prefer) if prefer is not None else False,
        max_allowable_numa_nodes=(
            go_atoi(limit) if limit is not None else DEFAULT_MAX_ALLOWABLE_NUMA_NODES
        ),
    )
