"""The checker's one symmetry reduction: the instances of a pod kind are interchangeable
(spec/conformance/checking.md, CHECK-11).

The instances ``g1-1`` and ``g1-2`` of a kind are one pod body under two uids, and the node
reads a uid only as a label: it keys its bookkeeping by it and lists it in its ``state``
answer in sorted order, but never decides anything by comparing two uids.  So renaming the
instances of each kind (a permutation of ``KIND-1..KIND-N`` per kind) maps every path, its
answers and its states to another path's; a state's canonical form is the least, as text, of
the renamings that put each kind's pods on its lowest-numbered uids, so two states have one
form exactly when a renaming maps one to the other.

NUMA nodes, sockets, CPUs and devices are not reduced: the rules break their ties by number
(MASK-2's lowest mask, CPU-10's packing by id, the CPU and memory reserved on NUMA node 0), so
the node does not treat them as labels (CHECK-11 gives a state pair that shows it)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["Key", "canonical_key", "kind_of", "plain_key", "renamed", "split_state"]

#: A state as the checker keys it: the ``state`` answer as text, and the pods on the node.
Key = tuple[str, frozenset[str]]


def kind_of(uid: str) -> str:
    """The kind of an instance of the alphabet (uid ``KIND-N``, bounds.pod_alphabet)."""
    return uid.rsplit("-", 1)[0]


def _text(state: Any) -> str:
    return json.dumps(state, sort_keys=True, separators=(",", ":"))


def _state(answer: Any) -> Any:
    return answer.get("state") if isinstance(answer, dict) else answer


def plain_key(answer: Any, live: frozenset[str]) -> Key:
    """CHECK-2: a state, unreduced: the ``state`` answer's content and the pods on the node."""
    return _text(_state(answer)), live


#: NODE-8: where a ``state`` answer names pods: the ``pods`` list (sorted), each manager's
#: ``assignments`` (keyed by uid), and the scheduler's ``reserved`` list (affinity nodes).
#: Nowhere else: the equivariance test of tests/suite/test_checking.py replays renamed paths
#: and would see a uid left elsewhere.
NAMED = ("pods", "reserved")


def split_state(state: Any) -> tuple[Any, dict[str, Any]]:
    """A ``state`` answer as what names no pod, and what does (NODE-8)."""
    if not isinstance(state, dict):
        return state, {}
    rest: dict[str, Any] = {}
    named: dict[str, Any] = {}
    for field, value in state.items():
        if field in NAMED:
            named[field] = value
        elif isinstance(value, dict) and "assignments" in value:
            rest[field] = {k: v for k, v in value.items() if k != "assignments"}
            named[field] = value["assignments"]
        else:
            rest[field] = value
    return rest, named


def renamed(named: dict[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """The parts of a state that name pods (``split_state``), each uid of ``names`` renamed and
    the lists sorted again (NODE-8 sorts them)."""
    out: dict[str, Any] = {}
    for field, value in named.items():
        if isinstance(value, list):
            out[field] = sorted(names.get(uid, uid) for uid in value) if field == "pods" \
                else [names.get(uid, uid) for uid in value]
        elif isinstance(value, dict):
            out[field] = {names.get(uid, uid): held for uid, held in value.items()}
        else:
            out[field] = value
    return out


def canonical_key(answer: Any, live: frozenset[str]) -> Key:
    """CHECK-11: the state's canonical form under renaming the instances of each kind: the
    least text of the renamings that put each kind's pods on its lowest-numbered uids (when
    they are there already, one at most of each kind, the state's own text)."""
    by_kind: dict[str, list[str]] = {}
    for uid in live:
        by_kind.setdefault(kind_of(uid), []).append(uid)
    if all(uids == [f"{kind}-1"] for kind, uids in by_kind.items()):
        return plain_key(answer, live)  # the identity is the only such renaming
    state = _state(answer)
    rest, named = split_state(state)
    kinds = sorted(by_kind)
    lowest = frozenset(f"{kind}-{n}" for kind in kinds
                       for n in range(1, len(by_kind[kind]) + 1))
    best: str | None = None
    for orders in itertools.product(*(itertools.permutations(sorted(by_kind[kind]))
                                      for kind in kinds)):
        names = {uid: f"{kind}-{n}" for kind, order in zip(kinds, orders, strict=True)
                 for n, uid in enumerate(order, 1)}
        text = _text(_joined(state, rest, renamed(named, names)))
        if best is None or text < best:
            best = text
    assert best is not None
    return best, lowest


def _joined(state: Any, rest: Any, named: dict[str, Any]) -> Any:
    """A ``state`` answer put back together from ``split_state``'s parts."""
    if not isinstance(state, dict):
        return state
    out = dict(rest)
    for field, value in named.items():
        if field in NAMED:
            out[field] = value
        else:
            out[field] = {**rest[field], "assignments": value}
    return out
