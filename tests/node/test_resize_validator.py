"""RESIZE-2's PodResizeValidator (1.36+): the API server refuses a resize whose requests alone
exceed the node's allocatable, and numaspec answers in the plugin's own words.  The node
probes of 1.36 and 1.37 run the release's own plugin (adapters/kubelet/release/resize/
from_1_36.go) before kubelet: beyond the agreement of kinds that tests/node/test_node_vectors.py
checks, the refusal's text is the reference's, after the API server's Forbidden prefix."""

from __future__ import annotations

import json
from typing import Any

import pytest

from numaspec.conformance.cases.vectors import instances, load_vectors
from numaspec.protocols.node_protocol import NodeSession

VECTORS = ("resize-beyond-capacity-1.36", "resize-beyond-capacity-1.37",
           "resize-beyond-allocatable-refused-1.36")
_BY_ID = {v.id: v for v in load_vectors() if v.id in VECTORS}


def _refusal(answers: list[dict[str, Any]]) -> dict[str, Any]:
    return next(a["error"] for a in answers if "error" in a)


def _session(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    session = NodeSession()
    return [session.answer(json.dumps(step)) for step in steps]


@pytest.mark.parametrize("vector_id", VECTORS)
def test_the_reference_refuses_in_the_plugins_words_from_1_36(vector_id: str) -> None:
    vector = _BY_ID[vector_id]
    for instance in instances(vector):
        steps = instance.case["steps"]
        minor = int(str(steps[0]["node"]["kubeletVersion"]).split(".")[1])
        answers = _session(steps)
        if minor >= 36:
            error = _refusal(answers)
            assert error["kind"] == "invalid-field"
            assert error["message"].startswith("node didn't have enough allocatable resources: ")
        else:  # 1.33-1.35: kubelet's own node-capacity check (RESIZE-5)
            assert answers[2]["resize"]["status"] == "Infeasible"


def test_both_short_resources_are_named_cpu_first() -> None:
    answers = _session(_BY_ID["resize-beyond-allocatable-refused-1.36"].case["steps"])
    message = _refusal(answers)["message"]
    assert message.index("cpu, requested: 7500, allocatable: 7000") < message.index(
        "; memory, requested: 17179869184, allocatable: ")


@pytest.mark.go
@pytest.mark.parametrize("minor", ["1.36", "1.37"])
@pytest.mark.parametrize("vector_id", VECTORS)
def test_kubelets_api_server_refuses_in_the_same_words(vector_id: str, minor: str) -> None:
    from numaspec.conformance.implementations.exec_node import ExecNode
    from numaspec_tools.builds.kubelet import node_command

    instance = next(i for i in instances(_BY_ID[vector_id])
                    if str(i.case["steps"][0]["node"]["kubeletVersion"]) == minor)
    steps = instance.case["steps"]
    want = _refusal(_session(steps))["message"]
    probe = ExecNode(node_command(minor), name=f"kubelet {minor}")
    try:
        got = _refusal([probe.handle(step) for step in steps[:3]])
    finally:
        probe.close()
    # the API server's text: pods "<name>" is forbidden: <the plugin's words>
    assert got["message"].endswith(f" is forbidden: {want}"), got
