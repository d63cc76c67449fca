"""A fixture adapter that misbehaves in one chosen way (RUN-2, tests/suite/test_runner.py).

``python misbehave.py MODE``: answers like the reference (``numaspec serve``), except:

* ``crash-third``: exits with status 3 when asked seq 3 (after a word on stderr);
* ``hang``: never answers seq 2; ``hang-always``: never answers any case;
* ``garbage``: answers seq 2 with a line that is not JSON;
* ``flood``: answers seq 2 with a 5 MB line;
* ``stderr``: writes a diagnostic line on stderr for every case, and answers right;
* ``out-of-order``: answers seq 2 with seq 1's number;
* ``wrong``: flips ``admit`` in every merge answer that admits;
* ``all-wrong``: answers every case with the same (mostly wrong) merge answer;
* ``no-start``: exits before answering start;
* ``skip-node``: answers node cases with ``skipped`` (with a reason and a link);
* ``error-merge``: answers merge cases with ``errored`` (a caught error, with context);
* ``bad-schema``: adds a key the schema does not allow to every merge result;
* ``bad-type``: writes the NUMA ids of every merge result's hint as strings (only a
  ``--strict`` run validates the result's types; a normal one judges the answer);
* ``extra-field``: adds a key the protocol does not define to every run answer;
* ``deep``: answers seq 2 with a result nested 100,000 arrays deep (RUN-13);
* ``deep-start``: answers start with ``metadata`` nested 100,000 objects deep;
* ``slow-start``: takes two seconds before it answers start (RUN-2's --start-timeout);
* ``patch-version``: declares ``kubelet_versions`` as patch releases (``"1.30.14"``);
* ``deaf``: answers start, then never reads stdin again (and never answers);
* ``skip-all``: answers every case with ``skipped``;
* ``merge-only``: declares only the ``merge`` operation;
* ``nan``: answers seq 2 with ``NaN`` where a node id belongs (not JSON; RUN-13);
* ``node-shaped``: answers every merge case with a node-shaped result (RUN-13);
* ``daemon``: starts a grandchild in a session of its own that keeps stdout open and sleeps,
  then exits when asked seq 2 (RUN-14).  Every process it starts carries the environment of
  the runner, so that the test can find what is left.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

from numaspec.protocols.adapter_protocol import ReferenceAdapter


def main(mode: str) -> int:
    if mode == "no-start":
        print("cannot start: fixture says so", file=sys.stderr)
        return 2
    reference = ReferenceAdapter()
    out = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        cmd = request.get("cmd")
        if cmd == "stop":
            return 0
        if cmd == "start":
            if mode == "slow-start":
                time.sleep(2)
            implementation = {**reference.start(), "name": f"misbehave-{mode}"}
            implementation.pop("batch")  # PROTO-8: misbehaves one run a request, by its seq
            if mode == "merge-only":
                implementation["operations"] = ["merge"]
            if mode == "patch-version":
                implementation["kubelet_versions"] = ["1.30.14", "1.37.2"]
            if mode == "deep-start":
                out.write('{"ready": true, "version": 1, "implementation": {"name": "deep", '
                          '"metadata": ' + '{"a": ' * 100_000 + "1" + "}" * 100_000 + "}}\n")
                out.flush()
                continue
            answer = {"ready": True, "version": 1, "implementation": implementation}
            if mode == "daemon":
                subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"],
                                 stdin=subprocess.DEVNULL, stdout=sys.stdout,
                                 start_new_session=True)
            out.write(json.dumps(answer) + "\n")
            out.flush()
            continue
        if mode == "deaf":
            time.sleep(3600)
        seq, op, case = request["seq"], request["op"], request["case"]
        body = reference.run(op, case)
        if mode == "crash-third" and seq == 3:
            print("fixture: crashing on the third case", file=sys.stderr, flush=True)
            return 3
        if mode == "daemon" and seq == 2:
            return 0
        if mode == "nan" and seq == 2:
            out.write(f'{{"seq": {seq}, "result": {{"hint": {{"numa_affinity": [NaN], '
                      '"preferred": true}, "admit": true}}\n')
            out.flush()
            continue
        if mode == "deep" and seq == 2:
            out.write(f'{{"seq": {seq}, "result": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
            out.flush()
            continue
        if mode == "node-shaped" and op == "merge":
            body = {"result": {"answers": [{"ok": True}]}}
        if (mode == "hang" and seq == 2) or mode == "hang-always":
            time.sleep(3600)
        if mode == "garbage" and seq == 2:
            out.write("Traceback (most recent call last): this is not JSON\n")
            out.flush()
            continue
        if mode == "flood" and seq == 2:
            out.write("x" * (5 << 20) + "\n")
            out.flush()
            continue
        if mode == "stderr":
            print(f"fixture: diagnostics for seq {seq}", file=sys.stderr, flush=True)
        if mode == "out-of-order" and seq == 2:
            seq = 1
        result = body.get("result")
        if mode == "wrong" and op == "merge" and isinstance(result, dict) and result.get("admit"):
            body = {"result": {**result, "admit": False}}
        if mode == "all-wrong":
            body = {"result": {"hint": {"numa_affinity": [63], "preferred": False},
                               "admit": False}}
        if mode == "skip-node" and op != "merge":
            body = {"skipped": True, "message": "node admission is not implemented",
                    "issue_url": "https://example.invalid/issues/1"}
        if mode == "skip-all":
            body = {"skipped": True, "message": "not implemented yet"}
        if mode == "error-merge" and op == "merge":
            body = {"errored": True, "context": {"message": "the fixture refuses merges"}}
        if mode == "bad-schema" and op == "merge" and isinstance(result, dict):
            body = {"result": {**result, "extra": 1}}
        if mode == "bad-type" and op == "merge" and isinstance(result, dict) \
                and isinstance(result.get("hint"), dict) and result["hint"].get("numa_affinity"):
            hint = result["hint"]
            body = {"result": {**result, "hint": {
                **hint, "numa_affinity": [str(n) for n in hint["numa_affinity"]]}}}
        if mode == "extra-field":
            body = {**body, "debug": "an extra field"}
        out.write(json.dumps({"seq": seq, **body}) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
