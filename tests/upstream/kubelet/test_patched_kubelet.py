"""A kubelet change checked before it merges (RUN-19, RUN-20): a patched build of a pinned
release (``adapters/kubelet/build.sh --patch``), ``numaspec behaviour-diff`` against the
release, kubernetes#137701 reconstructed in two readings, and numaspec's merge vectors run as
kubelet's own Go tests (``numaspec vectors export --go``), passing on the pinned releases and
failing on mutated kubelets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from numaspec.conformance.cases.go_export import DEFAULT_RANDOM, export_go
from numaspec.conformance.properties.random_cases import answered_merge_cases
from numaspec.errors import InvalidFieldError
from numaspec_tools import mutants
from numaspec_tools.builds import kubelet as kubelet_builds
from numaspec_tools.builds.kubelet import PATCHED_RELEASE, PATCHES, ROOT, go_test, patched_binary
from numaspec_tools.rotation import commit_seed

CLI = [sys.executable, "-m", "numaspec.conformance.cli"]
LITERAL = PATCHES / "pr137701-literal.patch"
PREFERRED_ONLY = PATCHES / "pr137701-preferred-only.patch"
PATCH_DIR = Path(mutants.__file__).parent
MUTANT = PATCH_DIR / "kubelet-tiebreak.patch"
#: Below the target width, a candidate with fewer nodes wins (MERGE-8, one line): no vector
#: reaches it; the export's random sample does.
BELOW_TARGET = PATCH_DIR / "kubelet-below-target.patch"
#: kubernetes#137701's shortest counterexample (a spec vector since 1.24: MERGE-8)
SHORTEST = "merge-target-width-1.24@1.37"


def _diff(base: Path, patched: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "behaviour-diff", "--base", f"exec:{base}", "--patched",
                           f"exec:{patched}", "--timeout", "10", "--no-progress", *args],
                          capture_output=True, text=True, timeout=1800)


def _build(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(ROOT / "build.sh"), *args], capture_output=True,
                          text=True, timeout=600)


# ---- patched builds (build.sh --patch) ----

def test_a_patch_that_does_not_apply_is_one_line_naming_file_and_hunk(tmp_path: Path) -> None:
    kubelet_builds.binary(PATCHED_RELEASE)  # the release is in the module cache
    text = LITERAL.read_text(encoding="utf-8").replace(" \treturn *bestHint\n",
                                                       " \treturn *bestHint // not there\n")
    bad = tmp_path / "stale.patch"
    bad.write_text(text, encoding="utf-8")
    done = _build("--patch", str(bad), PATCHED_RELEASE)
    assert done.returncode == 1
    version = kubelet_builds.RELEASES[PATCHED_RELEASE]
    assert done.stderr.strip() == (
        f"stale.patch does not apply to k8s.io/kubernetes {version}: pkg/kubelet/cm/"
        "topologymanager/policy.go: hunk #1 (at line 321) does not match the release's file")
    assert not (ROOT / "build" / "patched" / f"{version}+stale").exists()  # nothing left


def test_a_patch_for_a_file_the_release_lacks_names_it(tmp_path: Path) -> None:
    kubelet_builds.binary(PATCHED_RELEASE)
    bad = tmp_path / "elsewhere.patch"
    bad.write_text(MUTANT.read_text(encoding="utf-8").replace("bitmask/bitmask.go",
                                                              "bitmask/gone.go"),
                   encoding="utf-8")
    done = _build("--patch", str(bad), PATCHED_RELEASE)
    assert done.returncode == 1
    assert done.stderr.strip().endswith(
        "pkg/kubelet/cm/topologymanager/bitmask/gone.go: no such file in the release")


@pytest.mark.parametrize(("args", "message"), [
    (["--patch", "/no/such.patch", "1.37"], "--patch /no/such.patch: no such file"),
    (["--patch", str(LITERAL), "--name", "a b", "1.37"], "--name a b: use letters"),
    (["--source", "/", "1.37"], "--source /: not a kubernetes source tree"),
    (["--patch", str(LITERAL), "1.99"], "no release v1_99 in releases.json"),
    (["--patch", str(LITERAL), "1.36", "1.37"], "(one release)"),
])
def test_bad_patched_build_arguments_are_one_line(args: list[str], message: str) -> None:
    done = _build(*args)
    assert done.returncode in (1, 2)
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_patched_build_says_what_it_carries() -> None:
    binary = patched_binary(PREFERRED_ONLY)
    done = subprocess.run([str(binary)], input='{"cmd":"start","seq":1,"version":1}\n',
                          capture_output=True, text=True, timeout=60)
    implementation = json.loads(done.stdout.splitlines()[0])["implementation"]
    version = kubelet_builds.RELEASES[PATCHED_RELEASE].lstrip("v")
    assert implementation["version"] == f"{version}+pr137701-preferred-only"
    assert implementation["metadata"]["patch"] == "pr137701-preferred-only"


# ---- the behaviour diff (RUN-19) and kubernetes#137701 ----

def test_the_literal_reading_of_137701_changes_the_merge(tmp_path: Path) -> None:
    base = kubelet_builds.binary(PATCHED_RELEASE)
    out = tmp_path / "changed.jsonl"
    done = _diff(base, patched_binary(LITERAL), "--cases", "400", "--large-cases", "0",
                 "--shrink", "3", "--out", str(out))
    assert done.returncode == 1, done.stderr
    assert "differential: 0 of" not in done.stdout
    assert f"{SHORTEST} (conformance; rules: MERGE-4, MERGE-8, POLICY-2)" in done.stdout
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    shortest = next(r for r in records if r["id"] == SHORTEST)
    assert shortest["expected"]["hint"] == {"numa_affinity": [0, 1], "preferred": False}
    assert shortest["actual"]["hint"] == {"numa_affinity": [0], "preferred": False}
    shrunk = [r for r in records if "found_as" in r]
    assert shrunk
    assert all(r["part"] == "differential" for r in shrunk)
    # every shrunk case still tells the two apart, and replays
    replay = subprocess.run([*CLI, "replay", str(out), "--id", shrunk[0]["id"], "--impl",
                             f"exec:{patched_binary(LITERAL)}"], capture_output=True, text=True,
                            timeout=120)
    assert replay.returncode in (0, 1)
    assert "Traceback" not in replay.stderr


def test_the_preferred_only_reading_of_137701_keeps_the_merge() -> None:
    """500 random merges and 5 large ones a commit, drawn from the commit's seed
    (numaspec_tools.rotation): 3,000 and 20 from one seed took two minutes a run."""
    base = kubelet_builds.binary(PATCHED_RELEASE)
    done = _diff(base, patched_binary(PREFERRED_ONLY), "--cases", "500", "--large-cases", "5",
                 "--sizes", "4x3x15,8x3x255", "--seed", str(commit_seed()))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "differential: 0 of 500 answered differently" in done.stdout
    assert "differential (large): 0 of 5 answered differently" in done.stdout
    assert "| 8x3x255 | single NUMA nodes |" in done.stdout


def test_a_release_against_itself_shows_no_difference() -> None:
    # kubelet picks among interchangeable devices by walking Go maps: such questions are set
    # aside as not judged, never reported as a change
    base = kubelet_builds.binary(PATCHED_RELEASE)
    done = _diff(base, base, "--cases", "200", "--large-cases", "0")
    assert done.returncode == 0, done.stdout
    assert "conformance: 0 of" in done.stdout


def test_a_release_against_the_next_shows_only_what_the_spec_explains() -> None:
    """RUN-19 across releases: 1.37.2 and 1.38.0-beta.0 asked the same merges (1.38 at its
    own release) differ only where a rule says 1.38 changed: VER-2's gate table (AllAlpha's
    dependency refusal names other gates) and HINT-5 (a score 1.37 refuses); the score 1.38
    adds to every answer is counted, not a difference."""
    base = kubelet_builds.binary("1.37")
    done = _diff(base, kubelet_builds.binary("1.38"), "--cases", "1000", "--large-cases", "5",
                 "--seed", "38")
    assert done.returncode == 1, done.stdout + done.stderr
    first = done.stdout.splitlines()[0]
    assert "(the merge, asked at kubelet 1.37 and at 1.38)" in first
    assert "differential: 0 of 1,000 answered differently" in first
    assert "differential (large): 0 of 5 answered differently" in first
    assert "answers alike but for the score 1.38 adds (HINT-5)" in first
    listed = {line.split(" ")[0] for line in done.stdout.splitlines()
              if "(conformance; rules:" in line}
    assert listed == {"gates-all-alpha", "score-before-1.38"}, done.stdout


def test_behaviour_diff_refuses_bad_counts() -> None:
    done = subprocess.run([*CLI, "behaviour-diff", "--base", "exec:x", "--patched", "exec:y",
                           "--cases", "-1"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 4  # numaspec's exit status for a usage error
    assert done.stderr.strip() == "numaspec behaviour-diff: --cases: must be 0 or more, got -1"


# ---- the vectors as Go tests (RUN-20) ----

@pytest.mark.parametrize(("release", "calls"), [
    ("1.18", ["NewBestEffortPolicy(v.numaNodes)", "policy.Merge(providers)"]),
    ("1.25", ["NewSingleNumaNodePolicy(v.numaNodes)", "policy.Merge(providers)"]),
    ("1.26", ['NewManager(topology, v.policy, "container", v.options)',
              "policy.Merge(providers)", '"github.com/google/cadvisor/info/v1"']),
    ("1.35", ['NewManager(topology, v.policy, "container", v.options)',
              "policy.Merge(klog.Background(), providers)"]),
    ("1.37", ['NewManager(klog.Background(), topology, v.policy, "container", v.options)',
              "policy.Merge(klog.Background(), providers)",
              '"github.com/google/cadvisor/lib/model"']),
    ("1.38", ['NewManager(klog.Background(), topology, v.policy, "container", v.options)',
              "TopologyHint{Preferred: h.preferred, Score: h.score}", "got.score = hint.Score",
              "!numaspecScore(got.score, v.scores)", "score: 40}"]),
])
def test_the_go_export_calls_each_release_as_it_is(release: str, calls: list[str]) -> None:
    exported = export_go(release, numaspec_version="test")
    assert exported.written > 40
    for call in calls:
        assert call in exported.source
    assert f"numaspec vectors export --go {release} (numaspec test)" in exported.source
    assert all("refusal" in why for _, why in exported.left_out)


@pytest.mark.parametrize("release", ["1.17", "1.39", "2.0", "latest"])
def test_the_go_export_refuses_releases_it_does_not_model(release: str) -> None:
    with pytest.raises(InvalidFieldError) as caught:
        export_go(release, numaspec_version="test")
    assert caught.value.where == "--go"


def test_the_go_export_command_writes_the_file(tmp_path: Path) -> None:
    out = tmp_path / "numaspec_vectors_test.go"
    done = subprocess.run([*CLI, "vectors", "export", "--go", "1.37", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8").startswith("// Code generated by numaspec")
    assert "random cases (seed 0) at kubelet 1.37 written to" in done.stderr


def _by_minor(minor: str) -> int:
    return int(minor.split(".")[1])


_MINORS: list[str] = sorted((str(m) for m in kubelet_builds.RELEASES), key=_by_minor)


@pytest.mark.parametrize("minor", _MINORS)
def test_the_exported_vectors_pass_as_kubelets_own_go_test(minor: str, tmp_path: Path) -> None:
    test_file = tmp_path / "numaspec_vectors_test.go"
    exported = export_go(minor, numaspec_version="test",
                         sample=answered_merge_cases(minor, DEFAULT_RANDOM))
    assert exported.random > DEFAULT_RANDOM // 4  # the rest are refusals (outside Merge)
    test_file.write_text(exported.source, encoding="utf-8")
    done = go_test(test_file, minor)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert done.stdout.startswith("ok ") or "\nok " in done.stdout


@pytest.mark.parametrize(("patch", "failing"), [
    (MUTANT, "cex-tiebreak-0-3-vs-1-2@1.37"),
    (LITERAL, SHORTEST),
])
def test_the_exported_vectors_fail_on_a_mutated_kubelet(patch: Path, failing: str,
                                                        tmp_path: Path) -> None:
    test_file = tmp_path / "numaspec_vectors_test.go"
    test_file.write_text(export_go(PATCHED_RELEASE, numaspec_version="test").source,
                         encoding="utf-8")
    done = go_test(test_file, PATCHED_RELEASE, patch)
    assert done.returncode == 1, done.stdout[-3000:]
    assert f"--- FAIL: TestNumaspecVectors/{failing}" in done.stdout


def test_the_random_sample_catches_what_the_vectors_miss(tmp_path: Path) -> None:
    """RUN-20: a one-line change to MERGE-8's ranking below the target width passes every
    vector, and fails the export's random sample (as the behaviour diff flags it)."""
    test_file = tmp_path / "numaspec_vectors_test.go"
    test_file.write_text(export_go(PATCHED_RELEASE, numaspec_version="test").source,
                         encoding="utf-8")
    assert go_test(test_file, PATCHED_RELEASE, BELOW_TARGET).returncode == 0
    test_file.write_text(export_go(PATCHED_RELEASE, numaspec_version="test", sample=(
        answered_merge_cases(PATCHED_RELEASE, DEFAULT_RANDOM))).source, encoding="utf-8")
    done = go_test(test_file, PATCHED_RELEASE, BELOW_TARGET)
    assert done.returncode == 1, done.stdout[-3000:]
    assert "--- FAIL: TestNumaspecVectors/random-0-48" in done.stdout


# ---- a new release of a modelled minor (repin.sh) ----

@pytest.mark.parametrize(("args", "message"), [
    ([], "Usage: ./repin.sh VERSION"),
    (["1.38"], "1.38 is not a kubernetes version such as v1.38.0-rc.0"),
    (["v1.99.0"], "kubelet 1.99 is not pinned (releases.json)"),
    (["v1.37.2"], "kubelet 1.37 is already pinned at v1.37.2"),
    (["v1.37.3", "--jobs", "2"], "unknown argument --jobs"),
])
def test_repin_refuses_bad_usage_in_one_line_and_touches_nothing(args: list[str],
                                                                 message: str) -> None:
    before = (ROOT / "releases.json").read_bytes()
    done = subprocess.run(["bash", str(ROOT / "repin.sh"), *args], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert message in done.stderr
    assert (ROOT / "releases.json").read_bytes() == before
