"""Topology Manager policy options (spec chapter ``options.md``).

Source: ``pkg/kubelet/cm/topologymanager/policy_options.go`` (``NewPolicyOptions``,
``CheckPolicyOptionAvailable``) and the option gate in kubelet's configuration validation
(``pkg/kubelet/apis/config/validation/validation.go``).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

import attrs

from numaspec.errors import (
    InvalidPolicyOptionValueError,
    NumaspecError,
    PolicyOptionNotEnabledError,
    UnknownPolicyOptionError,
)
from numaspec.gates import gate_errors
from numaspec.versions import KubeletVersion, default_feature_gates

__all__ = [
    "DEFAULT_MAX_ALLOWABLE_NUMA_NODES",
    "MAX_ALLOWABLE_NUMA_NODES",
    "PREFER_CLOSEST_NUMA_NODES",
    "Maturity",
    "PolicyOptions",
    "feature_gate_errors",
    "go_atoi",
    "go_parse_bool",
    "option_maturity",
    "options_allowed_errors",
    "parse_policy_options",
    "policy_option_errors",
]

PREFER_CLOSEST_NUMA_NODES = "prefer-closest-numa-nodes"
MAX_ALLOWABLE_NUMA_NODES = "max-allowable-numa-nodes"
#: OPT-5: the NUMA node limit when the option is absent (and the fixed limit before 1.31).
DEFAULT_MAX_ALLOWABLE_NUMA_NODES = 8


class Maturity(enum.Enum):
    ALPHA = "alpha"
    BETA = "beta"
    GA = "GA"


# OPT-2: (first minor, maturity) steps for each option.
_MATURITY: Mapping[str, tuple[tuple[int, Maturity], ...]] = {
    PREFER_CLOSEST_NUMA_NODES: ((26, Maturity.ALPHA), (28, Maturity.BETA), (32, Maturity.GA)),
    MAX_ALLOWABLE_NUMA_NODES: ((31, Maturity.BETA), (35, Maturity.GA)),
}

_GATE_FOR = {
    Maturity.ALPHA: "TopologyManagerPolicyAlphaOptions",
    Maturity.BETA: "TopologyManagerPolicyBetaOptions",
}


def maturity_in(table: Mapping[str, tuple[tuple[int, Maturity], ...]], name: str,
                version: KubeletVersion) -> Maturity | None:
    """The last maturity step of ``name`` in ``table`` that ``version`` reached, or ``None``
    where the option does not exist yet (shared by OPT-2 and CPU-14)."""
    found: Maturity | None = None
    for first_minor, maturity in table.get(name, ()):
        if version.minor >= first_minor:
            found = maturity
    return found


def option_maturity(name: str, version: KubeletVersion) -> Maturity | None:
    """OPT-2: the option's maturity in ``version``, or ``None`` where it does not exist."""
    return maturity_in(_MATURITY, name, version)


@attrs.frozen
class PolicyOptions:
    """The parsed options; the defaults are kubelet's."""

    prefer_closest_numa_nodes: bool = False
    max_allowable_numa_nodes: int = DEFAULT_MAX_ALLOWABLE_NUMA_NODES


# --- Go's strconv, as far as the options use it --------------------------------------------

_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_GO_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _go_quote(text: str) -> str:
    """Go's ``strconv.Quote`` for the strings options can hold (printable text as is)."""
    named = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
             "\v": "\\v", "\\": "\\\\", '"': '\\"'}
    out = []
    for ch in text:
        if ch in named:
            out.append(named[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


class _GoSyntaxError(ValueError):
    pass


def go_parse_bool(text: str) -> bool:
    """OPT-3: Go's ``strconv.ParseBool``; raises ``ValueError`` with Go's message."""
    if text in _GO_TRUE:
        return True
    if text in _GO_FALSE:
        return False
    raise _GoSyntaxError(f"strconv.ParseBool: parsing {_go_quote(text)}: invalid syntax")


def go_atoi(text: str) -> int:
    """OPT-4: Go's ``strconv.Atoi`` on a 64-bit platform; raises ``ValueError`` with Go's
    message.  An optional sign, then decimal digits only (no spaces, no underscores)."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not all("0" <= c <= "9" for c in digits):
        raise _GoSyntaxError(f"strconv.Atoi: parsing {_go_quote(text)}: invalid syntax")
    value = int(digits) * (-1 if text[:1] == "-" else 1)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise _GoSyntaxError(f"strconv.Atoi: parsing {_go_quote(text)}: value out of range")
    return value


# --- parsing ---------------------------------------------------------------------------------


def _gate_enabled(gates: Mapping[str, bool], version: KubeletVersion, name: str) -> bool:
    if name in gates:
        return gates[name]
    return default_feature_gates(version).get(name, False)


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
    if gate is not None and not _gate_enabled(gates, version, gate):
        level = "Alpha" if maturity is Maturity.ALPHA else "Beta"
        msg = (f"Topology Manager Policy {level}-level Options not enabled, but option "
               f"{_go_quote(name)} provided")
        if version.minor >= 33:  # the message went lower-case in 1.33
            msg = msg.lower().replace(_go_quote(name).lower(), _go_quote(name))
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
    except _GoSyntaxError as exc:
        if name == PREFER_CLOSEST_NUMA_NODES:
            msg = f'bad value for option "{name}": {exc}'
        else:
            msg = f"unable to convert policy option to integer {_go_quote(name)}: {exc}"
        return InvalidPolicyOptionValueError(msg, where=where, kubelet_message=msg)
    return None


def _go_map(raw: Mapping[str, str]) -> str:
    """Go's ``%v`` of a ``map[string]string``: keys sorted, ``map[k:v k:v]``."""
    return "map[" + " ".join(f"{k}:{raw[k]}" for k in sorted(raw)) + "]"


def feature_gate_errors(gates: Mapping[str, bool], version: KubeletVersion
                        ) -> list[NumaspecError]:
    """VER-2, VER-4: kubelet sets the configuration's feature gates before anything else looks
    at the configuration, and stops at a gate its release does not know (never had, or
    removed), one set against its lock, one still pre-alpha, or (from 1.35) an enabled gate
    whose dependencies are off: ``invalid-field`` naming the gate, with kubelet's text
    (:func:`numaspec.gates.gate_errors`, from the per-release table of every gate kubelet
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
    if not _gate_enabled(gates, version, "TopologyManagerPolicyOptions"):
        required = '"TopologyManager", ' if version.minor < 28 else ""
        msg = (f"topology manager policy options {_go_map(raw)} require feature gates "
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
