"""The registry of conformance properties: what a property is, and the table of them.

A property registers itself with :func:`register` where it is defined
(``conformance/properties/merge.py`` for the merge, ``conformance/properties/affinity.py`` for
NUMA-level inter-pod affinity); ``PROPERTIES`` is the table the suite, the runner and the
spec cross-check read.  Kept apart from the properties themselves so that neither module
imports the other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import attrs

from numaspec.conformance.implementations.adapter import MergeImplementation, supported_versions
from numaspec.conformance.implementations.claims import claims_of
from numaspec.conformance.properties.strategies import POLICIES, Reach

__all__ = ["PROPERTIES", "Level", "Property", "reach_of", "register"]

Level = Literal["invariant", "equivalence"]


@attrs.frozen
class Property:
    id: str
    rules: tuple[str, ...]
    level: Level
    title: str
    check: Callable[[MergeImplementation], None]
    #: An optional adapter capability the property needs (it is skipped, visibly, without it).
    requires: str | None = None
    #: The oldest kubelet minor the property speaks of; an implementation that models none of
    #: the releases from there on gets it skipped, visibly (its cases would all be filtered).
    since: int | None = None
    #: The operation the property's requests use (PROTO-3): an implementation that does not
    #: declare it gets the property skipped, visibly.
    op: str = "merge"
    #: PROTO-7: the policies its requests are drawn from, the policy options and the refusals
    #: (error kinds) it cannot do without; an implementation that claims none of the
    #: policies, or not every option and refusal, gets the property reported not claimed.
    policies: tuple[str, ...] = POLICIES
    options: tuple[str, ...] = ()
    refusals: tuple[str, ...] = ()
    #: For node sessions: the managers every session it draws runs, and the scopes (an
    #: implementation whose claims.node leaves one out gets the property reported not
    #: claimed).
    managers: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    #: PROTO-7: the property judges numaspec's own line format (its error kinds and where they
    #: point), so only an implementation that claims the format is judged by it.
    format: bool = False

    def applies_to(self, impl: object) -> str | None:
        """Why the property cannot be judged for ``impl``, or None."""
        if self.op != "merge":
            node = [int(v.split(".")[1]) for v in getattr(impl, "node_kubelet_versions", ())
                    if isinstance(v, str) and v.startswith("1.") and v[2:].isdigit()]
            unmodelled = getattr(impl, "unmodelled_node", ())
            if not node and unmodelled and self.op in ("node", "hints"):
                return (f"{getattr(impl, 'name', 'the implementation')} declares its node at "
                        f"kubelet {', '.join(unmodelled)} only, where numaspec does not model "
                        "node admission (NODE-0; a pre-release read for the merge only)")
            if self.since is not None and node and all(m < self.since for m in node):
                return (f"it speaks of kubelet 1.{self.since} and later, which "
                        f"{getattr(impl, 'name', 'the implementation')} does not declare for "
                        f"its node")
            return None
        if self.since is not None and all(v.minor < self.since
                                          for v in supported_versions(impl)):
            return (f"it speaks of kubelet 1.{self.since} and later, which "
                    f"{getattr(impl, 'name', 'the implementation')} does not declare")
        return None

    def outside_claims(self, impl: object) -> str | None:
        """Why the property asks what ``impl`` does not claim (PROTO-7), or None."""
        claims = claims_of(impl)
        who = getattr(impl, "name", "the implementation")
        if self.format and not claims.format:
            return (f"it judges numaspec's own line format (error kinds and where they point, "
                    f"NWIRE-3), which {who} does not claim as its interface")
        if self.op in ("predict", "node", "hints"):
            # These draw their sessions inside claims.predict or claims.node.
            part = claims.predict if self.op == "predict" else claims.node
            empty = [f for f in ("scopes", "policies") if getattr(part, f) == frozenset()]
            if empty:
                return f"{who} claims no {' and no '.join(empty)} for {self.op}"
            missing = [m for m in self.managers
                       if part.managers is not None and m not in part.managers]
            if missing:
                return (f"its sessions run the {' and '.join(missing)} manager, which {who} "
                        "does not claim")
            scopes = [s for s in self.scopes if part.scopes is not None and s not in part.scopes]
            if scopes:
                return (f"its sessions are at {' and '.join(scopes)} scope, which {who} does "
                        "not claim")
            return None
        if self.op != "merge":
            # affinity sessions are fitted to claims.node (Session.fitted), but their pods
            # are placed by the CPU Manager: without it there is nothing to place
            node = claims.node
            empty = [f for f in ("scopes", "policies") if getattr(node, f) == frozenset()]
            if empty:
                return f"{who} claims no {' and no '.join(empty)} for {self.op}"
            if node.managers is not None and "cpu" not in node.managers:
                return (f"its sessions place pods by their exclusive CPUs, and {who} does not "
                        "claim the CPU Manager")
            return None
        if not any(claims.merge.claims_policy(p) for p in self.policies):
            return f"it asks about {', '.join(self.policies)}, which {who} does not claim"
        missing = [o for o in self.options if not claims.merge.claims_option(o)]
        missing += [k for k in self.refusals if not claims.merge.claims_refusal(k)]
        if "prefer-closest-numa-nodes" in self.options and not claims.merge.distances:
            missing.append("NUMA distances (prefer-closest-numa-nodes reads them)")
        if missing:
            return f"it needs {', '.join(missing)}, which {who} does not claim"
        return None


PROPERTIES: dict[str, Property] = {}


def register(pid: str, *, rules: Sequence[str], level: Level, requires: str | None = None,
              since: int | None = None, op: str = "merge", policies: Sequence[str] = POLICIES,
              options: Sequence[str] = (), refusals: Sequence[str] = (),
              managers: Sequence[str] = (), scopes: Sequence[str] = (), format: bool = False
              ) -> Callable[[Callable[..., None]], Callable[..., None]]:
    def add(fn: Callable[..., None]) -> Callable[..., None]:
        title = (fn.__doc__ or pid).strip().splitlines()[0]
        PROPERTIES[pid] = Property(pid, tuple(rules), level, title, fn, requires, since, op,
                                   tuple(policies), tuple(options), tuple(refusals),
                                   tuple(managers), tuple(scopes), format)
        return fn
    return add


def reach_of(impl: object) -> Reach:
    """What the strategies may spend draws on for ``impl`` (PROTO-7): the releases it models,
    and merges past 8 NUMA nodes only if it claims ``max-allowable-numa-nodes``."""
    return Reach(versions=supported_versions(impl),
                 many_nodes=claims_of(impl).merge.claims_option("max-allowable-numa-nodes"))
