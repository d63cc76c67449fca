"""The judges: how an implementation's answer is held to the expected one, per operation
(:func:`compare`: ``[]`` when they agree, else each difference in a line), and what a
vector's case and answer must look like.  One module per operation, each listing its
:class:`~numaspec.conformance.cases.judges.judge.Judge` in ``JUDGES``; this package gathers
them (a new operation's judge is a new module here, nothing else to list).  The runner, the
differential, the behaviour diff and the properties judge through here; the manifests' facts
(:mod:`numaspec.conformance.cases.divergences`) and the differential's shapes
(:mod:`numaspec.conformance.cases.shapes`) are gathered from here; the vector loader
(:mod:`numaspec.conformance.cases.vectors`) only loads."""

from __future__ import annotations

import importlib
import pkgutil
from types import MappingProxyType
from typing import Any

from numaspec.conformance.cases.judges.judge import Judge
from numaspec.conformance.cases.judges.merge import decode_answer
from numaspec.conformance.cases.judges.wording import LIMIT, require, short
from numaspec.errors import InvalidFieldError
from numaspec.protocols.operations import OPERATIONS

__all__ = ["JUDGES", "LIMIT", "Judge", "compare", "decode_answer", "require", "short"]

#: Modules of this package that hold no operation's judge.
_HELPERS = frozenset({"judge", "wording"})


def _gather() -> MappingProxyType[str, Judge]:
    found: dict[str, Judge] = {}
    for module in pkgutil.iter_modules(__path__):
        if module.name in _HELPERS:
            continue
        for judge in importlib.import_module(f"{__name__}.{module.name}").JUDGES:
            if judge.op in found:
                raise RuntimeError(f"two judges of {judge.op!r} (the second in {module.name})")
            found[judge.op] = judge
    if set(found) != set(OPERATIONS):
        raise RuntimeError(f"judges of {sorted(found)}, operations {sorted(OPERATIONS)}: each "
                           "operation of numaspec.protocols.operations needs one judge here")
    return MappingProxyType({op: found[op] for op in OPERATIONS})


#: PROTO-3: each operation's judge, in the protocol's order.
JUDGES = _gather()


def compare(op: str, case: Any, expected: Any, actual: Any) -> list[str]:
    """How ``actual`` differs from ``expected`` for ``case``: ``[]`` when they agree.

    ``merge``: outcomes equal, or errors of the same kind (any of the bad options' kinds when
    several are bad, OPT-1).  ``node``/``hints``/``affinity``: step by step, errors by kind,
    decisions and states equal up to devices that report the same NUMA nodes (RUN-12), each
    resource's hints compared without regard to order (NWIRE-4).  ``predict``: the same answer
    exactly (for the reference's own answers; the runner judges an implementation's
    prediction by PRED-4 instead).  ``allocate``: the same answer up to the order of the
    node's pools (DRA-2).  ``mixed``: the same answer exactly, part by part (only the
    reference answers it; its cases search one pool per driver, DRA-13).  ``cpus``: the same
    CPUs, or both unsatisfiable, or errors of the same kind (CPU-21).  An error's
    ``kubelet_message``, where both sides give one, must hold the same words (RUN-11).
    """
    judge = JUDGES.get(op)
    if judge is None:
        raise InvalidFieldError(f"unknown op {op!r} (known: {', '.join(OPERATIONS)})",
                                where="op")
    return judge.compare(case, expected, actual)
