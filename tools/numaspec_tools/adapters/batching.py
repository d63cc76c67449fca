"""A fixture adapter that declares batches (PROTO-8) and answers them in one chosen way
(tests/protocols/test_batches.py).

``python batching.py MODE``: declares ``"batch": 4`` and answers like the reference
(``numaspec serve``), a batch request with one line of answers; a run request alone as usual.
A case holding ``"fixture": "trigger"`` is the case the modes below act on:

* ``good``: answers every batch right;
* ``crash``: exits with status 3 when asked the trigger case, alone or in a batch (after a
  word on stderr);
* ``hang``: never answers a request that holds the trigger case;
* ``short``: leaves the last answer out of every batch answer;
* ``out-of-order``: swaps the first two answers of every batch answer;
* ``garbage``: answers every batch with a line that is not JSON;
* ``too-many``: answers every batch with one answer more than it asked;
* ``hang-always``: answers start, then never answers anything.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from numaspec.protocols.adapter_protocol import ReferenceAdapter

TRIGGER = {"fixture": "trigger"}


def _triggered(run: dict[str, Any]) -> bool:
    case = run.get("case")
    return isinstance(case, dict) and case.get("fixture") == "trigger"


def main(mode: str) -> int:
    reference = ReferenceAdapter()
    out = sys.stdout

    def answer(run: dict[str, Any]) -> dict[str, Any]:
        return {"seq": run["seq"], **reference.run(run["op"], run["case"])}

    for line in sys.stdin:
        request = json.loads(line)
        cmd = request.get("cmd")
        if cmd == "stop":
            return 0
        if cmd == "start":
            implementation = {**reference.start(), "name": f"batching-{mode}", "batch": 4}
            out.write(json.dumps({"ready": True, "version": 1,
                                  "implementation": implementation}) + "\n")
            out.flush()
            continue
        runs = request["runs"] if cmd == "batch" else [request]
        if mode == "hang-always" or (mode == "hang" and any(map(_triggered, runs))):
            time.sleep(3600)
        if mode == "crash" and any(map(_triggered, runs)):
            print("fixture: crashing on the trigger case", file=sys.stderr, flush=True)
            return 3
        if cmd != "batch":
            out.write(json.dumps(answer(request)) + "\n")
            out.flush()
            continue
        answers = [answer(run) for run in runs]
        if mode == "short":
            answers = answers[:-1]
        if mode == "out-of-order":
            answers[:2] = answers[1::-1]
        if mode == "too-many":
            answers.append(answers[-1])
        text = "this is not JSON" if mode == "garbage" else json.dumps({"answers": answers})
        out.write(text + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
