"""Node vectors (spec/vectors, op node and hints): the reference gives every recorded answer,
and where a vector's notes say kubelet agrees, the Go node probe of that release does too.
The recorded sessions cite ADMIT-1, ADMIT-2, ADMIT-3, ADMIT-4, MEM-3, MEM-4, MEM-6, MEM-9,
INV-3, CPU-10 and DEV-4."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from numaspec.conformance.cases.judges import compare
from numaspec.conformance.cases.vectors import Vector, load_vectors
from numaspec.conformance.implementations.exec_node import ExecNode
from numaspec.protocols.node_protocol import NodeSession
from numaspec_tools.builds.kubelet import node_command
from numaspec_tools.testing.sessions import normalizer

VECTORS = [v for v in load_vectors() if v.op in ("node", "hints")]
RECORDED = ("node-overlap-best-effort-1.37", "node-overlap-pod-scope-1.37",
            "node-release-order-1.30", "node-seed001-two-containers",
            "node-seed004-pods-4-7-1.30", "node-seed004-pods-4-7-1.33")


def test_the_recorded_sessions_are_vectors() -> None:
    assert set(RECORDED) <= {v.id for v in VECTORS}
    assert len({v.id for v in VECTORS}) == len(VECTORS)


def replay(handle: Any, vector: Vector) -> list[str]:
    """Run the vector's steps through ``handle`` and compare with the recorded answers."""
    answers = [handle(step) for step in vector.case["steps"]]
    return compare(vector.op, vector.case, vector.expected, {"answers": answers})


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.id)
def test_reference_replays_node_vector(vector: Vector) -> None:
    session = NodeSession()
    assert replay(lambda r: session.answer(json.dumps(r)), vector) == []


@pytest.mark.go
@pytest.mark.parametrize("vector", [v for v in VECTORS
                                    if v.op == "node" and v.notes.startswith("kubelet: agrees")],
                         ids=lambda v: v.id)
def test_kubelet_agrees_with_node_vector(vector: Vector) -> None:
    match = re.search(r"kubelet (1\.\d+\.\d+)", vector.notes)
    assert match, vector.notes
    minor = match.group(1).rsplit(".", 1)[0]
    command = node_command(minor)
    probe = ExecNode(command, name=" ".join(Path(c).name for c in command))
    try:
        def handle(request: dict[str, Any]) -> dict[str, Any]:
            if request.get("op") == "create":  # the probe serves its own release only
                request = {**request, "node": {**request["node"], "kubeletVersion": minor}}
            return probe.handle(request)

        steps = vector.case["steps"]
        ours, theirs = normalizer(), normalizer()
        got = [ours(r, handle(r)) for r in steps]
        want = [theirs(r, a) for r, a in zip(steps, vector.expected["answers"], strict=True)]
        assert got == want
    finally:
        probe.close()
