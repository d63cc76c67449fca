"""KCONF-1..KCONF-8: the node's configuration (KubeletConfiguration, configz) and pods
(kubectl's YAML and JSON) read into the node model (numaspec.operators.importers.kubelet_config,
numaspec.operators.importers.kube_objects).  Fixtures in tests/fixtures/kube/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from numaspec.errors import (
    InputFileError,
    InvalidFieldError,
    InvalidQuantityError,
    LimitExceededError,
    NotModelledError,
    NumaspecError,
    NumaspecWarning,
    UnsupportedVersionError,
)
from numaspec.node.admission import Node
from numaspec.node.nodeconfig import NodeConfig
from numaspec.node.pods import Container, Pod, QOSClass, qos_class
from numaspec.operators.importers.kube_objects import ImportedPod, read_kubelet_version, read_pods
from numaspec.operators.importers.kubelet_config import (
    node_config_from_mapping,
    read_kubelet_config,
)
from numaspec.protocols.node_protocol import decode_machine
from numaspec.topology.versions import KubeletVersion
from numaspec_tools import FIXTURES

FIXTURES = FIXTURES / "kube"
CONFIG = FIXTURES / "kubelet-config.yaml"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def config_of(body: dict[str, Any], version: str = "1.30") -> NodeConfig:
    raw = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", **body}
    return node_config_from_mapping(raw, source="kc.yaml", kubelet_version=version)


# --- KCONF-1: files ---------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "message"), [
    ("kind: [unclosed", "not YAML at line 2"),
    ("? [1]\n: 2\n", "not YAML"),
    ('{"kind": ', "not JSON"),
    ("a: &x [1]\nb: *x\n", "aliases"),
    ("1: 2\n", "not a string"),
])
def test_unreadable_files_are_input_file_errors(tmp_path: Path, text: str, message: str
                                                ) -> None:
    """KCONF-1: malformed YAML or JSON, aliases, non-string keys: invalid-input-file naming
    the file."""
    path = write(tmp_path, "bad.yaml", text)
    for read in (lambda: read_pods(path), lambda: read_kubelet_config(path,
                                                                       kubelet_version="1.30")):
        with pytest.raises(InputFileError, match=message) as info:
            read()
        assert info.value.kind == "invalid-input-file"
        assert info.value.where.startswith(str(path))


def test_missing_and_binary_files(tmp_path: Path) -> None:
    """KCONF-1: a file that cannot be read, or is not UTF-8 text."""
    with pytest.raises(InputFileError, match="missing file") as info:
        read_pods(tmp_path / "absent.yaml")
    assert info.value.where == str(tmp_path / "absent.yaml")
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00kind")
    with pytest.raises(InputFileError, match="UTF-8"):
        read_pods(binary)


def test_a_billion_laughs_is_refused_quickly(tmp_path: Path) -> None:
    """KCONF-1: nested aliases never expand."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    path = write(tmp_path, "lol.yaml", "\n".join(lines) + "\n")
    with pytest.raises(InputFileError, match="aliases"):
        read_pods(path)


# --- KCONF-2..KCONF-4: the kubelet configuration ----------------------------------------------


def test_the_fixture_config_is_read_with_kubelet_defaults() -> None:
    """KCONF-2, KCONF-3: the file's fields, kubelet's names."""
    config = read_kubelet_config(CONFIG, kubelet_version="v1.30.14")
    assert config == NodeConfig(
        kubelet_version=KubeletVersion(30), cpu_manager_policy="static",
        cpu_manager_policy_options={"full-pcpus-only": "true"},
        reserved_system_cpus=frozenset({0, 1}),
        kube_reserved={"cpu": "500m", "memory": "512Mi"}, system_reserved={"memory": "412Mi"},
        eviction_hard={"memory.available": "100Mi", "nodefs.available": "10%"},
        memory_manager_policy="Static", reserved_memory=((0, {"memory": "1Gi"}),),
        topology_manager_policy="single-numa-node", topology_manager_scope="pod",
        feature_gates={"CPUManagerPolicyAlphaOptions": True}, max_pods=64)


def test_configz_of_the_same_node_gives_the_same_reservations() -> None:
    """KCONF-2: configz's JSON (kubelet has already moved the cpu reservation of
    reservedSystemCPUs into systemReserved there) reads to the same node."""
    from_file = read_kubelet_config(CONFIG, kubelet_version="1.30")
    from_configz = read_kubelet_config(FIXTURES / "configz.json", kubelet_version="1.30")
    assert from_configz.allocatable_reservation() == from_file.allocatable_reservation()
    assert from_configz.reserved_cpu_count() == from_file.reserved_cpu_count() == 2
    for field in ("cpu_manager_policy", "memory_manager_policy", "topology_manager_policy",
                  "topology_manager_scope", "reserved_memory", "feature_gates", "max_pods",
                  "eviction_hard", "reserved_system_cpus", "cpu_manager_policy_options"):
        assert getattr(from_configz, field) == getattr(from_file, field), field


def test_the_imported_node_starts_and_admits_the_imported_pods() -> None:
    """KCONF-2, KCONF-5: a node made of the imported config starts; the Guaranteed pods of
    the fixture are admitted, aligned to one NUMA node."""
    machine = decode_machine({"numaNodes": [
        {"id": n, "memory": "32Gi", "hugepages": {"hugepages-1Gi": 4},
         "cores": [{"socket": 0, "threads": [2 * c, 2 * c + 1]} for c in range(4 * n, 4 * n + 4)]}
        for n in range(2)]})  # 16 CPUs, two threads a core, 8 on each NUMA node
    node = Node(machine, read_kubelet_config(CONFIG, kubelet_version="1.30"))
    pods = read_pods(FIXTURES / "pods.yaml")
    decisions = [node.admit(p.pod) for p in pods]
    assert [d.admitted for d in decisions] == [True, True, True]
    # full-pcpus-only (from the file) refuses a container of an odd number of CPUs
    odd = read_pods(text="kind: Pod\nmetadata: {name: odd}\nspec:\n  containers:\n  - name: c\n"
                         "    resources: {limits: {cpu: 1, memory: 1Gi}}\n", source="odd")
    assert node.admit(odd[0].pod).reason == "SMTAlignmentError"


def test_defaults_of_an_empty_configuration() -> None:
    """KCONF-3: every modelled field at kubelet's default."""
    config = config_of({})
    assert config == NodeConfig(kubelet_version=KubeletVersion(30), eviction_hard={
        "memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%",
        "imagefs.available": "15%", "imagefs.inodesFree": "5%"})
    assert config.max_pods == 110
    assert config_of({"maxPods": 0, "cpuManagerPolicy": "", "evictionHard": None}) == config


def test_eviction_hard_is_all_or_nothing() -> None:
    """KCONF-3: an evictionHard without memory.available reserves no memory for eviction;
    from 1.33 mergeDefaultEvictionSettings fills what it lacks (before 1.33 the field does
    not exist and is ignored)."""
    body = {"evictionHard": {"nodefs.available": "5%"}}
    assert config_of(body).allocatable_reservation() == {}
    merged = {**body, "mergeDefaultEvictionSettings": True}
    assert config_of(merged, "1.32").allocatable_reservation() == {}
    assert config_of(merged, "1.33").allocatable_reservation() == {"memory": 100 * 2**20}
    assert config_of(merged, "1.33").eviction_hard == {
        "memory.available": "100Mi", "nodefs.available": "5%", "nodefs.inodesFree": "5%",
        "imagefs.available": "15%", "imagefs.inodesFree": "5%"}
    assert config_of({"evictionHard": {}}).allocatable_reservation() == {}


@pytest.mark.parametrize(("body", "where", "error"), [
    ({"evictionHard": {"memory.available": "5%"}}, "kc.yaml: evictionHard.memory.available",
     NotModelledError),
    ({"podsPerCore": 10}, "kc.yaml: podsPerCore", NotModelledError),
    ({"kubeReserved": {"cpu": 1}}, "kc.yaml: kubeReserved.cpu", InputFileError),
    ({"featureGates": {"X": "true"}}, "kc.yaml: featureGates.X", InputFileError),
    ({"maxPods": "110"}, "kc.yaml: maxPods", InputFileError),
    ({"maxPods": True}, "kc.yaml: maxPods", InputFileError),
    ({"maxPods": 1 << 40}, "kc.yaml: maxPods", InputFileError),
    ({"cpuManagerPolicy": ["static"]}, "kc.yaml: cpuManagerPolicy", InputFileError),
    ({"reservedMemory": {"numaNode": 0}}, "kc.yaml: reservedMemory", InputFileError),
    ({"reservedMemory": [{"limits": {"memory": "1Gi"}}]}, "kc.yaml: reservedMemory[0].numaNode",
     InputFileError),
    ({"reservedMemory": [{"numaNode": 0, "limits": {"memory": 1}}]},
     "kc.yaml: reservedMemory[0].limits.memory", InputFileError),
    ({"reservedSystemCPUs": "0-"}, "kc.yaml: reservedSystemCPUs", InvalidFieldError),
    ({"reservedSystemCPUs": "0-99999"}, "kc.yaml: reservedSystemCPUs", LimitExceededError),
])
def test_bad_fields_name_the_file_and_field(body: dict[str, Any], where: str,
                                            error: type[NumaspecError]) -> None:
    """KCONF-3: wrong types are invalid-input-file, what numaspec does not model is
    not-modelled; both name the file and the field."""
    with pytest.raises(error) as info:
        config_of(body)
    assert type(info.value) is error
    assert info.value.where == where


def test_unknown_fields_are_named_and_change_nothing() -> None:
    """KCONF-3, KCONF-12: fields numaspec does not read change nothing; a field no kubelet
    has is a warning naming it (kubelet ignores it too), and a near miss names the field."""
    with pytest.warns(NumaspecWarning) as caught:
        assert config_of({"cpuManagerReconcilePeriod": "5s", "enforceNodeAllocatable": ["pods"],
                          "somethingNew": {"x": 1}, "topologyManagerPolicyy": "restricted"}) \
            == config_of({})
    said = sorted(str(w.message) for w in caught)
    assert said[0].startswith("kc.yaml: somethingNew: unknown field 'somethingNew' of a "
                              "KubeletConfiguration: no kubelet 1.18\u20131.38 has it")
    assert said[1].startswith("kc.yaml: topologyManagerPolicyy: unknown field "
                              "'topologyManagerPolicyy' of a KubeletConfiguration (did you "
                              "mean 'topologyManagerPolicy'?)")


@pytest.mark.parametrize(("raw", "where"), [
    ({"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeProxyConfiguration"},
     "kc.yaml: kind"),
    ({"apiVersion": "kubelet.config.k8s.io/v1alpha1", "kind": "KubeletConfiguration"},
     "kc.yaml: apiVersion"),
    ({"cpuManagerPolicy": "static"}, "kc.yaml: kind"),
    ({"kubeletconfig": {"kind": "Pod", "apiVersion": "v1"}}, "kc.yaml: kubeletconfig.kind"),
    ({"kubeletconfig": []}, "kc.yaml: kubeletconfig"),
])
def test_other_kinds_are_refused(raw: dict[str, Any], where: str) -> None:
    """KCONF-2: only a v1beta1 KubeletConfiguration, or a configz answer."""
    with pytest.raises(InputFileError) as info:
        node_config_from_mapping(raw, source="kc.yaml", kubelet_version="1.30")
    assert info.value.where == where


def test_configz_with_type_meta_is_read() -> None:
    """KCONF-2: newer releases' configz answers carry kind and apiVersion."""
    raw = {"kubeletconfig": {"kind": "KubeletConfiguration",
                             "apiVersion": "kubelet.config.k8s.io/v1beta1", "maxPods": 10}}
    assert node_config_from_mapping(raw, source="c.json", kubelet_version="1.37").max_pods == 10


def test_the_version_is_never_guessed() -> None:
    """KCONF-4: without a version, an error; an unmodelled one, the node model's error."""
    with pytest.raises(InputFileError, match="kubelet version") as info:
        read_kubelet_config(CONFIG)
    assert info.value.where == str(CONFIG)
    with pytest.raises(NotModelledError) as unmodelled:
        read_kubelet_config(CONFIG, kubelet_version="1.28")
    assert unmodelled.value.where == f"{CONFIG}: kubeletVersion"
    with pytest.raises(UnsupportedVersionError):
        read_kubelet_config(CONFIG, kubelet_version="2.0")


def test_the_version_from_a_node_object(tmp_path: Path) -> None:
    """KCONF-4: status.nodeInfo.kubeletVersion of a Node, YAML or JSON, alone or in a List."""
    assert read_kubelet_version(FIXTURES / "node.yaml") == KubeletVersion(30)
    node = yaml.safe_load((FIXTURES / "node.yaml").read_text())
    as_json = write(tmp_path, "node.json", json.dumps({"kind": "List", "items": [node]}))
    assert read_kubelet_version(as_json) == KubeletVersion(30)
    two = write(tmp_path, "two.json", json.dumps({"kind": "List", "items": [node, node]}))
    with pytest.raises(InputFileError, match="2 Node objects"):
        read_kubelet_version(two)
    del node["status"]["nodeInfo"]["kubeletVersion"]
    bare = write(tmp_path, "bare.json", json.dumps(node))
    with pytest.raises(InputFileError) as info:
        read_kubelet_version(bare)
    assert info.value.where == f"{bare}: status.nodeInfo.kubeletVersion"
    with pytest.raises(InputFileError, match="Node object"):
        read_kubelet_version(CONFIG)


# --- KCONF-5..KCONF-8: pods -------------------------------------------------------------------


def test_a_pod_list_as_kubectl_prints_it() -> None:
    """KCONF-5, KCONF-6, KCONF-7: uids, namespaces, phases, container ids, init containers
    and sidecars."""
    pods = read_pods(FIXTURES / "pods.yaml")
    assert [p.source for p in pods] == [f"{FIXTURES / 'pods.yaml'}: items[{i}]"
                                        for i in range(3)]
    pricer, feed, agent = pods
    assert pricer.pod.uid == "5f1c2a7e-0b5d-4a55-9d8e-3c0f6a1b2c01"
    assert (pricer.namespace, pricer.phase, pricer.node_name) == ("trading", "Running",
                                                                  "worker-1")
    assert pricer.pod.labels == {"app": "pricer"}
    assert qos_class(pricer.pod) is QOSClass.GUARANTEED
    assert pricer.container_ids["pricer"].startswith("containerd://a3f1")
    assert pricer.runtime_ids["pricer"].startswith("a3f1")
    assert [c.name for c in feed.pod.init_containers] == ["fetch-schema", "log-shipper"]
    assert [c.restartable for c in feed.pod.init_containers] == [False, True]
    assert set(feed.container_ids) == {"fetch-schema", "log-shipper", "feed"}
    assert feed.pod.init_containers[0].requests == Container.of(
        "x", limits={"cpu": "2", "memory": "1Gi"}).requests  # KCONF-7: requests from limits
    assert (agent.phase, agent.container_ids) == ("Pending", {})
    assert qos_class(agent.pod) is QOSClass.BURSTABLE


def test_json_gives_the_same_pods(tmp_path: Path) -> None:
    """KCONF-6: kubectl's -o json."""
    loaded = yaml.safe_load((FIXTURES / "pods.yaml").read_text())
    path = write(tmp_path, "pods.json", json.dumps(loaded, indent=2))
    assert [p.pod for p in read_pods(path)] == [p.pod for p in read_pods(FIXTURES / "pods.yaml")]


def test_one_pod_multi_documents_and_workloads() -> None:
    """KCONF-5, KCONF-6: a bare Pod (no uid: namespace/name), several documents (empty ones
    skipped), a CronJob's and a Deployment's template."""
    (pod,) = read_pods(FIXTURES / "pod.yaml")
    assert (pod.pod.uid, pod.pod.name, pod.phase, pod.node_name) == (
        "trading/risk-engine", "risk-engine", None, None)
    assert pod.pod.containers[0].requests["cpu"] == 6  # KCONF-7: a bare number
    multi = read_pods(FIXTURES / "multi.yaml")
    assert [(p.pod.uid, p.source.rsplit(": ", 1)[1]) for p in multi] == [
        ("default/first", "document 1"), ("batch/second", "document 3"),
        ("batch/nightly", "document 4")]
    (deployment,) = read_pods(FIXTURES / "deployment.yaml")
    assert (deployment.pod.uid, deployment.pod.labels) == ("trading/quoter", {"app": "quoter"})


def test_text_with_a_source_name() -> None:
    """KCONF-5: text instead of a file, named by ``source``."""
    (pod,) = read_pods(text="kind: Pod\nmetadata: {name: p, uid: u}\nspec:\n  containers:\n"
                            "  - name: c\n", source="stdin")
    assert (pod.pod.uid, pod.source) == ("u", "stdin")


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "u"},
       "spec": {"containers": [{"name": "a"}, {"name": "b", "resources": {
           "limits": {"cpu": "1"}}}]}}


def _with(path: str, value: object) -> dict[str, Any]:
    pod: dict[str, Any] = json.loads(json.dumps(POD))
    target = pod
    keys = path.split(".")
    for key in keys[:-1]:
        target = target[int(key)] if isinstance(target, list) else target.setdefault(key, {})
    if isinstance(target, list):
        target[int(keys[-1])] = value
    else:
        target[keys[-1]] = value
    return pod


@pytest.mark.parametrize(("pod", "field", "error"), [
    (_with("spec.containers.1.resources.limits.cpu", "-1"),
     "spec.containers[1].resources.limits.cpu", InvalidQuantityError),
    (_with("spec.containers.1.resources.limits.cpu", "1.5.5"),
     "spec.containers[1].resources.limits.cpu", InvalidQuantityError),
    (_with("spec.containers.1.resources.limits.cpu", True),
     "spec.containers[1].resources.limits.cpu", InputFileError),
    (_with("spec.containers.1.resources.limits", ["cpu"]),
     "spec.containers[1].resources.limits", InputFileError),
    (_with("spec.containers", []), "spec.containers", InputFileError),
    (_with("spec.containers.0", "a"), "spec.containers[0]", InputFileError),
    (_with("spec.containers.0.name", 3), "spec.containers[0].name", InputFileError),
    (_with("spec.containers.1.name", "a"), "spec", InputFileError),
    (_with("spec.overhead", {"cpu": "250m"}), "spec.overhead", NotModelledError),
    (_with("spec.resources", {"limits": {"cpu": "-2"}}), "spec.resources.limits.cpu",
     InvalidQuantityError),
    (_with("metadata.labels", {"a": 1}), "metadata.labels.a", InputFileError),
    (_with("kind", "Service"), "kind", InputFileError),
    (_with("kind", None), "kind", InputFileError),
    (_with("spec.containers", [{"name": str(i)} for i in range(300)]), "spec",
     LimitExceededError),
])
def test_bad_pods_name_the_file_and_the_field(tmp_path: Path, pod: dict[str, Any], field: str,
                                              error: type[NumaspecError]) -> None:
    """KCONF-7, KCONF-8: negative or malformed quantities (pod-level ones too), a pod without
    containers, what is not modelled (overhead): typed errors naming file and field, also
    inside a List."""
    path = write(tmp_path, "pod.json", json.dumps(pod))
    with pytest.raises(error) as info:
        read_pods(path)
    assert type(info.value) is error
    assert info.value.where == f"{path}: {field}"
    listed = write(tmp_path, "list.json", json.dumps({"kind": "List", "items": [POD, pod]}))
    with pytest.raises(error) as inside:
        read_pods(listed)
    assert inside.value.where == f"{listed}: items[1].{field}"


def test_documents_that_are_not_objects(tmp_path: Path) -> None:
    """KCONF-1, KCONF-6: a document that is a string or a list is named by its number."""
    path = write(tmp_path, "m.yaml", "kind: Pod\nmetadata: {name: a}\nspec: {containers: "
                 "[{name: c}]}\n---\n- just\n- a list\n")
    with pytest.raises(InputFileError, match="expected an object") as info:
        read_pods(path)
    assert info.value.where == f"{path}: document 2"


def test_ephemeral_containers_and_app_restart_policies_are_ignored(tmp_path: Path) -> None:
    """KCONF-7: ephemeral containers are never admitted; only an init container's
    restartPolicy Always makes a sidecar."""
    pod = _with("spec.ephemeralContainers", [{"name": "debug"}])
    pod["spec"]["containers"][0]["restartPolicy"] = "Always"
    pod["spec"]["initContainers"] = [{"name": "i", "restartPolicy": "OnFailure"}]
    (imported,) = read_pods(write(tmp_path, "p.json", json.dumps(pod)))
    assert imported.pod == Pod("p", (Container("a"), Container.of("b", limits={"cpu": "1"})),
                               (Container("i"),), "u")
    assert isinstance(imported, ImportedPod)


def test_an_unknown_eviction_signal_stops_kubelet(tmp_path: Path) -> None:
    """KCONF-9: kubelet refuses to start on a signal it does not know."""
    from numaspec.errors import NodeStartupError

    path = tmp_path / "config.yaml"
    path.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                    "evictionHard:\n  memory.available: 100Mi\n  memory.free: 1Gi\n")
    with pytest.raises(NodeStartupError, match=r"unsupported eviction signal memory\.free") as e:
        read_kubelet_config(path, kubelet_version="1.30")
    assert e.value.where == f"{path}: evictionHard.memory.free"
    assert e.value.kubelet_message == "unsupported eviction signal memory.free"


@pytest.mark.parametrize(("status", "field"), [
    ("  resize: InProgress\n", "status.resize"),
    ("  conditions:\n  - {type: PodResizePending, status: \"True\"}\n", "status.conditions[0]"),
    ("  containerStatuses:\n  - name: c\n    allocatedResources: {cpu: \"2\", memory: 1Gi}\n",
     "status.containerStatuses[0].allocatedResources"),
])
def test_a_pod_being_resized_is_not_modelled(tmp_path: Path, status: str, field: str) -> None:
    """KCONF-10: pending (or the alpha status.resize), or allocated other than the spec
    asks."""
    path = tmp_path / "pod.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                    "  - name: c\n    resources:\n      limits: {cpu: \"4\", memory: 1Gi}\n"
                    "status:\n" + status)
    with pytest.raises(NotModelledError, match="resize") as caught:
        read_pods(path)
    assert caught.value.where == f"{path}: {field}"


def test_an_accepted_resize_is_read_at_its_spec(tmp_path: Path) -> None:
    """KCONF-10, RESIZE-7: PodResizeInProgress alone, the allocation equal to the spec: kubelet
    counts the spec."""
    path = tmp_path / "pod.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                    "  - name: c\n    resources:\n      limits: {cpu: \"4\", memory: 1Gi}\n"
                    "status:\n  conditions:\n  - {type: PodResizeInProgress, status: \"True\"}\n"
                    "  containerStatuses:\n  - name: c\n"
                    "    allocatedResources: {cpu: \"4\", memory: 1Gi}\n")
    (pod,) = read_pods(path)
    assert pod.pod.containers[0].requests["cpu"] == 4


def test_allocated_resources_equal_to_the_spec_are_fine(tmp_path: Path) -> None:
    """KCONF-10: a finished resize (or none) shows allocatedResources equal to the requests."""
    path = tmp_path / "pod.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                    "  - name: c\n    resources:\n      limits: {cpu: \"4\", memory: 1Gi}\n"
                    "status:\n  containerStatuses:\n  - name: c\n"
                    "    allocatedResources: {cpu: \"4\", memory: 1Gi}\n")
    (pod,) = read_pods(path)
    assert pod.pod.containers[0].requests["cpu"] == 4


def test_dra_claims_are_read_and_dra_backed_extended_resources_refused(tmp_path: Path) -> None:
    """DEV-8: a pod's DRA resource claims are read (they take no part in alignment); DEV-9: a
    pod whose extended resources the scheduler backed with a claim is not modelled."""
    path = tmp_path / "pod.yaml"
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resourceClaims:\n"
           "  - {name: gpu, resourceClaimTemplateName: one-gpu}\n  containers:\n  - name: c\n"
           "    resources:\n      limits: {cpu: \"2\", memory: 1Gi}\n      claims: [{name: gpu}]\n")
    path.write_text(pod)
    (imported,) = read_pods(path)
    assert imported.resource_claims == ("gpu",)
    path.write_text(pod + "status:\n  extendedResourceClaimStatus:\n    resourceClaimName: p-x\n"
                    "    requestMappings: [{containerName: c, resourceName: example.com/gpu, "
                    "requestName: r}]\n")
    with pytest.raises(NotModelledError, match="DEV-9") as caught:
        read_pods(path)
    assert caught.value.where == f"{path}: status.extendedResourceClaimStatus"


def test_pod_level_resources_are_read(tmp_path: Path) -> None:
    """KCONF-8: spec.resources is read as it is (requests default to limits); the node
    decides what kubelet does with it."""
    pod = json.loads(json.dumps(POD))
    pod["spec"]["resources"] = {"limits": {"cpu": 4, "memory": "2Gi"}}
    (imported,) = read_pods(write(tmp_path, "pod.json", json.dumps(pod)))
    assert imported.pod.resources is not None
    assert imported.pod.resources.requests == {"cpu": 4, "memory": 2 << 30}
