"""PROTO-3: the operations a case can ask for, listed once.  Each row says what defines the
operation (its rules), the schema of its case and result, the fields its result may have,
whether the reference answers it as an implementation, and whether its case is a node
session (``{"steps": [...]}``).  The adapter protocol, the connection's answer check, the
vector loader and the schemas' ``op`` enums (tests/protocols/test_schemas.py) read this list.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable
from types import MappingProxyType
from typing import Any, Literal

import attrs

from numaspec.errors import NumaspecError

__all__ = ["NODE_SESSION_OPERATIONS", "OPERATIONS", "Operation", "REFERENCE_OPERATIONS", "TABLE",
           "resolve"]


@attrs.frozen
class Operation:
    """One operation of the adapter protocol (PROTO-3)."""

    name: str
    #: The rules that define it (its chapter's).
    rules: tuple[str, ...]
    #: Its case's and result's schema under spec/schemas/.
    schema: str
    #: The top-level fields its result may have (PROTO-3; ``--strict`` checks the rest).
    result_fields: frozenset[str]
    #: The schema of its result (``--strict``), as a ``$ref``.
    result_schema: str
    #: Whether the reference answers it as an implementation (PRED-1: not ``predict``, whose
    #: answer the node's own admission judges).
    answered: bool = True
    #: Whether its case is a node session, ``{"steps": [node-protocol request, ...]}``.
    node_session: bool = False
    #: The releases it is modelled at: the merge's (VER-1), the node model's (NODE-0) or the
    #: DRA allocator's (DRA-10).
    family: Literal["merge", "node", "allocate"] = "node"
    #: Where its case names its release: ``kubelet_version``, the first create step of
    #: ``steps``, ``release``, or ``dra.release``; and what else a retargeted case rewrites.
    version_in: tuple[str, ...] = ("steps",)
    #: The reference's answer to one case, as ``module:function`` (imported when first
    #: asked), for an operation answered by one function of its case, a refusal being its
    #: error answer; "" for the merge and the node sessions, which the adapter protocol
    #: answers itself.
    answer: str = ""
    #: PROTO-7: the part of an implementation's ``claims`` its cases are judged inside:
    #: ``merge``, ``node`` (the node's managers, scopes, policies, options and gates),
    #: ``predict``, ``cpus`` (the node's CPU options and the ``cpus`` claims), or "" (claimed
    #: by the releases it declares alone).
    claims: Literal["merge", "node", "predict", "cpus", ""] = "node"

    def answerer(self) -> Callable[[Any], dict[str, Any]] | None:
        """The function :attr:`answer` names (None when it names none)."""
        if not self.answer:
            return None
        found: Callable[[Any], dict[str, Any]] = resolve(self.answer)
        return found

    def case_version(self, case: Any) -> str:
        """The release a case is about, as ``1.N``: where :attr:`version_in` first says (a
        merge without one: the newest, VER-1).  ``""`` when that release is not one numaspec
        models for the operation (a case about refusing it holds for every implementation),
        or when the case names none."""
        raw = _read(case, self.version_in[0])
        if self.family == "allocate":
            from numaspec.protocols.allocate_protocol import ALLOCATE_RELEASES

            return raw if raw in ALLOCATE_RELEASES else ""
        from numaspec.topology.versions import DEFAULT, parse_version

        if raw is None:
            return str(DEFAULT) if self.family == "merge" else ""
        try:
            version = parse_version(raw)
        except NumaspecError:
            return ""
        if self.family == "node":
            from numaspec.node.nodeconfig import NODE_VERSIONS

            if version.minor not in NODE_VERSIONS:
                return ""
        return str(version)

    def retarget(self, case: Any, release: str) -> Any:
        """The case at ``release`` (``1.N``) instead: every place :attr:`version_in` names
        rewritten, a version string in its own format."""
        for place in self.version_in:
            case = _rewrite(case, place, release)
        return case

    def modelled(self) -> tuple[int, int]:
        """The first and last minor the operation is modelled at."""
        if self.family == "merge":
            from numaspec.topology.versions import NEWEST, OLDEST

            return OLDEST.minor, NEWEST.minor
        if self.family == "allocate":
            from numaspec.protocols.allocate_protocol import ALLOCATE_RELEASES
            from numaspec.topology.versions import parse_version

            return (parse_version(ALLOCATE_RELEASES[0]).minor,
                    parse_version(ALLOCATE_RELEASES[-1]).minor)
        from numaspec.node.nodeconfig import NODE_VERSIONS

        return NODE_VERSIONS.start, NODE_VERSIONS.stop - 1


@functools.cache
def resolve(path: str) -> Callable[..., Any]:
    """The function a ``module:function`` path names, imported when first asked: a row's
    reference answer, and the suite's case drawing and shrinking that a judge names so
    (:mod:`numaspec.conformance.cases.judges.judge`), without importing the properties
    package, which the command line must not import before it loads its profile."""
    module, _, name = path.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return found


_CASE_MINOR = re.compile(r"^(\s*v?1\.)(\d+)")


def _first_create(case: Any) -> Any:
    steps = case.get("steps") if isinstance(case, dict) else None
    for step in steps if isinstance(steps, list) else []:
        if isinstance(step, dict) and step.get("op") == "create":
            node = step.get("node")
            return node.get("kubeletVersion") if isinstance(node, dict) else None
    return None


def _read(case: Any, place: str) -> Any:
    if place == "steps":
        return _first_create(case)
    body = case
    *parents, field = place.split(".")
    for parent in parents:
        body = body.get(parent) if isinstance(body, dict) else None
    return body.get(field) if isinstance(body, dict) else None


def _retarget_text(raw: Any, release: str) -> Any:
    """``raw`` (a version string) naming ``release`` instead, in the same format."""
    if isinstance(raw, str) and _CASE_MINOR.match(raw):
        return _CASE_MINOR.sub(lambda m: m.group(1) + release.split(".", 1)[1], raw, count=1)
    return release


def _rewrite(case: Any, place: str, release: str) -> Any:
    if place == "release":
        return {**case, "release": release}
    if place == "dra.release":
        return {**case, "dra": {**case["dra"], "release": release}}
    if place == "kubelet_version":
        return {**case, "kubelet_version": _retarget_text(case.get("kubelet_version"), release)}
    steps = []
    for step in case["steps"]:
        if (isinstance(step, dict) and step.get("op") == "create"
                and isinstance(step.get("node"), dict) and "kubeletVersion" in step["node"]):
            node = {**step["node"],
                    "kubeletVersion": _retarget_text(step["node"]["kubeletVersion"], release)}
            steps.append({**step, "node": node})
        else:
            steps.append(step)
    return {**case, "steps": steps}


_PROTOCOL = "tag:numaspec,2026:adapter-protocol#/$defs/"
_SESSION = frozenset({"answers"})
_SESSION_RESULT = f"{_PROTOCOL}sessionResult"
TABLE = MappingProxyType({op.name: op for op in (
    Operation("merge", ("WIRE-3", "WIRE-2"), "merge-request.schema.json",
              frozenset({"hint", "admit", "error"}), f"{_PROTOCOL}mergeResult", family="merge",
              version_in=("kubelet_version",), claims="merge"),
    Operation("hints", ("NWIRE-4",), "node-protocol.schema.json", _SESSION, _SESSION_RESULT,
              node_session=True),
    Operation("node", ("NWIRE-1", "NWIRE-2"), "node-protocol.schema.json", _SESSION,
              _SESSION_RESULT, node_session=True),
    Operation("affinity", ("AWIRE-1",), "node-protocol.schema.json", _SESSION,
              _SESSION_RESULT, node_session=True),
    Operation("predict", ("PRED-1", "PRED-2"), "predict.schema.json",
              frozenset({"fits", "numa_nodes", "reason", "message", "node_fit"}),
              "tag:numaspec,2026:predict#/$defs/answer", answered=False,
              answer="numaspec.protocols.adapter_protocol:reference_predict",
              claims="predict"),
    Operation("allocate", ("DRA-10",), "allocate.schema.json",
              frozenset({"outcome", "claims", "message", "variant", "error"}),
              "tag:numaspec,2026:allocate#/$defs/answer", family="allocate",
              version_in=("release",),
              answer="numaspec.protocols.allocate_protocol:reference_allocate", claims=""),
    # DRA-13: a mixed case's node is of its allocator's release; both move together
    Operation("mixed", ("DRA-13",), "mixed.schema.json",
              frozenset({"allocation", "admission", "containers", "error"}),
              "tag:numaspec,2026:mixed#/$defs/answer", family="allocate",
              version_in=("dra.release", "steps"),
              answer="numaspec.protocols.mixed_protocol:reference_mixed", claims=""),
    # CPU-21: the case's kubelet_version, which it must give
    Operation("cpus", ("CPU-21",), "cpus.schema.json",
              frozenset({"cpus", "unsatisfiable", "error"}), "tag:numaspec,2026:cpus#/$defs/answer",
              version_in=("kubelet_version",),
              answer="numaspec.protocols.cpus_protocol:reference_cpus", claims="cpus"),
)})
#: PROTO-3: the operations, in the protocol's order.
OPERATIONS = tuple(TABLE)
#: PRED-1: the operations the reference answers as an implementation.
REFERENCE_OPERATIONS = tuple(name for name, op in TABLE.items() if op.answered)
#: The operations whose case is a node session.
NODE_SESSION_OPERATIONS = tuple(name for name, op in TABLE.items() if op.node_session)
