"""The kubelet configuration import against kubelet's own code: each KubeletConfiguration (the
operator fixtures, and configurations drawn from a fixed seed into tmp_path, YAML and JSON) is
read by numaspec's importer and by the kubelet adapter's ``kconf`` mode
(adapters/kubelet/release/kconf.go: kubelet's ``configfiles`` loader with its strict-then-lenient
decoding and v1beta1 defaulting, server.go's evictionHard defaulting, the feature gates set from
the file, ``ValidateKubeletConfiguration``, and server.go's CPU Manager options gate before
1.33).  Checks KCONF-2, KCONF-3, KCONF-9 and KCONF-12 (a KubeletConfiguration's unknown field):

- a file numaspec refuses as not a kubelet configuration (``invalid-input-file``) kubelet
  refuses too, when it reads the file (with one documented divergence, below);
- a file kubelet's loading, defaulting or validation refuses numaspec refuses too, on import or
  when its node starts (NODE-5); what kubelet checks only later in start-up (reserved CPUs
  against the machine, the managers' own checks) is the node differential's;
- a file both accept gives the same values of every field numaspec uses: the CPU, Memory and
  Topology Manager policies and options, the scope, reservedMemory, reservedSystemCPUs, kube-
  and systemReserved, evictionHard (defaulted and merged), feature gates, maxPods.
"""

from __future__ import annotations

import json
import random
import subprocess
import warnings
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from numaspec.errors import (
    InputFileError,
    NodeStartupError,
    NotModelledError,
    NumaspecError,
    NumaspecWarning,
)
from numaspec.node.admission import Node
from numaspec.node.nodeconfig import NODE_VERSIONS, NodeConfig, parse_cpuset
from numaspec.node.quantity import parse_quantity
from numaspec.operators.importers.kubelet_config import read_kubelet_config
from numaspec.operators.importers.sysfs import read_sysfs
from numaspec_tools import FIXTURES
from numaspec_tools.builds import kubelet as kubelet_builds

OPERATOR = FIXTURES / "operator"
FIXTURE_CONFIGS = sorted(p for p in OPERATOR.glob("*/kubelet-config.yaml"))
MACHINE = FIXTURES / "sysfs" / "two-socket-4numa"
#: The node releases numaspec models (NODE_VERSIONS; a pre-release read for the merge only
#: would not be one: its configuration is refused as not modelled).
MINORS = [m for m, r in kubelet_builds.TABLE_RELEASES.items()
          if "node" in r.ops and int(m.split(".")[1]) in NODE_VERSIONS]
#: How many configurations are drawn per run (from a fixed seed: the same every run).
DRAWN = 120

_ABSENT = object()
#: Per field, the values drawn (``_ABSENT``: the field is left out).
CHOICES: dict[str, list[Any]] = {
    "cpuManagerPolicy": [_ABSENT, None, "", "none", "static", "Static"],
    "cpuManagerPolicyOptions": [_ABSENT, {}, {"full-pcpus-only": "true"},
                                {"distribute-cpus-across-numa": "true"}, {"no-such": "true"}],
    "topologyManagerPolicy": [_ABSENT, "", "none", "best-effort", "restricted",
                              "single-numa-node", "bogus"],
    "topologyManagerScope": [_ABSENT, "", "container", "pod", "node"],
    "topologyManagerPolicyOptions": [_ABSENT, {}, {"prefer-closest-numa-nodes": "true"},
                                     {"max-allowable-numa-nodes": "9"}],
    "memoryManagerPolicy": [_ABSENT, "", "None", "Static", "static"],
    "reservedMemory": [_ABSENT, [], [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
                       [{"numaNode": 1, "limits": {"memory": "1024Mi", "hugepages-2Mi": "2Mi"}}]],
    "reservedSystemCPUs": [_ABSENT, "", "0", "0-1", "0,2", "x"],
    "kubeReserved": [_ABSENT, {}, {"cpu": "500m", "memory": "1Gi"}, {"cpu": 1}],
    "systemReserved": [_ABSENT, {}, {"memory": "924Mi"}, {"cpu": "1"}],
    "evictionHard": [_ABSENT, None, {}, {"memory.available": "200Mi"},
                     {"nodefs.available": "5%"}, {"memory.available": "5%"},
                     {"no.such.signal": "1"}],
    "mergeDefaultEvictionSettings": [_ABSENT, True, False],
    "featureGates": [_ABSENT, {}, {"CPUManagerPolicyAlphaOptions": True},
                     {"TopologyManagerPolicyAlphaOptions": True}, {"NoSuchGate": True}],
    "maxPods": [_ABSENT, 0, 50],
    "podsPerCore": [_ABSENT, 0, 10],
    # KCONF-12: a field no kubelet has, and a misspelling of one numaspec reads: kubelet's
    # strict decoding fails and its lenient one ignores them; numaspec warns and does the same
    "somethingNew": [_ABSENT, {"x": 1}],
    "topologyManagerPolicyy": [_ABSENT, "restricted"],
}
#: The header: mostly right, sometimes another kind or version, or none.
HEADERS = [("kubelet.config.k8s.io/v1beta1", "KubeletConfiguration")] * 8 + [
    ("kubelet.config.k8s.io/v1alpha1", "KubeletConfiguration"),
    ("kubelet.config.k8s.io/v1beta1", "KubeProxyConfiguration"),
    (None, "KubeletConfiguration"), (None, None)]


def draw_configs(tmp_path: Path, count: int = DRAWN, seed: int = 38) -> list[Path]:
    """``count`` configuration files drawn from CHOICES, as YAML or JSON."""
    rng = random.Random(seed)
    files = []
    for i in range(count):
        api, kind = rng.choice(HEADERS)
        body: dict[str, Any] = {}
        if api is not None:
            body["apiVersion"] = api
        if kind is not None:
            body["kind"] = kind
        for name, values in CHOICES.items():
            # most fields absent in most files, so that each refusal stands alone
            value = rng.choice(values) if rng.random() < 0.35 else _ABSENT
            if value is not _ABSENT:
                body[name] = value
        if rng.random() < 0.5:
            path = tmp_path / f"drawn-{i:03}.yaml"
            path.write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
        else:
            path = tmp_path / f"drawn-{i:03}.json"
            path.write_text(json.dumps(body), encoding="utf-8")
        files.append(path)
    return files


def kubelet_reads(minor: str, files: list[Path]) -> dict[Path, dict[str, Any]]:
    """The adapter's ``kconf`` answer per file (release ``1.<minor>``)."""
    binary = kubelet_builds.binary(minor)
    done = subprocess.run([str(binary), "kconf", *map(str, files)], capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["file"] for a in answers] == [str(f) for f in files]
    assert all(a["version"] == kubelet_builds.RELEASES[minor] for a in answers)
    return dict(zip(files, answers, strict=True))


def _quantities(m: Any) -> dict[str, Fraction]:
    return {k: parse_quantity(v) for k, v in m.items()}


def numaspec_values(config: NodeConfig) -> dict[str, Any]:
    """The fields numaspec uses, in the terms of kubelet's answer."""
    return {
        "cpuManagerPolicy": config.cpu_manager_policy,
        "cpuManagerPolicyOptions": dict(config.cpu_manager_policy_options),
        "topologyManagerPolicy": config.topology_manager_policy,
        "topologyManagerScope": config.topology_manager_scope,
        "topologyManagerPolicyOptions": dict(config.topology_manager_policy_options),
        "memoryManagerPolicy": config.memory_manager_policy,
        "reservedMemory": [(n, _quantities(limits)) for n, limits in config.reserved_memory],
        "reservedSystemCPUs": config.reserved_system_cpus,
        "kubeReserved": dict(config.kube_reserved),
        "systemReserved": dict(config.system_reserved),
        "evictionHard": dict(config.eviction_hard or {}),
        "featureGates": dict(config.feature_gates),
        "maxPods": config.max_pods,
    }


def kubelet_values(config: dict[str, Any]) -> dict[str, Any]:
    values = {k: config[k] for k in (
        "cpuManagerPolicy", "cpuManagerPolicyOptions", "topologyManagerPolicy",
        "topologyManagerScope", "topologyManagerPolicyOptions", "memoryManagerPolicy",
        "kubeReserved", "systemReserved", "evictionHard", "featureGates", "maxPods")}
    values["reservedMemory"] = [(r["numaNode"], _quantities(r["limits"]))
                                for r in config["reservedMemory"]]
    values["reservedSystemCPUs"] = parse_cpuset(config["reservedSystemCPUs"], where="kubelet")
    return values


def _numaspec_reads(path: Path, version: str) -> NodeConfig | NumaspecError:
    """numaspec's importer on ``path``: the configuration, or the error it raises."""
    try:
        return read_kubelet_config(path, kubelet_version=version)
    except NumaspecError as exc:
        return exc


def judge(path: Path, minor: str, kubelet: dict[str, Any]) -> str:
    """Compares one file; returns how it went (for the summary assertion)."""
    config = _numaspec_reads(path, kubelet_builds.RELEASES[minor])
    stage = kubelet.get("stage")
    if isinstance(config, InputFileError):
        assert stage == "load", (path, config, kubelet)
        return "both refuse to read"
    if isinstance(config, NodeStartupError):
        # KCONF-9: an eviction signal kubelet does not know
        assert stage == "eviction-thresholds", (path, config, kubelet)
        assert config.kubelet_message is not None
        assert config.kubelet_message in kubelet["error"]
        return "both refuse at start-up (eviction-thresholds)"
    if isinstance(config, NotModelledError):
        return "not modelled"
    if isinstance(config, NumaspecError):
        # a value numaspec checks on import (reservedSystemCPUs' cpuset syntax)
        assert stage is not None, (path, config, kubelet)
        return f"both refuse ({stage})"
    if kubelet.get("stage") == "load":
        pytest.fail(f"{path}: numaspec reads it, kubelet refuses to load it: {kubelet}")
    if kubelet.get("stage"):
        # kubelet refuses it before the managers start: so must numaspec's node (an unknown
        # feature gate is numaspec's invalid-field, VER-2; the rest node-startup)
        with pytest.raises(NumaspecError):
            Node(read_sysfs(MACHINE), config)
        return f"both refuse at start-up ({kubelet['stage']})"
    assert numaspec_values(config) == kubelet_values(kubelet["config"]), path
    return "both read the same values"


@pytest.mark.parametrize("minor", MINORS)
def test_fixture_configs_as_kubelet_reads_them(minor: str) -> None:
    """KCONF-2, KCONF-3: the operator fixtures' configurations."""
    answers = kubelet_reads(minor, FIXTURE_CONFIGS)
    outcomes = {judge(p, minor, a) for p, a in answers.items()}
    assert outcomes == {"both read the same values"}


@pytest.mark.parametrize("minor", MINORS)
def test_drawn_configs_as_kubelet_reads_them(tmp_path: Path, minor: str) -> None:
    """KCONF-2, KCONF-3, KCONF-9: drawn configurations, accepted and refused."""
    files = draw_configs(tmp_path)
    answers = kubelet_reads(minor, files)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumaspecWarning)  # KCONF-12's, checked elsewhere
        outcomes = [judge(p, minor, a) for p, a in answers.items()]
    # the draw reaches every outcome
    assert {"both read the same values", "both refuse to read"} <= set(outcomes)
    # KCONF-12: kubelet reads past a misspelled field, as numaspec does
    assert any(o == "both read the same values" and "topologyManagerPolicyy" in
               p.read_text("utf-8") for p, o in zip(answers, outcomes, strict=True))
    assert any(o.startswith("both refuse at start-up") for o in outcomes)


def test_eviction_defaults_per_release(tmp_path: Path) -> None:
    """KCONF-3: kubelet 1.29's default evictionHard has no imagefs.inodesFree (1.30 added it;
    found by the comparison above)."""
    path = tmp_path / "kc.yaml"
    path.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n",
                    encoding="utf-8")
    old = read_kubelet_config(path, kubelet_version="v1.29.15").eviction_hard or {}
    new = read_kubelet_config(path, kubelet_version="v1.30.14").eviction_hard or {}
    assert set(new) - set(old) == {"imagefs.inodesFree"}
    assert old == {k: v for k, v in new.items() if k != "imagefs.inodesFree"}


@pytest.mark.parametrize("minor", MINORS)
def test_a_key_given_twice_as_kubelet_reads_it(tmp_path: Path, minor: str) -> None:
    """KCONF-1, KCONF-12: a KubeletConfiguration giving a key twice: kubelet's strict decoding
    fails and its lenient one keeps the last; numaspec keeps the last too, with a warning."""
    header = ('apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n'
              'topologyManagerPolicy: single-numa-node\n')
    files = [tmp_path / "twice.yaml", tmp_path / "twice.json"]
    files[0].write_text(header + "topologyManagerPolicy: best-effort\n", "utf-8")
    files[1].write_text('{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": '
                        '"KubeletConfiguration", "topologyManagerPolicy": "single-numa-node", '
                        '"topologyManagerPolicy": "best-effort"}', "utf-8")
    answers = kubelet_reads(minor, files)
    for path in files:
        with pytest.warns(NumaspecWarning, match="'topologyManagerPolicy' is given twice"):
            assert judge(path, minor, answers[path]) == "both read the same values"
        assert answers[path]["config"]["topologyManagerPolicy"] == "best-effort"
