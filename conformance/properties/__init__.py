"""The conformance properties and what they are drawn from: the table (``registry``), the merge
properties (``merge``) and the affinity ones (``affinity``), the independent oracle
(``oracle``), Hypothesis strategies for merges and nodes (``strategies``,
``node_strategies``), the in-process node state machine (``node_machine``) and seeded random
merge cases (``random_cases``).

The table and the merge judgement are re-exported here, where they have always been read.
"""

from numaspec.conformance.properties.merge import (
    PROPERTIES,
    Property,
    answers_agree,
    claimed_options,
    fit_to,
    register,
)

__all__ = ["PROPERTIES", "Property", "answers_agree", "claimed_options", "fit_to", "register"]
