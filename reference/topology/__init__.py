"""The Topology Manager's merge (spec part I: chapters ``masks.md``, ``hints.md``,
``merge.md``, ``fast-merge.md``, ``policies.md``, ``options.md``, ``versions.md``).

* ``masks``: NUMA affinity masks, their orders, subset enumeration (MASK-*);
* ``numa``: the machine as the Topology Manager sees it, node ids and distances;
* ``hints``: topology hints and how providers' answers are flattened (HINT-*);
* ``merge``: the permutation merge and the choice of the best hint, the spec's meaning
  (MERGE-*);
* ``fast_merge``: the same answer without the cross product (FAST-*);
* ``policies``: none, best-effort, restricted, single-numa-node, and the start-up checks
  (POLICY-*);
* ``options``: the policy options, their gates, values and limits (OPT-*);
* ``versions``: kubelet releases and each behaviour switch between them (VER-*);
* ``gates``: every feature gate each release knows, and the one answer to "is this gate on,
  is this option open, at this release" (VER-2, VER-4, OPT-2, CPU-14);
* ``golang``: Go's ``strconv`` and ``fmt`` as kubelet's option values and messages use them;
* ``trace``: the merge's reasoning as data (EXPLAIN-2).

Imports only the base modules (``numaspec.errors``, ``limits``, ``strict_json``), never the
node, the protocols or the operators' tooling.
"""
