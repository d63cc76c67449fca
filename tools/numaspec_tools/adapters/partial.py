"""A partial implementation, as a peer would write one: ``restricted`` and
``single-numa-node`` for kubelet 1.30, merge only, no policy options, no feature gates, no
start-up refusals, and a lenient JSON reading of its own (unknown fields ignored).  Its merge
is the reference's (the point of the fixture is what it claims, not how it merges).

``python partial.py [--no-claims] [--bug admit-all] [--skip-distances] [--claim-no-distances]``:
``--no-claims`` leaves the claims out of the start answer (what a partial adapter got before
PROTO-7: every property stopped at its first request of another policy); ``--bug admit-all``
admits every pod under restricted, a bug the claimed properties must still catch;
``--skip-distances`` answers ``skipped`` to every request that gives NUMA distances (it models
none), and ``--claim-no-distances`` says so in its claims (``distances: false``)
(tests/suite/test_claims.py).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from numaspec.protocols.merge_protocol import decode_merge_request, encode_outcome, evaluate_request

CLAIMS: dict[str, Any] = {
    "format": False,
    "merge": {"policies": ["restricted", "single-numa-node"], "policy_options": [],
              "feature_gates": False, "refusals": False}}
_FIELDS = ("kubelet_version", "numa_nodes", "numa_distances", "policy", "providers")


def merge(case: dict[str, Any], bug: str) -> dict[str, Any]:
    """Leniently read (unknown fields and options ignored), then merged as kubelet 1.30."""
    request = decode_merge_request({k: v for k, v in case.items() if k in _FIELDS})
    answer = encode_outcome(evaluate_request(request))
    if bug == "admit-all":
        answer["admit"] = True
    return answer


def main() -> int:
    claims = "--no-claims" not in sys.argv
    bug = sys.argv[sys.argv.index("--bug") + 1] if "--bug" in sys.argv else ""
    skip_distances = "--skip-distances" in sys.argv
    merge_claims = {**CLAIMS["merge"], "distances": False} \
        if "--claim-no-distances" in sys.argv else CLAIMS["merge"]
    for line in sys.stdin:
        request = json.loads(line)
        if request["cmd"] == "stop":
            return 0
        if request["cmd"] == "start":
            impl: dict[str, Any] = {"name": "partial-fixture", "version": "0.1",
                                    "language": "python", "homepage": "", "issues": "",
                                    "kubelet_versions": ["1.30"], "operations": ["merge"]}
            if claims:
                impl["claims"] = {**CLAIMS, "merge": merge_claims}
            answer: dict[str, Any] = {"ready": True, "version": 1, "implementation": impl}
        elif skip_distances and request["case"].get("numa_distances") is not None:
            answer = {"seq": request["seq"], "skipped": True,
                      "message": "this implementation models no NUMA distances"}
        else:
            try:
                answer = {"seq": request["seq"], "result": merge(request["case"], bug)}
            except Exception as exc:  # a case this partial implementation cannot read
                answer = {"seq": request["seq"], "errored": True,
                          "context": {"message": f"{type(exc).__name__}: {exc}"}}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
