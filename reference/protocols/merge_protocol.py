"""The JSON case format for merges: requests, responses, errors
(``spec/protocols/merge-protocol.md``, schemas in ``numaspec/schemas/``).

The same format serves ``numaspec merge``, the spec vectors and adapters.  Decoding is strict:
every field is checked, with its path, and nothing unknown is silently ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, TypeGuard

import attrs
import msgspec

from numaspec.errors import (
    InvalidFieldError,
    InvalidNumaDistancesError,
    LimitExceededError,
    MergeTooLargeError,
    NumaspecError,
)
from numaspec.limits import MAX_LINE_BYTES, MAX_MERGE_STEPS
from numaspec.strict_json import bool_map, expect, string_map
from numaspec.topology.hints import ProviderHints, TopologyHint
from numaspec.topology.masks import MAX_NUMA_ID, NumaMask
from numaspec.topology.numa import NumaInfo
from numaspec.topology.policies import MergeOutcome, topology_merge
from numaspec.topology.versions import DEFAULT, KubeletVersion, parse_version

if TYPE_CHECKING:
    from numaspec.topology.trace import MergeTrace

__all__ = [
    "DEFAULT_MAX_MERGE_STEPS",
    "MergeRequest",
    "MergeTooLargeError",
    "decode_merge_request",
    "encode_error",
    "encode_line",
    "encode_merge_request",
    "encode_outcome",
    "evaluate_request",
    "merge_steps",
    "node_key",
    "permutation_count",
    "request_lines",
]

#: WIRE-4: the most merge steps ``evaluate_request`` walks before it refuses (never a hang).
DEFAULT_MAX_MERGE_STEPS = MAX_MERGE_STEPS


@attrs.frozen
class MergeRequest:
    """One merge case, decoded."""

    numa_nodes: tuple[int, ...]
    policy: str
    providers: tuple[ProviderHints, ...]
    version: KubeletVersion = DEFAULT
    numa_distances: Mapping[int, tuple[int, ...]] | None = None
    policy_options: Mapping[str, str] = attrs.field(factory=dict)
    feature_gates: Mapping[str, bool] = attrs.field(factory=dict)
    _numa: list[NumaInfo] = attrs.field(factory=list, eq=False, repr=False, alias="_numa")

    def numa_info(self) -> NumaInfo:
        """The machine (checked once: node ids, duplicates, distance entries)."""
        if not self._numa:
            self._numa.append(NumaInfo(self.numa_nodes, self.numa_distances))
        return self._numa[0]


# --- decoding --------------------------------------------------------------------------------


def _numa_ids(value: object) -> TypeGuard[list[int]]:
    """Whether ``value`` is a list of NUMA node ids in 0..63 (MASK-1): the common case,
    checked in one pass; anything else goes through the checks that name the culprit."""
    return type(value) is list and all(
        type(node) is int and 0 <= node <= MAX_NUMA_ID for node in value)


def _node_list(value: object, where: str) -> tuple[int, ...]:
    if _numa_ids(value):
        return tuple(value)
    expect(value, list, "an array of NUMA node ids", where)
    assert isinstance(value, list)
    for i, node in enumerate(value):
        NumaMask.of([node], where=f"{where}[{i}]")  # type and range, MASK-1: names the culprit
    return tuple(value)


#: HINT-5: a score is a whole percentage.
MAX_SCORE = 100


def _score(value: object, where: str, version: KubeletVersion) -> int:
    """HINT-5: a hint's ``score``, from 1.38: an integer 0..100 (0: no signal)."""
    if not version.has_hint_scores:
        raise InvalidFieldError(
            f"a hint has a score from kubelet 1.38 (kubelet {version}'s hints have none)",
            where=where)
    if type(value) is not int or not 0 <= value <= MAX_SCORE:
        raise InvalidFieldError(
            f"a score is an integer from 0 to {MAX_SCORE} (a percentage), got {value!r}",
            where=where)
    return value


def _hint(value: object, where: str, version: KubeletVersion = DEFAULT) -> TopologyHint:
    if type(value) is dict and len(value) == 2 and type(value.get("preferred")) is bool:
        affinity = value.get("numa_affinity", _MISSING)
        if affinity is None:
            return TopologyHint(None, value["preferred"])
        if _numa_ids(affinity):
            word = 0
            for node in affinity:
                word |= 1 << node
            return TopologyHint(NumaMask._trusted(word), value["preferred"])  # the common case
    expect(value, dict, "a hint object", where)
    assert isinstance(value, dict)
    unknown = set(value) - {"numa_affinity", "preferred", "score"}
    if unknown:
        raise InvalidFieldError(f"unknown field {sorted(unknown)[0]!r}", where=where)
    for key in ("numa_affinity", "preferred"):
        if key not in value:
            raise InvalidFieldError(f"missing field {key!r}", where=where)
    preferred = value["preferred"]
    expect(preferred, bool, "true or false", f"{where}.preferred")
    score = _score(value["score"], f"{where}.score", version) if "score" in value else 0
    affinity = value["numa_affinity"]
    if affinity is None:
        return TopologyHint(None, preferred, score)
    nodes = _node_list(affinity, f"{where}.numa_affinity")
    return TopologyHint(NumaMask.of(nodes), preferred, score)


def _provider(value: object, where: str, version: KubeletVersion = DEFAULT) -> ProviderHints:
    if value is None:
        return None
    expect(value, dict, "an object of resource name to hints, or null", where)
    assert isinstance(value, dict)
    resources: dict[str, tuple[TopologyHint, ...] | None] = {}
    for name, hints in value.items():
        here = f"{where}.{name}"
        if hints is None:
            resources[name] = None
            continue
        expect(hints, list, "an array of hints, or null", here)
        resources[name] = tuple(_hint(h, f"{here}[{i}]", version) for i, h in enumerate(hints))
    return resources


def node_key(key: str) -> bool:
    """WIRE-3: whether ``key`` is a NUMA node id written as a distance row's key: decimal
    ASCII digits, no leading zero."""
    return key.isascii() and key.isdigit() and (len(key) == 1 or key[0] != "0")


def _distances(value: object, where: str) -> dict[int, tuple[int, ...]]:
    expect(value, dict, "an object of node id to distance row", where)
    assert isinstance(value, dict)
    rows: dict[int, tuple[int, ...]] = {}
    for key, row in value.items():
        here = f"{where}.{key}"
        if not node_key(key):
            raise InvalidFieldError("a distance row is keyed by a decimal NUMA node id",
                                    where=here)
        node = int(key)
        NumaMask.of([node], where=here)
        expect(row, list, "an array of distances", here)
        if not row or (set(map(type, row)) == {int} and min(row) >= 0):
            rows[node] = tuple(row)  # the common case, checked in one pass
            continue
        for i, entry in enumerate(row):
            if isinstance(entry, bool) or not isinstance(entry, int) or entry < 0:
                raise InvalidNumaDistancesError(
                    f"a distance is a non-negative integer, got {entry!r}", where=f"{here}[{i}]")
        rows[node] = tuple(row)
    return rows


_MISSING = object()

_REQUEST_FIELDS = {
    "kubelet_version", "numa_nodes", "numa_distances", "policy", "policy_options",
    "feature_gates", "providers",
}


def decode_merge_request(value: object) -> MergeRequest:
    """A decoded JSON value → :class:`MergeRequest`, or a typed error naming the field."""
    expect(value, dict, "a request object", "")
    assert isinstance(value, dict)
    unknown = set(value) - _REQUEST_FIELDS
    if unknown:
        raise InvalidFieldError(f"unknown field {sorted(unknown)[0]!r}",
                                where=sorted(unknown)[0])
    for key in ("numa_nodes", "policy", "providers"):
        if key not in value:
            raise InvalidFieldError(f"missing required field {key!r}", where=key)
    version = DEFAULT
    if value.get("kubelet_version") is not None:
        version = parse_version(value["kubelet_version"])
    nodes = _node_list(value["numa_nodes"], "numa_nodes")
    expect(value["policy"], str, "a policy name", "policy")
    providers = value["providers"]
    expect(providers, list, "an array of providers", "providers")
    distances = None
    if value.get("numa_distances") is not None:
        distances = _distances(value["numa_distances"], "numa_distances")
    gates: dict[str, bool] = {}
    if value.get("feature_gates") is not None:
        gates = bool_map(value["feature_gates"], "feature_gates")
    request = MergeRequest(
        numa_nodes=nodes,
        policy=value["policy"],
        providers=tuple(_provider(p, f"providers[{i}]", version)
                        for i, p in enumerate(providers)),
        version=version,
        numa_distances=distances,
        policy_options=(
            string_map(value["policy_options"], "policy_options")
            if value.get("policy_options") is not None else {}
        ),
        feature_gates=gates,
    )
    request.numa_info()  # node ids: range and duplicates, distance entries
    return request


# --- evaluation ------------------------------------------------------------------------------


def permutation_count(providers: Sequence[ProviderHints]) -> int:
    """How many permutations the merge walks (an upper bound under single-numa-node)."""
    total = 1
    for provider in providers:
        for hints in (provider or {}).values():
            total *= max(1, len(hints or ()))
    return total


def merge_steps(providers: Sequence[ProviderHints]) -> int:
    """WIRE-4: the work of the definitional merge, permutations x hint lists."""
    lists = sum(len(provider or {}) for provider in providers)
    return permutation_count(providers) * max(1, lists)


def evaluate_request(
    request: MergeRequest, *, max_steps: int = DEFAULT_MAX_MERGE_STEPS,
    trace: MergeTrace | None = None, definitional: bool = False,
) -> MergeOutcome:
    """Run the reference on one request (start-up checks, then the policy's merge: the fast
    one, or the definitional walk within ``max_steps``); ``trace`` records the reasoning
    (EXPLAIN-2)."""
    return topology_merge(
        request.providers,
        request.numa_info(),
        request.policy,
        version=request.version,
        policy_options=request.policy_options,
        numa_distances=request.numa_distances,
        feature_gates=request.feature_gates,
        max_steps=max_steps,
        trace=trace,
        definitional=definitional,
    )


def request_lines(stream: BinaryIO, max_line: int = MAX_LINE_BYTES, *,
                  longer: tuple[re.Pattern[bytes], int] | None = None
                  ) -> Iterator[bytes | LimitExceededError]:
    """WIRE-5: the request lines of a stream, newline stripped; a line longer than
    ``max_line`` bytes is read to its end without being kept, and comes out as the error
    that answers it.  ``longer`` (PROTO-8's batches): a line that begins as the pattern
    says may be that many times ``max_line``."""
    most = max_line if longer is None else max_line * longer[1]
    while raw := stream.readline(most + 1):
        if len(raw) > most and not raw.endswith(b"\n"):
            size = len(raw)
            while (rest := stream.readline(1 << 20)) and not rest.endswith(b"\n"):
                size += len(rest)
            size += len(rest.rstrip(b"\r\n"))
            yield _too_long(size, max_line)
            continue
        line = raw.rstrip(b"\r\n")
        if len(line) > max_line and (longer is None or not longer[0].match(line)):
            yield _too_long(len(line), max_line)
            continue
        yield line


def _too_long(size: int, max_line: int) -> LimitExceededError:
    return LimitExceededError(f"a line of {size} bytes: numaspec reads request lines of at "
                              f"most {max_line} bytes")


# --- encoding --------------------------------------------------------------------------------


def _encode_hint(hint: TopologyHint, scored: bool = False) -> dict[str, Any]:
    mask = hint.numa_affinity
    body: dict[str, Any] = {"numa_affinity": None if mask is None else list(mask.nodes),
                            "preferred": hint.preferred}
    if scored or hint.score:
        body["score"] = hint.score
    return body


def encode_outcome(outcome: MergeOutcome) -> dict[str, Any]:
    """A response (HINT-5: from 1.38 the hint has its ``score``, and ``scores`` where kubelet
    may report any of several, MERGE-14)."""
    hint = _encode_hint(outcome.hint, outcome.scores is not None)
    if outcome.scores is not None and outcome.scores != {outcome.hint.score}:
        hint["scores"] = sorted(outcome.scores)
    return {"hint": hint, "admit": outcome.admit}


def encode_line(answer: Any) -> str:
    """One answer as one line of compact JSON (WIRE-1), newline included: encoded by msgspec,
    or by the standard library for what msgspec refuses (a string holding a lone surrogate,
    which a request may carry into an error message)."""
    try:
        return _ENCODER.encode(answer).decode() + "\n"
    except (TypeError, ValueError, OverflowError, UnicodeError):
        return json.dumps(answer, separators=(",", ":")) + "\n"


_ENCODER = msgspec.json.Encoder()


def encode_error(error: NumaspecError) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": error.kind, "message": error.describe()}
    if error.where:
        body["where"] = error.where
    if error.kubelet_message is not None:
        body["kubelet_message"] = error.kubelet_message
    return {"error": body}


def encode_merge_request(request: MergeRequest) -> dict[str, Any]:
    """The inverse of :func:`decode_merge_request` (used to write vectors and drive adapters)."""
    body: dict[str, Any] = {
        "kubelet_version": str(request.version),
        "numa_nodes": list(request.numa_nodes),
    }
    if request.numa_distances is not None:
        body["numa_distances"] = {str(k): list(v) for k, v in request.numa_distances.items()}
    body["policy"] = request.policy
    if request.policy_options:
        body["policy_options"] = dict(request.policy_options)
    if request.feature_gates:
        body["feature_gates"] = dict(request.feature_gates)
    body["providers"] = [
        None if p is None else {
            name: None if hints is None else [_encode_hint(h) for h in hints]
            for name, hints in p.items()
        }
        for p in request.providers
    ]
    return body
