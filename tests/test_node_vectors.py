"""Node vectors (spec/vectors/node-*.jsonl): the reference gives every recorded answer, and
where a vector says kubelet agrees, the Go node probe of that release does too.  Vectors cite
ADMIT-1, ADMIT-2, ADMIT-3, ADMIT-4, MEM-3, MEM-4, MEM-6, MEM-9, INV-3, CPU-10 and DEV-4."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from test_node_differential import BIN, normalize

from numaspec.conformance.exec_node import ExecNode
from numaspec.conformance.node_vectors import NodeVector, load_node_vectors, replay
from numaspec.node_wire import NodeSession

VECTORS = list(load_node_vectors())


def test_there_are_node_vectors() -> None:
    assert len(VECTORS) >= 6
    assert len({v.id for v in VECTORS}) == len(VECTORS)


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.id)
def test_reference_replays_node_vector(vector: NodeVector) -> None:
    session = NodeSession()
    assert replay(lambda r: session.answer(json.dumps(r)), vector) == []


@pytest.mark.parametrize("vector", [v for v in VECTORS if v.kubelet.startswith("agrees")],
                         ids=lambda v: v.id)
def test_kubelet_agrees_with_node_vector(vector: NodeVector) -> None:
    match = re.search(r"kubelet (1\.\d+\.\d+)", vector.kubelet)
    assert match, vector.kubelet
    binary = BIN / f"kubelet-node-v{match.group(1)}"
    if not binary.exists():
        pytest.skip(f"kubelet node probe not built ({binary.name}): run adapters/kubelet/build.sh")
    minor = match.group(1).rsplit(".", 1)[0]
    probe = ExecNode([str(binary)], name=binary.name)
    try:
        def handle(request: dict[str, Any]) -> dict[str, Any]:
            if request.get("op") == "create":  # the probe serves its own release only
                request = {**request, "node": {**request["node"], "kubeletVersion": minor}}
            return probe.handle(request)
        assert replay(handle, vector, normalize) == []
    finally:
        probe.close()
