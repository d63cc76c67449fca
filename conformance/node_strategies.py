"""Hypothesis strategies for the node protocol: machines, node configurations and pods, as
the JSON documents of spec/node-protocol.md.

Everything generated is valid input that kubelet would start with (reservations add up, the
options fit the machine), unless a strategy says otherwise, so that every step of a stateful
test exercises admission rather than input checking.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

__all__ = ["MEBI", "node_requests", "pods"]

MEBI = 1 << 20
GIBI = 1 << 30


@st.composite
def machines(draw: st.DrawFn, devices_too: bool = True) -> dict[str, Any]:
    """1-4 NUMA nodes on 1-2 sockets, SMT off or 2-way, some hugepages, 0-2 device
    resources whose devices sit on a NUMA node, on several, or on none."""
    sockets = draw(st.integers(1, 2))
    numa_per_socket = draw(st.sampled_from([1, 1, 2]))
    cores_per_numa = draw(st.integers(1, 3))
    threads = draw(st.sampled_from([1, 2]))
    count = sockets * numa_per_socket
    total_cores = count * cores_per_numa
    nodes = []
    for numa in range(count):
        cores = []
        for local in range(cores_per_numa):
            core = numa * cores_per_numa + local
            cores.append({"socket": numa // numa_per_socket,
                          "threads": [t * total_cores + core for t in range(threads)]})
        pages_2m = draw(st.sampled_from([0, 0, 256, 512]))
        pages_1g = draw(st.sampled_from([0, 0, 1, 2]))
        memory = draw(st.integers(2, 8)) + pages_1g + (1 if pages_2m else 0)
        nodes.append({
            "id": numa,
            "memory": f"{memory}Gi",
            "hugepages": {"hugepages-2Mi": pages_2m, "hugepages-1Gi": pages_1g},
            "distances": [10 if other == numa else 20 + 5 * abs(other - numa)
                          for other in range(count)],
            "cores": cores,
        })
    devices: dict[str, list[dict[str, Any]]] = {}
    for r in range(draw(st.integers(0, 2)) if devices_too else 0):
        found = []
        for d in range(draw(st.integers(1, 4))):
            placement = draw(st.sampled_from(
                [[n] for n in range(count)] + [[], list(range(count))]))
            found.append({"id": f"dev{r}-{d}", "numa": placement,
                          "healthy": draw(st.sampled_from([True, True, True, False]))})
        devices[f"example.com/res{r}"] = found
    return {"numaNodes": nodes, "devices": devices}


@st.composite
def node_requests(draw: st.DrawFn, versions: tuple[str, ...] = ("1.30", "1.33", "1.37"),
                  devices_too: bool = True) -> dict[str, Any]:
    """A ``create`` request for a node kubelet would start."""
    machine = draw(machines(devices_too))
    count = len(machine["numaNodes"])
    sockets = len({c["socket"] for n in machine["numaNodes"] for c in n["cores"]})
    tm_policy = draw(st.sampled_from(["none", "best-effort", "restricted", "single-numa-node"]))
    config: dict[str, Any] = {
        "topologyManagerPolicy": tm_policy,
        "topologyManagerScope": draw(st.sampled_from(["container", "pod"])),
    }
    if draw(st.integers(0, 4)) > 0:
        config["cpuManagerPolicy"] = "static"
        cpus = [t for n in machine["numaNodes"] for c in n["cores"] for t in c["threads"]]
        if draw(st.booleans()):
            config["reservedSystemCPUs"] = str(min(cpus))
        else:
            config["kubeReserved"] = {"cpu": draw(st.sampled_from(["500m", "1"]))}
        options: dict[str, str] = {}
        if draw(st.booleans()):
            options["full-pcpus-only"] = "true"
        if draw(st.booleans()):
            options["distribute-cpus-across-numa"] = "true"
        if tm_policy != "single-numa-node" and sockets <= count and draw(st.booleans()):
            options["align-by-socket"] = "true"
        if options:
            config["cpuManagerPolicyOptions"] = options
            config["featureGates"] = {"CPUManagerPolicyAlphaOptions": True}
    if draw(st.booleans()):
        config["memoryManagerPolicy"] = "Static"
        reserved = draw(st.sampled_from([256, 512]))
        config["systemReserved"] = {"memory": f"{reserved - 100}Mi"}
        config["reservedMemory"] = [{"numaNode": 0, "limits": {"memory": f"{reserved}Mi"}}]
    return {"op": "create", "node": {"kubeletVersion": draw(st.sampled_from(versions)),
                                     "machine": machine, "config": config}}


@st.composite
def _resources(draw: st.DrawFn, devices: list[str], guaranteed: bool) -> dict[str, Any]:
    cpu = draw(st.sampled_from(["1", "2", "3", "4", "500m", "1500m"]))
    memory = f"{draw(st.sampled_from([64, 256, 1024, 3072, 6144]))}Mi"
    limits: dict[str, str] = {"cpu": cpu, "memory": memory}
    if draw(st.integers(0, 3)) == 0:
        limits["hugepages-2Mi"] = f"{draw(st.sampled_from([2, 64, 512]))}Mi"
    if draw(st.integers(0, 5)) == 0:
        limits["hugepages-1Gi"] = "1Gi"
    for resource in devices:
        if draw(st.booleans()):
            limits[resource] = str(draw(st.integers(0, 3)))
    if guaranteed:
        return {"limits": limits}
    requests = {"cpu": cpu, "memory": "32Mi"}
    return {"requests": requests, "limits": limits} if draw(st.booleans()) else {
        "requests": requests}


@st.composite
def pods(draw: st.DrawFn, uid: str, devices: list[str]) -> dict[str, Any]:
    """A pod with 0-2 init containers (maybe a sidecar) and 1-3 app containers; mostly
    Guaranteed (every container limited, requests = limits)."""
    guaranteed = draw(st.integers(0, 4)) > 0
    inits = []
    for i in range(draw(st.sampled_from([0, 0, 1, 2]))):
        container: dict[str, Any] = {"name": f"init{i}",
                                     "resources": draw(_resources(devices, guaranteed))}
        if draw(st.integers(0, 2)) == 0:
            container["restartPolicy"] = "Always"
        inits.append(container)
    apps = [{"name": f"app{i}", "resources": draw(_resources(devices, guaranteed))}
            for i in range(draw(st.integers(1, 3)))]
    body: dict[str, Any] = {"uid": uid, "containers": apps}
    if inits:
        body["initContainers"] = inits
    return body
