"""The node model against the real kubelet: the node state machine drives the Go node
probe (adapters/kubelet/probe, run as ``kubelet-adapter-<version> node``: kubelet's own
Topology, Device, CPU and Memory Managers) and the reference side by side; every decision and
every CPU, memory and device state must agree.

What agreement covers: NODE-0, NODE-1, NODE-2, NODE-3, NODE-5, NODE-7, NODE-8, NODE-9,
ADMIT-1, ADMIT-2, ADMIT-3, ADMIT-4, ADMIT-6, ADMIT-8, ADMIT-9, INV-10, CPU-6, CPU-7, CPU-8,
CPU-9, CPU-10, CPU-12, CPU-14, CPU-15, CPU-16, CPU-17, MEM-1, MEM-2, MEM-3, MEM-4, MEM-6,
MEM-7, MEM-8, MEM-9, MEM-10, DEV-1, DEV-2, DEV-3, DEV-4, DEV-5, DEV-7.

The machines have devices (device plugins' devices with and without NUMA nodes, some
unhealthy), which the probe registers with kubelet's real Device Manager through in-process
fake plugins.  Devices are compared up to interchangeable ones (RUN-12: per resource and
container, the number of devices per NUMA node set), because kubelet takes devices from a
group in Go map order; once the reference's tie-break decides on which NUMA nodes a
container's devices are (F-DEV-CHOICE), the session is no longer compared, only checked
against the invariants.  Skipped with a message when Go is not installed (a failure under
NUMASPEC_REQUIRE_KUBELET=1); the test run builds the probes itself
(tools/numaspec_tools/builds/kubelet.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from numaspec.conformance.implementations.exec_node import ExecNode
from numaspec.conformance.properties.node_machine import make_node_machine
from numaspec_tools.builds import kubelet as kubelet_builds
from numaspec_tools.rotation import ROTATING_EXAMPLES, commit_seed
from numaspec_tools.testing.sessions import normalizer


@pytest.mark.parametrize("version", ["1.30", "1.37", "1.38"])
def test_reference_agrees_with_kubelet_node(version: str) -> None:
    """Strict at every release.  Before 1.32 kubelet is not deterministic once the Memory
    Manager's groups turn irregular (it releases blocks in Go map order:
    spec/conformance/findings.md, F-MEM-OVERLAP), so there a session is compared until the
    reference's state first shows irregular groups, and only the invariants are checked after
    that point.

    The probe runs kubelet's resource-fit admit handler after the Topology Manager's
    (ADMIT-8, ADMIT-9) on a node object whose allocatable the probe computes as kubelet's
    status setter does, and the node-allocatable start-up check (NODE-9); nodes draw
    ``maxPods``."""
    command = kubelet_builds.node_command(version)
    probes: list[ExecNode] = []

    def factory() -> ExecNode:
        while probes:  # one session at a time: the last session's probe is done
            probes.pop().close()
        probe = ExecNode(command, name=" ".join(Path(c).name for c in command))
        probes.append(probe)
        return probe

    machine = make_node_machine(factory, versions=(version,), devices_too=True,
                                normalize=normalizer(),
                                compare_until_irregular_groups=int(version.split(".")[1]) < 32,
                                compare_until_device_numa_choice=True)
    # Rotated by commit (numaspec_tools.rotation): 100 sessions a run, drawn from the
    # commit's seed, so consecutive commits compare new sessions (as @seed does for a class)
    machine._hypothesis_internal_use_seed = commit_seed()
    try:
        run_state_machine_as_test(machine, settings=settings(
            settings(), max_examples=ROTATING_EXAMPLES, derandomize=False, database=None,
            stateful_step_count=20, deadline=None, suppress_health_check=list(HealthCheck)))
    finally:
        for probe in probes:
            probe.close()
