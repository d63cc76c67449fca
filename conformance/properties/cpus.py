"""The CPU Manager's allocator alone (spec chapter ``cpu.md``, CPU-21), for allocators outside
kubelet such as a DRA CPU driver: random machines (:mod:`cpus_cases`), and what every answer
must be.

* **P-CPUS** (equivalence): the implementation takes the CPUs the static policy's allocator
  takes at the case's release, or agrees that the request cannot be met (CPU-10, CPU-12,
  CPU-13, CPU-19, CPU-20, CPU-21).
* **P-CPUS-SOUND** (invariant, judged without the reference's choice): whatever CPUs an
  allocator takes, it takes as many as asked, each one it was given, none twice; and it finds
  them whenever there are enough (CPU-21).  An allocator that chooses otherwise than kubelet
  by design is still held to this.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from hypothesis import event, given, note, reject
from hypothesis import strategies as st

from numaspec.conformance.cases.divergences import known
from numaspec.conformance.cases.judges import compare
from numaspec.conformance.implementations.claims import claims_of
from numaspec.conformance.properties.cpus_cases import cpus_cases
from numaspec.conformance.properties.registry import register

__all__ = ["CPUsImplementation", "soundness_problems"]


class CPUsImplementation(Protocol):
    name: str

    def cpus(self, case: Any) -> Any: ...


def _releases(impl: object) -> tuple[str, ...]:
    """The node releases the implementation declares (the reference: every modelled one)."""
    from numaspec.node.nodeconfig import NODE_VERSIONS

    declared = tuple(getattr(impl, "node_kubelet_versions", ()) or ())
    return declared or tuple(f"1.{m}" for m in NODE_VERSIONS)


def _claimed_case(impl: CPUsImplementation, data: st.DataObject
                  ) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A random case inside the implementation's claims, and the reference's answer; None
    for a case the reference refuses (options kubelet would not start with)."""
    from numaspec.protocols.adapter_protocol import reference_result

    claims = claims_of(impl)
    case = data.draw(cpus_cases(_releases(impl), claims.cpus.options))
    if claims.outside("cpus", case, None, ()) is not None:
        reject()
    expected = reference_result("cpus", case)
    if "error" in expected:
        event("refused by the reference")
        return None
    note(f"case: {json.dumps(case, separators=(',', ':'))}")
    return case, expected


@register("P-CPUS", rules=["CPU-10", "CPU-12", "CPU-13", "CPU-19", "CPU-20", "CPU-21"],
          level="equivalence", requires="cpus", op="cpus")
@given(data=st.data())
def cpus_match_reference(impl: CPUsImplementation, data: st.DataObject) -> None:
    """The allocator takes the CPUs the static policy's allocator takes."""
    drawn = _claimed_case(impl, data)
    if drawn is None:
        return
    case, expected = drawn
    note(f"reference: {json.dumps(expected, separators=(',', ':'))}")
    actual = impl.cpus(case)
    event("unsatisfiable" if "unsatisfiable" in expected else "taken")
    differences = compare("cpus", case, expected, actual)
    if differences and known("cpus", case, expected, actual) is not None:
        reject()
    assert not differences, differences[0]


def soundness_problems(case: dict[str, Any], answer: Any) -> list[str]:
    """CPU-21, judged from the case alone: what is wrong with a ``cpus`` answer."""
    if not isinstance(answer, dict):
        return [f"not an answer: {answer!r}"]
    enough = len(case["available"]) >= case["count"]
    if "unsatisfiable" in answer:
        return [f"unsatisfiable with {len(case['available'])} CPUs available for "
                f"{case['count']}"] if enough else []
    taken = answer.get("cpus")
    if not isinstance(taken, list):
        return [f"no cpus in {answer!r}"]
    problems = []
    if len(taken) != len(set(taken)):
        problems.append(f"a CPU taken twice: {taken}")
    outside = sorted(set(taken) - set(case["available"]))
    if outside:
        problems.append(f"CPUs {outside} were not available")
    if len(taken) != case["count"]:
        problems.append(f"{len(taken)} CPUs taken for {case['count']}")
    return problems


@register("P-CPUS-SOUND", rules=["CPU-21"], level="invariant", requires="cpus", op="cpus")
@given(data=st.data())
def cpus_are_sound(impl: CPUsImplementation, data: st.DataObject) -> None:
    """Every CPU taken was available, none twice, as many as asked."""
    drawn = _claimed_case(impl, data)
    if drawn is None:
        return
    case, expected = drawn
    actual = impl.cpus(case)
    problems = soundness_problems(case, actual)
    if problems and known("cpus", case, expected, actual) is not None:
        reject()
    assert not problems, problems[0]
