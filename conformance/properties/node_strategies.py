"""Hypothesis strategies for the node protocol: machines, node configurations and pods, as
the JSON documents of spec/node-protocol.md.

Everything generated is valid input that kubelet would start with (reservations add up and
fit the capacity, the options fit the machine) and pods the API server accepts (ADMIT-7),
unless a strategy says otherwise, so that every step of a stateful test exercises admission
rather than input checking.  Some pods exceed what the node can hold (the fit handler,
ADMIT-8), some ask less than their limits, and reservations may span several CPUs and NUMA
nodes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

if TYPE_CHECKING:
    from numaspec.conformance.implementations.claims import NodeClaims

__all__ = ["MEBI", "machines", "node_requests", "pods"]

_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")

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


def _claimed(names: frozenset[str] | None, every: tuple[str, ...]) -> list[str]:
    return [n for n in every if names is None or n in names]


@st.composite
def node_requests(draw: st.DrawFn, versions: tuple[str, ...] = ("1.30", "1.33", "1.37"),
                  devices_too: bool = True, max_pods: bool = True,
                  claims: NodeClaims | None = None) -> dict[str, Any]:
    """A ``create`` request for a node kubelet would start (``max_pods``: sometimes with a
    small ``maxPods``, ADMIT-8), inside ``claims`` when given (PROTO-7: only the managers,
    scopes, policies and CPU Manager options claimed; no feature gates unless claimed, and
    so no option that needs one)."""
    managers = _claimed(claims.managers if claims else None, ("cpu", "memory", "device"))
    machine = draw(machines(devices_too and "device" in managers))
    version = draw(st.sampled_from(versions))
    minor = int(version.split(".")[1])
    count = len(machine["numaNodes"])
    sockets = len({c["socket"] for n in machine["numaNodes"] for c in n["cores"]})
    tm_policy = draw(st.sampled_from(_claimed(claims.policies if claims else None, _POLICIES)))
    config: dict[str, Any] = {
        "topologyManagerPolicy": tm_policy,
        "topologyManagerScope": draw(st.sampled_from(
            _claimed(claims.scopes if claims else None, ("container", "pod")))),
    }
    if "cpu" in managers and draw(st.integers(0, 4)) > 0:
        config["cpuManagerPolicy"] = "static"
        cpus = [t for n in machine["numaNodes"] for c in n["cores"] for t in c["threads"]]
        # NODE-3: one or two reserved CPUs (the lowest of a NUMA node each, so two may sit on
        # different NUMA nodes), or a cpu reservation of up to two CPUs split between kube and
        # system reserved; always leaving a CPU to assign (NODE-9, CPU-8).
        firsts = sorted({min(t for c in n["cores"] for t in c["threads"])
                         for n in machine["numaNodes"]})
        most = 2 if len(cpus) >= 6 else 1
        if draw(st.booleans()):
            chosen = firsts[:draw(st.integers(1, max(1, min(most, len(firsts)))))]
            config["reservedSystemCPUs"] = ",".join(str(c) for c in chosen)
        else:
            cpu = draw(st.sampled_from(["500m", "1", "1500m", "2"][:2 * max(1, most)]))
            if draw(st.integers(0, 2)) == 0 and cpu in ("1", "2"):
                half = f"{int(cpu) * 500}m"
                config["kubeReserved"] = {"cpu": half}
                config["systemReserved"] = {"cpu": half}
            else:
                config["kubeReserved"] = {"cpu": cpu}
        options: dict[str, str] = {}
        if draw(st.booleans()):
            options["full-pcpus-only"] = "true"
        if draw(st.booleans()):
            options["distribute-cpus-across-numa"] = "true"
        if tm_policy != "single-numa-node" and sockets <= count and draw(st.booleans()):
            options["align-by-socket"] = "true"
        if minor >= 32 and draw(st.integers(0, 3)) == 0:
            options["strict-cpu-reservation"] = "true"
        if claims is not None:
            options = {k: v for k, v in options.items() if claims.feature_gates and (
                claims.cpu_policy_options is None or k in claims.cpu_policy_options)}
        if options:
            config["cpuManagerPolicyOptions"] = options
            config["featureGates"] = {"CPUManagerPolicyAlphaOptions": True}
    if "memory" in managers and draw(st.booleans()):
        config["memoryManagerPolicy"] = "Static"
        reserved = draw(st.sampled_from([256, 512]))
        config["systemReserved"] = {**config.get("systemReserved", {}),
                                    "memory": f"{reserved - 100}Mi"}
        # MEM-2: the reservation on NUMA 0, or split over the first two NUMA nodes.
        first = draw(st.sampled_from([reserved, reserved // 2, 64])) if count > 1 else reserved
        config["reservedMemory"] = [{"numaNode": 0, "limits": {"memory": f"{first}Mi"}}]
        if first < reserved:
            config["reservedMemory"].append(
                {"numaNode": 1, "limits": {"memory": f"{reserved - first}Mi"}})
    if max_pods and draw(st.integers(0, 7)) == 0:
        # ADMIT-8: a small pod limit, so that the pod count is what refuses.
        config["maxPods"] = draw(st.integers(1, 4))
    return {"op": "create", "node": {"kubeletVersion": version,
                                     "machine": machine, "config": config}}


@st.composite
def _resources(draw: st.DrawFn, devices: list[str], guaranteed: bool) -> dict[str, Any]:
    cpu = draw(st.sampled_from(["1", "2", "3", "4", "500m", "1500m"]))
    memory = f"{draw(st.sampled_from([64, 256, 1024, 3072, 6144]))}Mi"
    if draw(st.integers(0, 11)) == 0:
        # ADMIT-8: more than any generated node has (cpu or memory).
        cpu, memory = draw(st.sampled_from([("16", memory), (cpu, "64Gi")]))
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
    # ADMIT-7: a request may be below its limit (never above).
    below = {"1": "500m", "2": "1", "3": "1500m", "4": "2", "500m": "100m", "1500m": "1",
             "16": "8"}
    requests = {"cpu": draw(st.sampled_from([cpu, cpu, below[cpu]])), "memory": "32Mi"}
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
