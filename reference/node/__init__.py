"""A whole node as kubelet admits pods onto it (spec part II: chapters ``pods.md``,
``cpu.md``, ``devices.md``, ``memory.md``, ``admission.md``, ``resize.md``, ``affinity.md``,
``predict.md``).

* ``quantity``, ``go_quantity``, ``pods``: resource quantities as the API server and kubelet
  read (and print) them, pods, containers and their QoS class (QTY-*, QOS-*);
* ``machine``, ``nodeconfig``: the machine a node runs on and its kubelet configuration
  (NODE-*);
* ``cpu``, ``cpu_assignment``, ``cpu_manager``: the CPU Manager's static policy: topology and
  hints, which CPUs it hands out, the manager as a stateful hint provider (CPU-*);
* ``devices``: the Device Manager (DEV-*); ``memory``: the Memory Manager and its NUMA groups
  (MEM-*);
* ``rejection``, ``fit``, ``admission``: how a provider refuses, the resource fit and what the
  API server refuses first, and the node's admission by scope with its invariants (ADMIT-*,
  INV-*);
* ``resize``: in-place pod resize (RESIZE-*);
* ``affinity``, ``scheduling``: NUMA-level inter-pod affinity as Katalyst proposed it, on the
  node and in the scheduler (AFF-*, SCHED-*);
* ``predict``: what a scheduler sees of the node, its NodeResourceTopology (NRT-*);
* ``trace``: an admission's reasoning as data (EXPLAIN-3).

Imports the base modules and :mod:`numaspec.topology`, never the protocols or the operators'
tooling.
"""
