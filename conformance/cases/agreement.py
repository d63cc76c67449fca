"""When an implementation's merge answer agrees with the expected one.

One judgement for the vectors, the properties and the pytest suite: equal outcomes, or
refusals of the same kind, with the leniency OPT-1 allows where kubelet's map order picks
which of several bad options it reports.
"""

from __future__ import annotations

from numaspec.conformance.implementations.adapter import ErrorAnswer, MergeAnswer
from numaspec.protocols.merge_protocol import MergeRequest
from numaspec.topology.options import policy_option_errors

__all__ = ["answers_agree"]


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
    return expected == actual

