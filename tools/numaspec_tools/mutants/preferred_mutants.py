"""Deliberately wrong device choices for DEV-10 (a plugin's preferred allocation): the property
of tests/node/test_device_preferred.py must reject every one.  An ``Allocator`` takes a machine (its
first device resource is the one asked for), the devices other pods hold, the container's
affinity and the request, and answers the devices chosen."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from numaspec.node.devices import DeviceManager
from numaspec.node.machine import Machine
from numaspec.node.pods import Container, Pod
from numaspec.topology.masks import NumaMask
from numaspec.topology.versions import KubeletVersion

__all__ = ["PREFERRED_KILLED_BY", "PREFERRED_MUTANTS", "Allocator", "reference"]

Allocator = Callable[[Machine, frozenset[str], NumaMask | None, int], frozenset[str]]


def _manager(machine: Machine, held: frozenset[str]) -> tuple[DeviceManager, str]:
    resource = sorted(machine.devices)[0]
    manager = DeviceManager(machine, KubeletVersion(37))
    if held:
        manager.pod_devices["other"] = {"c": {resource: held}}
    return manager, resource


def reference(machine: Machine, held: frozenset[str], affinity: NumaMask | None,
              n: int) -> frozenset[str]:
    """The reference's DeviceManager (DEV-4, DEV-10)."""
    manager, resource = _manager(machine, held)
    pod = Pod("p", (Container.of("c", limits={resource: str(n)}),))
    manager.allocate(pod, pod.containers[0], affinity)
    return frozenset(manager.devices_of("p", "c").get(resource, ()))


def _ignores_preference(machine: Machine, held: frozenset[str], affinity: NumaMask | None,
                        n: int) -> frozenset[str]:
    """The plugin is never asked (the GetPreferredAllocationAvailable option is ignored)."""
    return reference(attrs.evolve(machine, device_plugins={}), held, affinity, n)


def _preference_over_alignment(machine: Machine, held: frozenset[str],
                               affinity: NumaMask | None, n: int) -> frozenset[str]:
    """The plugin is asked first, over every free device, and its answer is taken before the
    aligned devices: its preference wins over the Topology Manager's hint."""
    manager, resource = _manager(machine, held)
    plugin = machine.device_plugins.get(resource)
    free = manager.available(resource)
    first: frozenset[str] = frozenset()
    if plugin is not None:
        first = frozenset(plugin.answer(free, frozenset(), n)) & free
    if len(first) >= n:
        return frozenset(sorted(first)[:n])
    rest = reference(attrs.evolve(machine, device_plugins={}), held | first, affinity,
                     n - len(first))
    return first | rest


def _asked_over_everything(machine: Machine, held: frozenset[str], affinity: NumaMask | None,
                           n: int) -> frozenset[str]:
    """Kubelet's answer is not cut to the ids offered: with more aligned devices than needed,
    the plugin is offered every free device and what it answers is taken."""
    manager, resource = _manager(machine, held)
    plugin = machine.device_plugins.get(resource)
    free = manager.available(resource)
    if plugin is not None and affinity is not None:
        aligned = frozenset(d.id for d in machine.devices[resource] if d.id in free
                            and any(affinity.is_set(x) for x in d.numa))
        if n < len(aligned):
            answer = frozenset(plugin.answer(free, frozenset(), n)) & free
            if len(answer) == n:
                return answer
    return reference(machine, held, affinity, n)


PREFERRED_MUTANTS: Mapping[str, Allocator] = {
    "ignores_preference": _ignores_preference,
    "preference_over_alignment": _preference_over_alignment,
    "asked_over_everything": _asked_over_everything,
}

#: Every mutant and the property (a test of tests/node/test_device_preferred.py) that must reject
#: it.
PREFERRED_KILLED_BY = dict.fromkeys(PREFERRED_MUTANTS, "test_p_dev_preferred")
