"""NODE-3, NODE-9: a reserved cpu as kubelet's ``parseResourceList`` leaves it, per release,
and how kubelet prints it; QTY-1, QTY-3, QTY-4: what apimachinery v0.38 (kubelet 1.38) reads
differently from v0.37.

1.37 rounds a kubeReserved or systemReserved cpu to millicores with
``SetMilli((ScaledValue(Micro) + 500) / 1000)``, in int64 arithmetic that wraps past 2^63
micro-cores; 1.38 rounds only where ``AsScaledInt64(Micro)`` fits and otherwise keeps the
quantity as parsed.  The Go node
probes of kubelet 1.37.2, 1.30.14 and 1.38.0-beta.0 are compared where this run selects them
(tools/numaspec_tools/builds/kubelet.py)."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import pytest

from numaspec.errors import InvalidQuantityError, NodeStartupError
from numaspec.node.fit import allocatable_reservation, check_node_allocatable, node_allocatable
from numaspec.node.go_quantity import (
    GoQuantity,
    go_add,
    go_as_int64,
    go_parse,
    go_reserved_cpu,
    go_scaled_value,
    go_text,
)
from numaspec.node.machine import Core, Machine, NumaNode
from numaspec.node.nodeconfig import NodeConfig
from numaspec.node.quantity import parse_quantity
from numaspec.protocols.node_protocol import NodeSession
from numaspec.topology.versions import KubeletVersion
from numaspec_tools.builds.kubelet import node_probe

MAX, MIN = (1 << 63) - 1, -(1 << 63)
ZERO = GoQuantity(format="DecimalSI")
#: 2 CPUs on one NUMA node, 4Gi: the vectors' machine.
WIRE_MACHINE: dict[str, Any] = {"numaNodes": [{"id": 0, "memory": "4Gi", "cores": [
    {"socket": 0, "threads": [0]}, {"socket": 0, "threads": [1]}]}]}
MACHINE = Machine((NumaNode(0, 4 << 30, cores=(Core(0, (0,)), Core(0, (1,)))),), {})


def summed(q: GoQuantity, minor: int) -> str | None:
    """``%v`` of the quantity added to a zero one, as kubelet's reservation sum prints it."""
    return go_text(go_add(ZERO, q), minor=minor)


# -- QTY-3: ScaledValue up to 1.37, AsScaledInt64 from 1.38 ---------------------------------


@pytest.mark.parametrize(("text", "scale", "v037", "v038"), [
    # a plain number: x10^6 in one step wraps (1.37), saturates (1.38)
    ("10000000000000", -6, (10**19 - 2**64, False), (MAX, False)),
    ("20000000000000", -6, (2 * 10**19 - 2**64, False), (MAX, False)),
    # {10 12}: x10^18 is a loop of x10, which gives 0 at the first overflow
    ("10T", -6, (0, False), (MAX, False)),
    # {10000000000 3}: x10^9 in one step
    ("10000000000k", -6, (10**19 - 2**64, False), (MAX, False)),
    # the last micro-value that fits, and the first that does not
    ("9223372036854.775807", -6, (MAX, True), (MAX, True)),
    ("9223372036854.775808", -6, (MIN, False), (MAX, False)),
    # MilliValue of a request of 18446744073709553 CPUs: 1384 at 1.37 (kubelet 1.37.2)
    ("18446744073709553", -3, (1384, False), (MAX, False)),
    # a negative decimal: truncated, then one added, up to 1.37; away from zero from 1.38
    ("-0.3Gi", 0, (-322122546, True), (-322122548, True)),
    ("-0.5000000000000000001", 0, (1, True), (-1, True)),
    # in range both agree, rounding away from zero
    ("1.0000005", -6, (1000001, True), (1000001, True)),
    ("1.5Gi", -3, (1610612736000, True), (1610612736000, True)),
    ("-500m", 0, (-1, True), (-1, True)),
])
def test_scaled_value_per_release(text: str, scale: int, v037: tuple[int, bool],
                                  v038: tuple[int, bool]) -> None:
    """QTY-3: apimachinery v0.37's ``ScaledValue`` and v0.38's ``AsScaledInt64`` (values
    taken from both versions' own code on these strings)."""
    assert go_scaled_value(go_parse(text, minor=37), scale, minor=37) == v037
    assert go_scaled_value(go_parse(text, minor=38), scale, minor=38) == v038


# -- NODE-3: the reserved cpu, per release ---------------------------------------------------


@pytest.mark.parametrize(("text", "v036", "v037", "v038"), [
    ("10000000000000", "{{10000000000000 0} {<nil>}  DecimalSI}",
     "{{-8446744073709551 -3} {<nil>}  DecimalSI}",
     "{{10000000000000 0} {<nil>} { 0} DecimalSI}"),
    ("20000000000000", "{{20000000000000 0} {<nil>}  DecimalSI}",
     "{{1553255926290448 -3} {<nil>}  DecimalSI}",
     "{{20000000000000 0} {<nil>} { 0} DecimalSI}"),
    # a zero reservation: adding {0 -3} leaves the sum's {0 0}
    ("10T", "{{10 12} {<nil>}  DecimalSI}", "{{0 0} {<nil>}  DecimalSI}",
     "{{10 12} {<nil>} { 0} DecimalSI}"),
    ("100", "{{100 0} {<nil>}  DecimalSI}", "{{100000 -3} {<nil>}  DecimalSI}",
     "{{100000 -3} {<nil>} { 0} DecimalSI}"),
    ("1.0005", "{{10005 -4} {<nil>}  DecimalSI}", "{{1001 -3} {<nil>}  DecimalSI}",
     "{{1001 -3} {<nil>} { 0} DecimalSI}"),
    ("0.0004", "{{4 -4} {<nil>}  DecimalSI}", "{{0 0} {<nil>}  DecimalSI}",
     "{{0 0} {<nil>} { 0} DecimalSI}"),
    # the last quantity whose micro-value fits: 1.37's + 500 wraps it all the same; 1.38
    # rounds it
    ("9223372036854.775807", None, "{{-9223372036854775 -3} {<nil>}  DecimalSI}",
     "{{9223372036854776 -3} {<nil>} { 0} DecimalSI}"),
    # one micro-core more: 1.37 wraps it to -2^63 (+ 500, / 1000); 1.38 keeps it, a decimal
    ("9223372036854.775808", None, "{{-9223372036854775 -3} {<nil>}  DecimalSI}", None),
    # a fraction past the limit: kept as parsed at 1.38, with its sub-millicore digit
    ("9300000000000.0001", "{{93000000000000001 -4} {<nil>}  DecimalSI}",
     "{{-9146744073709551 -3} {<nil>}  DecimalSI}",
     "{{93000000000000001 -4} {<nil>} { 0} DecimalSI}"),
])
def test_reserved_cpu_per_release(text: str, v036: str | None, v037: str, v038: str | None
                                  ) -> None:
    """NODE-3: ``parseResourceList``'s cpu: as parsed up to 1.36; 1.37's int64 rounding
    (the wrap); 1.38's rounding where the micro-value fits, else as parsed.  The texts are
    what ``%v`` of the reservation sum prints (checked against apimachinery v0.37.2 and
    v0.38.0-beta.0 running kubelet's lines; 1.36 = 1.37's apimachinery without the
    rounding)."""
    assert summed(go_reserved_cpu(go_parse(text, minor=36), minor=36), 37) == v036
    assert summed(go_reserved_cpu(go_parse(text, minor=37), minor=37), 37) == v037
    assert summed(go_reserved_cpu(go_parse(text, minor=38), minor=38), 38) == v038


def test_the_wrapped_reservation_is_exact_where_it_is_read() -> None:
    """NODE-3: the amount numaspec compares and subtracts is the wrapped one."""
    wrapped = go_reserved_cpu(go_parse("10000000000000"), minor=37)
    assert wrapped.exact == Fraction(-8446744073709551, 1000)
    kept = go_reserved_cpu(go_parse("10000000000000", minor=38), minor=38)
    assert kept.exact == 10**13


def config(minor: int, **settings: Any) -> NodeConfig:
    return NodeConfig(KubeletVersion(minor), **settings)


def test_137_negative_reservation_starts_and_grows_allocatable() -> None:
    """NODE-3, NODE-9: at 1.37 kubeReserved cpu 10000000000000 reserves -8446744073709.551
    CPUs: the start-up check passes and allocatable cpu is 2000 + 8446744073709551
    millicores; 1.36 reserves it as written and stops."""
    wrapped = config(37, kube_reserved={"cpu": "10000000000000"})
    assert allocatable_reservation(wrapped)["cpu"] == Fraction(-8446744073709551, 1000)
    check_node_allocatable(MACHINE, wrapped)
    assert node_allocatable(MACHINE, wrapped, {})["cpu"] == 8446744073711551
    with pytest.raises(NodeStartupError) as raised:
        check_node_allocatable(MACHINE, config(36, kube_reserved={"cpu": "10000000000000"}))
    assert "{{10000000000000 0} {<nil>}  DecimalSI}" in str(raised.value.kubelet_message)


def test_137_overflow_to_zero_reserves_nothing() -> None:
    """NODE-3: 10T's micro-value overflows in apimachinery's loop: zero, left out of the
    reservation; reservedSystemCPUs still replaces the cpu entry by its count."""
    zero = config(37, kube_reserved={"cpu": "10T"})
    assert "cpu" not in allocatable_reservation(zero)
    assert node_allocatable(MACHINE, zero, {})["cpu"] == 2000
    counted = config(37, kube_reserved={"cpu": "10T"}, reserved_system_cpus=frozenset({1}))
    assert allocatable_reservation(counted)["cpu"] == 1


def test_137_wrapped_to_another_positive_amount_is_refused_wrapped() -> None:
    """NODE-9: 20000000000000 wraps to 1553255926290448 millicores, above 2 CPUs."""
    with pytest.raises(NodeStartupError) as raised:
        check_node_allocatable(MACHINE, config(37, system_reserved={"cpu": "20000000000000"}))
    assert raised.value.kubelet_message == (
        "invalid Node Allocatable configuration. Resource \"cpu\" has a reservation of "
        "{{1553255926290448 -3} {<nil>}  DecimalSI} but capacity of {{2000 -3} {<nil>}  "
        "DecimalSI}. Expected capacity >= reservation.")
    assert "1553255926290448m" in str(raised.value)


@pytest.mark.parametrize("text", ["10000000000000", "20000000000000", "10T"])
def test_138_keeps_an_unroundable_reservation_as_parsed(text: str) -> None:
    """NODE-3, NODE-9 at 1.38: the quantity is kept as parsed and refused at start-up."""
    kept = config(38, kube_reserved={"cpu": text})
    assert allocatable_reservation(kept)["cpu"] == parse_quantity(text)
    with pytest.raises(NodeStartupError) as raised:
        check_node_allocatable(MACHINE, kept)
    assert raised.value.kubelet_message == (
        "invalid Node Allocatable configuration. Resource \"cpu\" has a reservation of "
        f"{summed(go_parse(text, minor=38), 38)} but capacity of "
        "{{2000 -3} {<nil>} { 0} DecimalSI}. Expected capacity >= reservation.")


def test_138_prints_the_cached_string_field() -> None:
    """NODE-9 at 1.38: ``{ 0}`` where 1.37 printed an empty string, for the reservation and
    the capacity alike (kubelet 1.38.0-beta.0's node probe prints exactly this)."""
    with pytest.raises(NodeStartupError) as raised:
        check_node_allocatable(MACHINE, config(38, kube_reserved={"cpu": "100",
                                                                  "memory": "8Gi"}))
    assert raised.value.kubelet_message == (
        "invalid Node Allocatable configuration. Resource \"cpu\" has a reservation of "
        "{{100000 -3} {<nil>} { 0} DecimalSI} but capacity of {{2000 -3} {<nil>} { 0} "
        "DecimalSI}. Expected capacity >= reservation. Resource \"memory\" has a reservation "
        "of {{8694792192 0} {<nil>} { 0} BinarySI} but capacity of {{4294967296 0} {<nil>} "
        "{ 0} BinarySI}. Expected capacity >= reservation.")


# -- QTY-1, QTY-4: what v0.38 parses differently ---------------------------------------------


def test_138_reads_19_digits_as_an_integer() -> None:
    """QTY-1 (NODE-9's texts): v0.38's integer path reads 19 digits, v0.37's 18."""
    text = "1000000000000000000"
    assert summed(go_parse(text, minor=37), 37) is None
    assert summed(go_parse(text, minor=38), 38) == \
        "{{1000000000000000000 0} {<nil>} { 0} DecimalSI}"
    assert go_as_int64(go_parse(text, minor=37)) is None
    assert go_as_int64(go_parse(text, minor=38)) == 10**18
    assert go_parse("123456789012345678", minor=37) == go_parse("123456789012345678", minor=38)
    # v0.38 reads the digits unsigned, so -2^63 itself is an integer too
    assert summed(go_parse("-9223372036854775808m", minor=37), 37) is None
    assert summed(go_parse("-9223372036854775808m", minor=38), 38) == \
        "{{-9223372036854775808 -3} {<nil>} { 0} DecimalSI}"


@pytest.mark.parametrize(("text", "minor"), [
    *((text, minor) for text in ("1.5e-2147483648", ".5e-2147483648", "-0.5e-2147483648")
      for minor in (37, 38)),
    ("1.000000000000000001e-2147483648", 38),
])
def test_a_power_wrapped_around_32_bits_is_refused(text: str, minor: int) -> None:
    """QTY-1, QTY-4: the integer path subtracts the fraction's digits from the exponent in 32
    bits; near -2^31 that wraps to a power near +2^31 (apimachinery v0.37.2 and
    v0.38.0-beta.0 read 1.5e-2147483648 as 15 x 10^2147483647): past 2^63, refused.  (The
    19-digit one reaches the integer path at 1.38 only; 1.37 computes with it for minutes.)"""
    with pytest.raises(InvalidQuantityError, match="64-bit"):
        parse_quantity(text, minor=minor)


@pytest.mark.parametrize("minor", [37, 38])
def test_zero_at_a_wrapped_power_is_zero(minor: int) -> None:
    """QTY-1: no digit to scale: zero at both releases."""
    assert parse_quantity("0.0e-2147483648", minor=minor) == 0


@pytest.mark.parametrize("text", ["1e-2147483648", "1e2147483648", "-1e-2147483648",
                                  "0e-2147483648", "0.e-2147483648", "1e6442450944",
                                  "1.0000000000000000001e-2147483648"])
def test_138_refuses_an_exponent_of_minus_2_to_the_31(text: str) -> None:
    """QTY-1 at 1.38: an exponent of -2^31 (after the truncation to 32 bits) that reaches the
    decimal parser is "unable to parse quantity's suffix" (apimachinery v0.38.0-beta.0);
    numaspec reads a value below a nano for the releases before (where apimachinery v0.37
    computes with it for minutes)."""
    with pytest.raises(InvalidQuantityError) as raised:
        parse_quantity(text, minor=38)
    assert raised.value.kubelet_message == "unable to parse quantity's suffix"
    assert abs(parse_quantity(text)) < Fraction(1, 10**9)


def test_nothing_else_moves_at_the_int64_limits() -> None:
    """QTY-1, QTY-4: the exponents next to -2^31 and the values next to 2^63 read the same."""
    for text in ["1e-2147483647", "1.5e-2147483647", "9223372036854775807",
                 "9223372036854775807.5", "8Ei", "e-2147483648"]:
        try:
            ours: object = parse_quantity(text, minor=37)
        except InvalidQuantityError as exc:
            ours = exc.kubelet_message or str(exc)
        try:
            theirs: object = parse_quantity(text, minor=38)
        except InvalidQuantityError as exc:
            theirs = exc.kubelet_message or str(exc)
        assert ours == theirs, text


# -- the Go node probes ----------------------------------------------------------------------


def create(minor: str, reserved: dict[str, str]) -> dict[str, Any]:
    return {"op": "create", "node": {"kubeletVersion": minor, "machine": WIRE_MACHINE,
                                     "config": {"kubeReserved": reserved}}}


def admit(cpu: str) -> dict[str, Any]:
    return {"op": "admit", "pod": {"uid": "p", "containers": [
        {"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}


def probe_answers(minor: str, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    with node_probe(minor) as probe:
        return [probe.handle(step) for step in steps]


def reference_answers(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    session = NodeSession()
    return [session.answer(json.dumps(step)) for step in steps]


def same_outcome(ours: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """Both refused (a start-up refusal with kubelet's words; an admission without a node
    either way), or the same decision, or both started."""
    if "error" in ours or "error" in theirs:
        if "error" not in ours or "error" not in theirs:
            return False
        kind: str = theirs["error"]["kind"]
        if ours["error"]["kind"] != "node-startup":
            return kind != "startup"
        words: str = ours["error"]["kubelet_message"]
        said: str = theirs["error"]["message"]
        return words == said
    return bool(ours.get("decision", ours) == theirs.get("decision", theirs))


@pytest.mark.go
@pytest.mark.parametrize("minor", ["1.30", "1.37"])
def test_the_probes_agree_on_the_wrap(minor: str) -> None:
    """NODE-3, NODE-9 against kubelet 1.30.14 (refuses all three) and 1.37.2 (refuses
    20000000000000 with the wrapped amount; starts with 10000000000000 and 10T and admits
    what the wrapped or zero reservation leaves room for)."""
    steps = [create(minor, {"cpu": "20000000000000"}),
             create(minor, {"cpu": "10000000000000"}), admit("100"),
             create(minor, {"cpu": "10T"}), admit("2")]
    theirs = probe_answers(minor, steps)
    ours = reference_answers(steps)
    for step, mine, kubelet in zip(steps, ours, theirs, strict=True):
        assert same_outcome(mine, kubelet), (step, mine, kubelet)


@pytest.mark.go
@pytest.mark.parametrize("reserved", [
    {"cpu": "100", "memory": "8Gi"},
    {"cpu": "1.0005", "memory": "1000000000000000000"},
    {"cpu": "9223372036854"},
])
def test_138_probe_prints_what_numaspec_models(reserved: dict[str, str]) -> None:
    """NODE-9 at 1.38 against kubelet 1.38.0-beta.0's node probe: the ``{ 0}`` field and the
    19-digit integer, for reservations that round the same at 1.37 and 1.38."""
    kubelet = probe_answers("1.38", [create("1.38", reserved)])[0]
    with pytest.raises(NodeStartupError) as raised:
        check_node_allocatable(MACHINE, config(38, kube_reserved=reserved))
    assert kubelet["error"]["message"] == raised.value.kubelet_message


@pytest.mark.go
def test_138_probe_keeps_an_unroundable_reservation() -> None:
    """NODE-3 at 1.38 against kubelet 1.38.0-beta.0's node probe (see the xfail reason)."""
    kubelet = probe_answers("1.38", [create("1.38", {"cpu": "10000000000000"})])[0]
    with pytest.raises(NodeStartupError) as raised:
        check_node_allocatable(MACHINE, config(38, kube_reserved={"cpu": "10000000000000"}))
    assert "error" in kubelet
    assert kubelet["error"]["message"] == raised.value.kubelet_message
