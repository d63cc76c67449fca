"""Regenerate each scenario's ``state/``: kubelet's state files (as 1.29-1.36 write them,
OPS-9) of the scenario's node after it admitted the scenario's running pods in order.

    numaspec-dev regenerate --only operator-state

``tests/operators/test_operator.py`` fails when the committed files differ from what this writes.
Scenarios: ``two-socket`` (the sysfs fixture with ``kube/``'s configuration and pods),
``seed001`` and ``seed004`` (the seeds' worked examples), ``gpu-node`` (the operators' guide's
transcript).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from numaspec_tools import FIXTURES

HERE = FIXTURES / "operator"
#: scenario -> (kubelet version, running pods file)
SCENARIOS = {
    "two-socket": ("1.30.14", FIXTURES / "kube" / "pods.yaml"),
    "seed001": ("1.30.14", HERE / "seed001" / "running.yaml"),
    "seed004": ("1.33.13", HERE / "seed004" / "running.yaml"),
    # the operators' guide's transcript (issue 57): a GPU node made for it
    "gpu-node": ("1.34.9", HERE / "gpu-node" / "running.yaml"),
}


def machine(name: str) -> Any:
    if name == "two-socket":
        from numaspec.operators.importers.sysfs import read_device_map, read_sysfs

        return read_sysfs(FIXTURES / "sysfs" / "two-socket-4numa",
                          devices=read_device_map(FIXTURES / "sysfs" /
                                                  "two-socket-4numa.devices.yaml"))
    import json

    from numaspec.protocols.node_protocol import decode_machine

    return decode_machine(json.loads((HERE / name / "machine.json").read_text("utf-8")))


def config_path(name: str) -> Path:
    return FIXTURES / "kube" / "kubelet-config.yaml" if name == "two-socket" else \
        HERE / name / "kubelet-config.yaml"


def state(name: str) -> dict[str, str]:
    from numaspec.node.admission import Node
    from numaspec.operators.importers.kube_objects import read_pods
    from numaspec.operators.importers.kubelet_config import read_kubelet_config
    from numaspec.operators.restore import TERMINAL_PHASES, state_files

    version, pods = SCENARIOS[name]
    node = Node(machine(name), read_kubelet_config(config_path(name), kubelet_version=version))
    for imported in read_pods(pods):
        if imported.phase in TERMINAL_PHASES:
            continue
        decision = node.admit(imported.pod)
        if not decision.admitted:
            raise SystemExit(f"{imported.source}: not admitted: {decision.message}")
    return {path: text + "\n" for path, text in state_files(node).items()}


def main() -> int:
    for name in SCENARIOS:
        for path, text in state(name).items():
            target = HERE / name / "state" / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
