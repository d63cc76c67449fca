"""A merge request line read at the speed of parsing it (spec chapter ``merge-protocol.md``,
WIRE-7).

msgspec's typed JSON decoder reads the line straight into the request's shape, hint lists
into :class:`~numaspec.topology.hints.HintArray` when they are long, without a Python object
per JSON value.  It reads only what it can take whole: a line it cannot (a value of another
type, an unknown or a repeated key, a number past 64 bits, a node id out of range, anything
the request's own checks refuse) is read again by the strict decoder
(:func:`~numaspec.protocols.merge_protocol.decode_merge_request` over
:mod:`numaspec.strict_json`), which is the one that answers it.  So the two readings accept
the same lines, give the same requests, and every error, with its ``where`` and its message,
comes from the strict decoder (WIRE-2, WIRE-3).

Repeated keys are the one thing a typed decoder keeps quiet about (the last one wins).  A key
is always followed by a colon: a line whose colons outnumber the keys it was read into has
a repeated key, or a colon inside a string, and goes to the strict decoder either way.
"""

from __future__ import annotations

import itertools
import operator
from typing import Annotated, Any

import msgspec
import numpy as np

from numaspec.errors import NumaspecError
from numaspec.protocols.merge_protocol import MergeRequest
from numaspec.topology.hints import HintArray, ProviderHints, TopologyHint
from numaspec.topology.masks import MAX_NUMA_ID, NumaMask
from numaspec.topology.numa import NumaInfo
from numaspec.topology.versions import DEFAULT, parse_version

__all__ = ["ARRAY_FROM", "read_batch_merges", "read_merge_request", "read_run_merge"]

#: Hint lists at least this long are held as arrays (FAST-8); shorter ones as objects, which
#: the fast merge reads faster than it starts numpy.
ARRAY_FROM = 32


#: MASK-1: a NUMA node id, checked by the decoder itself (one out of range: the line goes to
#: the strict decoder, which names it).
_NodeId = Annotated[int, msgspec.Meta(ge=0, le=MAX_NUMA_ID)]


class _Hint(msgspec.Struct, forbid_unknown_fields=True, gc=False, frozen=True):
    numa_affinity: tuple[_NodeId, ...] | None
    preferred: bool
    #: HINT-5 (1.38+): a whole percentage; -1: not given (a score outside 0..100 is refused
    #: by the decoder, and the strict decoder says so)
    score: Annotated[int, msgspec.Meta(ge=0, le=100)] = -1


_Provider = dict[str, list[_Hint] | None] | None


class _Request(msgspec.Struct, forbid_unknown_fields=True):
    numa_nodes: tuple[_NodeId, ...]
    policy: str
    providers: list[_Provider]
    kubelet_version: str | msgspec.UnsetType | None = msgspec.UNSET
    #: OPT-6: a distance is never negative
    numa_distances: dict[str, tuple[Annotated[int, msgspec.Meta(ge=0)], ...]] | \
        msgspec.UnsetType | None = msgspec.UNSET
    policy_options: dict[str, str] | msgspec.UnsetType | None = msgspec.UNSET
    feature_gates: dict[str, bool] | msgspec.UnsetType | None = msgspec.UNSET


class _RunMerge(msgspec.Struct, forbid_unknown_fields=True):
    """PROTO-3: a run request of the merge operation."""

    cmd: str
    seq: int
    op: str
    case: _Request


class _BatchMerge(msgspec.Struct, forbid_unknown_fields=True):
    """PROTO-8: a batch request whose runs are all of the merge operation."""

    cmd: str
    runs: list[_RunMerge]


_REQUEST = msgspec.json.Decoder(_Request)
_RUN = msgspec.json.Decoder(_RunMerge)
_BATCH = msgspec.json.Decoder(_BatchMerge)


class _NotWhole(Exception):
    """The line is not one this reading takes whole: the strict decoder reads it."""


#: The hints already read, as read (a frozen struct is its own key): a stream of requests
#: names the same few masks again and again.  Cleared when it grows past :data:`_KEEP`
#: entries.
_SEEN: dict[_Hint, TopologyHint] = {}
_KEEP = 1 << 16


def _hint_objects(hints: list[_Hint]) -> tuple[tuple[TopologyHint, ...], int]:
    """The hints, and how many of them were given a score (each is one more key)."""
    out = []
    seen = _SEEN
    scored = 0
    for hint in hints:
        found = seen.get(hint)
        if found is None:
            found = _new_hint(hint.numa_affinity, hint.preferred, _score(hint))
            if len(seen) >= _KEEP:
                seen.clear()
            seen[hint] = found
        if hint.score >= 0:
            scored += 1
        out.append(found)
    return tuple(out), scored


def _score(hint: _Hint) -> int:
    """HINT-5: a score given (0..100, the decoder checked it; the release is checked once per
    request), or 0."""
    return 0 if hint.score == -1 else hint.score


def _new_hint(affinity: tuple[int, ...] | None, preferred: bool, score: int) -> TopologyHint:
    """A hint read for the first time; an id out of range raises (MASK-1) and the line goes
    to the strict decoder."""
    return TopologyHint(None if affinity is None else NumaMask.of(affinity), preferred, score)


_AFFINITY = operator.attrgetter("numa_affinity")
_PREFERRED = operator.attrgetter("preferred")
_SCORE = operator.attrgetter("score")


def _hint_array(hints: list[_Hint]) -> HintArray:
    """FAST-8: the list's words, null affinities and preferences, computed on arrays."""
    count = len(hints)
    affinities = list(map(_AFFINITY, hints))
    preferred = np.fromiter(map(_PREFERRED, hints), dtype=np.bool_, count=count)
    free = np.fromiter(map(operator.is_, affinities, itertools.repeat(None)),
                       dtype=np.bool_, count=count)
    if free.any():
        affinities = [() if a is None else a for a in affinities]
    lengths = np.fromiter(map(len, affinities), dtype=np.int64, count=count)
    total = int(lengths.sum())
    nodes = np.fromiter(itertools.chain.from_iterable(affinities), dtype=np.int64, count=total)
    words = np.zeros(count, dtype=np.uint64)
    if total:
        if int(nodes.min()) < 0 or int(nodes.max()) > MAX_NUMA_ID:
            raise _NotWhole
        bits = np.left_shift(np.uint64(1), nodes.astype(np.uint64))
        named = lengths > 0
        starts = np.cumsum(lengths) - lengths
        words[named] = np.bitwise_or.reduceat(bits, starts[named])
    given = np.fromiter(map(_SCORE, hints), dtype=np.int64, count=count)
    scores = None
    if given.max() >= 0:
        if given.max() > 100 or given.min() < -1:
            raise _NotWhole
        scores = np.maximum(given, 0)
    return HintArray(words, free, preferred, scores)


def _providers(wire: list[_Provider]) -> tuple[tuple[ProviderHints, ...], int, bool]:
    """The providers, how many keys they were read from (a score is one more), and whether
    any hint has a score."""
    keys = scores = 0
    providers: list[ProviderHints] = []
    for provider in wire:
        if provider is None:
            providers.append(None)
            continue
        keys += len(provider)
        resources: dict[str, Any] = {}
        for name, hints in provider.items():
            if hints is None:
                resources[name] = None
                continue
            keys += 2 * len(hints)
            if len(hints) >= ARRAY_FROM:
                array = _hint_array(hints)
                resources[name] = array
                if array.scores is not None:
                    scores += sum(hint.score >= 0 for hint in hints)
            else:
                resources[name], given = _hint_objects(hints)
                scores += given
        providers.append(resources)
    return tuple(providers), keys + scores, scores > 0


#: WIRE-3: the keys a distance row may have (``node_key``: a node id in decimal, no leading
#: zero), by id.
_NODE_KEYS = {str(node): node for node in range(MAX_NUMA_ID + 1)}


def _present(value: object) -> int:
    return 0 if value is msgspec.UNSET else 1


def _request(wire: _Request) -> tuple[MergeRequest, int]:
    """The request and how many keys it was read from; :class:`_NotWhole` where the strict
    decoder must say what is wrong."""
    keys = 3 + sum(map(_present, (wire.kubelet_version, wire.numa_distances,
                                  wire.policy_options, wire.feature_gates)))
    providers, provider_keys, scored = _providers(wire.providers)
    distances = None
    if isinstance(wire.numa_distances, dict):
        keys += len(wire.numa_distances)
        distances = {}
        for key, row in wire.numa_distances.items():
            node = _NODE_KEYS.get(key)
            if node is None:
                raise _NotWhole
            distances[node] = row
    options = wire.policy_options if isinstance(wire.policy_options, dict) else {}
    gates = wire.feature_gates if isinstance(wire.feature_gates, dict) else {}
    keys += len(options) + len(gates)
    version = DEFAULT
    if isinstance(wire.kubelet_version, str):
        version = parse_version(wire.kubelet_version)
    if scored and not version.has_hint_scores:
        raise _NotWhole  # HINT-5: the strict decoder says which hint
    nodes = wire.numa_nodes
    if len(set(nodes)) != len(nodes):
        raise _NotWhole
    rows = None if distances is None else tuple(sorted(distances.items()))
    numa = NumaInfo._trusted(nodes, rows)  # ids and rows checked above
    request = MergeRequest(numa_nodes=nodes, policy=wire.policy, providers=providers,
                           version=version, numa_distances=distances, policy_options=options,
                           feature_gates=gates, _numa=[numa])
    return request, keys + provider_keys


def read_merge_request(line: bytes) -> MergeRequest | None:
    """WIRE-7: the request of one line, or ``None`` when the strict decoder must read it."""
    try:
        request, keys = _request(_REQUEST.decode(line))
    except (msgspec.MsgspecError, NumaspecError, _NotWhole, ValueError):
        return None
    return request if line.count(b":") == keys else None


def read_run_merge(line: bytes) -> tuple[int, MergeRequest] | None:
    """WIRE-7 under the adapter protocol: ``(seq, request)`` of a ``run`` request of the
    merge operation, read in one pass, or ``None`` when the line is any other request or the
    strict decoders must read it (PROTO-3)."""
    try:
        seq, request, keys = _run(_RUN.decode(line))
    except (msgspec.MsgspecError, NumaspecError, _NotWhole, ValueError):
        return None
    return (seq, request) if line.count(b":") == keys else None


def _run(run: _RunMerge) -> tuple[int, MergeRequest, int]:
    """PROTO-3: a run request's ``seq``, its merge request and how many keys it was read from
    (its own four included); :class:`_NotWhole` for a run of another command or operation."""
    if run.cmd != "run" or run.op != "merge":
        raise _NotWhole
    request, keys = _request(run.case)
    return run.seq, request, keys + 4


def read_batch_merges(line: bytes, most: int) -> list[tuple[int, MergeRequest]] | None:
    """WIRE-7 under PROTO-8: ``(seq, request)`` of each run of a ``batch`` request of at most
    ``most`` runs, all of the merge operation, read in one pass; ``None`` when the line is
    anything else or any of its runs is one the strict decoders must read (then the whole
    batch is read by them)."""
    try:
        batch = _BATCH.decode(line)
        if batch.cmd != "batch" or not 0 < len(batch.runs) <= most:
            return None
        keys = 2  # cmd, runs
        found = []
        for run in batch.runs:
            seq, request, count = _run(run)
            keys += count
            found.append((seq, request))
    except (msgspec.MsgspecError, NumaspecError, _NotWhole, ValueError):
        return None
    return found if line.count(b":") == keys else None
