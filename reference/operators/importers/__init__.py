"""Importers: a node's own files, as they are, read into the node model (spec chapters
``machine-import.md``, SYSFS-*; ``kubelet-config.md``, KCONF-*; ``checkpoints.md``, CKPT-*).

* ``sysfs``: the machine from a Linux sysfs tree (NUMA nodes, distances, memory, hugepages,
  CPU topology, PCI devices' NUMA nodes for a mapping of extended resources to devices);
* ``hwloc``: the machine from an hwloc ``lstopo`` XML file;
* ``kubelet_config``: the node's configuration from a KubeletConfiguration (YAML) or the
  configz endpoint's JSON, with kubelet's defaulting;
* ``kube_objects``: pods (and a Node object's kubelet version) from YAML or JSON as kubectl
  prints them;
* ``checkpoints``: kubelet's own state files (``cpu_manager_state``, ``memory_manager_state``,
  the device manager's ``kubelet_internal_checkpoint``), checksums verified as kubelet
  verifies them.

Import mode is lenient where the formats are open (unknown fields are ignored, as kubectl's
output carries many) and strict where numaspec would otherwise guess: every error is a
:class:`~numaspec.errors.InputFileError` naming the file and the field.  The node protocol
(``node_wire``) stays strict.
"""
