"""Topology Manager policies and the start-up checks around them (spec chapter ``policies.md``).

Sources: ``pkg/kubelet/cm/topologymanager/policy_none.go``, ``policy_best_effort.go``,
``policy_restricted.go``, ``policy_single_numa_node.go`` (``Merge``,
``filterSingleNumaHints``) and ``NewManager`` in ``topology_manager.go``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import attrs
import numpy as np

from numaspec.errors import (
    MergeTooLargeError,
    NumaspecError,
    TooManyNumaNodesError,
    UnknownPolicyError,
)
from numaspec.limits import MAX_MERGE_STEPS
from numaspec.topology.fast_merge import DEFAULT_TUNING, Tuning, fast_merge
from numaspec.topology.hints import (
    HintArray,
    ProviderHints,
    TopologyHint,
    flatten_provider_hints,
)
from numaspec.topology.merge import MergeMode, best_hint, target_count
from numaspec.topology.numa import NumaInfo
from numaspec.topology.options import (
    PolicyOptions,
    feature_gate_errors,
    options_allowed_errors,
    parse_policy_options,
)
from numaspec.topology.scores import has_scores, possible_scores, winner_score
from numaspec.topology.versions import DEFAULT, KubeletVersion

if TYPE_CHECKING:
    from numaspec.topology.trace import MergeTrace

__all__ = [
    "MergeOutcome",
    "Policy",
    "check_startup",
    "filter_single_numa_hints",
    "merge_for_policy",
    "topology_merge",
]


class Policy(enum.Enum):
    """The four Topology Manager policies, by the names kubelet's configuration uses."""

    NONE = "none"
    BEST_EFFORT = "best-effort"
    RESTRICTED = "restricted"
    SINGLE_NUMA_NODE = "single-numa-node"


@attrs.frozen
class MergeOutcome:
    """The hint the Topology Manager settles on and whether the policy admits it."""

    hint: TopologyHint
    admit: bool
    #: MERGE-14 (1.38+): every score kubelet may report for this hint (the walk over a
    #: provider's resources is in Go map order), ``hint.score`` among them; empty where there
    #: were too many orders to try (then any score agrees); ``None`` before 1.38, whose hints
    #: have no score.  Not part of equality: two answers agree on a score as RUN-3 says.
    scores: frozenset[int] | None = attrs.field(default=None, eq=False)

    def __str__(self) -> str:
        """As the merge protocol writes a response (WIRE-1; HINT-5, MERGE-14 from 1.38)."""
        hint = str(self.hint)
        if self.scores is not None:
            mask = self.hint.numa_affinity
            others = "" if self.scores == {self.hint.score} else (
                f',"scores":[{",".join(map(str, sorted(self.scores)))}]')
            hint = (f'{{"numa_affinity":{"null" if mask is None else mask},"preferred":'
                    f'{"true" if self.hint.preferred else "false"},"score":{self.hint.score}'
                    f'{others}}}')
        return f'{{"hint":{hint},"admit":{"true" if self.admit else "false"}}}'


def _unknown_policy(policy: str, version: KubeletVersion, *, validated: bool) -> UnknownPolicyError:
    if validated and version.minor >= 24:
        listed = " ".join(f'"{p.value}"' for p in Policy)
        msg = (f"invalid configuration: topologyManagerPolicy (--topology-manager-policy) "
               f'"{policy}" must be one of: [{listed}]')
    elif validated:
        msg = f"invalid configuration: topologyManagerPolicy non-allowable value: {policy}"
    else:
        msg = f'unknown policy: "{policy}"'
    known = ", ".join(p.value for p in Policy)
    return UnknownPolicyError(f"{msg} (known: {known})", where="policy", kubelet_message=msg)


def _check_node_count(numa: NumaInfo, limit: int) -> None:
    if len(numa.nodes) > limit:
        msg = f"unsupported on machines with more than {limit} NUMA Nodes"
        raise TooManyNumaNodesError(
            f"{msg} (the machine has {len(numa.nodes)})", where="numa_nodes", kubelet_message=msg
        )


def check_startup(
    policy: str,
    numa: NumaInfo,
    version: KubeletVersion,
    raw_options: Mapping[str, str] | None = None,
    feature_gates: Mapping[str, bool] | None = None,
) -> tuple[Policy, PolicyOptions]:
    """POLICY-6: the checks a kubelet makes before its Topology Manager runs, in its order.

    0. VER-2: feature gates the release does not have, or locked to another value, stop the
       kubelet before anything else; POLICY-5: an empty policy name defaults to ``none``;
    1. POLICY-5: from 1.20, configuration validation rejects an unknown policy name first;
    2. OPT-1: from 1.26, options with their gate off stop the kubelet, whatever the policy;
    3. then ``NewManager``:

       * 1.18-1.25: more than 8 NUMA nodes (unless ``none``), then the policy name;
         policy options do not exist and are ignored;
       * 1.26-1.27: options parsed (``none`` too), distances (OPT-6), node count (unless
         ``none``), policy name;
       * 1.28+: ``none`` stops here (POLICY-1); options parsed (OPT-1..OPT-4), distances
         (OPT-6), node count against the limit (OPT-5), policy name.

    The checks of the configuration alone (steps 0 to 3's options) come first and do not read
    the machine; they are kept by configuration (:func:`_configured`), and the machine's
    checks (distances, node count) are made after them, in this order, each time.
    """
    raw = raw_options or {}
    gates = feature_gates or {}
    key = (policy, version.minor, tuple(raw.items()), tuple(gates.items()))
    configured = _CONFIGURED.get(key)
    if configured is None:
        configured = _configured(policy, version, raw, gates)
        if len(_CONFIGURED) >= _KEEP_CONFIGURED:
            _CONFIGURED.clear()
        _CONFIGURED[key] = configured
    if isinstance(configured, NumaspecError):
        # a new one each time: a kept error, once raised, would keep its traceback's frames
        raise configured.relocated(configured.where)
    chosen, options, machine, unknown = configured
    if machine:
        if options.prefer_closest_numa_nodes:
            numa.require_distances()
        if chosen is not Policy.NONE or unknown is not None:
            _check_node_count(numa, options.max_allowable_numa_nodes)
        if unknown is not None:
            raise unknown.relocated(unknown.where)
    return chosen, options


#: POLICY-6: what the checks of a configuration alone concluded, by everything they read
#: (:func:`_configured`): a stream of requests names the same few configurations again and
#: again, on different machines.
_CONFIGURED: dict[tuple[object, ...], NumaspecError | tuple[
    Policy, PolicyOptions, bool, UnknownPolicyError | None]] = {}

#: How many configurations are kept before the memo starts again (a random stream of
#: configurations, as the bench's, names a few thousand).
_KEEP_CONFIGURED = 1 << 14

_POLICY_NAMES = frozenset(p.value for p in Policy)


def _configured(policy: str, version: KubeletVersion, raw: Mapping[str, str],
                gates: Mapping[str, bool]
                ) -> NumaspecError | tuple[Policy, PolicyOptions, bool, UnknownPolicyError | None]:
    """POLICY-6's checks of the configuration alone, in kubelet's order: the first error, or
    the policy, its options, whether the machine's checks follow, and the error an unknown
    policy name gives after them (before 1.20, which does not validate the name first)."""
    # VER-2: the configuration's feature gates are set before anything reads it.
    errors = feature_gate_errors(gates, version)
    if errors:
        return errors[0]
    # POLICY-5: the configuration's defaulting turns an empty name into the default, none.
    policy = policy or Policy.NONE.value
    known = policy in _POLICY_NAMES
    if not known and version.minor >= 20:
        return _unknown_policy(policy, version, validated=True)
    errors = options_allowed_errors(raw, version, gates)
    if errors:
        return errors[0]
    if policy == Policy.NONE.value and version.minor >= 28:
        return Policy.NONE, PolicyOptions(), False, None
    try:
        options = parse_policy_options(raw, version, gates)
    except NumaspecError as exc:
        return exc.with_traceback(None)
    if not known:
        return (Policy.NONE, options, True,
                _unknown_policy(policy, version, validated=False))
    return Policy(policy), options, True, None


def filter_single_numa_hints(
    lists: Sequence[Sequence[TopologyHint]],
) -> list[Sequence[TopologyHint]]:
    """POLICY-4: keep only preferred hints that have no affinity or exactly one node.

    A list may end up empty, and then no permutation exists at all.
    """
    return [_single_numa_hints(hints) for hints in lists]


def _single_numa_hints(hints: Sequence[TopologyHint]) -> Sequence[TopologyHint]:
    """POLICY-4 on one list (on its arrays when it is held as arrays, FAST-8)."""
    if isinstance(hints, HintArray):
        single = np.bitwise_count(hints.words) == 1
        return hints.filtered(hints.preferred & (hints.free | single))
    return tuple(h for h in hints
                 if h.preferred and (h.numa_affinity is None or h.numa_affinity.count() == 1))


def _check_budget(lists: Sequence[Sequence[TopologyHint]], max_steps: int) -> None:
    """WIRE-4: the definitional merge's work, refused above the budget."""
    if any(len(hints) == 0 for hints in lists):
        return  # no permutation at all
    permutations, more = 1, ""
    for index, hints in enumerate(lists):
        permutations *= len(hints)
        if permutations > max_steps and index < len(lists) - 1:
            more = "at least "  # refused whatever the rest holds: no need to multiply on
            break
    steps = permutations * max(1, len(lists))
    if steps > max_steps:
        raise MergeTooLargeError(
            f"the hints make {more}{_count(permutations)} permutations of {len(lists)} lists, "
            f"{more}{_count(steps)} merge steps, more than the budget of {max_steps}",
            where="providers")


def _count(number: int) -> str:
    """A count as a message prints it: in full, or its order of magnitude when it has more
    digits than are worth reading (and than Python converts: 4,300)."""
    if number.bit_length() <= 200:
        return str(number)
    return f"about 2**{number.bit_length() - 1}"


def merge_for_policy(
    policy: Policy,
    providers: Sequence[ProviderHints],
    numa: NumaInfo,
    options: PolicyOptions,
    version: KubeletVersion,
    *,
    max_steps: int = MAX_MERGE_STEPS,
    trace: MergeTrace | None = None,
    definitional: bool = False,
    tuning: Tuning = DEFAULT_TUNING,
) -> MergeOutcome:
    """The policy's ``Merge``: the hint and the admit decision (POLICY-1..POLICY-4).

    The hint is the fast merge's (FAST-1..FAST-7, :mod:`numaspec.topology.fast_merge`), equal to the
    definitional walk's by proof and test.  ``definitional=True`` walks the cross product
    instead (:func:`numaspec.topology.merge.best_hint`, the spec's meaning); WIRE-4: that walk, of
    more than ``max_steps`` steps (permutations x hint lists), raises
    :class:`~numaspec.errors.MergeTooLargeError` before it starts.  ``trace``, when given,
    records the reasoning (:mod:`numaspec.protocols.explain`): the definitional walk's when it fits
    the budget, else the fast merge's (EXPLAIN-2)."""
    if trace is not None:
        trace.start(policy.value, providers, version, numa)
    scored = version.has_hint_scores
    if policy is Policy.NONE:
        # POLICY-1: no hint at all, always admitted; the providers are not consulted.
        return _traced(trace, MergeOutcome(TopologyHint(None, False), True,
                                           frozenset({0}) if scored else None), "POLICY-1")
    lists = flatten_provider_hints(providers)
    if policy is Policy.SINGLE_NUMA_NODE:
        lists = filter_single_numa_hints(lists)
    walk = definitional or (trace is not None and _fits_budget(lists, max_steps))
    if definitional:
        _check_budget(lists, max_steps)
    mode: MergeMode = ("single-numa-node" if policy is Policy.SINGLE_NUMA_NODE
                       else "best-effort" if policy is Policy.BEST_EFFORT else "restricted")
    if trace is not None:
        trace.lists(lists, filtered=policy is Policy.SINGLE_NUMA_NODE,
                    target=target_count(lists) if version.ranks_non_preferred_by_target_count
                    else None)
    # HINT-5: whether any hint has a score, read once (without one every score is 0)
    with_scores = scored and has_scores(lists)
    if walk:
        hint = best_hint(lists, numa, version, mode, options,
                         keep=None if trace is None else trace.keep)
    else:
        found = fast_merge(lists, numa, version, mode, options, tuning=tuning,
                           witness=trace is not None)
        if trace is not None:
            trace.fast(found)
        hint = found.hint
        if with_scores:  # MERGE-14: the walk keeps the first one's score
            hint = attrs.evolve(hint, score=winner_score(lists, numa, hint))
    scores = None
    if scored:
        scores = _possible(providers, numa, hint, with_scores,
                           policy is Policy.SINGLE_NUMA_NODE)
    if policy is Policy.SINGLE_NUMA_NODE:
        if hint.numa_affinity == numa.default_affinity():
            # the whole machine becomes no affinity at all, and its score is dropped
            hint = TopologyHint(None, hint.preferred)
            scores = frozenset({0}) if scored else None
        return _traced(trace, MergeOutcome(hint, hint.preferred, scores), "POLICY-4")
    # POLICY-2: best-effort always admits.  POLICY-3: restricted admits iff preferred.
    # POLICY-7 (1.38+): both search the preferred combinations first; the answer is the same.
    return _traced(trace, MergeOutcome(hint, True if policy is Policy.BEST_EFFORT
                                       else hint.preferred, scores),
                   "POLICY-2" if policy is Policy.BEST_EFFORT else "POLICY-3")


def _possible(providers: Sequence[ProviderHints], numa: NumaInfo, hint: TopologyHint,
              with_scores: bool, single: bool) -> frozenset[int]:
    """MERGE-14: the scores kubelet may report for ``hint``: the one of the listed order,
    unless hints have scores and a provider with several resources makes the order matter."""
    if not with_scores or all(len(p or {}) < 2 for p in providers):
        return frozenset({hint.score})
    found = possible_scores(providers, numa, hint,
                            filtered=filter_single_numa_hints if single else None)
    return frozenset() if found is None else found | {hint.score}


def _fits_budget(lists: Sequence[Sequence[TopologyHint]], max_steps: int) -> bool:
    try:
        _check_budget(lists, max_steps)
    except MergeTooLargeError:
        return False
    return True


def _traced(trace: MergeTrace | None, outcome: MergeOutcome, rule: str) -> MergeOutcome:
    if trace is not None:
        trace.result(outcome.hint, outcome.admit, rule)
    return outcome


def topology_merge(
    providers: Sequence[ProviderHints],
    numa_nodes: Sequence[int] | NumaInfo,
    policy: str,
    *,
    version: KubeletVersion = DEFAULT,
    policy_options: Mapping[str, str] | None = None,
    numa_distances: Mapping[int, Sequence[int]] | None = None,
    feature_gates: Mapping[str, bool] | None = None,
    max_steps: int = MAX_MERGE_STEPS,
    trace: MergeTrace | None = None,
    definitional: bool = False,
) -> MergeOutcome:
    """Start a Topology Manager as ``version`` would and merge ``providers`` under ``policy``.

    The one-call entry point: start-up checks (POLICY-6), then the policy's merge (the fast
    merge, or the definitional walk with ``definitional=True``).
    ``numa_nodes`` may be a :class:`~numaspec.topology.numa.NumaInfo` already built (its distances
    then stand, ``numa_distances`` is not read).
    Raises a :class:`~numaspec.errors.NumaspecError` where kubelet would refuse to start.
    """
    numa = (numa_nodes if isinstance(numa_nodes, NumaInfo)  # a machine already checked
            else NumaInfo(tuple(numa_nodes), numa_distances))
    chosen, options = check_startup(policy, numa, version, policy_options, feature_gates)
    return merge_for_policy(chosen, providers, numa, options, version, max_steps=max_steps,
                            trace=trace, definitional=definitional)
