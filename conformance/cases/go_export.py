"""``numaspec vectors export --go RELEASE``: numaspec's merge vectors as a Go test of kubelet's
own ``pkg/kubelet/cm/topologymanager`` package (RUN-20).

kubelet's unit tests cannot read numaspec's JSON vectors; this writes them as a Go table test,
``TestNumaspecVectors``, in package ``topologymanager``, for one release: dropped into that
directory of a kubernetes tree at the release, ``go test -run TestNumaspecVectors
./pkg/kubelet/cm/topologymanager/`` runs every merge vector instance that holds there.

What a vector is turned into, per release (each the way numaspec's own kubelet adapter calls
that release, ``adapters/kubelet/mergeonly`` and ``release``):

* 1.18-1.25: the policy built by its constructor (``NewBestEffortPolicy(numaNodes)`` and the
  others) from the request's NUMA node ids, then ``Merge(providers)``;
* 1.26 on: ``NewManager`` (kubelet's start-up checks, policy options, NUMA distances) at
  container scope, then its policy's ``Merge`` (with a logger from 1.35, and ``NewManager``
  taking one from 1.37).

The feature gates a vector names that can change Merge's answer (the Topology Manager's, and
``AllAlpha``/``AllBeta``) are set on kubelet's default feature gate for its subtest and put
back after it; the others only decide whether kubelet starts.  Only vectors whose answer at the
release is a merged hint are written: a refusal (an unknown policy, an option a gate keeps off)
comes from kubelet's configuration checks outside this package, and the file's header says how
many were left out and why.

Beside the vectors, a seeded sample of random merge cases at the release (``random``, the
differential's generator, :mod:`numaspec.conformance.properties.random_cases`) with the
reference's answers: the vectors show each rule once, the sample ranks many candidates against
each other, so a one-line change to kubelet's ranking that no vector reaches fails there too.
From 1.38 each hint carries its score and each answer the scores kubelet may report (HINT-5,
MERGE-14: Go map order over a provider's resources decides among them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from numaspec.errors import InvalidFieldError

__all__ = ["DEFAULT_RANDOM", "GoExport", "Row", "export_go", "main", "release_of"]

#: The random cases an export carries by default: a few seconds of ``go test``.
DEFAULT_RANDOM = 2000

_MINOR = re.compile(r"^v?1\.(\d+)$")
#: The oldest release the export knows how to call (the oldest numaspec models).
OLDEST = 18
#: The request fields the Go table carries; a vector with any other is left out.
_FIELDS = {"kubelet_version", "numa_nodes", "policy", "providers", "feature_gates",
           "policy_options", "numa_distances"}


@attrs.frozen
class GoExport:
    release: str
    source: str
    written: int
    #: vector instance IDs left out, with why
    left_out: tuple[tuple[str, str], ...]
    #: of ``written``, the random cases
    random: int = 0


def _minor(release: str) -> int:
    match = _MINOR.match(release.strip())
    if not match:
        raise InvalidFieldError(f"expected a kubelet release such as 1.37, got {release!r}",
                                where="--go")
    minor = int(match.group(1))
    if minor < OLDEST:
        raise InvalidFieldError(f"numaspec models kubelet 1.{OLDEST} and later, not {release}",
                                where="--go")
    return minor


#: A random case for the table: its ID, the request and the reference's answer (as the
#: protocol writes them), made by
#: :func:`numaspec.conformance.properties.random_cases.answered_merge_cases`.
Row = tuple[str, Any, Any]


def release_of(release: str) -> str:
    """``1.N`` of a release the export knows how to call, or :class:`InvalidFieldError`."""
    from numaspec import NEWEST

    minor = _minor(release)
    if minor > NEWEST.minor:
        raise InvalidFieldError(f"numaspec models kubelet up to {NEWEST}, not {release}",
                                where="--go")
    return f"1.{minor}"


def export_go(release: str, *, numaspec_version: str, vector_files: Sequence[str] = (),
              sample: Sequence[Row] = (), seed: int = 0) -> GoExport:
    """The Go test file of the merge vectors that hold at ``release`` (``1.N``), and of the
    random merge cases ``sample`` (drawn from ``seed``) with the reference's answers."""
    from numaspec import NEWEST
    from numaspec.conformance.cases.vectors import instances, load_vector_paths, load_vectors

    minor = _minor(release)
    release = f"1.{minor}"
    if minor > NEWEST.minor:
        raise InvalidFieldError(f"numaspec models kubelet up to {NEWEST}, not {release}",
                                where="--go")
    loaded = load_vector_paths(vector_files) if vector_files else load_vectors()
    chosen = [i for v in loaded if v.op == "merge" for i in instances(v, [release])
              if _case_minor(i.release) == minor]
    rows: list[str] = []
    left_out: list[tuple[str, str]] = []
    gates = False
    for instance in chosen:
        why = _why_not(instance.case, instance.expected)
        if why:
            left_out.append((instance.id, why))
            continue
        gates = gates or any(_reaches_merge(g) for g in instance.case.get("feature_gates") or {})
        rows.append(_row(instance.id, instance.case, instance.expected, minor))
    vectors = len(rows)
    for case_id, case, answer in sample:
        why = _why_not(case, answer)
        if why:
            left_out.append((case_id, why))
            continue
        gates = gates or any(_reaches_merge(g) for g in case.get("feature_gates") or {})
        rows.append(_row(case_id, case, answer, minor))
    source = _render(minor, rows, left_out, gates, numaspec_version,
                     sample=(len(rows) - vectors, len(sample), seed))
    return GoExport(release, source, len(rows), tuple(left_out), len(rows) - vectors)


def _case_minor(version: str) -> int | None:
    match = re.match(r"^v?1\.(\d+)", version.strip())
    return int(match.group(1)) if match else None


def _why_not(case: Any, expected: Any) -> str:
    if not isinstance(expected, Mapping) or "hint" not in expected:
        kind = (expected.get("error") or {}).get("kind", "?") if isinstance(
            expected, Mapping) else "?"
        return f"answered by a refusal ({kind}): kubelet's configuration checks, not Merge"
    extra = sorted(set(case) - _FIELDS)
    if extra:
        return f"request field(s) the table does not carry: {', '.join(extra)}"
    return ""


def _go_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=True)


def _ints(values: Sequence[int]) -> str:
    return "[]int{" + ", ".join(str(int(v)) for v in values) + "}"


def _hint(hint: Mapping[str, Any]) -> str:
    affinity = hint.get("numa_affinity")
    preferred = "true" if hint.get("preferred") else "false"
    score = f", score: {int(hint['score'])}" if hint.get("score") else ""
    if affinity is None:
        return f"{{isNil: true, preferred: {preferred}{score}}}"
    return f"{{affinity: {_ints(affinity)}, preferred: {preferred}{score}}}"


def _providers(providers: Any) -> str:
    if providers is None:
        return "nil"
    items = []
    for provider in providers:
        if provider is None:
            items.append("nil")
            continue
        entries = []
        for resource, hints in provider.items():
            value = "nil" if hints is None else (
                "{" + ", ".join(_hint(h) for h in hints) + "}")
            if hints is not None:
                value = "[]numaspecHint" + value
            entries.append(f"{_go_string(resource)}: {value}")
        items.append("{" + ", ".join(entries) + "}")
    return "[]map[string][]numaspecHint{" + ", ".join(items) + "}"


def _reaches_merge(gate: str) -> bool:
    """Whether a feature gate can change what Merge answers: the Topology Manager's own (its
    policy options are gated) and the two that switch every alpha or beta gate.  The others a
    vector names (logging, metrics, ...) only decide whether kubelet starts, and are not
    registered in this package's test binary."""
    return gate.startswith("TopologyManager") or gate in ("AllAlpha", "AllBeta")


def _row(case_id: str, case: Mapping[str, Any], expected: Mapping[str, Any], minor: int) -> str:
    # an empty policy name is "none" by the time kubelet builds its Manager (configuration
    # defaulting; numaspec's vectors policy-empty-name-is-none-*)
    fields = [f"id: {_go_string(case_id)}", f"policy: {_go_string(case['policy'] or 'none')}",
              f"numaNodes: {_ints(case.get('numa_nodes') or [])}"]
    distances = case.get("numa_distances")
    if distances:
        rows = ", ".join(f"{int(k)}: {{" + ", ".join(str(int(d)) for d in row) + "}"
                         for k, row in distances.items())
        fields.append(f"distances: map[int][]uint64{{{rows}}}")
    options = case.get("policy_options")
    if options:
        fields.append("options: map[string]string{" + ", ".join(
            f"{_go_string(k)}: {_go_string(v)}" for k, v in options.items()) + "}")
    gates = {k: v for k, v in (case.get("feature_gates") or {}).items() if _reaches_merge(k)}
    if gates:
        fields.append("gates: map[string]bool{" + ", ".join(
            f"{_go_string(k)}: {'true' if v else 'false'}" for k, v in gates.items()) + "}")
    fields.append(f"providers: {_providers(case.get('providers'))}")
    fields.append(f"want: numaspecHint{_hint(expected['hint'])}")
    if minor >= 38:  # MERGE-14: the scores kubelet may report; [] (any) when not enumerated
        scores = expected["hint"].get("scores", [expected["hint"].get("score", 0)])
        fields.append("scores: []int64{" + ", ".join(str(int(v)) for v in scores) + "}")
    fields.append(f"admit: {'true' if expected['admit'] else 'false'}")
    return "\t{" + ", ".join(fields) + "},"  # one line each: gofmt leaves it as it is


def _render(minor: int, rows: Sequence[str], left_out: Sequence[tuple[str, str]], gates: bool,
            numaspec_version: str, *, sample: tuple[int, int, int] = (0, 0, 0)) -> str:
    third = ['"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask"']
    if minor >= 26:  # the package NUMAInfo reads the machine's topology from
        third.append('cadvisorapi "github.com/google/cadvisor/lib/model"' if minor >= 37
                     else 'cadvisorapi "github.com/google/cadvisor/info/v1"')
    if minor >= 35:
        third.append('"k8s.io/klog/v2"')
    if gates:
        third += ['utilfeature "k8s.io/apiserver/pkg/util/feature"',
                  '"k8s.io/component-base/featuregate"']
    imports = ['"fmt"', '"sort"', '"testing"', "",
               *sorted(third, key=lambda i: i.split('"')[1])]
    reasons: dict[str, int] = {}
    for _, why in left_out:
        reasons[why] = reasons.get(why, 0) + 1
    header = [
        f"// Code generated by numaspec vectors export --go 1.{minor} (numaspec "
        f"{numaspec_version}). DO NOT EDIT.",
        "//",
        f"// numaspec's merge vectors at kubelet 1.{minor} ({len(rows) - sample[0]} instances)"
        + (f" and {sample[0]} of {sample[1]} random merge cases of seed {sample[2]}, with the"
           " reference's answers," if sample[1] else ""),
        "// as a test of this package: put this file in pkg/kubelet/cm/topologymanager of a "
        "kubernetes tree",
        f"// at 1.{minor} and run",
        "//",
        "//\tgo test -run TestNumaspecVectors ./pkg/kubelet/cm/topologymanager/",
        "//",
        "// Each subtest is named by its vector instance (numaspec rule <ID> and the spec's",
        "// vectors say what it shows).",
    ]
    if left_out:
        header += ["//", f"// Left out ({len(left_out)}):"]
        header += [f"//   {n} {why}" for why, n in sorted(reasons.items())]
    body = [
        *header, "", "package topologymanager", "", "import (",
        *[f"\t{i}" if i else "" for i in imports], ")", "",
        "type numaspecHint struct {", "\taffinity  []int", "\tisNil     bool",
        "\tpreferred bool", *(["\tscore     int64"] if minor >= 38 else []), "}", "",
        "type numaspecVector struct {", "\tid        string", "\tpolicy    string",
        "\tnumaNodes []int", "\tdistances map[int][]uint64", "\toptions   map[string]string",
        "\tgates     map[string]bool", "\tproviders []map[string][]numaspecHint",
        "\twant      numaspecHint", *(["\tscores    []int64"] if minor >= 38 else []),
        "\tadmit     bool", "}", "",
        "var numaspecVectors = []numaspecVector{", *rows, "}", "",
        *_test_function(minor, gates),
    ]
    return "\n".join(body) + "\n"


def _policy_lines(minor: int) -> list[str]:
    """How the release builds the policy a vector merges with (``policy``, or t.Fatal)."""
    if minor < 26:
        return [
            "\t\t\tvar policy Policy",
            "\t\t\tswitch v.policy {",
            "\t\t\tcase PolicyNone:",
            "\t\t\t\tpolicy = NewNonePolicy()",
            "\t\t\tcase PolicyBestEffort:",
            "\t\t\t\tpolicy = NewBestEffortPolicy(v.numaNodes)",
            "\t\t\tcase PolicyRestricted:",
            "\t\t\t\tpolicy = NewRestrictedPolicy(v.numaNodes)",
            "\t\t\tcase PolicySingleNumaNode:",
            "\t\t\t\tpolicy = NewSingleNumaNodePolicy(v.numaNodes)",
            "\t\t\tdefault:",
            "\t\t\t\tt.Fatalf(\"unknown policy %q\", v.policy)",
            "\t\t\t}",
        ]
    logger = "klog.Background(), " if minor >= 37 else ""
    return [
        "\t\t\ttopology := make([]cadvisorapi.Node, 0, len(v.numaNodes))",
        "\t\t\tfor _, id := range v.numaNodes {",
        "\t\t\t\ttopology = append(topology, cadvisorapi.Node{Id: id, Distances: v.distances[id]})",
        "\t\t\t}",
        f"\t\t\tmanager, err := NewManager({logger}topology, v.policy, \"container\", v.options)",
        "\t\t\tif err != nil {",
        "\t\t\t\tt.Fatalf(\"NewManager: %v\", err)",
        "\t\t\t}",
        "\t\t\tpolicy := manager.GetPolicy()",
    ]


def _test_function(minor: int, gates: bool) -> list[str]:
    merge = "policy.Merge(klog.Background(), providers)" if minor >= 35 else (
        "policy.Merge(providers)")
    gate_lines = [
        "\t\t\tif len(v.gates) > 0 {",
        "\t\t\t\tbefore := map[string]bool{}",
        "\t\t\t\tfor name := range v.gates {",
        "\t\t\t\t\tbefore[name] = utilfeature.DefaultFeatureGate.Enabled(featureOf(name))",
        "\t\t\t\t}",
        "\t\t\t\tif err := utilfeature.DefaultMutableFeatureGate.SetFromMap(v.gates); err != nil {",
        "\t\t\t\t\tt.Fatalf(\"feature gates %v: %v\", v.gates, err)",
        "\t\t\t\t}",
        "\t\t\t\tt.Cleanup(func() {",
        "\t\t\t\t\t_ = utilfeature.DefaultMutableFeatureGate.SetFromMap(before)",
        "\t\t\t\t})",
        "\t\t\t}",
    ] if gates else []
    lines = [
        "func TestNumaspecVectors(t *testing.T) {",
        "\tfor _, v := range numaspecVectors {",
        "\t\tt.Run(v.id, func(t *testing.T) {",
        *gate_lines,
        *_policy_lines(minor),
        "\t\t\tproviders := make([]map[string][]TopologyHint, len(v.providers))",
        "\t\t\tfor i, provider := range v.providers {",
        "\t\t\t\tif provider == nil {",
        "\t\t\t\t\tcontinue",
        "\t\t\t\t}",
        "\t\t\t\tproviders[i] = map[string][]TopologyHint{}",
        "\t\t\t\tfor resource, hints := range provider {",
        "\t\t\t\t\tif hints == nil {",
        "\t\t\t\t\t\tproviders[i][resource] = nil",
        "\t\t\t\t\t\tcontinue",
        "\t\t\t\t\t}",
        "\t\t\t\t\tconverted := make([]TopologyHint, 0, len(hints))",
        "\t\t\t\t\tfor _, h := range hints {",
        "\t\t\t\t\t\thint := TopologyHint{Preferred: h.preferred"
        + (", Score: h.score}" if minor >= 38 else "}"),
        "\t\t\t\t\t\tif !h.isNil {",
        "\t\t\t\t\t\t\tmask, err := bitmask.NewBitMask(h.affinity...)",
        "\t\t\t\t\t\t\tif err != nil {",
        "\t\t\t\t\t\t\t\tt.Fatalf(\"bitmask %v: %v\", h.affinity, err)",
        "\t\t\t\t\t\t\t}",
        "\t\t\t\t\t\t\thint.NUMANodeAffinity = mask",
        "\t\t\t\t\t\t}",
        "\t\t\t\t\t\tconverted = append(converted, hint)",
        "\t\t\t\t\t}",
        "\t\t\t\t\tproviders[i][resource] = converted",
        "\t\t\t\t}",
        "\t\t\t}",
        f"\t\t\thint, admit := {merge}",
        "\t\t\tgot := numaspecHint{isNil: hint.NUMANodeAffinity == nil, preferred: hint.Preferred}",
        "\t\t\tif !got.isNil {",
        "\t\t\t\tgot.affinity = hint.NUMANodeAffinity.GetBits()",
        "\t\t\t\tsort.Ints(got.affinity)",
        "\t\t\t}",
        *(["\t\t\tgot.score = hint.Score"] if minor >= 38 else []),
        "\t\t\tif got.isNil != v.want.isNil || got.preferred != v.want.preferred ||",
        "\t\t\t\t!numaspecSame(got.affinity, v.want.affinity) || admit != v.admit"
        + (" ||\n\t\t\t\t!numaspecScore(got.score, v.scores) {" if minor >= 38 else " {"),
        "\t\t\t\tt.Errorf(\"merged %s (admit %t); numaspec expects %s (admit %t)\",",
        "\t\t\t\t\tnumaspecShow(got), admit, numaspecShow(v.want), v.admit)",
        "\t\t\t}",
        "\t\t})",
        "\t}",
        "}",
        "",
        "func numaspecSame(a, b []int) bool {",
        "\tif len(a) != len(b) {",
        "\t\treturn false",
        "\t}",
        "\tfor i := range a {",
        "\t\tif a[i] != b[i] {",
        "\t\t\treturn false",
        "\t\t}",
        "\t}",
        "\treturn true",
        "}",
        "",
        "func numaspecShow(h numaspecHint) string {",
        "\taffinity := \"nil\"",
        "\tif !h.isNil {",
        "\t\taffinity = fmt.Sprint(h.affinity)",
        "\t}",
        *(["\treturn fmt.Sprintf(\"{affinity %s, preferred %t, score %d}\", affinity, "
           "h.preferred, h.score)"] if minor >= 38 else
          ["\treturn fmt.Sprintf(\"{affinity %s, preferred %t}\", affinity, h.preferred)"]),
        "}",
    ]
    if minor >= 38:  # MERGE-14: one of the scores kubelet may report ([]: any)
        lines += ["", "func numaspecScore(got int64, allowed []int64) bool {",
                  "\tif len(allowed) == 0 {", "\t\treturn true", "\t}",
                  "\tfor _, s := range allowed {", "\t\tif s == got {", "\t\t\treturn true",
                  "\t\t}", "\t}", "\treturn false", "}"]
    if gates:
        lines += ["", "func featureOf(name string) featuregate.Feature { "
                      "return featuregate.Feature(name) }"]
    return lines


def main(release: str, *, out: str | None, files: Sequence[str] = (),
         sample: Sequence[Row] = (), seed: int = 0) -> int:
    """``numaspec vectors export --go RELEASE``: the Go test file (standard output or ``out``),
    and what it holds on standard error."""
    import sys
    from pathlib import Path

    from numaspec.about import __version__

    exported = export_go(release, numaspec_version=__version__, vector_files=files,
                         sample=sample, seed=seed)
    if out:
        Path(out).write_text(exported.source, encoding="utf-8")
    else:
        sys.stdout.write(exported.source)
    print(f"{exported.written - exported.random} merge vector instances and {exported.random} "
          f"random cases (seed {seed}) at kubelet {exported.release} "
          f"{'written to ' + out if out else 'written'}; {len(exported.left_out)} left out "
          "(refusals, outside Merge: see the file's header)", file=sys.stderr)
    return 0
