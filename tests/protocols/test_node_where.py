"""NWIRE-3: an error's ``where`` is a path into the request as it was sent (issue 33, found by
P-NODE-MALFORMED): a NUMA node is named by its place in ``numaNodes``, whatever its id and
the order of the ids; a distance row is that entry's ``distances``."""

from __future__ import annotations

from typing import Any

import pytest

from numaspec.errors import (
    InvalidFieldError,
    InvalidNumaDistancesError,
    InvalidNumaIdError,
    NumaspecError,
)
from numaspec.node.machine import Core, Machine, NumaNode
from numaspec.protocols.node_protocol import decode_machine, decode_node


def _node(numa: int, threads: list[int], distances: list[int] | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": numa, "memory": "1Gi",
                             "cores": [{"socket": 0, "threads": threads}]}
    if distances is not None:
        entry["distances"] = distances
    return entry


def test_a_numa_node_is_named_by_its_place_in_the_request() -> None:
    machine = decode_machine({"numaNodes": [_node(2, [0]), _node(0, [1]), _node(1, [2])]})
    assert machine.numa_ids == (0, 1, 2)  # kept in id order inside
    assert [machine.where(p) for p in range(3)] == [
        "machine.numaNodes[1]", "machine.numaNodes[2]", "machine.numaNodes[0]"]
    assert machine.where_of(2) == "machine.numaNodes[0]"
    assert machine.where_of(7) == "machine.numaNodes"


def test_a_machine_built_in_python_is_named_in_id_order() -> None:
    machine = Machine((NumaNode(1, 1 << 30, cores=(Core(0, (1,)),)),
                       NumaNode(0, 1 << 30, cores=(Core(0, (0,)),))))
    assert machine.where(0) == "machine.numaNodes[0]"
    assert machine.where_of(1) == "machine.numaNodes[1]"


@pytest.mark.parametrize(("nodes", "error", "where"), [
    ([_node(1, [1]), _node(0, [])], InvalidFieldError, "node.machine.numaNodes[1].cores[0]"),
    ([_node(0, [0]), _node(1, [1]), _node(0, [2])], InvalidNumaIdError,
     "node.machine.numaNodes[2].id"),
    ([_node(1, [1], [20, 10]), _node(0, [0], [10, 1 << 64])], InvalidNumaDistancesError,
     "node.machine.numaNodes[1].distances[1]"),
])
def test_the_error_points_at_the_entry_as_sent(nodes: list[dict[str, Any]],
                                               error: type[NumaspecError], where: str) -> None:
    with pytest.raises(error) as raised:
        decode_node({"kubeletVersion": "1.32", "machine": {"numaNodes": nodes}})
    assert raised.value.where.startswith(where)


def test_a_row_past_64_bits_is_refused_beside_a_node_without_a_row() -> None:
    """Every distance row given is checked, even where another NUMA node has none (and the
    machine then has no distances at all)."""
    with pytest.raises(InvalidNumaDistancesError) as raised:
        decode_node({"kubeletVersion": "1.32", "machine": {"numaNodes": [
            _node(1, [1]), _node(0, [0], [10, 1 << 64])]}})
    assert raised.value.where == "node.machine.numaNodes[1].distances[1]"


def test_a_short_distance_row_is_the_entrys_distances() -> None:
    """OPT-6's refusal names the node's entry, not a merge request's numa_distances."""
    with pytest.raises(InvalidNumaDistancesError) as raised:
        decode_node({"kubeletVersion": "1.32", "config": {
            "topologyManagerPolicy": "best-effort",
            "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"}},
            "machine": {"numaNodes": [_node(2, [1], [20, 10, 10]), _node(0, [0], [10, 20])]}})
    assert raised.value.where == "node.machine.numaNodes[1].distances"
