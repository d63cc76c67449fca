"""An operator's questions about a real node, from the files it already has (spec part V:
chapters ``operators.md``, ``machine-import.md``, ``kubelet-config.md``, ``checkpoints.md``).

* ``importers/``: the node's own files read as kubelet reads them: sysfs or hwloc for the
  machine, the KubeletConfiguration or configz, pods and the Node as kubectl prints them,
  kubelet's state files (SYSFS-*, KCONF-*, CKPT-*);
* ``restore``: a running node brought back from kubelet's state files (OPS-1..OPS-4);
* ``questions``: would this pod be admitted, where, and if not why; what if the
  configuration changed; the largest pod that fits (OPS-5..OPS-9);
* ``explain_command``, ``render``: ``numaspec explain`` and its answers on a terminal.

Imports every wing before it (the base modules, :mod:`numaspec.topology`,
:mod:`numaspec.node`, :mod:`numaspec.protocols`), never the suite.
"""
