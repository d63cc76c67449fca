"""DRA-8: which allocator a scheduler runs (its release, its feature gates, a forced variant),
and how that decides the order of pools and slices (DRA-2): the reference's choice, the
judge of an answer that names its variant, the vectors of every order-sensitive shape per
variant, and a mutant that answers in listed order whatever the variant."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from numaspec.conformance.cases.allocations import allocation_differences
from numaspec.conformance.cases.vectors import load_vectors
from numaspec.dra.variants import (
    FEATURES,
    VARIANTS,
    choose_variant,
    features_from_gates,
    scheduler_features,
    supported,
)
from numaspec.errors import InvalidFieldError, NotModelledError
from numaspec.protocols.adapter_protocol import reference_result
from numaspec.topology.gates import gate_enabled
from numaspec.topology.versions import KubeletVersion
from numaspec_tools.mutants.allocate_mutants import MutantAllocator


@pytest.mark.parametrize(("minor", "variant"), [
    (33, "single"), (34, "experimental"), (35, "incubating"), (36, "incubating"),
    (37, "incubating")])
def test_a_scheduler_with_default_gates_runs(minor: int, variant: str) -> None:
    """DRA-8's table: 1.34's DRAResourceClaimDeviceStatus (beta, on) lifts it to
    experimental; from 1.36 DeviceBindingAndStatus and ConsumableCapacity to incubating."""
    assert choose_variant(minor, scheduler_features(minor)) == variant


def test_gates_override_the_defaults() -> None:
    """DRA-8: the scheduler's --feature-gates: both binding gates are needed for
    DeviceBindingAndStatus; with it and ConsumableCapacity off, 1.37 runs stable."""
    off = {"DRADeviceBindingConditions": False, "DRAConsumableCapacity": False}
    assert features_from_gates(37, off) == frozenset(
        {"AdminAccess", "PrioritizedList", "PartitionableDevices", "DeviceTaints"})
    assert choose_variant(37, features_from_gates(37, off)) == "stable"
    # the alpha list-typed attributes on: only experimental supports them
    listed = features_from_gates(37, {"DRAListTypeAttributes": True})
    assert choose_variant(37, listed) == "experimental"
    # 1.36's scheduler reads lists in CEL with the gate but never asks its allocator for
    # them: a state no case can say (DRA-18)
    with pytest.raises(NotModelledError):
        features_from_gates(36, {"DRAListTypeAttributes": True})


def test_a_gate_the_scheduler_refuses_is_named() -> None:
    with pytest.raises(InvalidFieldError) as raised:
        features_from_gates(37, {"DRAPrioritisedList": True})
    assert raised.value.where == "feature_gates.DRAPrioritisedList"
    with pytest.raises(InvalidFieldError) as raised:
        features_from_gates(37, {"DRAAdminAccess": False})  # GA and locked at 1.37
    assert "locked" in raised.value.message


def test_all_alpha_and_all_beta_reach_unset_gates() -> None:
    """VER-2: AllAlpha (AllBeta) sets every alpha (beta) gate the map does not set."""
    v37 = KubeletVersion(37)
    assert gate_enabled({"AllAlpha": True}, v37, "DRAListTypeAttributes")
    assert not gate_enabled({"AllAlpha": True, "DRAListTypeAttributes": False}, v37,
                            "DRAListTypeAttributes")
    assert not gate_enabled({"AllBeta": False}, v37, "DRAConsumableCapacity")
    assert not gate_enabled({}, v37, "NoSuchGate")


def test_every_variant_supports_a_subset_of_the_next() -> None:
    """DRA-8: the variants are nested (stable within incubating within experimental), and
    experimental supports every feature of its release."""
    for minor in range(34, 38):
        sets = [supported(minor, v) for v in VARIANTS]
        assert sets[0] <= sets[1] <= sets[2] == FEATURES[minor]


@pytest.mark.parametrize(("minor", "variant", "features", "where"), [
    (33, "stable", (), "variant"),
    (34, "incubating", (), "variant"),
    (37, "stable", ("ConsumableCapacity",), "variant"),
    (37, "newest", (), "variant"),
])
def test_a_variant_that_cannot_answer_is_refused(minor: int, variant: str,
                                                 features: tuple[str, ...], where: str) -> None:
    with pytest.raises(InvalidFieldError) as raised:
        choose_variant(minor, frozenset(features), variant)
    assert raised.value.where == where


def _vector(vector_id: str) -> Any:
    return next(v for v in load_vectors() if v.id == vector_id)


def test_a_forced_variant_is_answered_by_it() -> None:
    case = copy.deepcopy(_vector("dra-variant-pools-incubating").case)
    answer = reference_result("allocate", case)
    assert answer["variant"] == "incubating"
    assert answer["claims"][0]["devices"][0]["device"] == "gpu-0"


def test_an_answer_is_judged_as_the_variant_it_names() -> None:
    """DRA-8: at 1.37 a case of no features chooses stable (pool b first-listed); an answer
    that says incubating may pick pool a's gpu-0 (a scheduler run with EnableAllocators),
    one that says stable may pick it too (stable's order is not defined), and one that says
    nothing is judged as stable."""
    vector = _vector("dra-variant-pools-stable")
    case = {k: v for k, v in vector.case.items() if k != "variant"}
    expected = reference_result("allocate", case)
    sorted_pick = {**expected, "claims": [{"devices": [
        {**expected["claims"][0]["devices"][0], "pool": "a", "device": "gpu-0"}]}]}
    for said in ("incubating", "stable"):
        assert allocation_differences(case, expected, {**sorted_pick, "variant": said}) == []
    plain = {k: v for k, v in sorted_pick.items() if k != "variant"}
    assert allocation_differences(case, expected, plain) == []
    # a forced case is judged as the forced variant, and only that one may answer it
    forced = _vector("dra-variant-pools-incubating").case
    want = reference_result("allocate", forced)
    first = {**want, "claims": [{"devices": [
        {**want["claims"][0]["devices"][0], "pool": "b", "device": "gpu-2"}]}]}
    assert allocation_differences(forced, want, first) != []
    assert allocation_differences(forced, want, {**want, "variant": "stable"}) != []


def test_an_answer_naming_a_variant_that_lacks_a_feature_is_wrong() -> None:
    case = copy.deepcopy(_vector("dra-scheduler-defaults-pools-1.37").case)
    expected = reference_result("allocate", case)
    assert expected["variant"] == "incubating"
    differences = allocation_differences(case, expected, {**expected, "variant": "stable"})
    assert differences
    assert "does not support" in differences[0]


def test_the_listed_order_mutant_fails_the_variant_vectors() -> None:
    """The mutant fixture of DRA-8: answering in listed order whatever the variant is caught
    by the sorted variants' vectors from 1.36, and passes where the order is not defined."""
    mutant = MutantAllocator("first_listed")
    caught: list[str] = []
    passed: list[str] = []
    for vector in load_vectors():
        if not vector.id.startswith(("dra-variant-", "dra-scheduler-defaults-")):
            continue
        case = vector.case
        expected = reference_result("allocate", case)
        problems = allocation_differences(case, expected, mutant.allocate(case))
        (caught if problems else passed).append(vector.id)
    assert set(caught) == {"dra-variant-pools-incubating", "dra-variant-pools-experimental",
                           "dra-variant-slices-incubating", "dra-variant-slices-experimental",
                           "dra-variant-drivers-incubating",
                           "dra-variant-drivers-experimental",
                           "dra-scheduler-defaults-pools-1.37",
                           "dra-scheduler-defaults-slices-1.36"}
    assert "dra-variant-pools-stable" in passed


@pytest.mark.parametrize(("mutation", "prefix"), [
    ("ignores_taints", "dra-taint-"), ("admin_as_any", "dra-admin-access-"),
    ("lists_as_scalars", "dra-list-"), ("ignores_counters", "dra-counters-"),
    ("allocated_consume_nothing", "dra-counters-"), ("shares_ignored", "dra-capacity-"),
    ("never_shared", "dra-capacity-"), ("ignores_distinct", "dra-distinct-"),
    ("ignores_quantities", "dra-cel-")])
def test_the_taint_and_admin_mutants_fail_their_vectors(mutation: str, prefix: str) -> None:
    """The mutant fixtures of DRA-16 to DRA-22: each is caught by the vectors of its rule."""
    mutant = MutantAllocator(mutation)
    caught = []
    for vector in load_vectors():
        if vector.id.startswith(prefix):
            expected = reference_result("allocate", vector.case)
            if allocation_differences(vector.case, expected, mutant.allocate(vector.case)):
                caught.append(vector.id)
    assert caught, f"{mutation} passes every {prefix}* vector"
