#!/usr/bin/env python3
"""A complete adapter: the Topology Manager's `none` policy as kubelet 1.34 runs it."""
import json
import sys

IMPLEMENTATION = {
    "name": "my-none-policy", "version": "0.1.0", "language": "python",
    "homepage": "https://example.org/my-impl", "issues": "https://example.org/my-impl/issues",
    "kubelet_versions": ["1.34"], "operations": ["merge"],
    "claims": {"format": False,
               "merge": {"policies": ["none"], "policy_options": [], "feature_gates": False,
                         "refusals": False, "distances": False}},
}


def merge(case):
    """Call your implementation here.  `none` gives no hint and admits every pod (POLICY-1)."""
    return {"hint": {"numa_affinity": None, "preferred": False}, "admit": True}


for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "start":
        answer = {"ready": True, "version": 1, "implementation": IMPLEMENTATION}
    elif request["cmd"] == "stop":
        break
    else:
        try:
            answer = {"seq": request["seq"], "result": merge(request["case"])}
        except Exception as exc:  # a bug of yours: reported, and the run goes on
            answer = {"seq": request["seq"], "errored": True,
                      "context": {"message": f"{type(exc).__name__}: {exc}"}}
    print(json.dumps(answer), flush=True)
