"""The bounds of WIRE-4, WIRE-5 and NWIRE-5 (reference/limits.py): each input past a bound is
refused with a typed error naming it, before work proportional to the input is done, and the
input just inside the bound is answered."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from numaspec.errors import InvalidQuantityError, LimitExceededError
from numaspec.limits import (
    MAX_CONTAINERS,
    MAX_CPU_ID,
    MAX_DEVICES,
    MAX_INT_DIGITS,
    MAX_LINE_BYTES,
    MAX_QUANTITY_CHARS,
)
from numaspec.node.nodeconfig import parse_cpuset
from numaspec.node.quantity import parse_quantity
from numaspec.protocols.adapter_protocol import ReferenceAdapter, serve_adapter
from numaspec.protocols.node_protocol import NodeSession
from numaspec.protocols.serve import answer_merge_line, serve_merge, serve_node

REQUEST = {"kubelet_version": "1.30", "numa_nodes": [0, 1], "policy": "restricted",
           "providers": [{"cpu": [{"numa_affinity": [0], "preferred": True}]}]}


def _merge(text: str) -> dict[str, Any]:
    return answer_merge_line(text)


def test_integer_digits() -> None:  # WIRE-5
    huge = "9" * (MAX_INT_DIGITS + 1)
    answer = _merge(json.dumps(REQUEST).replace("[0]", f"[{huge}]", 1))
    assert answer["error"]["kind"] == "limit-exceeded"
    assert f"{MAX_INT_DIGITS + 1} digits" in answer["error"]["message"]
    inside = _merge(json.dumps(REQUEST).replace("[0]", f"[{'9' * MAX_INT_DIGITS}]", 1))
    assert inside["error"]["kind"] == "invalid-numa-id"
    # Python's own limit (4,300 digits) is never reached
    assert _merge("9" * 5000)["error"]["kind"] == "limit-exceeded"


@pytest.mark.parametrize("number", ["1e999", "-1e999", "1E400"])
def test_numbers_past_a_double(number: str) -> None:  # WIRE-5
    answer = _merge(json.dumps(REQUEST).replace("[0]", f"[{number}]", 1))
    assert answer["error"]["kind"] == "invalid-field"
    assert "out of range" in answer["error"]["message"]


def _serve(serve: Any, data: bytes) -> list[dict[str, Any]]:
    out = io.StringIO()
    serve(io.BytesIO(data), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_long_line_is_answered_and_the_stream_goes_on() -> None:  # WIRE-5
    data = b"[" * (MAX_LINE_BYTES + 10) + b"\n" + json.dumps(REQUEST).encode() + b"\n"
    first, second = _serve(serve_merge, data)
    assert first["error"]["kind"] == "limit-exceeded"
    assert f"{MAX_LINE_BYTES + 10} bytes" in first["error"]["message"]
    assert second["admit"] is True
    node = _serve(serve_node, data)
    assert [a["error"]["kind"] for a in node] == ["limit-exceeded", "invalid-field"]


def test_serve_answers_what_it_cannot_read() -> None:  # WIRE-5, PROTO-1
    data = b"9" * 5000 + b"\n" + b"x" * (MAX_LINE_BYTES + 1) + b"\n"
    answers = _serve(lambda i, o: serve_adapter(ReferenceAdapter(), i, o), data)
    assert [a["errored"] for a in answers] == [True, True]
    assert "digits" in answers[0]["context"]["message"]
    assert "bytes" in answers[1]["context"]["message"]


def test_cpuset_range_is_refused_before_it_is_expanded() -> None:  # NWIRE-5
    with pytest.raises(LimitExceededError, match="above 8191"):
        parse_cpuset("0-99999999999", where="reservedSystemCPUs")
    with pytest.raises(LimitExceededError):
        parse_cpuset("0-" + "9" * 5000, where="reservedSystemCPUs")
    assert len(parse_cpuset(f"0-{MAX_CPU_ID}", where="x")) == MAX_CPU_ID + 1


def test_quantity_digits_and_length() -> None:  # NWIRE-5, QTY-4
    with pytest.raises(LimitExceededError):
        parse_quantity("1" * (MAX_QUANTITY_CHARS + 1))
    with pytest.raises(InvalidQuantityError, match="64-bit"):
        parse_quantity("9" * 4000)
    with pytest.raises(InvalidQuantityError, match="suffix"):  # not an int64 exponent
        parse_quantity("1e" + "9" * 30)
    assert parse_quantity("0." + "0" * 3000 + "1") > 0  # a positive value, however small
    assert parse_quantity("000000000000000000000000000001Gi") == 1 << 30


def _node(numa: int, threads: int = 1, devices: int = 0) -> dict[str, Any]:
    nodes = [{"id": n, "memory": "4Gi", "cores": [
        {"socket": 0, "threads": [n * threads + t]} for t in range(threads)]}
        for n in range(numa)]
    machine: dict[str, Any] = {"numaNodes": nodes}
    if devices:
        machine["devices"] = {"example.com/dev": [{"id": f"d{i}", "numa": [i % numa]}
                                                  for i in range(devices)]}
    return {"op": "create", "node": {"kubeletVersion": "1.37", "machine": machine, "config": {
        "cpuManagerPolicy": "static", "reservedSystemCPUs": "0",
        "topologyManagerPolicy": "best-effort",
        "topologyManagerPolicyOptions": {"max-allowable-numa-nodes": str(max(numa, 8))}}}}


POD = {"uid": "p", "containers": [{"name": "c", "resources": {"limits": {
    "cpu": "2", "memory": "1Gi"}}}]}


def test_hint_subsets() -> None:  # NWIRE-5
    session = NodeSession()
    assert session.handle(_node(13)) == {"ok": True}
    answer = session.answer(json.dumps({"op": "hints", "pod": POD}))
    assert answer["error"]["kind"] == "limit-exceeded"
    assert "at most 12" in answer["error"]["message"]
    session.handle(_node(12))
    assert "hints" in session.handle({"op": "hints", "pod": POD})


def test_machine_and_pod_sizes() -> None:  # NWIRE-5
    session = NodeSession()
    too_many = session.answer(json.dumps(_node(2, devices=MAX_DEVICES + 1)))
    assert too_many["error"]["kind"] == "limit-exceeded"
    high = _node(1)
    high["node"]["machine"]["numaNodes"][0]["cores"][0]["threads"] = [MAX_CPU_ID + 1]
    assert session.answer(json.dumps(high))["error"]["kind"] == "limit-exceeded"
    session.handle(_node(2))
    crowded = {"uid": "q", "containers": [
        {"name": f"c{i}", "resources": {}} for i in range(MAX_CONTAINERS + 1)]}
    answer = session.answer(json.dumps({"op": "admit", "pod": crowded}))
    assert answer["error"]["kind"] == "limit-exceeded"
    assert answer["error"]["where"] == "pod"


def test_node_merge_has_no_budget() -> None:  # WIRE-4 is the definitional walk's; FAST-6
    session = NodeSession()
    create = _node(8, threads=2, devices=8)
    create["node"]["config"].update({"memoryManagerPolicy": "Static", "reservedMemory": [
        {"numaNode": 0, "limits": {"memory": "100Mi"}}]})
    assert session.handle(create) == {"ok": True}
    pod = {"uid": "p", "containers": [{"name": "c", "resources": {"limits": {
        "cpu": "2", "memory": "1Gi", "example.com/dev": "1"}}}]}
    before = session.handle({"op": "state"})
    answer = session.answer(json.dumps({"op": "admit", "pod": pod}))
    # 255 CPU hints x 255 memory hints x 255 device hints: the walk's budget would refuse
    # it; the fast merge answers, and the admission goes on.
    assert answer["decision"]["admitted"] is True, answer
    assert session.handle({"op": "state"}) != before
