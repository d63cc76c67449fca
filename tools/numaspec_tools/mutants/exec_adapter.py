"""A mutant behind the adapter protocol: the reference with one node or affinity mutation,
run as an ``exec:`` implementation, so that the suite has to reject it through ``numaspec
conformance`` alone, with no in-process access (tests/suite/power/test_mutants_exec.py).

``python -m numaspec_tools.mutants.exec_adapter node MUTATION`` serves ``node`` and ``hints``
sessions
from the reference with the node mutation of tools/numaspec_tools/mutants/node_mutants.py applied
to every
node it creates; ``... affinity MUTATION`` serves ``affinity`` sessions with the affinity
mutation of tools/numaspec_tools/mutants/affinity_mutants.py; ``... node none`` serves the
reference itself
(the control).  Everything else is the reference's: merge cases, the start answer (named
``mutant:<kind>:<mutation>``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from numaspec.protocols.adapter_protocol import ReferenceAdapter, serve_adapter
from numaspec_tools.mutants.affinity_mutants import AFFINITY_MUTATIONS, AffinityMutant
from numaspec_tools.mutants.node_mutants import NODE_MUTATIONS, MutantNode

#: Mutants of the node's start-up, each a wrong reading of the create request.
STARTUP_MUTATIONS = {"gates_ignored": "every feature gate left at its default"}
#: Mutants of in-place resize (NWIRE-6), each a wrong answer to a resize step.
RESIZE_MUTATIONS = {"always_in_progress": "every resize answered InProgress, never evaluated"}
#: Mutants of what a node refuses (NWIRE-3, P-NODE-MALFORMED) or reads (P-QUANTITY-SPELLING).
MALFORMED_MUTATIONS = {
    "sorted_where": "the machine's NUMA nodes put in id order before they are read, so an "
                    "error points at the entry's place in id order (numaspec before issue 33)",
    "bad_quantity_as_zero": "a pod's request or limit that is not a quantity read as zero, as "
                            "Go code that drops ParseQuantity's error does",
    "reservation_as_bytes": "a reservedMemory limit read as its amount in bytes whatever its "
                            "spelling, so 0.25Gi starts a node kubelet's AsInt64 stops "
                            "(numaspec before finding 34)",
}


class MutantAdapter(ReferenceAdapter):
    """The reference with one mutation (``none``: none at all)."""

    def __init__(self, kind: str, mutation: str) -> None:
        known = {"node": NODE_MUTATIONS, "affinity": AFFINITY_MUTATIONS,
                 "startup": STARTUP_MUTATIONS, "resize": RESIZE_MUTATIONS,
                 "malformed": MALFORMED_MUTATIONS}.get(kind)
        if known is None or (mutation != "none" and mutation not in known):
            raise SystemExit(f"usage: exec_adapter.py node|affinity|startup|resize|malformed "
                             "MUTATION|none "
                             f"(node: {', '.join(sorted(NODE_MUTATIONS))}; affinity: "
                             f"{', '.join(AFFINITY_MUTATIONS)})")
        super().__init__()
        self.kind, self.mutation = kind, mutation

    def start(self) -> dict[str, Any]:
        return {**super().start(), "name": f"mutant:{self.kind}:{self.mutation}"}

    def run(self, op: str, case: Any) -> dict[str, Any]:
        if self.mutation == "none":
            return super().run(op, case)
        if self.kind == "node" and op in ("node", "hints"):
            node = MutantNode(self.mutation)
            return {"result": {"answers": [node.handle(step) if isinstance(step, dict)
                                           else node.session.answer(json.dumps(step))
                                           for step in case["steps"]]}}
        if self.kind == "startup" and op in ("node", "hints"):
            # gates_ignored: a node that reads no feature gate (every gate at its default), so
            # an option whose gate is off starts where kubelet refuses (P-NODE-STARTUP).
            steps = [{**s, "node": {**s["node"], "config": {
                k: v for k, v in s["node"].get("config", {}).items() if k != "featureGates"}}}
                if isinstance(s, dict) and s.get("op") == "create"
                and isinstance(s.get("node"), dict) else s for s in case["steps"]]
            return super().run(op, {**case, "steps": steps})
        if self.kind == "resize" and op in ("node", "hints"):
            # always_in_progress: a node that says yes to every resize of a live pod without
            # evaluating it (RESIZE-1, RESIZE-4..RESIZE-6 skipped); the rest is the reference's.
            done = super().run(op, case)
            answers = done.get("result", {}).get("answers")
            for step, answer in zip(case["steps"], answers or [], strict=False):
                if isinstance(step, dict) and step.get("op") == "resize" and "resize" in answer:
                    answer["resize"] = {"status": "InProgress", "reason": "", "message": ""}
            return done
        if self.kind == "malformed" and op in ("node", "hints"):
            steps = [_misread(self.mutation, s) if isinstance(s, dict) else s
                     for s in case["steps"]]
            return super().run(op, {**case, "steps": steps})
        if self.kind == "affinity" and op == "affinity":
            return {"result": AffinityMutant(self.mutation).affinity_session(case)}
        return super().run(op, case)


def _misread(mutation: str, step: dict[str, Any]) -> dict[str, Any]:
    """A request as the ``malformed`` mutant reads it."""
    from numaspec.errors import NumaspecError
    from numaspec.node.quantity import parse_quantity

    step = json.loads(json.dumps(step))
    machine = step.get("node", {}).get("machine") if step.get("op") == "create" else None
    if mutation == "sorted_where" and isinstance(machine, dict) and isinstance(
            machine.get("numaNodes"), list):
        machine["numaNodes"].sort(key=lambda n: n.get("id", 0) if isinstance(
            n, dict) and isinstance(n.get("id"), int) else 0)
    config = step.get("node", {}).get("config") if step.get("op") == "create" else None
    if mutation == "reservation_as_bytes" and isinstance(config, dict):
        for entry in config.get("reservedMemory", []) if isinstance(
                config.get("reservedMemory"), list) else []:
            limits = entry.get("limits") if isinstance(entry, dict) else None
            if not isinstance(limits, dict):
                continue
            for name, amount in list(limits.items()):
                try:
                    parsed = parse_quantity(amount)
                except NumaspecError:
                    continue
                if parsed.denominator == 1:
                    limits[name] = str(parsed.numerator)
    pod = step.get("pod") if step.get("op") == "admit" else None
    if mutation == "bad_quantity_as_zero" and isinstance(pod, dict):
        for part in ("initContainers", "containers"):
            for container in pod.get(part, []) if isinstance(pod.get(part), list) else []:
                resources = container.get("resources") if isinstance(container, dict) else None
                for kind in ("requests", "limits"):
                    amounts = resources.get(kind) if isinstance(resources, dict) else None
                    if not isinstance(amounts, dict):
                        continue
                    for name, amount in list(amounts.items()):
                        try:
                            parse_quantity(amount)
                        except NumaspecError:
                            amounts[name] = "0"
    return step


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: exec_adapter.py node|affinity|startup|resize|malformed "
                         "MUTATION|none")
    sys.exit(serve_adapter(MutantAdapter(sys.argv[1], sys.argv[2]), sys.stdin.buffer,
                           sys.stdout))
