"""A fixture implementation with the Katalyst PR's selector defect (spec chapter affinity.md,
divergence D1): a selector matches a pod when *any* of its ``matchLabels`` pairs holds
(katalyst-core PR #347, ``matchNUMAAffinity`` / ``matchPodAffinity`` count each matching pair).

``python katalyst_or_matching.py``: the reference behind the adapter protocol, with only that
one rule changed.  The suite must reject it (tests/suite/test_affinity_suite.py).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from numaspec.node.affinity import Selector
from numaspec.protocols.adapter_protocol import ReferenceAdapter, serve_adapter


def _any_key(self: Selector, labels: Mapping[str, str]) -> bool:
    return any(labels.get(key) == value for key, value in self.match_labels)


class OrMatching(ReferenceAdapter):
    def start(self) -> dict[str, object]:
        info = super().start()
        info["name"] = "katalyst-or-matching-fixture"
        return info


if __name__ == "__main__":
    Selector.matches = _any_key  # type: ignore[method-assign]
    sys.exit(serve_adapter(OrMatching(), sys.stdin.buffer, sys.stdout))
