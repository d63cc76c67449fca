"""Node sessions at kubelet 1.38 (read at 1.38.0-beta.0), the reference's answers beside the
probe's: the helpers tests/node/test_memory_138.py and the 1.38 tests against kubelet share
(create steps of a 1.38 node, a vector's steps retargeted, the reference's and kubelet's answers,
where they differ)."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

from numaspec.conformance.cases.vectors import load_vectors
from numaspec.protocols.node_protocol import NodeSession
from numaspec_tools.builds.kubelet import node_probe
from numaspec_tools.testing.sessions import normalizer

#: The release these tests are about.
RELEASE = "1.38"


VECTORS = {v.id: v for v in load_vectors()}


def at_release(steps: Sequence[dict[str, Any]], release: str = RELEASE) -> list[dict[str, Any]]:
    """``steps`` with every create step's ``kubeletVersion`` set to ``release``."""
    out = copy.deepcopy(list(steps))
    for step in out:
        if step.get("op") == "create" and isinstance(step.get("node"), dict):
            step["node"]["kubeletVersion"] = release
    return out


def create(machine: dict[str, Any], config: dict[str, Any] | None = None
           ) -> dict[str, Any]:
    """A create step of a 1.38 node."""
    node = {"kubeletVersion": RELEASE, "machine": machine}
    return {"op": "create", "node": node if config is None else {**node, "config": config}}


def vector_steps(vector_id: str, release: str = RELEASE) -> list[dict[str, Any]]:
    return at_release(VECTORS[vector_id].case["steps"], release)


def reference(steps: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reference's answers to ``steps`` on a fresh session."""
    return reference_and_choices(steps)[0]


def reference_and_choices(steps: Sequence[dict[str, Any]]
                          ) -> tuple[list[dict[str, Any]], int | None]:
    """The reference's answers, and the index of the first step after which its Device
    Manager's tie-break decided on which NUMA nodes a container's devices are (DEV-6: kubelet
    decides that in Go map order, F-DEV-CHOICE), None if none did."""
    session = NodeSession()
    answers: list[dict[str, Any]] = []
    chosen = None
    for index, step in enumerate(steps):
        answers.append(session.answer(json.dumps(step)))
        node = session.node
        if chosen is None and node is not None and node.devices.numa_choices:
            chosen = index
    return answers, chosen


def _sorted_hints(answer: dict[str, Any]) -> dict[str, Any]:
    """NWIRE-4: each resource's hints compared without regard to order."""
    hints = answer.get("hints")
    if not isinstance(hints, dict):
        return answer
    return {"hints": {r: None if h is None else sorted(h, key=lambda x: json.dumps(
        x, sort_keys=True)) for r, h in hints.items()}}


def kubelet(steps: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Kubelet 1.38.0-beta.0's node probe's answers to ``steps`` (skips as
    tools/numaspec_tools/builds/kubelet.py says when the release is not built)."""
    with node_probe(RELEASE) as probe:
        return [probe.handle(step) for step in steps]


def disagreements(steps: Sequence[dict[str, Any]]) -> list[str]:
    """Where the reference and kubelet 1.38.0-beta.0's probe differ on ``steps``: decisions,
    hints (scores included, order aside) and states as
    tests/upstream/kubelet/test_node_differential.py
    compares them, errors as errors; up to the step where the reference's tie-break first
    chose devices' NUMA nodes, from which on kubelet's answer is one of several (DEV-6)."""
    ours, theirs = normalizer(), normalizer()
    found = []
    mine_all, chosen = reference_and_choices(steps)
    last = len(steps) if chosen is None else chosen
    steps = steps[:last]
    for index, (step, mine, real) in enumerate(zip(steps, mine_all[:last], kubelet(steps),
                                                   strict=True)):
        a, b = _sorted_hints(ours(step, mine)), _sorted_hints(theirs(step, real))
        if a != b:
            found.append(f"step {index + 1} ({step.get('op')}): kubelet {json.dumps(b)[:400]}"
                         f", reference {json.dumps(a)[:400]}")
    return found


def hints_of(answer: dict[str, Any], resource: str = "memory") -> list[tuple[Any, ...]]:
    """A hints answer's list for ``resource`` as sorted (numa, preferred, score) triples."""
    listed = answer["hints"][resource]
    return sorted((tuple(h["numa"]), h["preferred"], h["score"]) for h in listed)
