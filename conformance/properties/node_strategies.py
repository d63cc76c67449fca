"""Hypothesis strategies for the node protocol: machines, node configurations and pods, as
the JSON documents of spec/node-protocol.md.

Everything generated is valid input that kubelet would start with (reservations add up and
fit the capacity, the options fit the machine) and pods the API server accepts (ADMIT-7),
unless a strategy says otherwise, so that every step of a stateful test exercises admission
rather than input checking.  Some pods exceed what the node can hold (the fit handler,
ADMIT-8), some ask less than their limits, and reservations may span several CPUs and NUMA
nodes.

Issue 33 measured where these strategies did not reach (mutants of the reference that the
suite let through) and widened them there: every declared release, not three; Topology
Manager options; feature gates turned off so that an option is refused; distance matrices
that are legal but not regular; configuration lists out of node order; memory reserved on
any NUMA node; pods whose init containers outweigh their app containers.
Each wider shape is drawn sometimes, not always, so that the usual node stays the usual case.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from numaspec.node.cpu_manager import cpu_option_maturity
from numaspec.topology.gates import Maturity, known_gates
from numaspec.topology.options import option_maturity
from numaspec.topology.versions import KubeletVersion, parse_version

if TYPE_CHECKING:
    from numaspec.conformance.implementations.claims import NodeClaims

__all__ = ["MATURITY_STEPS", "MEBI", "machines", "node_requests", "pods", "startup_requests"]

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
            "cores": cores,
        })
    for numa, row in enumerate(draw(_distances(count))):
        nodes[numa]["distances"] = row
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
def _distances(draw: st.DrawFn, count: int) -> list[list[int]]:
    """Symmetric distance rows, 10 to itself: usually growing with the id distance (20, 25,
    30, as most firmware reports), sometimes all equal (every pair ties) or arbitrary (a far
    node with a low id, so that the closest set is not the lowest ids: MERGE-9, MERGE-12)."""
    shape = draw(st.sampled_from(["regular", "regular", "regular", "ties", "arbitrary"]))
    rows = [[10 if a == b else 20 + 5 * abs(a - b) if shape == "regular" else 20
             for b in range(count)] for a in range(count)]
    if shape == "arbitrary":
        for a in range(count):
            for b in range(a + 1, count):
                rows[a][b] = rows[b][a] = draw(st.sampled_from([11, 12, 20, 21, 32, 40]))
    return rows


def _gate_settings(draw: st.DrawFn, version: KubeletVersion, needed: dict[str, bool],
                   refusals: bool) -> dict[str, bool]:
    """The feature gates the drawn options need (``needed``: gate -> the value that lets them
    through), as an operator sets them; with ``refusals``, one time in three each is set the
    other way, where the release lets it be (known, not locked), so that kubelet refuses the
    option (NODE-10, OPT-2, CPU-14: the maturity steps show only there).  A gate that must stay
    as it is defaults to that value; one the release does not know is left out."""
    known = known_gates(version)
    gates: dict[str, bool] = {}
    for name, value in sorted(needed.items()):
        spec = known.get(name)
        if spec is None:
            continue
        chosen = value if not refusals or draw(st.integers(0, 2)) else not value
        if spec.lock_to_default and chosen != spec.default:
            continue
        if chosen != spec.default or draw(st.booleans()):
            gates[name] = chosen
    return gates


_MATURITY_GATE = {Maturity.ALPHA: "AlphaOptions", Maturity.BETA: "BetaOptions"}


def _option_gates(draw: st.DrawFn, version: KubeletVersion, prefix: str,
                  maturities: list[Maturity | None], refusals: bool) -> dict[str, bool]:
    """The gates of the options drawn (``prefix``: CPUManagerPolicy or TopologyManagerPolicy):
    the umbrella ``<prefix>Options`` and one per maturity below GA."""
    needed = {f"{prefix}Options": True}
    for maturity in maturities:
        if maturity in _MATURITY_GATE:
            needed[prefix + _MATURITY_GATE[maturity]] = True
    if refusals:
        # Every maturity's gate, whatever the options' maturity here: a gate off that the
        # option does not need must change nothing (a GA option, CPU-14, OPT-2), and that is
        # where a maturity table one release off shows.
        needed.update({prefix + gate: True for gate in _MATURITY_GATE.values()})
    return _gate_settings(draw, version, needed, refusals)


def _claimed(names: frozenset[str] | None, every: tuple[str, ...]) -> list[str]:
    return [n for n in every if names is None or n in names]


@st.composite
def node_requests(draw: st.DrawFn, versions: tuple[str, ...] = ("1.30", "1.33", "1.37"),
                  devices_too: bool = True, max_pods: bool = True,
                  claims: NodeClaims | None = None, *, refusals: bool = False
                  ) -> dict[str, Any]:
    """A ``create`` request for a node kubelet would start (``max_pods``: sometimes with a
    small ``maxPods``, ADMIT-8), inside ``claims`` when given (PROTO-7: only the managers,
    scopes, policies and CPU Manager options claimed; no feature gates unless claimed, and
    so no option that needs one).  ``refusals``: sometimes an option's gate is off, and
    kubelet would not start (NODE-10, OPT-2, CPU-14)."""
    managers = _claimed(claims.managers if claims else None, ("cpu", "memory", "device"))
    machine = draw(machines(devices_too and "device" in managers))
    # The first three releases (1.30, 1.33, 1.37 where declared) half the time, else any;
    # with ``refusals`` any, evenly: the maturity steps fall on every release.
    version = draw(st.sampled_from(versions) if refusals else st.one_of(
        st.sampled_from(versions[:3]), st.sampled_from(versions)))
    release = parse_version(version)
    minor = release.minor
    count = len(machine["numaNodes"])
    sockets = len({c["socket"] for n in machine["numaNodes"] for c in n["cores"]})
    tm_policy = draw(st.sampled_from(_claimed(claims.policies if claims else None, _POLICIES)))
    config: dict[str, Any] = {
        "topologyManagerPolicy": tm_policy,
        "topologyManagerScope": draw(st.sampled_from(
            _claimed(claims.scopes if claims else None, ("container", "pod")))),
    }
    if "cpu" in managers and (refusals or draw(st.integers(0, 4)) > 0):
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
            # Not always in ascending order, not always the lowest of NUMA node 0 first.
            config["reservedSystemCPUs"] = ",".join(str(c) for c in draw(st.permutations(chosen)))
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
        if minor >= 32 and draw(st.integers(0, 1 if refusals else 3)) == 0:
            options["strict-cpu-reservation"] = "true"
        if claims is not None:
            options = {k: v for k, v in options.items() if claims.feature_gates and (
                claims.cpu_policy_options is None or k in claims.cpu_policy_options)}
        if options:
            config["cpuManagerPolicyOptions"] = options
            config["featureGates"] = _option_gates(
                draw, release, "CPUManagerPolicy",
                [cpu_option_maturity(name, release) for name in options], refusals)
    if tm_policy != "none" and minor >= 26 and (claims is None or claims.feature_gates) \
            and (refusals or draw(st.integers(0, 2)) == 0):
        # OPT-1..OPT-5: the Topology Manager's options where the release has them.
        allowed = claims.policy_options if claims else None
        tm_options: dict[str, str] = {}
        for name, values in (("prefer-closest-numa-nodes", ["true", "true", "false"]),
                             ("max-allowable-numa-nodes", ["8", "12", "64"])):
            if option_maturity(name, release) is not None and (
                    allowed is None or name in allowed) and draw(st.booleans()):
                tm_options[name] = draw(st.sampled_from(values))
        if tm_options:
            config["topologyManagerPolicyOptions"] = tm_options
            config["featureGates"] = {**config.get("featureGates", {}), **_option_gates(
                draw, release, "TopologyManagerPolicy",
                [option_maturity(name, release) for name in tm_options], refusals)}
    if "memory" in managers and draw(st.booleans()):
        config["memoryManagerPolicy"] = "Static"
        reserved = draw(st.sampled_from([256, 512]))
        config["systemReserved"] = {**config.get("systemReserved", {}),
                                    "memory": f"{reserved - 100}Mi"}
        # MEM-2: the reservation on one NUMA node (not always 0), or split over two.
        where = draw(st.permutations(range(count)))
        first = draw(st.sampled_from([reserved, reserved // 2, 64])) if count > 1 else reserved
        entries = [{"numaNode": where[0], "limits": {"memory": f"{first}Mi"}}]
        if first < reserved:
            entries.append({"numaNode": where[1], "limits": {"memory": f"{reserved - first}Mi"}})
        config["reservedMemory"] = draw(st.permutations(entries))
    if max_pods and draw(st.integers(0, 7)) == 0:
        # ADMIT-8: a small pod limit, so that the pod count is what refuses.
        config["maxPods"] = draw(st.integers(1, 4))
    return {"op": "create", "node": {"kubeletVersion": version,
                                     "machine": machine, "config": config}}


#: The CPU and memory a container is drawn from, by size (``any``, or the init-heavy tier's
#: ``large`` init containers and ``small`` app containers).
_SIZES = {
    "any": (["1", "2", "3", "4", "500m", "1500m"], [64, 256, 1024, 3072, 6144]),
    "large": (["3", "4"], [3072, 6144]),
    "small": (["1", "500m"], [64, 256]),
}


def _maturity_steps() -> tuple[tuple[str, str, int], ...]:
    """(kind, option, minor) for every release of 1.29-1.37 at which an option's maturity
    changes, and the release before it (CPU-14, OPT-2): where a table one release off shows."""
    found: set[tuple[str, str, int]] = set()
    tables = (("cpu", ("full-pcpus-only", "distribute-cpus-across-numa",
                       "strict-cpu-reservation"), cpu_option_maturity),
              ("topology", ("prefer-closest-numa-nodes", "max-allowable-numa-nodes"),
               option_maturity))
    for kind, names, maturity in tables:
        for name in names:
            for minor in range(30, 38):
                before, now = (maturity(name, parse_version(f"1.{m}")) for m in (minor - 1, minor))
                if before != now:
                    found |= {(kind, name, minor - 1), (kind, name, minor)}
    return tuple(sorted(found))


#: Where the options' maturity steps fall, for :func:`startup_requests`.
MATURITY_STEPS = _maturity_steps()


@st.composite
def startup_requests(draw: st.DrawFn, versions: tuple[str, ...],
                     claims: NodeClaims | None = None) -> dict[str, Any]:
    """A ``create`` request aimed at one maturity step (:data:`MATURITY_STEPS`): a node at
    the release of the step or the one before, with that option set and its gates (the
    umbrella ``Options`` gate, the ``AlphaOptions`` and ``BetaOptions`` gates) each on, off
    or left to its default, where the release lets it be set (NODE-10, OPT-2, CPU-14)."""
    steps = [s for s in MATURITY_STEPS if f"1.{s[2]}" in versions and (
        claims is None or (claims.feature_gates and (
            (s[0] == "cpu" and "cpu" in (claims.managers or {"cpu"}) and (
                claims.cpu_policy_options is None or s[1] in claims.cpu_policy_options)) or
            (s[0] == "topology" and (claims.policy_options is None
                                     or s[1] in claims.policy_options)))))]
    if not steps:
        return draw(node_requests(versions, claims=claims, refusals=True))
    kind, name, minor = draw(st.sampled_from(steps))
    request = draw(node_requests((f"1.{minor}",), claims=claims, refusals=True))
    config = request["node"]["config"]
    release = parse_version(f"1.{minor}")
    if kind == "cpu":
        if config.get("cpuManagerPolicy") != "static":
            return request
        field, prefix, value = "cpuManagerPolicyOptions", "CPUManagerPolicy", "true"
    else:
        if config["topologyManagerPolicy"] == "none":
            config["topologyManagerPolicy"] = "best-effort"
        field, prefix = "topologyManagerPolicyOptions", "TopologyManagerPolicy"
        value = "true" if name == "prefer-closest-numa-nodes" else "8"
    config[field] = {**config.get(field, {}), name: value}
    known = known_gates(release)
    gates = {k: v for k, v in config.get("featureGates", {}).items() if not k.startswith(prefix)}
    for gate in (f"{prefix}Options", f"{prefix}AlphaOptions", f"{prefix}BetaOptions"):
        spec = known.get(gate)
        setting = draw(st.sampled_from(["on", "off", "default"]))
        if spec is None or setting == "default" or (
                spec.lock_to_default and spec.default != (setting == "on")):
            continue
        gates[gate] = setting == "on"
    config["featureGates"] = gates
    return request


@st.composite
def _resources(draw: st.DrawFn, devices: list[str], guaranteed: bool, size: str = "any"
               ) -> dict[str, Any]:
    cpus, memories = _SIZES[size]
    cpu = draw(st.sampled_from(cpus))
    memory = f"{draw(st.sampled_from(memories))}Mi"
    if size == "any" and draw(st.integers(0, 7)) == 0:
        # A pod wider than a NUMA node of the larger machines: spread (CPU-16), and packed
        # across nodes that earlier pods left uneven.
        cpu = draw(st.sampled_from(["6", "8"]))
    if size == "any" and draw(st.integers(0, 11)) == 0:
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
             "6": "3", "8": "4", "16": "8"}
    requests = {"cpu": draw(st.sampled_from([cpu, cpu, below[cpu]])), "memory": "32Mi"}
    return {"requests": requests, "limits": limits} if draw(st.booleans()) else {
        "requests": requests}


@st.composite
def pods(draw: st.DrawFn, uid: str, devices: list[str]) -> dict[str, Any]:
    """A pod with 0-2 init containers (maybe a sidecar) and 1-3 app containers; mostly
    Guaranteed (every container limited, requests = limits).  One pod in five is init-heavy:
    its init containers ask more than its app containers (QOS-5, MEM-8, CPU reuse), where
    what an init container held is handed on."""
    guaranteed = draw(st.integers(0, 4)) > 0
    heavy = draw(st.integers(0, 4)) == 0
    inits = []
    for i in range(draw(st.sampled_from([1, 2])) if heavy else draw(st.sampled_from([0, 0, 1, 2]))):
        container: dict[str, Any] = {"name": f"init{i}", "resources": draw(
            _resources(devices, guaranteed, "large" if heavy else "any"))}
        if draw(st.integers(0, 2)) == 0:
            container["restartPolicy"] = "Always"
        inits.append(container)
    apps = [{"name": f"app{i}", "resources": draw(
                _resources(devices, guaranteed, "small" if heavy else "any"))}
            for i in range(draw(st.integers(1, 3)))]
    body: dict[str, Any] = {"uid": uid, "containers": apps}
    if inits:
        body["initContainers"] = inits
    return body
