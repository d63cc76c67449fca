"""When an implementation's merge answer agrees with the expected one.

One judgement for the vectors, the properties and the pytest suite: equal outcomes, or
refusals of the same kind, with the leniency OPT-1 allows where kubelet's map order picks
which of several bad options it reports.
"""

from __future__ import annotations

import re
from typing import Any

from numaspec.conformance.implementations.adapter import ErrorAnswer, MergeAnswer
from numaspec.protocols.merge_protocol import MergeRequest
from numaspec.topology.options import feature_gate_errors, policy_option_errors
from numaspec.topology.policies import MergeOutcome

__all__ = ["answers_agree", "kubelet_words_problem", "merge_is_ambiguous", "scores_agree",
           "words_agree"]


def answers_agree(request: MergeRequest, expected: MergeAnswer, actual: MergeAnswer) -> bool:
    """Equal outcomes, or errors of the same kind.  When several options are bad, kubelet
    reports whichever its map order meets first (OPT-1), so any of those kinds agrees."""
    if isinstance(expected, ErrorAnswer) or isinstance(actual, ErrorAnswer):
        if not (isinstance(expected, ErrorAnswer) and isinstance(actual, ErrorAnswer)):
            return False
        kinds = {expected.kind}
        if expected.kind in ("unknown-policy-option", "policy-option-not-enabled",
                             "invalid-policy-option-value"):
            kinds |= {e.kind for e in policy_option_errors(
                request.policy_options, request.version, request.feature_gates)}
        return actual.kind in kinds
    if expected != actual and not (request.version.has_hint_scores
                                   and _same_but_score(expected, actual)):
        return False
    return scores_agree(request, expected, actual)


def _same_but_score(expected: MergeOutcome, actual: MergeOutcome) -> bool:
    return (expected.admit == actual.admit
            and expected.hint.numa_affinity == actual.hint.numa_affinity
            and expected.hint.preferred == actual.hint.preferred)


def scores_agree(request: MergeRequest, expected: MergeOutcome, actual: MergeOutcome) -> bool:
    """HINT-5, MERGE-14: from 1.38 the answer has a score, and it is one kubelet may report
    (any, where the orders were too many to enumerate); before 1.38 it has none."""
    if not request.version.has_hint_scores:
        return actual.scores is None
    if actual.scores is None:
        return False
    allowed = expected.scores if expected.scores is not None else {expected.hint.score}
    return not allowed or actual.hint.score in allowed


def words_agree(request: MergeRequest, expected: MergeAnswer, actual: MergeAnswer
                ) -> str | None:
    """RUN-11 for a merge refusal the implementation answered with the expected kind: where
    both give kubelet's own text, the same words (``None``), else what differs."""
    if not (isinstance(expected, ErrorAnswer) and isinstance(actual, ErrorAnswer)):
        return None
    return _words_problem(expected.kubelet_message, actual.kubelet_message,
                          merge_is_ambiguous(request))


_WORD = re.compile(r"[A-Za-z0-9_.\-/]+")


def kubelet_words_problem(want: Any, got: Any, ambiguous: bool) -> str | None:
    """RUN-11: where the expected error states kubelet's own text (``kubelet_message``) and the
    implementation reports one too, the two must hold the same words.  Word order is free,
    because kubelet builds some texts by walking a Go map (NODE-9's resources, VER-4's gates);
    ``ambiguous`` (several bad options or gates, of which kubelet names whichever its map
    order meets first: OPT-1, VER-4) leaves the text unchecked."""
    return _words_problem(want.get("kubelet_message") if isinstance(want, dict) else None,
                          got.get("kubelet_message") if isinstance(got, dict) else None,
                          ambiguous)


def _words_problem(a: object, b: object, ambiguous: bool) -> str | None:
    if ambiguous or not isinstance(a, str) or not isinstance(b, str):
        return None
    if sorted(_WORD.findall(a)) == sorted(_WORD.findall(b)):
        return None
    return f"kubelet_message: expected {a!r}, got {b!r}"


def merge_is_ambiguous(request: MergeRequest) -> bool:
    """Several bad options, or several gates refused one by one: which one kubelet names is
    Go map order (OPT-1, VER-4)."""
    # Up to 1.30 kubelet stops at the first refused gate it meets, so count the gates that
    # would be refused one by one, not the errors of the whole map.
    refused = [name for name, value in request.feature_gates.items()
               if feature_gate_errors({name: value}, request.version)]
    return (len(policy_option_errors(request.policy_options, request.version,
                                     request.feature_gates)) > 1 or len(refused) > 1)
