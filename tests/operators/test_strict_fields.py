"""KCONF-12: no typo, truncation or misspelling in an imported Kubernetes object changes an
answer without a message naming the file, the object and the field (issue 57).

The operator's cases: ``resource:`` for ``resources:`` (read as BestEffort, admitted, exit 0),
a file cut right after ``resources:``, ``requets:`` ignored, ``limts:`` refused without the file.
Each is now an error or a warning naming where; the mutant that reads past unknown fields
(the importer as it was) is kept below and caught.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from numaspec.errors import InputFileError, NumaspecWarning
from numaspec.node.pods import QOSClass, qos_class
from numaspec.operators.importers import known_fields
from numaspec.operators.importers.kube_objects import read_kubelet_version, read_pods

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
  - name: train
    image: train
    resources:
      requests:
        cpu: "8"
        memory: 16Gi
      limits:
        cpu: "8"
        memory: 16Gi
"""


def pods(text: str) -> list[Any]:
    return read_pods(text=text, source="pod.yaml")


@pytest.mark.parametrize(("typo", "where", "message"), [
    (("    resources:", "    resource:"), "pod.yaml: spec.containers[0].resource",
     "unknown field 'resource' of a Container (did you mean 'resources'?)"),
    (("      requests:", "      requets:"), "pod.yaml: spec.containers[0].resources.requets",
     "unknown field 'requets' of a ResourceRequirements (did you mean 'requests'?)"),
    (("      limits:", "      limts:"), "pod.yaml: spec.containers[0].resources.limts",
     "unknown field 'limts' of a ResourceRequirements (did you mean 'limits'?)"),
    (("      limits:", "      Limits:"), "pod.yaml: spec.containers[0].resources.Limits",
     "(did you mean 'limits'?)"),
    (("  containers:", "  containerss:"), "pod.yaml: spec.containerss",
     "unknown field 'containerss' of a PodSpec (did you mean 'containers'?)"),
    (("  name: trainer", "  nmae: trainer"), "pod.yaml: metadata.nmae",
     "(did you mean 'name'?)"),
    # anything unknown inside resources decides the answer, close to a field or not
    (("      limits:", "      minimums: {}\n      limits:"),
     "pod.yaml: spec.containers[0].resources.minimums",
     "every field of a ResourceRequirements can change numaspec's answer"),
])
def test_a_misspelled_field_numaspec_reads_is_an_error(typo: tuple[str, str], where: str,
                                                       message: str) -> None:
    text = POD.replace(*typo, 1)
    assert text != POD
    with pytest.raises(InputFileError) as caught:
        pods(text)
    assert caught.value.where == where
    assert message in caught.value.message
    assert "no Kubernetes release 1.18\u20131.38 has it" in caught.value.message


def test_a_file_cut_after_resources_is_an_error() -> None:
    cut = POD[:POD.index("    resources:") + len("    resources:\n")]
    with pytest.raises(InputFileError, match=r"resources is empty \(null\).*a file cut short"):
        pods(cut)
    with pytest.raises(InputFileError, match=r"limits is empty \(null\)"):
        pods(POD[:POD.rindex("limits:") + len("limits:\n")])


def test_a_field_no_answer_depends_on_is_a_warning_naming_it() -> None:
    with pytest.warns(NumaspecWarning) as caught:
        (imported,) = pods(POD.replace("    image: train", "    imag: train"))
    assert qos_class(imported.pod) is QOSClass.GUARANTEED
    (warning,) = caught
    assert isinstance(warning.message, NumaspecWarning)
    assert warning.message.where == "pod.yaml: spec.containers[0].imag"
    assert "unknown field 'imag' of a Container (did you mean 'image'?)" in str(warning.message)


def test_a_key_given_twice_is_an_error() -> None:
    twice = POD.replace("    image: train\n", "    image: train\n    name: other\n")
    with pytest.raises(InputFileError, match=r"line 9, column 5: the key 'name' is given twice"):
        pods(twice)
    body = json.dumps({"kind": "Pod", "metadata": {"name": "a"}})
    with pytest.raises(InputFileError, match="the key 'name' is given twice"):
        pods(body.replace('"name": "a"', '"name": "a", "name": "b"'))


def test_a_kubelet_configuration_s_key_given_twice_keeps_the_last(tmp_path: Path) -> None:
    """KCONF-1: kubelet's lenient decoding keeps the last (tests/upstream/kubelet
    test_kubelet_config_go.py checks it against kubelet's loader); numaspec too, and says so."""
    from numaspec.operators.importers.kubelet_config import read_kubelet_config

    path = tmp_path / "kc.yaml"
    path.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                    "topologyManagerPolicy: single-numa-node\n"
                    "topologyManagerPolicy: best-effort\n", "utf-8")
    with pytest.warns(NumaspecWarning, match=r"the key 'topologyManagerPolicy' is given twice "
                      r"\(line 4\): the last one counts"):
        config = read_kubelet_config(path, kubelet_version="1.34")
    assert config.topology_manager_policy == "best-effort"


def test_workloads_lists_and_nodes_are_checked_where_they_hold_the_pod(tmp_path: Path) -> None:
    deployment = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n"
                  "  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: web\n"
                  "        resource: {limits: {cpu: '1', memory: 1Gi}}\n")
    with pytest.raises(InputFileError) as caught:
        pods(deployment)
    assert caught.value.where == "pod.yaml: spec.template.spec.containers[0].resource"
    listed = "apiVersion: v1\nkind: List\nitems:\n- " + POD.replace("\n", "\n  ").rstrip() \
        .replace("    resources:", "    resource:")
    with pytest.raises(InputFileError) as caught:
        pods(listed)
    assert caught.value.where == "pod.yaml: items[0].spec.containers[0].resource"
    node = tmp_path / "node.yaml"
    node.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus:\n  nodeInfo:\n"
                    "    kubeletVersoin: v1.30.14\n", "utf-8")
    with pytest.raises(InputFileError, match="did you mean 'kubeletVersion'"):
        read_kubelet_version(node)


def test_kubectl_s_own_output_reads_without_a_message() -> None:
    """Every field kubectl prints is known: the fixtures (kubectl's output of pods, workloads
    and nodes) read with no warning at all."""
    from numaspec_tools import FIXTURES

    with warnings.catch_warnings():
        warnings.simplefilter("error", NumaspecWarning)
        for path in sorted((FIXTURES / "kube").glob("*.yaml")) + sorted(
                (FIXTURES / "operator").glob("*/*pod*.yaml")):
            if "kubelet-config" in path.name or "node" in path.name or "typo" in path.name:
                continue
            read_pods(path)
        read_kubelet_version(FIXTURES / "kube" / "node.yaml")


# --- the mutant: the importer as it was, reading past every unknown field --------------------


@pytest.fixture
def lenient(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("numaspec.operators.importers.kube_objects.check_object",
                        lambda *_args, **_kw: None)


@pytest.mark.usefixtures("lenient")
def test_the_lenient_mutant_answers_for_another_pod() -> None:
    """Without KCONF-12 ``resource:`` reads as a BestEffort pod and no message is given: the
    tests above would fail on this importer."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (imported,) = pods(POD.replace("    resources:", "    resource:"))
    assert qos_class(imported.pod) is QOSClass.BEST_EFFORT


def test_the_field_table_covers_every_pinned_release() -> None:
    data = known_fields._data()
    assert data["releases"][0] == "v1.18.19"
    assert data["releases"][-1].startswith("v1.38")
    # fields added late and removed ones are both known: a union over the releases
    container = data["types"]["core.v1.Container"]
    assert {"resources", "restartPolicy", "resizePolicy"} <= set(container)
    assert "topologyManagerPolicyOptions" in data["KubeletConfiguration"]
    assert set(known_fields.READ) <= set(data["types"])


@pytest.mark.go
def test_the_field_table_is_current() -> None:
    """spec/data/kube-fields.json is what the pinned releases' own files say (the module cache;
    a release missing from it is downloaded)."""
    import shutil

    from numaspec_tools import regenerate

    if shutil.which("go") is None:
        pytest.skip("Go is not installed: the field table is generated from the Go module "
                    "cache (numaspec-dev regenerate --only kube-fields)")
    assert regenerate.main(["--only", "kube-fields", "--check"]) == 0
