"""Hypothesis strategies for the node protocol: machines, node configurations and pods, as
the JSON documents of spec/protocols/node-protocol.md.

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

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from numaspec.node.cpu_manager import cpu_option_maturity
from numaspec.topology.gates import Maturity, known_gates
from numaspec.topology.options import option_maturity
from numaspec.topology.versions import KubeletVersion, parse_version

if TYPE_CHECKING:
    from numaspec.conformance.implementations.claims import NodeClaims

__all__ = ["MATURITY_STEPS", "MEBI", "claimed", "machines", "node_requests", "option_gates",
           "pods", "startup_requests", "wide_sizes"]

_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")

MEBI = 1 << 20
GIBI = 1 << 30


@st.composite
def machines(draw: st.DrawFn, devices_too: bool = True) -> dict[str, Any]:
    """1-4 NUMA nodes on 1-2 sockets, SMT off or 2-way, some hugepages, 0-2 device
    resources whose devices sit on a NUMA node, on several, or on none.  One machine in six
    is a bigger server: 2 sockets of 1 or 2 NUMA nodes, 3-6 two-way cores each (up to 48
    CPUs), where the CPU Manager takes whole sockets and NUMA nodes and spreads wide pods
    (CPU-10, CPU-16; issue 33: the small machines never took those paths).  No more than 4
    NUMA nodes: kubelet's merge walks every combination of its providers' hints, which on 8
    NUMA nodes takes minutes a pod (kubernetes#137700).  The bigger servers' cores share an
    uncore (L3) cache per half NUMA node (CPU-19).  One machine in six with several cores
    per NUMA node has one core fewer on its last NUMA node (a core offline, or a part with
    uneven nodes): CPU-16's spread starts from an average that is then too low."""
    big = draw(st.integers(0, 5)) == 0
    if big:
        sockets, numa_per_socket = 2, draw(st.sampled_from([1, 2]))
        cores_per_numa, threads = draw(st.integers(3, 6)), 2
    else:
        sockets = draw(st.integers(1, 2))
        numa_per_socket = draw(st.sampled_from([1, 1, 2]))
        cores_per_numa = draw(st.integers(1, 3))
        threads = draw(st.sampled_from([1, 2]))
    count = sockets * numa_per_socket
    sizes = [cores_per_numa] * count
    if cores_per_numa > 1 and draw(st.integers(0, 5)) == 0:
        sizes[-1] -= 1
    total_cores = sum(sizes)
    nodes = []
    for numa in range(count):
        cores = []
        for local in range(sizes[numa]):
            core = sum(sizes[:numa]) + local
            cores.append({"socket": numa // numa_per_socket,
                          "threads": [t * total_cores + core for t in range(threads)]})
            if big:
                cores[-1]["uncoreCache"] = 2 * numa + (2 * local >= sizes[numa])
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


def option_gates(draw: st.DrawFn, version: KubeletVersion, prefix: str,
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


def claimed(claims: NodeClaims | None, field: str, every: tuple[str, ...]) -> list[str]:
    """Those of ``every`` that ``claims`` (a field of it: managers, scopes, policies) claims,
    in order; all of them without claims (PROTO-7)."""
    names = getattr(claims, field) if claims is not None else None
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
    managers = claimed(claims, "managers", ("cpu", "memory", "device"))
    machine = draw(machines(devices_too and "device" in managers))
    # The first three releases (1.30, 1.33, 1.37 where declared) half the time, else any;
    # with ``refusals`` any, evenly: the maturity steps fall on every release.
    version = draw(st.sampled_from(versions) if refusals else st.one_of(
        st.sampled_from(versions[:3]), st.sampled_from(versions)))
    release = parse_version(version)
    minor = release.minor
    count = len(machine["numaNodes"])
    sockets = len({c["socket"] for n in machine["numaNodes"] for c in n["cores"]})
    tm_policy = draw(st.sampled_from(claimed(claims, "policies", _POLICIES)))
    config: dict[str, Any] = {
        "topologyManagerPolicy": tm_policy,
        "topologyManagerScope": draw(st.sampled_from(
            claimed(claims, "scopes", ("container", "pod")))),
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
        if minor >= 32 and "distribute-cpus-across-numa" not in options and draw(
                st.integers(0, 3)) == 0:
            # CPU-19: the uncore cache's step, on the machines whose cores name one.
            options["prefer-align-cpus-by-uncorecache"] = "true"
        if claims is not None:
            options = {k: v for k, v in options.items() if claims.feature_gates and (
                claims.cpu_policy_options is None or k in claims.cpu_policy_options)}
        if options:
            config["cpuManagerPolicyOptions"] = options
            config["featureGates"] = option_gates(
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
            config["featureGates"] = {**config.get("featureGates", {}), **option_gates(
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
    # Half the time aimed at the step itself (below); the rest of such a node is one kubelet
    # starts, and the aimed option stands alone in its field, so that no other option's gate
    # or refusal answers first and hides the step (a CPU Manager option refused before the
    # Topology Manager's options are read did, issue 33).
    aimed_at_step = draw(st.booleans())
    request = draw(node_requests((f"1.{minor}",), claims=claims, refusals=not aimed_at_step))
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
    config[field] = {name: value} if aimed_at_step else {**config.get(field, {}), name: value}
    known = known_gates(release)
    gates = {k: v for k, v in config.get("featureGates", {}).items() if not k.startswith(prefix)}
    # Aimed at the step: the gate of the option's maturity here or at the neighbouring
    # releases off, the umbrella gate on, so that a maturity table one release off answers
    # differently (a beta option gone GA a release early starts where kubelet refuses); else
    # each gate on, off or left to its default.
    maturity = cpu_option_maturity if kind == "cpu" else option_maturity
    staged = {maturity(name, parse_version(f"1.{m}")) for m in (minor - 1, minor, minor + 1)}
    aimed = {f"{prefix}{_MATURITY_GATE[stage]}" for stage in staged
             if stage in _MATURITY_GATE} if aimed_at_step else None
    for gate in (f"{prefix}Options", f"{prefix}AlphaOptions", f"{prefix}BetaOptions"):
        spec = known.get(gate)
        if aimed is None:
            setting = draw(st.sampled_from(["on", "off", "default"]))
        else:
            setting = "off" if gate in aimed else "on" if gate == f"{prefix}Options" else "default"
        if spec is None or setting == "default" or (
                spec.lock_to_default and spec.default != (setting == "on")):
            continue
        gates[gate] = setting == "on"
    config["featureGates"] = gates
    return request


#: The ways :func:`misconfigured_requests` sets a Memory Manager's reservations (MEM-2,
#: NODE-2, NODE-3), each something an operator writes.
RESERVATION_FAULTS = ("over", "under", "hugepages", "absent-node", "zero", "type", "twice",
                      "pid", "one-byte", "eviction-zero", "nothing")


@st.composite
def misconfigured_requests(draw: st.DrawFn, versions: tuple[str, ...],
                           claims: NodeClaims | None = None) -> dict[str, Any]:
    """A ``create`` request whose static Memory Manager's reservations are set one of
    :data:`RESERVATION_FAULTS` ways: ``reservedMemory`` adding up to more or less than
    allocatable reserves, reserving hugepages nothing reserves, naming a NUMA node the machine
    lacks, a zero limit, a limit of another type, a NUMA node and type given twice (all
    refused); a ``pid`` and ``ephemeral-storage`` reservation beside them (which the
    Memory Manager does not count), a one-byte reservation (the eviction threshold alone)
    (both start); an eviction threshold of zero or below (refused, NODE-3); no memory reserved
    at all (refused).  Where memory is not claimed, a plain
    :func:`node_requests`."""
    request = draw(node_requests(versions, claims=claims))
    if claims is not None and claims.managers is not None and "memory" not in claims.managers:
        return request
    config = request["node"]["config"]
    ids = [n["id"] for n in request["node"]["machine"]["numaNodes"]]
    fault = draw(st.sampled_from(RESERVATION_FAULTS))
    config["memoryManagerPolicy"] = "Static"
    system = {k: v for k, v in config.get("systemReserved", {}).items() if k != "memory"}
    where = draw(st.sampled_from(ids))
    reserved = 256  # MiB: systemReserved 156Mi and the default eviction threshold 100Mi
    system["memory"] = f"{reserved - 100}Mi"
    entries: list[dict[str, Any]] = [{"numaNode": where, "limits": {"memory": f"{reserved}Mi"}}]
    if fault in ("over", "under"):
        entries[0]["limits"]["memory"] = f"{reserved + (64 if fault == 'over' else -64)}Mi"
    elif fault == "hugepages":
        # A page, or a single byte (the smallest amount the reservation can mismatch by).
        entries[0]["limits"]["hugepages-2Mi"] = draw(st.sampled_from(["2Mi", "1"]))
    elif fault == "absent-node":
        entries.append({"numaNode": max(ids) + 1, "limits": {"memory": "64Mi"}})
        entries[0]["limits"]["memory"] = f"{reserved - 64}Mi"
    elif fault == "zero":
        entries.append({"numaNode": where, "limits": {"hugepages-1Gi": "0"}})
    elif fault == "type":
        entries[0]["limits"]["cpu"] = "1"
    elif fault == "twice":
        entries = [{"numaNode": where, "limits": {"memory": f"{reserved // 2}Mi"}}] * 2
    elif fault == "pid":
        system["pid"] = "1000"
        config["kubeReserved"] = {**config.get("kubeReserved", {}), "ephemeral-storage": "1Gi"}
    elif fault == "one-byte":
        config["evictionHard"] = {"memory.available": "1"}
        del system["memory"]
        entries = [{"numaNode": where, "limits": {"memory": "1"}}]
    elif fault == "eviction-zero":
        config["evictionHard"] = {"memory.available": draw(st.sampled_from(["0", "-100Mi"]))}
    else:
        # An explicit evictionHard without memory.available: no memory threshold at all.
        config["evictionHard"] = {"nodefs.available": "10%"}
        del system["memory"]
        entries = []
    config["systemReserved"] = system
    config["reservedMemory"] = draw(st.permutations(entries))
    if not entries:
        del config["reservedMemory"]
    return request


#: A wide pod's CPUs where the machine is not known (:func:`wide_sizes`).
_WIDE = ("6", "8")


@st.composite
def _resources(draw: st.DrawFn, devices: list[str], guaranteed: bool, size: str = "any",
               wide: tuple[str, ...] = _WIDE) -> dict[str, Any]:
    cpus, memories = _SIZES[size]
    cpu = draw(st.sampled_from(cpus))
    memory = f"{draw(st.sampled_from(memories))}Mi"
    if guaranteed and draw(st.integers(0, 15)) == 0:
        # A byte more, or a single byte: where the Memory Manager's blocks and what an init
        # container hands on run out to the last byte (MEM-7, MEM-8).
        memory = draw(st.sampled_from([f"{int(memory[:-2]) * 1048576 + 1}", "1"]))
    if size == "any" and draw(st.integers(0, 7)) == 0:
        # A pod wider than a NUMA node of the larger machines: spread (CPU-16), and packed
        # across nodes that earlier pods left uneven.
        cpu = draw(st.sampled_from(wide))
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
    half = below.get(cpu) or f"{_millis(cpu) // 2}m"
    requests = {"cpu": draw(st.sampled_from([cpu, cpu, half])), "memory": "32Mi"}
    return {"requests": requests, "limits": limits} if draw(st.booleans()) else {
        "requests": requests}


def wide_sizes(machine: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The CPU counts of a pod wider than a NUMA node of ``machine`` (CPU-16): one CPU more
    than a NUMA node, two nodes' worth and one either side of it, three nodes' worth; where
    the distributed allocator's group counts, its NUMA share and its combinations that hold
    exactly the request fall.  Without a machine, 6 and 8."""
    if not machine or not machine.get("numaNodes"):
        return _WIDE
    per_numa = [sum(len(c["threads"]) for c in n["cores"]) for n in machine["numaNodes"]]
    first, total = per_numa[0], sum(per_numa)
    sizes = sorted({c for c in (first + 1, 2 * first - 1, 2 * first, 2 * first + 1, 3 * first)
                    if 2 <= c <= total})
    return tuple(str(c) for c in sizes) or _WIDE


@st.composite
def pods(draw: st.DrawFn, uid: str, devices: list[str], small: bool = False,
         machine: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A pod with 0-2 init containers (maybe a sidecar) and 1-3 app containers; mostly
    Guaranteed (every container limited, requests = limits).  One pod in five is init-heavy:
    its init containers ask more than its app containers (QOS-5, MEM-8, CPU reuse), where
    what an init container held is handed on.  ``small``: every container of the small
    tier, so that most pods are admitted (for sessions about what happens to live pods).
    ``machine``: the node's, so that a wide pod is wide for it (:func:`wide_sizes`).  One pod
    with init containers in four asks one device resource in every container, so that what
    a regular init container held is handed on (DEV-5)."""
    guaranteed = draw(st.integers(0, 4)) > 0
    heavy = not small and draw(st.integers(0, 4)) == 0
    wide = wide_sizes(machine)
    inits = []
    for i in range(draw(st.sampled_from([1, 2])) if heavy else draw(st.sampled_from([0, 0, 1, 2]))):
        container: dict[str, Any] = {"name": f"init{i}", "resources": draw(
            _resources(devices, guaranteed, "large" if heavy else "small" if small else "any",
                       wide))}
        if draw(st.integers(0, 2)) == 0:
            container["restartPolicy"] = "Always"
        inits.append(container)
    apps = [{"name": f"app{i}", "resources": draw(
                _resources(devices, guaranteed, "small" if heavy or small else "any", wide))}
            for i in range(draw(st.integers(1, 3)))]
    if inits and devices and draw(st.integers(0, 3)) == 0:
        # DEV-5: one resource through every container, one or two devices each.
        resource = draw(st.sampled_from(devices))
        for container in (*inits, *apps):
            limits = container["resources"].get("limits")
            if limits is not None:
                limits[resource] = str(draw(st.integers(1, 2)))
    body: dict[str, Any] = {"uid": uid, "containers": apps}
    if inits:
        body["initContainers"] = inits
    return body


#: RESIZE-6/7: the cpu values a resize draws (millicores), and memory (MiB).
_RESIZE_CPUS = {"100m": 100, "500m": 500, "1": 1000, "1500m": 1500, "2": 2000, "3": 3000,
                "4": 4000, "6": 6000}
_RESIZE_MEMORY = [32, 64, 256, 1024, 3072, 6144]


def _millis(text: str) -> int:
    from numaspec.node.quantity import parse_quantity

    return int(parse_quantity(text) * 1000)


def _mebibytes(text: str) -> float:
    from numaspec.node.quantity import parse_quantity

    return float(parse_quantity(text)) / 1048576


def _other(draw: st.DrawFn, values: list[str], old: str | None) -> str:
    """One of ``values``, mostly not ``old``."""
    others = [v for v in values if v != old]
    return draw(st.sampled_from(values if not others or draw(st.integers(0, 7)) == 0
                                else others))


@st.composite
def resize_steps(draw: st.DrawFn, pod: dict[str, Any]) -> dict[str, Any]:
    """A resize of one or two of ``pod``'s app containers or sidecars that the API server
    lets through (RESIZE-2): only cpu and memory change, nothing is removed, the pod's QoS
    class stays (a Guaranteed container's limits change, its requests follow; a Burstable
    container's requests change, never above its limits nor all up to them), so what is
    judged is kubelet's part (RESIZE-1, RESIZE-4..RESIZE-7).  Regular init containers are
    left alone: which releases let them be resized is RESIZE-2's, checked by vectors."""
    sidecars = [c for c in pod.get("initContainers", []) if c.get("restartPolicy") == "Always"]
    names = [*sidecars, *pod["containers"]]
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=min(2, len(names)),
                           unique_by=lambda c: c["name"]))
    containers = []
    for container in chosen:
        old = container.get("resources", {})
        limits = dict(old.get("limits", {}))
        # Mostly a change (one in eight keeps the value: Unchanged when all do).
        change = draw(st.sampled_from(["cpu", "cpu", "memory", "both"]))
        if "requests" not in old:
            # Guaranteed: requests are the limits; the new limits carry both.
            if change != "memory":
                limits["cpu"] = _other(draw, list(_RESIZE_CPUS)[1:], limits.get("cpu"))
            if change != "cpu":
                limits["memory"] = _other(draw, [f"{m}Mi" for m in _RESIZE_MEMORY[1:]],
                                          limits.get("memory"))
            containers.append({"name": container["name"], "resources": {"limits": limits}})
            continue
        requests = dict(old["requests"])
        cpu_cap = _millis(limits["cpu"]) if "cpu" in limits else None
        memory_cap = _mebibytes(limits["memory"]) if "memory" in limits else None
        cpus = [k for k, v in _RESIZE_CPUS.items() if cpu_cap is None or v <= cpu_cap]
        memories = [f"{m}Mi" for m in _RESIZE_MEMORY if memory_cap is None or m < memory_cap]
        if change != "memory" or not memories:
            requests["cpu"] = _other(draw, cpus, requests.get("cpu"))
        if memories and change != "cpu":
            requests["memory"] = _other(draw, memories, requests.get("memory"))
        resources = {"requests": requests, **({"limits": limits} if limits else {})}
        containers.append({"name": container["name"], "resources": resources})
    return {"op": "resize", "uid": pod["uid"], "containers": containers}
