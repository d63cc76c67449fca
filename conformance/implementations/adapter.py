"""How an implementation plugs into the conformance suite.

An implementation is any object with a ``name`` and a ``merge(request) -> answer`` method
(:class:`MergeImplementation`).  ``request`` is a decoded :class:`numaspec.MergeRequest`; the
answer is a :class:`numaspec.MergeOutcome` or an :class:`ErrorAnswer` naming the error kind
(``spec/protocols/merge-protocol.md`` lists the kinds).  Optional: ``kubelet_versions``, the
versions it models (default: all that numaspec models); ``claims``, what part of the semantics
it claims (a :class:`numaspec.conformance.implementations.claims.Claims` or its JSON, PROTO-7;
default: all of it but numaspec's line format); ``subsets(nodes)``, its NUMA subset
enumeration.

``--impl module:object`` names an implementation: ``object`` is either such an object or a
callable taking no arguments that returns one.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from numaspec.conformance.implementations.claims import Claims
from numaspec.errors import AdapterError, NumaspecError
from numaspec.protocols.merge_protocol import MergeRequest, evaluate_request
from numaspec.topology.masks import iterate_masks
from numaspec.topology.policies import MergeOutcome
from numaspec.topology.versions import SUPPORTED_VERSIONS, KubeletVersion

__all__ = [
    "ErrorAnswer",
    "MergeAnswer",
    "MergeImplementation",
    "ReferenceImplementation",
    "load_implementation",
    "reference",
    "resolve_object",
    "supported_versions",
]


@attrs.frozen
class ErrorAnswer:
    """An implementation's refusal: the stable error kind, and free text for humans."""

    kind: str
    message: str = ""
    #: kubelet's own text for the refusal, where the implementation gives it (RUN-11)
    kubelet_message: str | None = None

    def __str__(self) -> str:
        """As the merge protocol writes an error (WIRE-2)."""
        error = {"kind": self.kind, "message": self.message}
        if self.kubelet_message is not None:
            error["kubelet_message"] = self.kubelet_message
        return json.dumps({"error": error}, separators=(",", ":"))


MergeAnswer = MergeOutcome | ErrorAnswer


@runtime_checkable
class MergeImplementation(Protocol):
    """What the suite needs from an implementation of the Topology Manager merge."""

    @property
    def name(self) -> str:
        """A short name for reports (a plain attribute is fine too)."""
        ...

    def merge(self, request: MergeRequest) -> MergeAnswer: ...


class ReferenceImplementation:
    """numaspec's own reference, as an implementation like any other."""

    name = "numaspec-reference"
    kubelet_versions: tuple[KubeletVersion, ...] = SUPPORTED_VERSIONS
    #: DRA-10: the releases of the structured allocator it models
    allocate_versions: tuple[str, ...] = ("1.33", "1.34", "1.35", "1.36", "1.37")
    #: PROTO-7: numaspec's line format is the reference's own interface.
    claims = Claims(format=True)

    def merge(self, request: MergeRequest) -> MergeAnswer:
        try:
            return evaluate_request(request)
        except NumaspecError as exc:
            return ErrorAnswer(exc.kind, exc.describe(), exc.kubelet_message)

    def affinity_session(self, case: Any) -> Any:
        """An ``affinity`` session (spec chapter affinity.md), for the affinity properties."""
        from numaspec.protocols.adapter_protocol import reference_result

        return reference_result("affinity", case)

    def node_session(self, case: Any) -> Any:
        """A ``node`` session, for P-NODE-SESSION."""
        from numaspec.protocols.adapter_protocol import reference_result

        return reference_result("node", case)

    def hints_session(self, case: Any) -> Any:
        """A ``hints`` session, for P-HINTS-SESSION."""
        from numaspec.protocols.adapter_protocol import reference_result

        return reference_result("hints", case)

    def allocate(self, case: Any) -> Any:
        """An ``allocate`` case (spec chapter dra.md), for the allocator's properties."""
        from numaspec.protocols.adapter_protocol import reference_result

        return reference_result("allocate", case)

    def cpus(self, case: Any) -> Any:
        """A ``cpus`` case (spec chapter cpu.md, CPU-21), for P-CPUS."""
        from numaspec.protocols.adapter_protocol import reference_result

        return reference_result("cpus", case)

    def subsets(self, nodes: Sequence[int]) -> list[tuple[int, ...]]:
        return [mask.nodes for mask in iterate_masks(nodes)]


#: The default ``--impl``.
reference = ReferenceImplementation()


def supported_versions(impl: object) -> tuple[KubeletVersion, ...]:
    versions = getattr(impl, "kubelet_versions", None)
    if versions is None:
        return SUPPORTED_VERSIONS
    return tuple(sorted(versions))


def resolve_object(spec: str) -> object:
    """``module:object`` → the object; a class, or a factory function, is called first."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise AdapterError(f"--impl must be module:object or exec:COMMAND, got {spec!r}",
                           where="--impl")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise AdapterError(f"cannot import {module_name!r}: {type(exc).__name__}: {exc}",
                           where="--impl") from None
    target: object = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise AdapterError(f"{module_name!r} has no attribute {attr!r}", where="--impl")
        target = getattr(target, part)
    is_adapter = hasattr(target, "start") and hasattr(target, "run")
    if isinstance(target, type) or (callable(target) and not is_adapter
                                    and not isinstance(target, MergeImplementation)):
        try:
            target = target()
        except Exception as exc:
            raise AdapterError(f"{spec} failed to construct: {type(exc).__name__}: {exc}",
                               where="--impl") from None
    return target


def load_implementation(spec: str) -> MergeImplementation:
    """Resolve ``module:object`` to a merge implementation (or a factory of one)."""
    target = resolve_object(spec)
    if not isinstance(target, MergeImplementation):
        raise AdapterError(
            f"{spec} is not an implementation: it needs a 'name' and a 'merge(request)' method",
            where="--impl")
    return target
