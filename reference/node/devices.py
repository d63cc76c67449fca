"""The Device Manager as a stateful hint provider (spec chapter ``devices.md``, DEV-1..DEV-7,
DEV-10..DEV-12).

Upstream: ``pkg/kubelet/cm/devicemanager/topology_hints.go`` (``GetTopologyHints``,
``GetPodTopologyHints``, ``generateDeviceTopologyHints``, ``getPodDeviceRequest``; from 1.38
``calculateDeviceScore``) and
``manager.go`` (``Allocate``, ``devicesToAllocate``, ``filterByAffinity``,
``callGetPreferredAllocationIfAvailable``, ``readCheckpoint``).  Plugins are assumed to answer
``Allocate`` successfully; a plugin offers ``GetPreferredAllocation`` only where the machine
says so (DEV-10).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from numaspec.node.machine import Device, Machine
from numaspec.node.pods import Container, Pod, pod_total
from numaspec.node.quantity import value
from numaspec.node.rejection import unexpected
from numaspec.topology.hints import ProviderHints, TopologyHint
from numaspec.topology.masks import NumaMask, iterate_masks
from numaspec.topology.scores import utilization_score
from numaspec.topology.versions import KubeletVersion

__all__ = ["DeviceManager", "pod_device_limits"]


def pod_device_limits(pod: Pod, resources: Mapping[str, object]) -> dict[str, int]:
    """DEV-2: the pod's device request per resource (``resource.PodLimits``): the limits of
    ``resources`` through :func:`numaspec.node.pods.pod_total`."""
    return pod_total(pod, lambda c: {n: value(q) for n, q in c.limits.items() if n in resources})


def _count_by_bits(words: Iterable[int]) -> dict[int, int]:
    counted: dict[int, int] = {}
    for word in words:
        counted[word] = counted.get(word, 0) + 1
    return counted


class DeviceManager:
    """DEV-1..DEV-7: devices per resource, which are allocated to whom, and the devices a
    pod's finished init containers leave for its later containers; DEV-10: the plugins'
    preferences; DEV-11: the resources whose plugins have not registered since a restart."""

    name = "devices"

    def __init__(self, machine: Machine, version: KubeletVersion) -> None:
        self.version = version
        self.numa_nodes = machine.numa_ids
        self.devices: dict[str, dict[str, Device]] = {
            r: {d.id: d for d in ds} for r, ds in machine.devices.items()}
        self.healthy = {r: self._listed_healthy(r) for r in self.devices}
        # DEV-10: the plugins that offer GetPreferredAllocation.
        self.plugins = dict(machine.device_plugins)
        # DEV-11: resources whose plugins have not registered again since kubelet restarted.
        self.unregistered: set[str] = set()
        # pod uid -> container -> resource -> device ids
        self.pod_devices: dict[str, dict[str, dict[str, frozenset[str]]]] = {}
        self.to_reuse: dict[str, dict[str, frozenset[str]]] = {}
        # DEV-6: every allocation where numaspec's tie-break, not a rule, decided on which
        # NUMA nodes a container's devices are (kubelet decides those in Go map order).
        self.numa_choices: list[str] = []

    def snapshot(self) -> DeviceManager:
        # The copy shares numa_choices: a choice made by an admission that is then undone
        # still happened.
        return self._copy(self.numa_choices)

    def fork(self) -> DeviceManager:
        """An independent copy, with its own record of the choices made so far."""
        return self._copy(list(self.numa_choices))

    def _copy(self, choices: list[str]) -> DeviceManager:
        """NODE-6: what a deep copy gives, at the cost of the mutable bookkeeping alone: the
        machine's devices, the plugins and the version are never changed after start-up, and
        the device ids are frozen sets."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.healthy = {resource: set(ids) for resource, ids in self.healthy.items()}
        twin.unregistered = set(self.unregistered)
        twin.pod_devices = {uid: {name: dict(held) for name, held in ctrs.items()}
                            for uid, ctrs in self.pod_devices.items()}
        twin.to_reuse = {uid: dict(held) for uid, held in self.to_reuse.items()}
        twin.numa_choices = choices
        return twin

    # -- bookkeeping ---------------------------------------------------------------------------

    def allocated(self, resource: str) -> frozenset[str]:
        return frozenset(d for ctrs in self.pod_devices.values() for res in ctrs.values()
                         for d in res.get(resource, ()))

    def available(self, resource: str) -> frozenset[str]:
        return frozenset(self.healthy[resource]) - self.allocated(resource)

    def _listed_healthy(self, resource: str) -> set[str]:
        """The devices of ``resource`` its plugin lists as healthy (the machine's)."""
        return {d.id for d in self.devices[resource].values() if d.healthy}

    def _has_topology(self, resource: str) -> bool:
        # DEV-11: until its plugin registers again, kubelet knows no device of the resource.
        if resource in self.unregistered:
            return False
        return any(d.numa for d in self.devices[resource].values())

    # -- kubelet restarts (DEV-11) --------------------------------------------------------------

    def restart(self, unregistered: Iterable[str]) -> None:
        """DEV-11: a new Device Manager read the checkpoint: every allocation is kept; the
        resources in ``unregistered`` have no device until their plugins register again, the
        others' plugins have registered (with the machine's devices)."""
        self.to_reuse = {}
        self.unregistered = set(unregistered)
        for resource in self.devices:
            self.healthy[resource] = (set() if resource in self.unregistered
                                      else self._listed_healthy(resource))

    def register(self, resource: str) -> None:
        """DEV-11: the resource's plugin registered and listed the machine's devices."""
        self.unregistered.discard(resource)
        self.healthy[resource] = self._listed_healthy(resource)

    def _container_request(self, container: Container) -> dict[str, int]:
        return {n: value(q) for n, q in container.limits.items() if n in self.devices}

    # -- hints ----------------------------------------------------------------------------------

    def _scorer(self, resource: str, bits: Callable[[Iterable[int]], int]
                ) -> Callable[[int], int]:
        """DEV-12 (1.38+): a mask's score: of the resource's healthy devices with a NUMA node
        in the mask (each counted once), how many are allocated, to any pod, the one asking
        included; 0 before 1.38."""
        if not self.version.scores_device_hints:
            return lambda _: 0
        devices = self.devices[resource]
        allocated = self.allocated(resource)
        healthy = [d for d in self.healthy[resource] if d in devices]
        listed = _count_by_bits(bits(devices[d].numa) for d in healthy)
        taken = _count_by_bits(bits(devices[d].numa) for d in healthy if d in allocated)

        def score(word: int) -> int:
            return utilization_score(sum(n for b, n in listed.items() if b & word),
                                     sum(n for b, n in taken.items() if b & word))
        return score

    def _generate(self, resource: str, available: frozenset[str], reusable: frozenset[str],
                  request: int) -> list[TopologyHint]:
        """DEV-3: every mask of the machine's NUMA nodes (CPU-less ones too; from 1.36 only
        those hosting a device of the resource); preferred iff as narrow as the narrowest mask
        whose devices (all of them) could hold the request.  DEV-12: each scored."""
        devices = self.devices[resource]
        universe = self.numa_nodes
        if self.version.minor >= 36:
            # DEV-3 (1.36+): only the NUMA nodes that host a device of this resource.
            hosting = sorted({n for d in devices.values() for n in d.numa})
            universe = tuple(hosting) or universe
        # NWIRE-5: devices are counted per distinct set of NUMA nodes (as bits), not one by
        # one for every subset; a device counts for a mask when it touches one of its nodes.
        def bits(numa: Iterable[int]) -> int:
            word = 0
            for n in numa:
                word |= 1 << n
            return word

        everyone = _count_by_bits(bits(d.numa) for d in devices.values())
        free = _count_by_bits(bits(devices[d].numa) for d in available)
        reusable_bits = [bits(devices[d].numa) for d in sorted(reusable)]
        # DEV-3: a reusable device without topology is not counted
        reusable_bits = [b for b in reusable_bits if b]
        min_affinity = len(universe)
        found: list[NumaMask] = []
        for mask in iterate_masks(universe):
            word = mask.bits
            if sum(n for b, n in everyone.items() if b & word) >= request \
                    and mask.count() < min_affinity:
                min_affinity = mask.count()
            if any(not b & word for b in reusable_bits):
                continue
            matching = len(reusable_bits) + sum(n for b, n in free.items() if b & word)
            if matching >= request:
                found.append(mask)
        score = self._scorer(resource, bits)
        return [TopologyHint(m, m.count() == min_affinity, score(m.bits)) for m in found]

    def _hints_for(self, requests: Mapping[str, int], held: Mapping[str, frozenset[str]],
                   reusable: Mapping[str, frozenset[str]]) -> ProviderHints:
        hints: dict[str, list[TopologyHint] | None] = {}
        for resource, request in sorted(requests.items()):
            if not self._has_topology(resource):
                hints[resource] = None
                continue
            allocated = held.get(resource, frozenset())
            if allocated:
                hints[resource] = [] if len(allocated) != request else self._generate(
                    resource, allocated, frozenset(), request)
                continue
            available = self.available(resource)
            reuse = reusable.get(resource, frozenset())
            if len(available | reuse) < request:
                hints[resource] = []
                continue
            hints[resource] = self._generate(resource, available, reuse, request)
        return hints

    def container_hints(self, pod: Pod, container: Container) -> ProviderHints:
        """DEV-1: container-scope hints, from the container's limits."""
        held = self.pod_devices.get(pod.uid, {}).get(container.name, {})
        return self._hints_for(self._container_request(container), held,
                               self.to_reuse.get(pod.uid, {}))

    def pod_hints(self, pod: Pod) -> ProviderHints:
        """DEV-2: pod-scope hints: the pod's limits, the devices any of its containers hold,
        and no reuse."""
        held: dict[str, frozenset[str]] = {}
        for ctrs in self.pod_devices.get(pod.uid, {}).values():
            for resource, ids in ctrs.items():
                held[resource] = held.get(resource, frozenset()) | ids
        return self._hints_for(pod_device_limits(pod, self.devices), held, {})

    # -- allocation -----------------------------------------------------------------------------

    def allocate(self, pod: Pod, container: Container, affinity: NumaMask | None) -> None:
        """DEV-4, DEV-5: devices for each resource in the container's limits, reusable ones
        first; then a regular init container's devices become reusable and an app container's
        (or a sidecar's) stop being so."""
        self.to_reuse = {pod.uid: self.to_reuse.get(pod.uid, {})}
        reuse = self.to_reuse[pod.uid]
        for resource, required in sorted(self._container_request(container).items()):
            chosen = self._devices_to_allocate(pod.uid, container.name, resource, required,
                                               reusable=reuse.get(resource, frozenset()),
                                               affinity=affinity)
            if chosen:
                self.pod_devices.setdefault(pod.uid, {}).setdefault(
                    container.name, {})[resource] = chosen
        mine = self.pod_devices.get(pod.uid, {}).get(container.name, {})
        regular_init = pod.is_init(container.name) and not container.restartable
        for resource, ids in mine.items():
            if regular_init:
                reuse[resource] = reuse.get(resource, frozenset()) | ids
            elif resource in reuse:
                reuse[resource] = reuse[resource] - ids

    def _devices_to_allocate(self, pod_uid: str, name: str, resource: str, required: int, *,
                             reusable: frozenset[str], affinity: NumaMask | None
                             ) -> frozenset[str]:
        """DEV-4: kubelet's ``devicesToAllocate``; within a group numaspec takes the lowest
        device ids first (DEV-6: kubelet's choice there is Go map order); DEV-10: a plugin that
        offers ``GetPreferredAllocation`` is asked where kubelet asks it."""
        held = self.pod_devices.get(pod_uid, {}).get(name, {}).get(resource)
        needed = required
        if held is not None:
            needed -= len(held)
            if needed != 0:
                raise unexpected(f'pod "{pod_uid}" container "{name}" changed request for '
                                 f'resource "{resource}" from {len(held)} to {required}')
        healthy = self.healthy[resource]
        if not healthy:
            raise unexpected("no healthy devices present; cannot allocate unhealthy devices "
                             f"{resource}")
        if held is not None and not held <= healthy:
            raise unexpected("previously allocated devices are no longer healthy; cannot "
                             f"allocate unhealthy devices {resource}")
        if needed == 0:
            return frozenset()
        chosen: list[str] = []
        devices = self.devices[resource]

        def take_from(group: frozenset[str]) -> bool:
            nonlocal needed
            candidates = sorted(group - set(chosen))
            taken = candidates[:needed]
            chosen.extend(taken)
            needed -= len(taken)
            if 0 < len(taken) < len(candidates) and \
                    len({frozenset(devices[d].numa) for d in candidates}) > 1:
                self.numa_choices.append(
                    f"pod {pod_uid!r} container {name!r}: {len(taken)} of {len(candidates)} "
                    f"{resource} devices on NUMA node sets "
                    f"{sorted({tuple(sorted(devices[d].numa)) for d in candidates})}")
            return needed == 0

        if take_from(reusable):
            return frozenset(chosen)
        available = frozenset(healthy) - self.allocated(resource) - set(chosen)
        if len(available) < needed:
            raise unexpected(f"requested number of devices unavailable for {resource}. "
                             f"Requested: {needed}, Available: {len(available)}")
        aligned, unaligned, no_affinity = self._by_affinity(resource, available, affinity)
        plugin = self.plugins.get(resource)

        def preferred(offered: frozenset[str]) -> frozenset[str]:
            """DEV-10: the plugin's answer (nothing without the option), over ``offered`` plus
            what is already taken, which it must include, for the container's whole request;
            only the answer's ids in ``offered`` count."""
            if plugin is None:
                return frozenset()
            taken = frozenset(chosen)
            return frozenset(plugin.answer(offered | taken, taken, required)) & offered

        if needed < len(aligned):
            # DEV-10: more aligned devices than needed: the plugin chooses among them, and
            # the aligned ones make up what it leaves short.
            if take_from(preferred(aligned)) or take_from(aligned):
                return frozenset(chosen)
        else:
            # DEV-10: every aligned device first (the plugin is not asked when they are
            # exactly enough), then the plugin chooses among all free ones, then the rest.
            if take_from(aligned) or take_from(preferred(available)):
                return frozenset(chosen)
            for group in (unaligned, no_affinity):
                if take_from(group):
                    return frozenset(chosen)
        raise unexpected("unexpectedly allocated less resources than required. "
                         f"Requested: {required}, Got: {required - needed}")

    def _by_affinity(self, resource: str, available: frozenset[str],
                     affinity: NumaMask | None
                     ) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        """DEV-4: aligned (a NUMA node in the affinity), unaligned (topology elsewhere) and
        no affinity (no topology); everything is "no affinity" without a hint."""
        if affinity is None or not self._has_topology(resource):
            return frozenset(), frozenset(), available
        devices = self.devices[resource]
        aligned = frozenset(d for d in available
                            if any(affinity.is_set(n) for n in devices[d].numa))
        none = frozenset(d for d in available if not devices[d].numa)
        return aligned, available - aligned - none, none

    def remove_pod(self, pod_uid: str) -> None:
        """DEV-7: devices are freed when the pod goes away, never per container."""
        self.pod_devices.pop(pod_uid, None)
        self.to_reuse.pop(pod_uid, None)

    def devices_of(self, pod_uid: str, name: str) -> dict[str, list[str]]:
        return {r: sorted(ids) for r, ids in
                sorted(self.pod_devices.get(pod_uid, {}).get(name, {}).items())}

    def state(self) -> dict[str, object]:
        return {
            "allocated": {r: sorted(self.allocated(r)) for r in sorted(self.devices)},
            "healthy": {r: sorted(self.healthy[r]) for r in sorted(self.devices)},
            "assignments": {uid: {name: {r: sorted(ids) for r, ids in sorted(res.items())}
                                  for name, res in sorted(ctrs.items())}
                            for uid, ctrs in sorted(self.pod_devices.items())},
        }
