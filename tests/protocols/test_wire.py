"""WIRE-2, WIRE-3, WIRE-4, MASK-1, VER-3: decoding requests and reporting errors."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from numaspec.protocols.serve import answer_merge_line
from numaspec.topology.golang import go_atoi, go_map_order_count, go_map_orders, go_parse_bool

BASE: dict[str, Any] = {"kubelet_version": "1.30", "numa_nodes": [0, 1], "policy": "restricted",
                        "providers": [{"cpu": [{"numa_affinity": [0], "preferred": True}]}]}


def answer(request: Any) -> dict[str, Any]:
    line = request if isinstance(request, str | bytes) else json.dumps(request)
    return answer_merge_line(line)


def error(request: Any) -> dict[str, Any]:
    result = answer(request)
    assert "error" in result, result
    err: dict[str, Any] = result["error"]
    assert err["message"].startswith(err.get("where", "")), err  # WIRE-2: says where
    return err


def with_(**changes: Any) -> dict[str, Any]:
    return {**BASE, **changes}


@pytest.mark.parametrize(("request_", "kind", "where"), [
    ('{"numa_nodes": [0,', "malformed-json", None),
    ("", "malformed-json", None),
    (b"\xff\xfe", "malformed-json", None),
    ("[" * 100000, "malformed-json", None),
    ("[1, 2]", "invalid-field", None),
    ('{"numa_nodes": [0], "numa_nodes": [1], "policy": "none", "providers": []}',
     "invalid-field", None),
    ('{"numa_nodes": [NaN], "policy": "none", "providers": []}', "invalid-field", None),
    (with_(policy=3), "invalid-field", "policy"),
    (with_(extra=1), "invalid-field", "extra"),
    ({"numa_nodes": [0], "policy": "none"}, "invalid-field", "providers"),
    (with_(providers={}), "invalid-field", "providers"),
    (with_(providers=[{"cpu": {}}]), "invalid-field", "providers[0].cpu"),
    (with_(providers=[{"cpu": [{"numa_affinity": [0]}]}]), "invalid-field", "providers[0].cpu[0]"),
    (with_(providers=[{"cpu": [{"numa_affinity": [0], "preferred": 1}]}]), "invalid-field",
     "providers[0].cpu[0].preferred"),
    (with_(providers=[{"cpu": [{"numa_affinity": [0, 64], "preferred": True}]}]),
     "invalid-numa-id", "providers[0].cpu[0].numa_affinity[1]"),
    (with_(numa_nodes=[0, -1]), "invalid-numa-id", "numa_nodes[1]"),
    (with_(numa_nodes=[0, True]), "invalid-numa-id", "numa_nodes[1]"),
    (with_(numa_nodes=[0, 1, 0]), "invalid-numa-id", "numa_nodes[2]"),
    (with_(numa_distances={"0": [10, -1]}), "invalid-numa-distances", "numa_distances.0[1]"),
    (with_(numa_distances={"0": [10, 1.5]}), "invalid-numa-distances", "numa_distances.0[1]"),
    (with_(numa_distances={"x": [10]}), "invalid-field", "numa_distances.x"),
    (with_(policy_options={"prefer-closest-numa-nodes": True}), "invalid-field",
     "policy_options.prefer-closest-numa-nodes"),
    (with_(feature_gates={"X": "yes"}), "invalid-field", "feature_gates.X"),
    (with_(kubelet_version="1.17"), "unsupported-version", "kubelet_version"),
    (with_(kubelet_version=30), "unsupported-version", "kubelet_version"),
    (with_(policy="Restricted"), "unknown-policy", "policy"),
    (with_(numa_distances={"0": [10, 11]}, policy_options={"prefer-closest-numa-nodes": "1"}),
     "missing-numa-distances", "numa_distances.1"),
    (with_(numa_distances={"0": [10], "1": [11, 10]},
           policy_options={"prefer-closest-numa-nodes": "1"}),
     "invalid-numa-distances", "numa_distances.0"),
])
def test_bad_input_is_a_typed_error_naming_the_field(request_: Any, kind: str,
                                                      where: str | None) -> None:
    """WIRE-2, WIRE-3, MASK-1, VER-3."""
    err = error(request_)
    assert err["kind"] == kind
    if where is not None:
        assert err["where"] == where


def test_null_and_empty_hint_lists_differ() -> None:  # WIRE-3
    assert answer(with_(providers=[{"cpu": None}]))["admit"] is True
    assert answer(with_(providers=[{"cpu": []}]))["admit"] is False


def test_kubelet_messages_are_reported() -> None:  # WIRE-2
    err = error(with_(numa_nodes=list(range(9))))
    assert err["kubelet_message"] == "unsupported on machines with more than 8 NUMA Nodes"
    err = error(with_(policy_options={"prefer-closest-numa-nodes": "yes"}))
    assert err["kubelet_message"] == ('bad value for option "prefer-closest-numa-nodes": '
                                      'strconv.ParseBool: parsing "yes": invalid syntax')
    err = error(with_(kubelet_version="1.33", policy_options={"max-allowable-numa-nodes": "9"},
                      feature_gates={"TopologyManagerPolicyBetaOptions": False}))
    assert err["kubelet_message"] == ("topology manager policy beta-level options not enabled, "
                                      'but option "max-allowable-numa-nodes" provided')
    err = error(with_(kubelet_version="1.27", policy_options={"prefer-closest-numa-nodes": "1"}))
    assert err["kubelet_message"] == (
        "topology manager policy options map[prefer-closest-numa-nodes:1] require feature "
        'gates "TopologyManager", "TopologyManagerPolicyOptions" enabled')


def test_permutation_budget() -> None:  # WIRE-4, FAST-6
    hints = [{"numa_affinity": [i % 2], "preferred": True} for i in range(60)]
    big = with_(providers=[{f"r{i}": hints for i in range(5)}])
    walked = answer_merge_line(json.dumps(big), definitional=True)
    assert walked["error"]["kind"] == "merge-too-large"
    assert "60^5" not in walked["error"]["message"]
    # The fast merge has no budget a valid request reaches: 60**5 permutations, answered.
    assert answer(big) == {"hint": {"numa_affinity": [0], "preferred": True}, "admit": True}
    assert "error" not in answer(with_(policy="none", providers=big["providers"]))


@pytest.mark.parametrize(("text", "value"), [("1", True), ("T", True), ("False", False)])
def test_go_parse_bool(text: str, value: bool) -> None:
    assert go_parse_bool(text) is value


@pytest.mark.parametrize("text", ["yes", "", " true", "TRUE ", "tRUE"])
def test_go_parse_bool_rejects(text: str) -> None:
    with pytest.raises(ValueError, match=r"strconv\.ParseBool"):
        go_parse_bool(text)


@pytest.mark.parametrize(("text", "value"), [("8", 8), ("+9", 9), ("-3", -3), ("007", 7)])
def test_go_atoi(text: str, value: int) -> None:
    assert go_atoi(text) == value


@pytest.mark.parametrize(("text", "tail"), [("", "invalid syntax"), ("1_0", "invalid syntax"),
                                             ("0x10", "invalid syntax"), (" 8", "invalid syntax"),
                                             ("9" * 20, "value out of range"),
                                             ("+", "invalid syntax")])
def test_go_atoi_rejects(text: str, tail: str) -> None:
    with pytest.raises(ValueError, match=tail):
        go_atoi(text)


def test_go_map_orders_small_maps_rotate() -> None:
    """OPS-2: a map of up to eight entries is ranged from a random slot, wrapping around: the
    rotations of the order the keys were put in, whatever other keys share the map."""
    assert list(go_map_orders(["a", "b", "c"], 8)) == [
        ("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")]
    assert list(go_map_orders(["a"], 3)) == [("a",)]
    assert list(go_map_orders([], 0)) == [()]
    assert go_map_order_count(3, 8) == 3


def test_go_map_orders_big_maps_take_any_order() -> None:
    """OPS-2: past eight entries the hash places the keys: every permutation counts."""
    assert sorted(go_map_orders(["a", "b", "c"], 9)) == sorted(
        itertools.permutations(["a", "b", "c"]))
    assert go_map_order_count(3, 9) == 6
