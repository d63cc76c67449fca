"""kubelet versions and what changed between them (spec chapter ``versions.md``).

numaspec models kubelet minor releases; patch releases of one minor never changed the merge
(VER-1), so a version is a minor number.  Each behaviour switch is a named predicate here, and
each predicate names the rule it gates, so ``grep`` finds every version-dependent line.
"""

from __future__ import annotations

import functools
import re

import attrs

from numaspec.errors import UnsupportedVersionError

__all__ = [
    "DEFAULT",
    "NEWEST",
    "OLDEST",
    "PRERELEASES",
    "SUPPORTED_VERSIONS",
    "KubeletVersion",
    "parse_version",
]

#: VER-1, WIRE-5: minor and patch of at most nine digits (no release comes near; a longer
#: number is not a version, and is not converted).
_VERSION_RE = re.compile(
    r"^v?1\.(0|[1-9][0-9]{0,8})(?:\.(0|[1-9][0-9]{0,8}))?(?:[-+][0-9A-Za-z.+-]*)?$")


@attrs.frozen(order=True)
class KubeletVersion:
    """A kubelet minor release, 1.<minor>."""

    minor: int

    def __str__(self) -> str:
        return f"1.{self.minor}"

    @property
    def prerelease(self) -> str | None:
        """VER-1: the pre-release numaspec read for a minor not yet released (``1.38.0-beta.0``),
        ``None`` for a released minor."""
        return PRERELEASES.get(self.minor)

    @property
    def described(self) -> str:
        """The release as a person reads it: ``1.37``, or ``1.38 (pre-release 1.38.0-beta.0)``."""
        read = self.prerelease
        return str(self) if read is None else f"{self} (pre-release {read})"

    # --- behaviour switches -----------------------------------------------------------------

    @property
    def merge_requires_equal_masks(self) -> bool:
        """MERGE-3 (1.24+) instead of MERGE-2: PR #108052."""
        return self.minor >= 24

    @property
    def ranks_non_preferred_by_target_count(self) -> bool:
        """MERGE-8 (1.24+) instead of MERGE-7: PR #108154."""
        return self.minor >= 24

    @property
    def has_policy_options(self) -> bool:
        """OPT-1: the policy-options mechanism exists from 1.26 (PR #112914)."""
        return self.minor >= 26

    @property
    def has_max_allowable_numa_nodes(self) -> bool:
        """OPT-5: ``max-allowable-numa-nodes`` exists from 1.31 (KEP-4622)."""
        return self.minor >= 31

    @property
    def uncore_partial_rounds_up(self) -> bool:
        """CPU-20: from 1.34 the cores asked of one uncore cache are the request over the
        threads per core rounded up (an odd request leaving out one thread); before, rounded
        down."""
        return self.minor >= 34

    @property
    def copies_numa_combinations(self) -> bool:
        """CPU-12 (1.38+): distribute-cpus-across-numa keeps a copy of the NUMA combination and
        the remainder subset it chooses; before, it kept the walk's own storage, whose later
        members the rest of the walk overwrote."""
        return self.minor >= 38

    @property
    def frees_units_by_own_size(self) -> bool:
        """CPU-10 (1.38+): the packed allocator takes a socket or a core whole when all *its
        own* CPUs are free; before, when its free CPUs were as many as the machine's average
        per socket (per core), which on an uneven machine gave away reserved or held CPUs
        (``isSocketFree``, ``isCoreFree``)."""
        return self.minor >= 38

    @property
    def distributes_over_affinity_width(self) -> bool:
        """CPU-12 (1.38+): distribute-cpus-across-numa spreads the CPUs taken inside the
        affinity over at least as many NUMA nodes as the affinity has, when that many are
        feasible (``rangeNUMANodesNeededToSatisfy``'s ``minNumNUMAsFromHint``)."""
        return self.minor >= 38

    @property
    def checks_remainder_in_whole_groups(self) -> bool:
        """CPU-12 (1.38+): distribute-cpus-across-numa accepts a remainder subset only if its
        NUMA nodes hold the remainder in whole groups; before, a raw CPU count, so kubelet's
        hand-out loop could spin forever (finding 10)."""
        return self.minor >= 38

    @property
    def spreads_round_robin_over_cores(self) -> bool:
        """CPU-13 (1.38+): distribute-cpus-across-cores takes single CPUs socket by socket,
        round-robin over the socket's cores (fullest first), one thread per core per round;
        before, each socket's free CPUs by id (``sortAvailableCPUsSpread``)."""
        return self.minor >= 38

    @property
    def takes_each_uncore_cache_once(self) -> bool:
        """CPU-19 (1.38+): prefer-align-cpus-by-uncorecache lists each cache once and takes
        every wholly free cache no larger than the need, once, with no machine-average gate;
        before, a cache over two NUMA nodes was listed (and taken) twice and whole caches were
        taken only while the need reached the machine's CPUs per cache (finding 25)."""
        return self.minor >= 38

    @property
    def scores_cpu_hints(self) -> bool:
        """CPU-22 (1.38+): every CPU Manager hint carries a utilization score
        (``generateCPUTopologyHints``' ``UtilizationScore``)."""
        return self.minor >= 38

    @property
    def has_hint_scores(self) -> bool:
        """HINT-5, MERGE-13 (1.38+): hints carry a utilization score, which the merge averages
        (kubernetes 1.38: ``TopologyHint.Score``, ``aggregateHintScores``)."""
        return self.minor >= 38

    @property
    def searches_preferred_first(self) -> bool:
        """POLICY-7 (1.38+): best-effort and restricted search the preferred combinations
        before the full merge (kubernetes#137701, ``mergePreferred``)."""
        return self.minor >= 38

    @property
    def scores_memory_hints(self) -> bool:
        """MEM-12 (1.38+): every Memory Manager hint, calculated or regenerated, carries a
        utilization score per memory type (``calculateHints``, ``regenerateHints``)."""
        return self.minor >= 38

    @property
    def memory_pod_request_every_type(self) -> bool:
        """MEM-3 (1.38+): the pod-scope memory request covers every type any container (app,
        sidecar, regular init) asks for; before, only the app containers' types
        (``getPodRequestedResources``)."""
        return self.minor >= 38

    @property
    def regenerates_pod_memory_per_container(self) -> bool:
        """MEM-5 (1.38+): pod-scope regeneration compares the first container's blocks with
        that container's own request; before, with the pod's (``GetPodTopologyHints``)."""
        return self.minor >= 38

    @property
    def scores_device_hints(self) -> bool:
        """DEV-12 (1.38+): every Device Manager hint carries a utilization score
        (``calculateDeviceScore``)."""
        return self.minor >= 38

    @property
    def answers_hint_scores(self) -> bool:
        """NWIRE-4 (1.38+): the node protocol's hints answer gives each hint's ``score``."""
        return self.minor >= 38

    @property
    def resize_infeasible_by_allocation_mode(self) -> bool:
        """RESIZE-4 (1.38+): a Guaranteed pod's resize is refused on the managers' allocation
        mode, in new words (``podResizesAdmitHandler.Admit``, ``AllocationMode``)."""
        return self.minor >= 38

    @property
    def resize_without_gate(self) -> bool:
        """RESIZE-3 (1.38+): ``InPlacePodVerticalScaling`` is gone (naming it is VER-2's
        unrecognized gate): kubelet always evaluates a resize."""
        return self.minor >= 38

    @property
    def omits_partial_pod_limits(self) -> bool:
        """QOS-5 (1.38+): the containers' aggregated cpu or memory limit is left out unless
        every container sets one above zero (``AggregateContainerLimits``,
        ``omitPartiallySetCPUMemLimits``), so pod-level defaulting gives no limit there."""
        return self.minor >= 38


#: The oldest modelled release: 1.18 is the first with the filter-then-merge single-numa-node
#: policy that every later release keeps (1.17's own algorithm is not modelled).
OLDEST = KubeletVersion(18)
#: The newest release numaspec models: a pre-release while :data:`PRERELEASES` names it.
NEWEST = KubeletVersion(38)
#: VER-1: the release a request without a version means: the newest *released* minor (a
#: pre-release is modelled only when it is asked for by name).
DEFAULT = KubeletVersion(37)
#: VER-1: minors modelled before their release, and the pre-release that was read for each.
PRERELEASES: dict[int, str] = {38: "1.38.0-beta.0"}
SUPPORTED_VERSIONS = tuple(KubeletVersion(m) for m in range(OLDEST.minor, NEWEST.minor + 1))


def parse_version(text: object, *, where: str = "kubelet_version") -> KubeletVersion:
    """VER-1: ``"1.30"``, ``"v1.30"``, ``"1.30.4"`` and ``"v1.30.4-rc.0"`` all mean 1.30."""
    if where == "kubelet_version" and type(text) is str:
        return _parse_text(text)
    return _parse_version(text, where)


@functools.lru_cache(maxsize=4096)
def _parse_text(text: str) -> KubeletVersion:
    """A version's text, read once: a case stream repeats a handful of them (a refusal is
    not kept, and is read again)."""
    return _parse_version(text, "kubelet_version")


def _parse_version(text: object, where: str) -> KubeletVersion:
    if not isinstance(text, str):
        raise UnsupportedVersionError(
            f"expected a version string such as \"1.30\", got {type(text).__name__}", where=where
        )
    match = _VERSION_RE.match(text.strip())
    if match is None:
        raise UnsupportedVersionError(
            f"{text!r} is not a kubelet version (expected \"1.<minor>\" or \"v1.<minor>.<patch>\")",
            where=where,
        )
    version = KubeletVersion(int(match.group(1)))
    if not OLDEST.minor <= version.minor <= NEWEST.minor:
        raise UnsupportedVersionError(
            f"kubelet {version} is not modelled; supported: {OLDEST} to {NEWEST}", where=where
        )
    return version
