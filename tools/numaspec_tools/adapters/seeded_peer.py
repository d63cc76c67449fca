"""A peer written from the spec alone, as a new adapter author would: the Topology Manager's
merge of kubelet 1.34, merge only, ``best-effort`` and ``single-numa-node``, with the options
``prefer-closest-numa-nodes`` and ``max-allowable-numa-nodes``, and its own merge (a walk of
every permutation, written for this fixture; nothing of numaspec's reference is used).

``python seeded_peer.py [--bug NAME]`` seeds one realistic bug (``BUGS`` says each, ten); without
``--bug`` it answers as kubelet 1.34 does.  ``tests/suite/power/test_verdicts.py`` holds that the
default
``numaspec conformance`` run fails every bug, whatever its seed, and books the failure on the
rule that decided; docs/guides/what-is-checked.md has the kill rates across seeds.
"""

from __future__ import annotations

import itertools
import json
import sys
from typing import Any

#: bug name -> what it gets wrong, and the rule it breaks
BUGS = {
    "snn-no-preference-shortcut": (
        "single-numa-node merges like best-effort, without its single-node filter, once some "
        "provider has no preference, and admits a preferred result on two nodes (POLICY-4)"),
    "closest-tie-later-wins": (
        "prefer-closest-numa-nodes breaks an equal mean distance for the candidate met later, "
        "not the smaller mask (MERGE-9)"),
    "max-allowable-unchecked": (
        "max-allowable-numa-nodes is read with Python's int() and never refused: '7', '0' "
        "or ' 9' are taken, 'true' is the default (OPT-4)"),
    "non-preferred-narrowest": (
        "non-preferred candidates ranked by plain narrowness, as kubelet did before 1.24, not "
        "around the target width (MERGE-8)"),
    "preferred-ignores-masks": (
        "a candidate is preferred when all its hints are, even with different masks, as "
        "kubelet did before 1.24 (MERGE-3)"),
    "empty-list-no-preference": (
        "a resource mapped to [] is read as no preference, like null (HINT-3)"),
    "snn-keeps-whole-machine": (
        "single-numa-node answers the whole machine's mask instead of no affinity (POLICY-4)"),
    "snn-two-nodes-unconstrained": (
        "single-numa-node, finding no single node, admits a preferred hint of exactly two "
        "nodes when some provider has no preference (POLICY-4): the issue's bug"),
    "max-allowable-lenient": (
        "max-allowable-numa-nodes read with Python's int(), so ' 9' and '1_0' are taken where "
        "Go's Atoi refuses them; values below 8 are still refused (OPT-4)"),
    "closest-preferred-only": (
        "prefer-closest-numa-nodes ranks only preferred candidates by distance; non-preferred "
        "ones of one width go by the smaller mask (MERGE-9)"),
}

CLAIMS: dict[str, Any] = {
    "format": False,
    "merge": {"policies": ["best-effort", "single-numa-node"],
              "policy_options": ["prefer-closest-numa-nodes", "max-allowable-numa-nodes"],
              "feature_gates": False, "distances": True,
              "refusals": ["invalid-policy-option-value", "too-many-numa-nodes",
                           "missing-numa-distances"]}}

Hint = tuple[int | None, bool]  # (mask, preferred)


class Refused(Exception):
    def __init__(self, kind: str, where: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.where = kind, where


def _go_bool(text: str) -> bool:
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise Refused("invalid-policy-option-value", "policy_options.prefer-closest-numa-nodes",
                  f"bad value {text!r}")


def _go_int(text: str) -> int:
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        raise Refused("invalid-policy-option-value", "policy_options.max-allowable-numa-nodes",
                      f"bad value {text!r}")
    value = int(text)
    if not -(2 ** 63) <= value < 2 ** 63:
        raise Refused("invalid-policy-option-value", "policy_options.max-allowable-numa-nodes",
                      f"out of range {text!r}")
    return value


def _options(case: dict[str, Any], bug: str) -> tuple[bool, int]:
    options = case.get("policy_options") or {}
    closest = _go_bool(options["prefer-closest-numa-nodes"]) \
        if "prefer-closest-numa-nodes" in options else False
    limit = 8
    if "max-allowable-numa-nodes" in options:
        text = options["max-allowable-numa-nodes"]
        if bug == "max-allowable-unchecked":
            try:
                limit = int(text)
            except ValueError:
                limit = 8
        else:
            if bug == "max-allowable-lenient":
                try:
                    limit = int(text)
                except ValueError:
                    limit = _go_int(text)
            else:
                limit = _go_int(text)
            if limit < 8:
                raise Refused("invalid-policy-option-value",
                              "policy_options.max-allowable-numa-nodes",
                              f"{limit} is below the minimum of 8")
    return closest, limit


def _lists(providers: list[Any], bug: str) -> list[list[Hint]]:
    lists: list[list[Hint]] = []
    for provider in providers:
        if not provider:
            lists.append([(None, True)])
            continue
        for hints in provider.values():
            if hints is None or (hints == [] and bug == "empty-list-no-preference"):
                lists.append([(None, True)])
            elif hints == []:
                lists.append([(None, False)])
            else:
                lists.append([(None if h["numa_affinity"] is None
                               else sum(1 << n for n in h["numa_affinity"]), h["preferred"])
                              for h in hints])
    return lists


def _count(mask: int) -> int:
    return bin(mask).count("1")


def merge(case: dict[str, Any], bug: str) -> dict[str, Any]:
    nodes: list[int] = case["numa_nodes"]
    policy = case["policy"]
    closest, limit = _options(case, bug)
    distances = case.get("numa_distances")
    if closest and (distances is None or any(str(n) not in distances for n in nodes)):
        raise Refused("missing-numa-distances", "numa_distances", "a node has no distances")
    if len(nodes) > limit:
        raise Refused("too-many-numa-nodes", "numa_nodes", f"more than {limit} NUMA nodes")
    machine = sum(1 << n for n in nodes)
    lists = _lists(case["providers"], bug)
    single = policy == "single-numa-node"
    no_preference = any(all(m is None for m, _ in hints) for hints in lists)
    if single and not (bug == "snn-no-preference-shortcut" and no_preference):
        lists = [[(m, p) for m, p in hints if p and (m is None or _count(m) == 1)]
                 for hints in lists]
    closest = closest and not single

    def mean(mask: int) -> float:
        ids = [n for n in range(64) if mask >> n & 1]
        assert distances is not None
        return sum(float(distances[str(i)][j]) for i in ids for j in ids) / len(ids) ** 2

    def better(current: int, candidate: int, preferred: bool = True) -> bool:
        """Whether ``candidate`` beats ``current`` of the same preference and width rank."""
        if _count(candidate) != _count(current):
            return _count(candidate) < _count(current)
        if closest and (preferred or bug != "closest-preferred-only"):
            a, b = mean(candidate), mean(current)
            if a != b:
                return a < b
            if bug == "closest-tie-later-wins":
                return True
        return candidate < current

    counts = [min((_count(m) for m, _ in hints if m is not None), default=None)
              for hints in lists]
    target = max((c for c in counts if c is not None), default=0)

    def rank(candidate: int, current: int) -> bool:
        """Among non-preferred candidates: MERGE-8's order around the target width."""
        if bug == "non-preferred-narrowest":
            return better(current, candidate, False)
        c, k = _count(candidate), _count(current)
        if k > target:
            return better(current, candidate, False)
        if k == target:
            return c == target and better(current, candidate, False)
        if c > target:
            return False
        if c == target:
            return True
        return c > k or (c == k and better(current, candidate, False))

    best: Hint | None = None
    for permutation in itertools.product(*lists):
        masks = [m for m, _ in permutation if m is not None]
        preferred = all(p for _, p in permutation) and (
            bug == "preferred-ignores-masks" or all(m == masks[0] for m in masks))
        merged = machine
        for m in masks:
            merged &= m
        if merged == 0:
            continue
        if best is None or (preferred and not best[1]) or (
                preferred == best[1] and best[0] is not None
                and (better(best[0], merged) if preferred else rank(merged, best[0]))):
            best = (merged, preferred)
    if best is None:
        best = (machine, False)
    if single and bug == "snn-two-nodes-unconstrained" and not best[1] and no_preference:
        wide = merge({**case, "policy": "best-effort"}, "")["hint"]
        if wide["preferred"] and len(wide["numa_affinity"]) == 2:
            return {"hint": wide, "admit": True}
    mask, preferred = best
    affinity = None if single and mask == machine and bug != "snn-keeps-whole-machine" else \
        [n for n in range(64) if mask is not None and mask >> n & 1]
    return {"hint": {"numa_affinity": affinity, "preferred": preferred},
            "admit": preferred if single else True}


def main() -> int:
    bug = sys.argv[sys.argv.index("--bug") + 1] if "--bug" in sys.argv else ""
    if bug and bug not in BUGS:
        print(f"seeded_peer: unknown bug {bug!r}; one of {', '.join(BUGS)}", file=sys.stderr)
        return 2
    for line in sys.stdin:
        request = json.loads(line)
        if request["cmd"] == "stop":
            return 0
        if request["cmd"] == "start":
            answer: dict[str, Any] = {"ready": True, "version": 1, "implementation": {
                "name": "seeded-peer", "version": bug or "correct", "language": "python",
                "homepage": "", "issues": "", "kubelet_versions": ["1.34"],
                "operations": ["merge"], "claims": CLAIMS}}
        else:
            try:
                result = merge(request["case"], bug)
            except Refused as exc:
                result = {"error": {"kind": exc.kind, "where": exc.where,
                                    "message": f"{exc.where}: {exc}"}}
            answer = {"seq": request["seq"], "result": result}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
