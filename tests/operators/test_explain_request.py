"""``numaspec explain --request CONTAINER.RESOURCE=AMOUNT`` (OPS-16): what-if on the pod, alone
or with ``--set``, on the two-socket fixtures."""

from __future__ import annotations

import pytest

from numaspec_tools.testing.operator_cli import OPERATOR, run, run_json, two_socket_args

GPU_POD = OPERATOR / "two-socket" / "gpu-pod.yaml"


def test_fewer_cpus_and_less_memory_would_fit(capsys: pytest.CaptureFixture[str]) -> None:
    """Refused as asked (8 CPUs, 16Gi beside the GPU on node 2): with 6 CPUs and 12Gi it
    fits on node 2, and the pod stays Guaranteed (its limits follow)."""
    status, answer = run_json(two_socket_args(GPU_POD, "--request", "train.cpu=6",
                                              "--request", "train.memory=12Gi"), capsys)
    assert status == 0
    assert answer["kind"] == "what-if"
    assert answer["changes"] == ["train.cpu=6 (requests and limits, was 8)",
                                 "train.memory=12Gi (requests and limits, was 16Gi)"]
    assert answer["before"]["decision"]["admitted"] is False
    after = answer["after"]
    assert after["decision"]["admitted"] is True
    assert after["pod"]["qos"] == "Guaranteed"
    assert "admitted: False -> True" in answer["differences"]


def test_a_request_with_a_configuration_change(capsys: pytest.CaptureFixture[str]) -> None:
    status, answer = run_json(two_socket_args(GPU_POD, "--request", "train.cpu=6",
                                              "--set", "topologyManagerPolicy=best-effort"),
                              capsys)
    assert answer["changes"] == ["topologyManagerPolicy=best-effort",
                                 "train.cpu=6 (requests and limits, was 8)"]
    assert status == 0
    assert answer["after"]["decision"]["admitted"] is True


@pytest.mark.parametrize(("request_text", "error"), [
    ("traincpu=1", "invalid-field: --request: 'traincpu=1' is not CONTAINER.RESOURCE=AMOUNT"),
    ("train.cpu", "invalid-field: --request: 'train.cpu' is not CONTAINER.RESOURCE=AMOUNT"),
    ("worker.cpu=1", "invalid-field: --request: the pod has no container 'worker' (it has: "
                     "train)"),
    ("train.cpu=-1", "invalid-field: --request train.cpu: '-1' is negative"),
    ("train.cpu=abc", "invalid-quantity: --request train.cpu: 'abc'"),
])
def test_a_bad_request_is_one_line_naming_it(capsys: pytest.CaptureFixture[str],
                                             request_text: str, error: str) -> None:
    status, out, err = run(two_socket_args(GPU_POD, "--request", request_text), capsys)
    assert (status, out) == (2, "")
    assert err.startswith(f"numaspec explain: {error}")
    assert len(err.splitlines()) == 1


def test_largest_is_a_separate_question(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(two_socket_args(GPU_POD, "--request", "train.cpu=6",
                                         "--largest", "cpu"), capsys)
    assert status == 2
    assert "separate questions" in err
