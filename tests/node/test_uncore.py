"""CPU-19, CPU-20: prefer-align-cpus-by-uncorecache.  Properties of the allocator over random
machines with uncore caches (each cache inside one NUMA node, as on real machines; a cache
over two NUMA nodes is the vector uncore-cache-over-two-numa-nodes), each proven able to fail by
tools/numaspec_tools/mutants/uncore_mutants.py; and the option through the node and ``numaspec
explain``."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numaspec.conformance.cli import main
from numaspec.node.cpu import CPUInfo, CPUTopology
from numaspec.topology.versions import KubeletVersion
from numaspec_tools import FIXTURES
from numaspec_tools.mutants.uncore_mutants import (
    UNCORE_KILLED_BY,
    UNCORE_MUTANTS,
    Allocator,
    reference,
)

SYSFS = FIXTURES / "sysfs" / "two-socket-4numa"

Case = tuple[CPUTopology, frozenset[int], int, KubeletVersion]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """A machine of 1-2 sockets, 1-2 NUMA nodes per socket, 1-3 caches per NUMA node of 1-4
    cores of 1-2 threads (numbered as Linux does: first threads, then second threads), with
    or without cache ids; some CPUs free (often whole cores only); a request."""
    sockets = draw(st.integers(1, 2))
    per_socket = draw(st.integers(1, 2))
    caches = draw(st.integers(1, 3))
    per_cache = draw(st.integers(1, 4))
    threads = draw(st.sampled_from([1, 2]))
    ids = draw(st.booleans())
    total = sockets * per_socket * caches * per_cache
    infos = []
    for k in range(total):
        cache, numa = k // per_cache, k // (per_cache * caches)
        for t in range(threads):
            infos.append(CPUInfo(cpu=k + t * total, numa=numa, socket=numa // per_socket,
                                 core=k, uncore_cache=cache if ids else None))
    topo = CPUTopology(infos)
    if draw(st.booleans()):
        cores = draw(st.sets(st.integers(0, total - 1), min_size=1))
        free = frozenset(c.cpu for c in infos if c.core in cores)
    else:
        free = frozenset(draw(st.sets(st.sampled_from([c.cpu for c in infos]), min_size=1)))
    n = draw(st.integers(1, len(free)))
    version = KubeletVersion(draw(st.integers(32, 37)))
    return topo, free, n, version


def _cache(info: CPUInfo) -> int:
    """CPU-19, computed here: the uncore cache id, or the socket id without one."""
    return info.socket if info.uncore_cache is None else info.uncore_cache


def check_exact_count(take: Allocator, case: Case) -> None:
    """The option hands out exactly the request, out of the free CPUs."""
    topo, free, n, version = case
    got = take(topo, free, n, version)
    assert got <= free, (sorted(got), sorted(free))
    assert len(got) == n, (sorted(got), n)


def check_one_cache(take: Allocator, case: Case) -> None:
    """A request smaller than a NUMA node, a socket and the CPUs per cache (so no whole unit
    is taken) that some cache can finish (CPU-20: single-thread cores, a cache with that many
    free CPUs; two-thread cores all wholly free or busy, a cache with enough free cores, the
    request even or the release 1.34+) comes from one cache."""
    topo, free, n, version = case
    by_cpu = topo.by_cpu()
    units: dict[str, dict[int, int]] = {"numa": {}, "socket": {}, "cache": {}}
    for info in topo.cpus:
        for kind, unit in (("numa", info.numa), ("socket", info.socket),
                           ("cache", _cache(info))):
            units[kind][unit] = units[kind].get(unit, 0) + 1
    per_cache = len(topo.cpus) // len(units["cache"])
    if n >= min(units["numa"].values()) or n >= min(units["socket"].values()) \
            or n >= per_cache:
        return
    threads = len(topo.cpus) // len({c.core for c in topo.cpus})
    free_cores: dict[int, set[int]] = {}
    for cpu in free:
        free_cores.setdefault(_cache(by_cpu[cpu]), set()).add(by_cpu[cpu].core)
    if threads == 1:
        fits = any(len(cores) >= n for cores in free_cores.values())
    else:
        whole = all(all(t in free for t in topo.members("core")[k])
                    for cores in free_cores.values() for k in cores)
        fits = whole and (n % 2 == 0 or version.uncore_partial_rounds_up) and any(
            len(cores) >= -(-n // threads) for cores in free_cores.values())
    if fits:
        got = take(topo, free, n, version)
        assert len({_cache(by_cpu[c]) for c in got}) == 1, (sorted(got), n, str(version))


@given(cases())
def test_exact_count(case: Case) -> None:
    check_exact_count(reference, case)


@given(cases())
def test_one_cache_finishes_a_small_request(case: Case) -> None:
    check_one_cache(reference, case)


CHECKS = {"test_exact_count": check_exact_count,
          "test_one_cache_finishes_a_small_request": check_one_cache}
KILL = settings(max_examples=1000, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("mutation", sorted(UNCORE_MUTANTS))
@pytest.mark.slow
def test_mutant_is_killed(mutation: str) -> None:
    """Every mutant fails the property ``UNCORE_KILLED_BY`` names (derandomized)."""
    check = CHECKS[UNCORE_KILLED_BY[mutation]]
    mutant = UNCORE_MUTANTS[mutation]

    @KILL
    @given(cases())
    def run(case: Case) -> None:
        check(mutant, case)

    with pytest.raises(AssertionError):
        run()


def test_explain_what_if_the_option_on_a_sysfs_machine(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    """CPU-19 through ``numaspec explain --set`` on the two-socket sysfs fixture at 1.37: the
    option is modelled (no start-up error, no not-modelled).  The fixture's L3 caches are its
    sockets (SYSFS-6), each over two SNC NUMA nodes, so the pod lands as without it."""
    status = main(["explain", "--sysfs", str(SYSFS),
                   "--devices", str(FIXTURES / "sysfs" / "two-socket-4numa.devices.yaml"),
                   "--kubelet-config", str(FIXTURES / "kube" / "kubelet-config.yaml"),
                   "--kubelet-version", "1.37",
                   "--state-dir", str(FIXTURES / "operator" / "two-socket" / "state"),
                   "--pods", str(FIXTURES / "kube" / "pods.yaml"),
                   "--pod", str(FIXTURES / "kube" / "pod.yaml"),
                   "--set", "cpuManagerPolicyOptions.prefer-align-cpus-by-uncorecache=true",
                   "--json"])
    captured = capsys.readouterr()
    assert (status, captured.err) == (0, "")
    answer = json.loads(captured.out)
    assert answer["differences"] == []
    placed = answer["after"]["decision"]["containers"][0]
    assert answer["after"]["decision"]["admitted"]
    assert len(placed["cpus"]) == 6


def test_the_node_protocol_carries_cache_ids() -> None:
    """NWIRE-1: a core's optional ``uncoreCache`` reaches the machine model (SYSFS-6's
    field); absent it is none; a negative or non-integer id names the field."""
    from numaspec.errors import InvalidFieldError
    from numaspec.protocols.node_protocol import decode_machine

    machine = decode_machine({"numaNodes": [{"id": 0, "memory": "1Gi", "cores": [
        {"socket": 0, "threads": [0, 2], "uncoreCache": 7}, {"socket": 0, "threads": [1, 3]}]}]})
    assert [c.uncore_cache for c in machine.numa_nodes[0].cores] == [7, None]
    assert [c.uncore for c in machine.cpu_topology().cpus] == [7, 0, 7, 0]
    for bad in (-1, "7", None):
        with pytest.raises(InvalidFieldError) as raised:
            decode_machine({"numaNodes": [{"id": 0, "memory": "1Gi", "cores": [
                {"socket": 0, "threads": [0], "uncoreCache": bad}]}]})
        assert raised.value.where == "node.machine.numaNodes[0].cores[0].uncoreCache"
