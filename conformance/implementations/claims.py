"""Capability declarations: the part of the semantics an implementation claims (PROTO-7).

Every real implementation of kubelet's NUMA alignment is partial: a scheduler plugin that
models single-numa-node only, a copy of the 1.24 merge without prefer-closest-numa-nodes, a
pod-scope-only node.  The ``claims`` object of a ``start`` answer says which part it models;
the runner sends only the vectors inside it and reports the rest ``skipped`` with
``skip_source: not-claimed`` (RUN-4), and the properties draw only requests inside it.

Every field is optional and an absent one claims everything, except ``format``: numaspec's
own strict line format (unknown fields, JSON types, the bounds of WIRE-5; the rules whose
``Judged`` line says ``format``) is judged only for an implementation that claims it as its
own interface, which the reference's command line does.  A peer is judged on semantics.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, ClassVar

import attrs

from numaspec.errors import AdapterError
from numaspec.protocols.operations import TABLE as OPERATION_TABLE

__all__ = [
    "FORMAT_RULES",
    "MANAGERS",
    "CPUsClaims",
    "Claims",
    "MergeClaims",
    "NodeClaims",
    "PredictClaims",
    "claims_of",
]

#: The rules whose ``Judged`` line is ``format``: numaspec's line format and its own limits,
#: not kubelet behaviour (spec/README.md, "How a rule reads"; speccheck keeps this in step).
FORMAT_RULES = frozenset({"WIRE-1", "WIRE-2", "WIRE-3", "WIRE-4", "WIRE-5", "WIRE-6", "WIRE-7",
                          "VER-3", "NWIRE-3", "NWIRE-5", "FAST-6", "NODE-0"})
#: The hint providers a node implementation may claim.
MANAGERS = ("cpu", "memory", "device")
_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
_SCOPES = ("container", "pod")


def _names(value: Any, where: str, known: Collection[str] | None = None
           ) -> frozenset[str] | None:
    """An optional list of names: None when absent (claims everything)."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AdapterError(f"must be a list of strings, got {value!r}", where=where)
    if known is not None:
        unknown = sorted(set(value) - set(known))
        if unknown:
            raise AdapterError(f"unknown names {unknown} (known: {', '.join(known)})",
                               where=where)
    return frozenset(value)


def _flag(value: Any, where: str, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise AdapterError(f"must be true or false, got {value!r}", where=where)
    return value


def _kinds(value: Any, where: str) -> frozenset[str] | None:
    """``refusals``: true (every kind, the default), false (none) or a list of error kinds
    (WIRE-2)."""
    if value is None or value is True:
        return None
    if value is False:
        return frozenset()
    return _names(value, where)


def _object(value: Any, where: str, fields: Iterable[str]) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise AdapterError(f"must be an object, got {value!r}", where=where)
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise AdapterError(f"unknown fields {unknown} (known: {', '.join(fields)})",
                           where=where)
    return value


def _outside(what: str, names: Iterable[str], claimed: frozenset[str] | None) -> str | None:
    if claimed is None:
        return None
    missing = sorted(set(names) - claimed)
    if not missing:
        return None
    return f"{what} {', '.join(missing)} (claimed: {', '.join(sorted(claimed)) or 'none'})"


@attrs.frozen
class MergeClaims:
    """``claims.merge``: which of the merge's inputs the implementation models."""

    #: kubelet policies (None: all)
    policies: frozenset[str] | None = None
    #: Topology Manager policy options (None: all; empty: none)
    policy_options: frozenset[str] | None = None
    #: whether it models kubelet's feature gates (VER-2): cases that set gates need it
    feature_gates: bool = True
    #: the error kinds of the refusals it answers, kubelet's start-up errors (None: all;
    #: empty: none)
    refusals: frozenset[str] | None = None
    #: whether it models the machine's NUMA distances (``numa_distances``): cases that give
    #: them need it, and prefer-closest-numa-nodes, which reads them, is drawn only with it
    distances: bool = True

    FIELDS = ("policies", "policy_options", "feature_gates", "refusals", "distances")

    @classmethod
    def from_json(cls, value: Any, where: str) -> MergeClaims:
        body = _object(value, where, cls.FIELDS)
        return cls(policies=_names(body.get("policies"), f"{where}.policies", _POLICIES),
                   policy_options=_names(body.get("policy_options"), f"{where}.policy_options"),
                   feature_gates=_flag(body.get("feature_gates"), f"{where}.feature_gates",
                                       True),
                   refusals=_kinds(body.get("refusals"), f"{where}.refusals"),
                   distances=_flag(body.get("distances"), f"{where}.distances", True))

    def claims_policy(self, policy: str) -> bool:
        """A policy name numaspec does not know is a refusal, claimed with ``refusals``."""
        if policy not in _POLICIES:
            return self.claims_refusal("unknown-policy")
        return self.policies is None or policy in self.policies

    def claims_option(self, option: str) -> bool:
        return self.policy_options is None or option in self.policy_options

    def claims_refusal(self, kind: str) -> bool:
        return self.refusals is None or kind in self.refusals

    def outside(self, case: Mapping[str, Any], expected: Any) -> str | None:
        """Why a merge case (JSON) lies outside the claim, or None."""
        policy = case.get("policy")
        if isinstance(policy, str) and not self.claims_policy(policy):
            if policy in _POLICIES:
                return (f"policy {policy!r} (claimed: "
                        f"{', '.join(sorted(self.policies or ())) or 'none'})")
            return f"policy {policy!r}, which kubelet refuses (unknown-policy, not claimed)"
        options = case.get("policy_options")
        if isinstance(options, dict):
            reason = _outside("policy option", options, self.policy_options)
            if reason:
                return reason
        if case.get("feature_gates") and not self.feature_gates:
            return "feature gates (it does not claim kubelet's feature gates)"
        if case.get("numa_distances") is not None and not self.distances:
            return "NUMA distances (it does not claim numa_distances)"
        kind = _error_kind(expected)
        if kind is not None and not self.claims_refusal(kind):
            return f"the refusal {kind} (claimed refusals: " \
                   f"{', '.join(sorted(self.refusals or ())) or 'none'})"
        return None


@attrs.frozen
class NodeClaims:
    """``claims.node``: which part of a node the implementation models (node, hints and
    affinity operations)."""

    managers: frozenset[str] | None = None
    scopes: frozenset[str] | None = None
    policies: frozenset[str] | None = None
    policy_options: frozenset[str] | None = None
    cpu_policy_options: frozenset[str] | None = None
    feature_gates: bool = True

    FIELDS: ClassVar[tuple[str, ...]] = ("managers", "scopes", "policies", "policy_options",
                               "cpu_policy_options", "feature_gates")

    @classmethod
    def from_json(cls, value: Any, where: str) -> NodeClaims:
        body = _object(value, where, cls.FIELDS)
        return cls(managers=_names(body.get("managers"), f"{where}.managers", MANAGERS),
                   scopes=_names(body.get("scopes"), f"{where}.scopes", _SCOPES),
                   policies=_names(body.get("policies"), f"{where}.policies", _POLICIES),
                   policy_options=_names(body.get("policy_options"), f"{where}.policy_options"),
                   cpu_policy_options=_names(body.get("cpu_policy_options"),
                                             f"{where}.cpu_policy_options"),
                   feature_gates=_flag(body.get("feature_gates"), f"{where}.feature_gates",
                                       True))

    @property
    def everything(self) -> bool:
        return self == NodeClaims()

    def outside(self, case: Any) -> str | None:
        """Why a node session (``{"steps": [...]}``) lies outside the claim, or None."""
        steps = case.get("steps") if isinstance(case, dict) else None
        for step in steps if isinstance(steps, list) else ():
            node = step.get("node") if isinstance(step, dict) and step.get(
                "op") == "create" else None
            if not isinstance(node, dict):
                continue
            reason = self._outside_node(node)
            if reason:
                return reason
        return None

    def outside_cpus(self, case: Any) -> str | None:
        """CPU-21: why a ``cpus`` case lies outside the claim (its CPU Manager options, its
        feature gates), or None."""
        body = case if isinstance(case, dict) else {}
        reason = _outside("CPU Manager policy option", _keys(body.get("options")),
                          self.cpu_policy_options)
        if reason:
            return reason
        if body.get("feature_gates") and not self.feature_gates:
            return "feature gates (it does not claim kubelet's feature gates)"
        return None

    def _outside_node(self, node: Mapping[str, Any]) -> str | None:
        config = node.get("config")
        config = config if isinstance(config, dict) else {}
        machine = node.get("machine")
        managers = []
        if config.get("cpuManagerPolicy") == "static":
            managers.append("cpu")
        if config.get("memoryManagerPolicy") == "Static":
            managers.append("memory")
        if isinstance(machine, dict) and machine.get("devices"):
            managers.append("device")
        checks: Sequence[tuple[str, Iterable[str], frozenset[str] | None]] = (
            ("manager", managers, self.managers),
            ("scope", _str_items([config.get("topologyManagerScope", "container")]),
             self.scopes),
            ("policy", _str_items([config.get("topologyManagerPolicy", "none")]), self.policies),
            ("policy option", _keys(config.get("topologyManagerPolicyOptions")),
             self.policy_options),
            ("CPU Manager policy option", _keys(config.get("cpuManagerPolicyOptions")),
             self.cpu_policy_options),
        )
        for what, names, claimed in checks:
            reason = _outside(what, names, claimed)
            if reason:
                return reason
        if config.get("featureGates") and not self.feature_gates:
            return "feature gates (it does not claim kubelet's feature gates)"
        return None


@attrs.frozen
class PredictClaims(NodeClaims):
    """``claims.predict``: which nodes a scheduler-side implementation claims to predict
    (PRED-3): the node claims' fields, about the node the NodeResourceTopology describes, and
    ``node_fit``: whether it claims the node-level resource fit (ADMIT-8), which
    scheduler-side NUMA plugins leave to the scheduler's NodeResourcesFit plugin."""

    node_fit: bool = True

    FIELDS: ClassVar[tuple[str, ...]] = (*NodeClaims.FIELDS, "node_fit")

    @classmethod
    def from_json(cls, value: Any, where: str) -> PredictClaims:
        body = _object(value, where, cls.FIELDS)
        base = NodeClaims.from_json({k: v for k, v in body.items() if k != "node_fit"}, where)
        return cls(**attrs.asdict(base, recurse=False),
                   node_fit=_flag(body.get("node_fit"), f"{where}.node_fit", True))

    def outside_predict(self, case: Any, expected: Any) -> str | None:
        """Why a predict case (its node session, and the reference's answer) lies outside
        the claim, or None."""
        reason = self.outside(case)
        if reason:
            return reason
        why = expected.get("reason") if isinstance(expected, dict) else None
        unfit = isinstance(expected, dict) and expected.get("node_fit") is False
        if not self.node_fit and isinstance(why, str) and (why.startswith("OutOf") or unfit):
            return (f"the node-level resource fit ({why}, the pod does not fit the node's "
                    "allocatable: ADMIT-8): it claims NUMA alignment only")
        return None


@attrs.frozen
class CPUsClaims:
    """``claims.cpus`` (CPU-21): ``options``, the CPU Manager policy options an allocator
    always applies, whatever a case asks (a DRA CPU driver that always prefers uncore-cache
    alignment); a ``cpus`` case lies outside the claim unless its options are exactly these.
    Absent: it follows each case's options (within ``node.cpu_policy_options``)."""

    options: Mapping[str, str] | None = None

    FIELDS: ClassVar[tuple[str, ...]] = ("options",)

    @classmethod
    def from_json(cls, value: Any, where: str) -> CPUsClaims:
        body = _object(value, where, cls.FIELDS)
        options = body.get("options")
        if options is not None and not (isinstance(options, dict) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in options.items())):
            raise AdapterError(f"must be an object of option names to values, got {options!r}",
                               where=f"{where}.options")
        return cls(options=None if options is None else dict(options))

    def outside(self, case: Any) -> str | None:
        """Why a ``cpus`` case asks for other options than the ones always applied, or
        None."""
        if self.options is None:
            return None
        asked = case.get("options") if isinstance(case, dict) else None
        if (asked or {}) == dict(self.options):
            return None
        shown = ", ".join(f"{k}={v}" for k, v in sorted(self.options.items())) or "none"
        return (f"CPU Manager policy options {asked or {}} (it always applies exactly: "
                f"{shown})")


def _str_items(values: Iterable[Any]) -> list[str]:
    return [v for v in values if isinstance(v, str)]


def _keys(value: Any) -> list[str]:
    return [k for k in value if isinstance(k, str)] if isinstance(value, dict) else []


def _error_kind(expected: Any) -> str | None:
    if isinstance(expected, dict) and isinstance(expected.get("error"), dict):
        kind = expected["error"].get("kind")
        return kind if isinstance(kind, str) else None
    return None


@attrs.frozen
class Claims:
    """``implementation.claims`` (PROTO-7)."""

    #: numaspec's own line format is the implementation's interface (format rules judged)
    format: bool = False
    merge: MergeClaims = MergeClaims()
    node: NodeClaims = NodeClaims()
    predict: PredictClaims = PredictClaims()
    cpus: CPUsClaims = CPUsClaims()

    FIELDS = ("format", "merge", "node", "predict", "cpus")

    @classmethod
    def from_json(cls, value: Any, where: str = "implementation.claims") -> Claims:
        """A ``claims`` object, or :class:`AdapterError` naming what is wrong and where."""
        body = _object(value, where, cls.FIELDS)
        return cls(format=_flag(body.get("format"), f"{where}.format", False),
                   merge=MergeClaims.from_json(body.get("merge"), f"{where}.merge"),
                   node=NodeClaims.from_json(body.get("node"), f"{where}.node"),
                   predict=PredictClaims.from_json(body.get("predict"), f"{where}.predict"),
                   cpus=CPUsClaims.from_json(body.get("cpus"), f"{where}.cpus"))

    def to_json(self) -> dict[str, Any]:
        """The claims as a ``start`` answer would state them (absent = everything)."""
        def names(value: frozenset[str] | None) -> list[str] | None:
            return None if value is None else sorted(value)

        merge = {"policies": names(self.merge.policies),
                 "policy_options": names(self.merge.policy_options),
                 "feature_gates": self.merge.feature_gates,
                 "distances": self.merge.distances,
                 "refusals": True if self.merge.refusals is None else sorted(
                     self.merge.refusals)}
        node = {"managers": names(self.node.managers), "scopes": names(self.node.scopes),
                "policies": names(self.node.policies),
                "policy_options": names(self.node.policy_options),
                "cpu_policy_options": names(self.node.cpu_policy_options),
                "feature_gates": self.node.feature_gates}
        predict = {"managers": names(self.predict.managers),
                   "scopes": names(self.predict.scopes),
                   "policies": names(self.predict.policies),
                   "policy_options": names(self.predict.policy_options),
                   "cpu_policy_options": names(self.predict.cpu_policy_options),
                   "feature_gates": self.predict.feature_gates,
                   "node_fit": self.predict.node_fit}
        return {"format": self.format,
                "merge": {k: v for k, v in merge.items() if v is not None},
                "node": {k: v for k, v in node.items() if v is not None},
                "predict": {k: v for k, v in predict.items() if v is not None},
                **({"cpus": {"options": dict(self.cpus.options)}}
                   if self.cpus.options is not None else {})}

    def outside(self, op: str, case: Any, expected: Any, rules: Sequence[str]) -> str | None:
        """Why a vector (its op, case, expected answer and rules) is not claimed, or None."""
        if not self.format:
            judged = sorted(set(rules) & FORMAT_RULES)
            if judged:
                return (f"numaspec's line format, which this case checks "
                        f"({', '.join(judged)}), as its own interface")
        # the part of the claims the operation's cases are judged inside (its row's
        # ``claims``); DRA-10, DRA-13: allocate and mixed are claimed by releases alone
        part = OPERATION_TABLE[op].claims if op in OPERATION_TABLE else "node"
        if part == "merge":
            return self.merge.outside(case, expected) if isinstance(case, dict) else None
        if part == "predict":
            return self.predict.outside_predict(case, expected)
        if part == "cpus":
            return self.node.outside_cpus(case) or self.cpus.outside(case)
        return self.node.outside(case) if part == "node" else None


def claims_of(impl: object) -> Claims:
    """The claims of a connection's implementation, a property target or a typed merge
    object: its ``claims`` attribute (a :class:`Claims` or its JSON), or everything but the
    format."""
    value = getattr(impl, "claims", None)
    if isinstance(value, Claims):
        return value
    if value is None:
        return Claims()
    return Claims.from_json(value)
