"""Node sessions aimed at the corners random sessions rarely reach (issue 33: the suite's
reach, measured by mutation testing).

:func:`~numaspec.conformance.properties.node_sessions.node_sessions` draws whole nodes at
random, and some of what kubelet does shows only when several unlikely things meet: the CPU
Manager's placement on a machine whose NUMA nodes are unevenly sized and unevenly free, with
one of its placement options (CPU-10, CPU-12, CPU-13, CPU-19, CPU-20); a pod whose regular
init containers hand on the same devices and memory to each other and to the app containers
(DEV-5, MEM-8, MEM-10, CPU-15); a pod at pod scope whose containers' devices lie on different
NUMA nodes when it is resized (RESIZE-6).  Each property here draws only such sessions, so
its examples are spent where the reference has branches the random ones leave alone, and
each session is judged as every other one is (:func:`judge_session`: the reference's answer
at every step, and the invariants).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from numaspec.conformance.implementations.claims import NodeClaims, claims_of
from numaspec.conformance.properties.node_sessions import (
    NodeSessionImplementation,
    judge_session,
    judge_startup,
    node_sessions,
    session_versions,
)
from numaspec.conformance.properties.node_strategies import claimed, node_requests, option_gates
from numaspec.conformance.properties.registry import register
from numaspec.node.cpu_manager import cpu_option_maturity
from numaspec.node.go_quantity import go_as_int64, go_parse
from numaspec.node.quantity import BINARY_SUFFIXES, DECIMAL_SUFFIXES, parse_quantity
from numaspec.topology.versions import parse_version

__all__ = ["handoff_sessions", "placement_machines", "placement_sessions",
           "pod_scope_resize_sessions", "spelled_sessions", "spelled_startups", "spellings"]

Steps = list[dict[str, Any]]

#: The CPU Manager's placement options a session is drawn with, by the way they place
#: (CPU-12, CPU-19, CPU-13, CPU-10): each may come with full-pcpus-only (not the spread over
#: cores) and align-by-socket; kubelet refuses the pairs CPU-14 excludes, so none is drawn.
_MODES = {
    "distribute": "distribute-cpus-across-numa",
    "uncore": "prefer-align-cpus-by-uncorecache",
    "cores": "distribute-cpus-across-cores",
    "packed": None,
}


#: The releases on either side of a change in placement (CPU-12 from 1.37, CPU-20 from 1.34).
_PLACEMENT_STEPS = ("1.33", "1.34", "1.36", "1.37")


def _every_pod_removed(uids: list[str]) -> Steps:
    """The end of a session: every pod removed, and the state (INV-9)."""
    return [*({"op": "remove", "uid": uid} for uid in uids), {"op": "state"}]


@st.composite
def placement_machines(draw: st.DrawFn, devices: int = 0) -> dict[str, Any]:
    """1-2 sockets of 1-2 NUMA nodes, 2-6 cores each, SMT off, two- or four-way; one NUMA node
    in three with cores offline (down to one core: a node smaller than the average, the
    average then too low for the largest, CPU-12's group count), its cores sharing uncore
    caches of 2, 3 or all of a node's cores (CPU-19).  ``devices``: that many devices of one
    resource, on NUMA nodes drawn in turn."""
    # Half the time two sockets of two NUMA nodes: where sockets are taken whole before NUMA
    # nodes (CPU-10) and align-by-socket has a choice (CPU-12).
    sockets, per_socket = (2, 2) if draw(st.booleans()) else (
        draw(st.integers(1, 2)), draw(st.sampled_from([1, 2])))
    cores = draw(st.integers(2, 6))
    # SMT off, two-way, or four-way (POWER's SMT4: a core's threads outnumber what an odd
    # request leaves out, CPU-20).
    threads = draw(st.sampled_from([1, 2, 2, 4]))
    count = sockets * per_socket
    sizes = [draw(st.integers(1, cores)) if draw(st.integers(0, 2)) == 0 else cores
             for _ in range(count)]
    per_cache = draw(st.sampled_from([2, 3, cores]))
    total = sum(sizes)
    nodes = []
    cache = 0
    for numa in range(count):
        listed = []
        for local in range(sizes[numa]):
            core = sum(sizes[:numa]) + local
            if local and local % per_cache == 0:
                cache += 1
            listed.append({"socket": numa // per_socket, "uncoreCache": cache,
                           "threads": [t * total + core for t in range(threads)]})
        cache += 1
        nodes.append({"id": numa, "memory": "16Gi",
                      "hugepages": {"hugepages-2Mi": 0, "hugepages-1Gi": 0}, "cores": listed,
                      "distances": [10 if a == numa else 20 + 5 * abs(a - numa)
                                    for a in range(count)]})
    found = [{"id": f"dev{d}", "numa": [draw(st.integers(0, count - 1))], "healthy": True}
             for d in range(devices)]
    return {"numaNodes": nodes, "devices": {"example.com/dev": found} if found else {}}


def _guaranteed(uid: str, *cpus: int | str, memory: str = "64Mi",
                devices: tuple[int, ...] = ()) -> dict[str, Any]:
    containers = []
    for i, cpu in enumerate(cpus):
        limits = {"cpu": str(cpu), "memory": memory}
        if i < len(devices) and devices[i]:
            limits["example.com/dev"] = str(devices[i])
        containers.append({"name": f"app{i}", "resources": {"limits": limits}})
    return {"uid": uid, "containers": containers}


def _interesting(machine: dict[str, Any]) -> list[int]:
    """The CPU counts where placement changes course: a NUMA node's, a socket's and an uncore
    cache's worth, one either side, and their doubles (CPU-10, CPU-12, CPU-19, CPU-20)."""
    per_numa = [sum(len(c["threads"]) for c in n["cores"]) for n in machine["numaNodes"]]
    sockets: dict[int, int] = {}
    caches: dict[int, int] = {}
    for node in machine["numaNodes"]:
        for core in node["cores"]:
            sockets[core["socket"]] = sockets.get(core["socket"], 0) + len(core["threads"])
            caches[core["uncoreCache"]] = caches.get(core["uncoreCache"], 0) + len(
                core["threads"])
    total = sum(per_numa)
    bases = {*per_numa, *sockets.values(), *caches.values()}
    sizes = {b + d for b in bases for d in (-1, 0, 1)} | {2 * b + d for b in bases
                                                          for d in (-1, 0, 1)}
    return sorted(s for s in sizes if 1 <= s < total)


@st.composite
def placement_sessions(draw: st.DrawFn, claims: NodeClaims | None,
                       versions: tuple[str, ...]) -> Steps:
    """A static CPU Manager with one way of placing (:data:`_MODES`), on a
    :func:`placement_machines` machine: 0-3 pods of one container take 1 to a NUMA node's
    CPUs, leaving the nodes unevenly free; then 1-3 pods ask a count where placement changes
    course (:func:`_interesting`), one of the first pods sometimes removed in between; each
    step followed by ``state``, every pod removed at the end."""
    machine = draw(placement_machines())
    # Half the time a release on either side of a change in how CPUs are placed: CPU-20's
    # rounding (1.34) and align-by-socket inside distribute-cpus-across-numa (1.37).
    steps_near = [v for v in versions if v in _PLACEMENT_STEPS]
    near = bool(steps_near) and draw(st.booleans())
    version = draw(st.sampled_from(steps_near if near else versions))
    release = parse_version(version)
    count = len(machine["numaNodes"])
    sockets = len({c["socket"] for n in machine["numaNodes"] for c in n["cores"]})
    policy = draw(st.sampled_from(claimed(claims, "policies",
                                           ("none", "best-effort", "restricted"))
                                  or ["none"]))
    modes = [m for m, option in _MODES.items() if option is None or (
        cpu_option_maturity(option, release) is not None
        and (claims is None or (claims.feature_gates and (
            claims.cpu_policy_options is None or option in claims.cpu_policy_options))))]
    mode = draw(st.sampled_from(modes))
    wanted = [o for o in [_MODES[mode]] if o]
    extras = ["align-by-socket"] if sockets <= count else []
    if mode != "cores":
        extras.append("full-pcpus-only")
    extras.append("strict-cpu-reservation")
    for extra in extras:
        if cpu_option_maturity(extra, release) is not None and draw(st.booleans()):
            wanted.append(extra)
    if claims is not None:
        wanted = [o for o in wanted if claims.feature_gates and (
            claims.cpu_policy_options is None or o in claims.cpu_policy_options)]
    config: dict[str, Any] = {
        "topologyManagerPolicy": policy,
        "topologyManagerScope": claimed(claims, "scopes", ("container", "pod"))[0],
        "cpuManagerPolicy": "static",
    }
    if draw(st.booleans()):
        config["reservedSystemCPUs"] = "0"
    else:
        config["kubeReserved"] = {"cpu": draw(st.sampled_from(["1", "500m"]))}
    if wanted:
        config["cpuManagerPolicyOptions"] = dict.fromkeys(wanted, "true")
        config["featureGates"] = option_gates(
            draw, release, "CPUManagerPolicy",
            [cpu_option_maturity(o, release) for o in wanted], False)
    steps: Steps = [{"op": "create", "node": {"kubeletVersion": version, "machine": machine,
                                             "config": config}}, {"op": "state"}]
    per_numa = max(sum(len(c["threads"]) for c in n["cores"]) for n in machine["numaNodes"])
    uids = []
    for index in range(draw(st.integers(0, 3))):
        uids.append(f"fill{index}")
        steps += [{"op": "admit", "pod": _guaranteed(uids[-1], draw(st.integers(1, per_numa)))},
                  {"op": "state"}]
    sizes = _interesting(machine) or [1]
    for index in range(draw(st.integers(1, 3))):
        if uids and draw(st.integers(0, 3)) == 0:
            steps += [{"op": "remove", "uid": uids.pop(draw(st.integers(0, len(uids) - 1)))},
                      {"op": "state"}]
        cpus = [draw(st.sampled_from(sizes))]
        if draw(st.integers(0, 3)) == 0:
            cpus.append(draw(st.integers(1, per_numa)))
        uids.append(f"pod{index}")
        steps += [{"op": "admit", "pod": _guaranteed(uids[-1], *cpus)}, {"op": "state"}]
    return steps + _every_pod_removed(uids)


#: The memory a hand-off pod's container asks: one byte, 64 MiB and one byte more, and round
#: sizes (MEM-8's blocks handed on to the byte).
_HANDOFF_MEMORY = ("1", "64Mi", "67108865", "128Mi", "256Mi")


def _container(draw: st.DrawFn, name: str, most_cpus: int, *, devices: int | None
               ) -> dict[str, Any]:
    """A Guaranteed container of a hand-off pod: 1 to ``most_cpus`` CPUs, memory of
    :data:`_HANDOFF_MEMORY`, and 0 to ``devices`` devices where the node has them."""
    limits = {"cpu": str(draw(st.integers(1, most_cpus))),
              "memory": draw(st.sampled_from(_HANDOFF_MEMORY))}
    if devices is not None:
        limits["example.com/dev"] = str(draw(st.integers(0, devices)))
    return {"name": name, "resources": {"limits": limits}}


@st.composite
def handoff_sessions(draw: st.DrawFn, claims: NodeClaims | None,
                     versions: tuple[str, ...]) -> Steps:
    """Pods whose 2-3 regular init containers (and sometimes a sidecar) ask the same device
    resource, memory and CPUs as each other and as the app containers, in amounts that hand
    part of what one held on to the next: more, fewer, the same, one byte of memory, one
    byte more (DEV-5, MEM-8, MEM-10, CPU-15), on a node running every claimed manager."""
    managers = claimed(claims, "managers", ("cpu", "memory", "device"))
    machine = draw(placement_machines(devices=draw(st.integers(3, 6))
                                      if "device" in managers else 0))
    version = draw(st.sampled_from(versions))
    count = len(machine["numaNodes"])
    config: dict[str, Any] = {
        "topologyManagerPolicy": draw(st.sampled_from(
            claimed(claims, "policies", ("none", "best-effort", "restricted")) or ["none"])),
        "topologyManagerScope": draw(st.sampled_from(
            claimed(claims, "scopes", ("container", "pod")))),
    }
    if "cpu" in managers:
        config |= {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}
    if "memory" in managers:
        config |= {"memoryManagerPolicy": "Static", "systemReserved": {"memory": "156Mi"},
                   "reservedMemory": [{"numaNode": draw(st.integers(0, count - 1)),
                                       "limits": {"memory": "256Mi"}}]}
    steps: Steps = [{"op": "create", "node": {"kubeletVersion": version, "machine": machine,
                                             "config": config}}, {"op": "state"}]
    devices = "device" in managers
    uids = []
    for index in range(draw(st.integers(1, 3))):
        inits = []
        for i in range(draw(st.integers(2, 3))):
            inits.append(_container(draw, f"init{i}", 3, devices=3 if devices else None))
            if i == 0 and draw(st.integers(0, 3)) == 0:
                inits[-1]["restartPolicy"] = "Always"
        apps = [_container(draw, f"app{i}", 2, devices=2 if devices else None)
                for i in range(draw(st.integers(1, 2)))]
        uids.append(f"pod{index}")
        steps += [{"op": "admit", "pod": {"uid": uids[-1], "initContainers": inits,
                                          "containers": apps}}, {"op": "state"}]
    return steps + _every_pod_removed(uids)


@st.composite
def pod_scope_resize_sessions(draw: st.DrawFn, claims: NodeClaims | None,
                              versions: tuple[str, ...]) -> Steps:
    """At pod scope (best-effort, restricted or single-numa-node): a pod takes a device, a pod of
    two containers takes one device each (on different NUMA nodes where the first pod left
    only that), the first pod may go, and the second is resized (a container's CPUs or
    memory), which the Topology Manager re-admits from the devices the pod holds, as one
    pod-wide request (RESIZE-6)."""
    machine = draw(placement_machines(devices=draw(st.integers(2, 4))))
    version = draw(st.sampled_from(versions))
    config: dict[str, Any] = {
        "topologyManagerPolicy": draw(st.sampled_from(
            claimed(claims, "policies", ("restricted", "single-numa-node", "best-effort"))
            or ["none"])),
        "topologyManagerScope": "pod",
    }
    steps: Steps = [{"op": "create", "node": {"kubeletVersion": version, "machine": machine,
                                             "config": config}}, {"op": "state"}]
    first = _guaranteed("first", 1, devices=(1,))
    second = _guaranteed("second", 1, 1, devices=(1, 1))
    steps += [{"op": "admit", "pod": first}, {"op": "state"},
              {"op": "admit", "pod": second}, {"op": "state"}]
    if draw(st.booleans()):
        steps += [{"op": "remove", "uid": "first"}, {"op": "state"}]
    name = draw(st.sampled_from(["app0", "app1"]))
    limits = {"cpu": draw(st.sampled_from(["1", "2"])),
              "memory": draw(st.sampled_from(["64Mi", "128Mi"])), "example.com/dev": "1"}
    steps += [{"op": "resize", "uid": "second",
               "containers": [{"name": name, "resources": {"limits": limits}}]},
              {"op": "state"}]
    return steps + _every_pod_removed(["first", "second"])


def _decimal(amount: Fraction) -> str | None:
    """``amount`` as a plain decimal of at most nine places (no exponent), or None."""
    for places in range(10):
        scaled = amount * 10**places
        if scaled.denominator == 1:
            digits = str(abs(scaled.numerator)).rjust(places + 1, "0")
            text = digits if not places else f"{digits[:-places]}.{digits[-places:]}"
            return ("-" if amount < 0 else "") + text
    return None


#: What a number may be followed by, and what it then counts in (QTY-1): a binary or a
#: decimal suffix, or an exponent (either case of ``e``).
_UNITS = (*((s, Fraction(2) ** p) for s, p in BINARY_SUFFIXES.items()),
          *((s, Fraction(10) ** p) for s, p in DECIMAL_SUFFIXES.items()),
          *((f"{e}{n}", Fraction(10) ** n) for n in (-3, 3, 6, 9) for e in "eE"))


def spellings(text: str) -> list[str]:
    """QTY-1: other ways to write the quantity ``text``, each read as the same amount: a
    binary or decimal suffix, an exponent, a fraction of a bigger unit, a sign."""
    amount = parse_quantity(text)
    found = {text}
    for suffix, power in _UNITS:
        number = _decimal(amount / power)
        if number is not None and len(number) <= 12:
            found.add(number + suffix)
    found |= {f"+{t}" for t in list(found) if not t.startswith(("-", "+"))}
    if amount.denominator == 1:
        found.add(f"{amount}." + "0" * 61)  # more fraction digits than apimachinery keeps
    if amount == 0:
        found |= {"0", "0Mi", "0k", "0e3", "0.0"}
    return sorted(t for t in found if _reads_as(t, amount))


def _reads_as(text: str, amount: Fraction) -> bool:
    from numaspec.errors import NumaspecError

    try:
        return parse_quantity(text) == amount
    except NumaspecError:
        return False


def _readable(text: str) -> bool:
    """MEM-2: whether kubelet's Memory Manager reads the reservation ``text`` (AsInt64)."""
    return go_as_int64(go_parse(text)) is not None


def _respell(draw: st.DrawFn, amounts: dict[str, Any], names: tuple[str, ...],
             readable: bool = False) -> None:
    """Half the quantities of ``amounts`` named in ``names`` written another way (with
    ``readable``, only ways the Memory Manager reads)."""
    for name in sorted(amounts):
        if name in names and isinstance(amounts[name], str) and draw(st.booleans()):
            amounts[name] = draw(st.sampled_from(
                [t for t in spellings(amounts[name]) if not readable or _readable(t)]))


_MEMORY = ("cpu", "memory", "hugepages-2Mi", "hugepages-1Gi")


def _respell_create(draw: st.DrawFn, create: dict[str, Any], readable: bool) -> None:
    config = create["node"].get("config", {})
    for field in ("kubeReserved", "systemReserved"):
        _respell(draw, config.get(field, {}), ("cpu", "memory"))
    _respell(draw, config.get("evictionHard", {}), ("memory.available",))
    for entry in config.get("reservedMemory", []):
        _respell(draw, entry.get("limits", {}), _MEMORY, readable)


@st.composite
def spelled_startups(draw: st.DrawFn, claims: NodeClaims | None,
                     versions: tuple[str, ...]) -> dict[str, Any]:
    """A ``create`` whose reservations are written other ways, any way (MEM-2: kubelet's
    Memory Manager refuses a reservedMemory limit it cannot read with AsInt64)."""
    create: dict[str, Any] = draw(node_requests(versions, claims=claims))
    config = create["node"].setdefault("config", {})
    if draw(st.integers(0, 2)) == 0:
        # NODE-9: a reservation past the machine's capacity, which kubelet reports with the
        # Go quantities it parsed (their format is the spelling's).
        machine = create["node"]["machine"]["numaNodes"]
        if config.get("memoryManagerPolicy") != "Static" and draw(st.booleans()):
            total = sum(parse_quantity(n["memory"]) for n in machine)
            amount = f"{int(total) + draw(st.sampled_from([1, 1 << 20, 1 << 30]))}"
            resource = "memory"
        else:
            cpus = sum(len(c["threads"]) for n in machine for c in n.get("cores", []))
            amount = f"{cpus * 1000 + draw(st.sampled_from([1, 500, 1000]))}m"
            resource = "cpu"
            config.pop("reservedSystemCPUs", None)  # it would replace the cpu reservations
        config.setdefault("systemReserved", {})[resource] = draw(st.sampled_from(
            spellings(amount)))
        # Beside it, a kubeReserved Go adds up in another form: nothing, half a KiB, or (for
        # cpu) a binary fraction, a nano and a half, digits far below a nano (QTY-1).
        config.setdefault("kubeReserved", {})[resource] = draw(st.sampled_from(
            ["0", "0.5Ki", "512", "0.0005Mi"] if resource == "memory" else
            ["0", "0.5", "500m", "0.0001Ki", "1.5n", "1e-101", "0." + "0" * 61 + "1"]))
    _respell_create(draw, create, readable=False)
    return create


@st.composite
def spelled_sessions(draw: st.DrawFn, claims: NodeClaims | None,
                     versions: tuple[str, ...]) -> Steps:
    """A random node session whose quantities are written other ways (QTY-1): each
    reservation (kubeReserved, systemReserved, the memory eviction threshold, reservedMemory
    as the Memory Manager can read it) and each cpu, memory and hugepages request and limit,
    half the time.  Kubelet reads every spelling as the same amount and writes its messages
    from the spelling (NODE-9: Go's quantity keeps the format it was parsed in); a pod's
    spelling reaches it through the API server, which stores the canonical form."""
    steps: Steps = draw(node_sessions(claims, versions))
    for step in steps:
        if step.get("op") == "create":
            _respell_create(draw, step, readable=True)
        elif step.get("op") == "admit":
            pod = step["pod"]
            for container in pod.get("initContainers", []) + pod.get("containers", []):
                for part in ("requests", "limits"):
                    _respell(draw, container.get("resources", {}).get(part, {}), _MEMORY)
    return steps


@register("P-CPU-PLACEMENT", rules=["CPU-9", "CPU-10", "CPU-12", "CPU-13", "CPU-16",
                                    "CPU-19", "CPU-20"],
          level="equivalence", requires="node_session", since=29, op="node", managers=["cpu"])
@given(data=st.data())
def cpu_placements_hold(impl: NodeSessionImplementation, data: st.DataObject) -> None:
    """The CPU Manager's placement on unevenly sized and unevenly free NUMA nodes, with each
    of its placement options: every answer is the reference's."""
    steps = data.draw(placement_sessions(claims_of(impl).node, session_versions(impl)),
                      label="session")
    judge_session(impl, steps, "node")


@register("P-INIT-HANDOFF", rules=["DEV-5", "MEM-8", "MEM-10", "CPU-15"],
          level="equivalence", requires="node_session", since=29, op="node")
@given(data=st.data())
def init_handoffs_hold(impl: NodeSessionImplementation, data: st.DataObject) -> None:
    """Pods whose init containers hand devices, memory and CPUs on to each other and to the
    app containers: every answer is the reference's."""
    steps = data.draw(handoff_sessions(claims_of(impl).node, session_versions(impl)),
                      label="session")
    judge_session(impl, steps, "node")


@register("P-RESIZE-POD-SCOPE", rules=["RESIZE-6", "DEV-3"],
          level="equivalence", requires="node_session", since=34, op="node",
          managers=["device"], scopes=["pod"])
@given(data=st.data())
def pod_scope_resizes_hold(impl: NodeSessionImplementation, data: st.DataObject) -> None:
    """A pod-scope pod whose containers' devices lie on different NUMA nodes, resized:
    every answer is the reference's."""
    claims = claims_of(impl).node
    versions = tuple(v for v in session_versions(impl) if int(v[2:]) >= 34) or ("1.34", "1.37")
    steps = data.draw(pod_scope_resize_sessions(claims, versions), label="session")
    judge_session(impl, steps, "node")


@register("P-QUANTITY-SPELLING", rules=["QTY-1", "NODE-3", "NODE-9", "MEM-2"],
          level="equivalence", requires="node_session", since=29, op="node")
@given(data=st.data())
def spelled_quantities_hold(impl: NodeSessionImplementation, data: st.DataObject) -> None:
    """Nodes and sessions whose reservations, requests and limits are written other ways
    ("0.5Gi", "512e6", "+1500m"): the node starts or refuses as the reference does, and
    every answer is the reference's, messages included."""
    claims, versions = claims_of(impl).node, session_versions(impl)
    if data.draw(st.booleans(), label="a node's start only"):
        judge_startup(impl, data.draw(spelled_startups(claims, versions), label="create"))
    else:
        judge_session(impl, data.draw(spelled_sessions(claims, versions), label="session"),
                      "node")
