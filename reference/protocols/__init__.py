"""How implementations and people talk to the reference (spec part IV: chapters
``merge-protocol.md``, ``node-protocol.md``, ``adapter-protocol.md``, and the traces on
request of ``explain.md``).

* ``merge_protocol``: the JSON merge case: requests, responses, errors (WIRE-*);
* ``node_protocol``: the node line protocol: create, admit, remove, hints, state, resize
  (NWIRE-*, AWIRE-*);
* ``adapter_protocol``: the adapter protocol, implementation side: the reference as an
  adapter, its answers to every operation, the ``predict`` cases (PROTO-*, PRED-1, PRED-2);
* ``serve``: the line loops of ``numaspec merge`` and ``numaspec node``;
* ``explain``: the reference's reasoning for a request or a case (EXPLAIN-1..EXPLAIN-4).

Imports the base modules, :mod:`numaspec.topology` and :mod:`numaspec.node`, never the
operators' tooling or the suite.
"""
