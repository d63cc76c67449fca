package common

// The numaspec adapter protocol (spec/protocols/adapter-protocol.md, protocol version 1):
// one long-lived process per kubelet release, JSON lines both ways. This file
// holds the release-independent part: the Release served through the shared
// read/answer loop and panic recovery (../../protocol),
// the decoding of merge cases (kubelet_version, the strictness numaspec's wire
// format demands) and the merge-error classifier. Each release's adapter main
// (ReleaseMain in main.go; ../probe, ../v1_23/release) supplies a Release
// that calls that release's kubelet code.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"numaspec.invalid/adapter/protocol"
)

// ProtocolVersion is the adapter protocol version this code speaks.
const ProtocolVersion = protocol.Version

// DebugEnv, when set, lets the adapter write diagnostics (and kubelet's logs,
// see ORACLE_KLOG) to stderr. Without it the adapter writes nothing there.
const DebugEnv = protocol.DebugEnv

// Implementation is the "implementation" object of the start answer.
// Claims is the optional capability declaration of a partial implementation
// (what of each operation it models; absent means everything): the kubelet
// adapters leave it nil, the adapters over peer implementations
// (adapters/peers) fill it.
type Implementation struct {
	Name                string         `json:"name"`
	Version             string         `json:"version"`
	Language            string         `json:"language"`
	Homepage            string         `json:"homepage"`
	Issues              string         `json:"issues"`
	Source              string         `json:"source,omitempty"`
	KubeletVersions     []string       `json:"kubelet_versions"`
	NodeKubeletVersions []string       `json:"node_kubelet_versions,omitempty"`
	Operations          []string       `json:"operations"`
	Claims              map[string]any `json:"claims,omitempty"`
	Metadata            map[string]any `json:"metadata,omitempty"`
}

// KubeletImplementation fills the fields every kubelet adapter shares.
// k8sVersion is the pinned k8s.io/kubernetes version ("v1.37.1").
func KubeletImplementation(k8sVersion string, operations []string, node bool) Implementation {
	minor := MinorOf(k8sVersion)
	impl := Implementation{
		Name:            "kubelet",
		Version:         strings.TrimPrefix(k8sVersion, "v"),
		Language:        "go",
		Homepage:        "https://github.com/kubernetes/kubernetes",
		Issues:          "https://github.com/kubernetes/kubernetes/issues",
		Source:          "k8s.io/kubernetes@" + k8sVersion + " (pkg/kubelet/cm/...)",
		KubeletVersions: []string{minor},
		Operations:      operations,
	}
	if node {
		impl.NodeKubeletVersions = []string{minor}
	}
	if name := PatchName(); name != "" {
		impl.Version += "+" + name
		impl.Source = "k8s.io/kubernetes@" + k8sVersion + " + " + name + " (build.sh --patch/--source; pkg/kubelet/cm/...)"
		impl.Metadata = map[string]any{"patch": name, "release": k8sVersion}
	}
	return impl
}

// Skip is a "skipped" answer: the adapter knowingly does not answer the case.
type Skip = protocol.Skip

// Skipf builds a Skip.
func Skipf(format string, args ...any) *Skip { return protocol.Skipf(format, args...) }

// Release is one kubelet release's adapter.
type Release interface {
	Implementation() Implementation
	// Run answers one case of a declared operation with its result, or
	// skips it. A panic is turned into an "errored" answer by the loop.
	Run(op string, c json.RawMessage) (result any, skip *Skip)
}

// UndeclaredSkipper is optionally implemented by a Release that answers a
// run of an operation it does not declare "skipped" (with the Skip it
// returns) rather than "errored"; a nil Skip keeps the errored answer.
type UndeclaredSkipper interface {
	SkipUndeclared(op string) *Skip
}

// Debugf writes to stderr only when DebugEnv is set.
func Debugf(format string, args ...any) {
	if os.Getenv(DebugEnv) != "" {
		fmt.Fprintf(os.Stderr, "kubelet-adapter: "+format+"\n", args...)
	}
}

// release serves a Release through the shared protocol loop (../../protocol).
type release struct{ r Release }

func (a release) Implementation() any { return a.r.Implementation() }

// Run runs one case: an operation the release does not declare is errored
// (or skipped, as an UndeclaredSkipper says); an *Errored result is errored.
func (a release) Run(seq int64, op string, c json.RawMessage) any {
	declared := false
	for _, o := range a.r.Implementation().Operations {
		declared = declared || o == op
	}
	if !declared {
		if u, ok := a.r.(UndeclaredSkipper); ok {
			if skip := u.SkipUndeclared(op); skip != nil {
				return protocol.Skipped(seq, skip)
			}
		}
		return protocol.ErroredAt(&seq, protocol.Erroredf("operation %q is not declared by this adapter", op))
	}
	result, skip := a.r.Run(op, c)
	if e, ok := result.(*Errored); ok {
		return protocol.ErroredAt(&seq, e)
	}
	if skip != nil {
		return protocol.Skipped(seq, skip)
	}
	return protocol.Result(seq, result)
}

// AdapterMain runs the adapter protocol on stdin/stdout until stop or EOF
// (exit status 0). stdout carries protocol answers only, one line each,
// flushed after each; an unencodable result is a bug of ours, said in-band
// (stderr stays quiet).
func AdapterMain(r Release) {
	if err := protocol.ServeAdapter(release{r}, os.Stdin, os.Stdout); err != nil {
		Debugf("%v", err)
		os.Exit(2)
	}
	os.Exit(0)
}

// ---- versions ----

var versionRE = regexp.MustCompile(`^v?1\.(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*))?(?:[-+][0-9A-Za-z.+-]*)?$`)

// NewestModelled is the release numaspec assumes for a case without a version (VER-1).
const NewestModelled = "1.37"

// MinorOf turns "v1.37.1" into "1.37".
func MinorOf(k8sVersion string) string {
	m := versionRE.FindStringSubmatch(strings.TrimSpace(k8sVersion))
	if m == nil {
		return ""
	}
	return "1." + m[1]
}

// CaseVersion reads a case's kubelet_version (raw JSON, nil when absent) as
// numaspec does (VER-1) and checks it is the release this binary runs. The
// error is the merge error to answer (kind unsupported-version).
func CaseVersion(raw json.RawMessage, build string) *MergeError {
	minor := NewestModelled
	if len(raw) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return &MergeError{Kind: "unsupported-version", Where: "kubelet_version",
				Message: fmt.Sprintf("kubelet_version: expected a version string such as \"1.30\", got %s", raw)}
		}
		minor = MinorOf(s)
		if minor == "" {
			return &MergeError{Kind: "unsupported-version", Where: "kubelet_version",
				Message: fmt.Sprintf("kubelet_version: %q is not a kubelet version", s)}
		}
	}
	if minor != MinorOf(build) {
		return &MergeError{Kind: "unsupported-version", Where: "kubelet_version",
			Message: fmt.Sprintf("kubelet_version: this adapter runs kubelet %s only, not %s", MinorOf(build), minor)}
	}
	return nil
}

// ---- merge cases ----

// MergeError is the error object of a merge response.
type MergeError struct {
	Kind           string `json:"kind"`
	Message        string `json:"message"`
	Where          string `json:"where,omitempty"`
	KubeletMessage string `json:"kubelet_message,omitempty"`
}

// MergeResult is a merge response: a hint and the admit decision, or an error.
type MergeResult struct {
	Hint  *Hint       `json:"hint,omitempty"`
	Admit *bool       `json:"admit,omitempty"`
	Error *MergeError `json:"error,omitempty"`
}

// MergeOK builds a successful merge response.
func MergeOK(h Hint, admit bool) MergeResult { return MergeResult{Hint: &h, Admit: &admit} }

// MergeFail builds a merge error response carrying kubelet's own text.
func MergeFail(kind, kubeletText string) MergeResult {
	return MergeResult{Error: &MergeError{Kind: kind, Message: kubeletText, KubeletMessage: kubeletText}}
}

// MergeCase is a decoded numaspec merge request.
type MergeCase struct {
	Request
	// FeatureGates as given (nil when absent).
	FeatureGates map[string]bool
}

type strictCase struct {
	KubeletVersion json.RawMessage             `json:"kubelet_version"`
	NUMANodes      *[]int                      `json:"numa_nodes"`
	NUMADistances  map[string][]uint64         `json:"numa_distances"`
	Policy         *string                     `json:"policy"`
	PolicyOptions  map[string]string           `json:"policy_options"`
	FeatureGates   map[string]bool             `json:"feature_gates"`
	Providers      *[]map[string]*[]strictHint `json:"providers"`
}

type strictHint map[string]json.RawMessage

// wireSkip is the reason for skipping a case that numaspec's own wire
// format refuses (WIRE-3): kubelet takes typed Go values, so such a case is
// not a question about kubelet.
func wireSkip(format string, args ...any) *Skip {
	return Skipf("numaspec wire format (WIRE-3), not kubelet behaviour: "+format+
		"; kubelet's Topology Manager takes typed Go values, so this case has no kubelet answer", args...)
}

// DecodeMergeCase decodes a merge case the way the Go types kubelet takes
// allow. What numaspec's strict wire decoding refuses and Go typing cannot
// express (unknown fields, wrong JSON types, missing required fields, a
// negative or repeated machine node id, which no cadvisor reports) is
// answered skipped. Repeated JSON keys are not detected (Go keeps the last).
// A hint has exactly numa_affinity and preferred: a "score" is an unknown
// field here (the releases whose TopologyHint has no Score, before 1.38).
func DecodeMergeCase(raw json.RawMessage) (*MergeCase, *Skip) {
	return DecodeMergeCaseScored(raw, false)
}

// DecodeMergeCaseScored is DecodeMergeCase for a release whose hints may
// carry a score (scores: TopologyHint.Score, 1.38 on): a hint may then also
// have "score" (HINT-5), a JSON integer from 0 to MaxScore, which the wire
// format requires (anything else is skipped, WIRE-3). Without scores it is
// DecodeMergeCase.
func DecodeMergeCaseScored(raw json.RawMessage, scores bool) (*MergeCase, *Skip) {
	var sc strictCase
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return nil, wireSkip("%v", err)
	}
	if sc.NUMANodes == nil || sc.Policy == nil || sc.Providers == nil {
		return nil, wireSkip("numa_nodes, policy and providers are required and not null")
	}
	c := &MergeCase{FeatureGates: sc.FeatureGates}
	c.NUMANodes = *sc.NUMANodes
	c.Policy = *sc.Policy
	c.PolicyOptions = sc.PolicyOptions
	seen := map[int]bool{}
	for i, id := range c.NUMANodes {
		if id < 0 || seen[id] {
			return nil, wireSkip("numa_nodes[%d] = %d is negative or repeated: no machine reports that", i, id)
		}
		seen[id] = true
	}
	if sc.NUMADistances != nil {
		c.NUMADistances = make(map[int][]uint64, len(sc.NUMADistances))
		for k, row := range sc.NUMADistances {
			id, err := strconv.Atoi(k)
			if err != nil || strconv.Itoa(id) != k {
				return nil, wireSkip("numa_distances key %q is not a decimal node id", k)
			}
			c.NUMADistances[id] = row
		}
	}
	c.Providers = make([]Provider, len(*sc.Providers))
	for i, p := range *sc.Providers {
		if p == nil {
			continue
		}
		out := make(Provider, len(p))
		for res, hints := range p {
			if hints == nil {
				out[res] = nil
				continue
			}
			list := make([]HintIn, 0, len(*hints))
			for j, h := range *hints {
				aff, okA := h["numa_affinity"]
				pref, okP := h["preferred"]
				score, okS := h["score"]
				fields := 2
				if scores && okS {
					fields = 3
				}
				if !okA || !okP || len(h) != fields {
					if scores {
						return nil, wireSkip("providers[%d].%s[%d] must have numa_affinity and preferred, and no other field but score", i, res, j)
					}
					return nil, wireSkip("providers[%d].%s[%d] must have exactly numa_affinity and preferred", i, res, j)
				}
				var hin HintIn
				if err := json.Unmarshal(aff, &hin.Affinity); err != nil {
					return nil, wireSkip("providers[%d].%s[%d].numa_affinity: %v", i, res, j, err)
				}
				var b *bool
				if err := json.Unmarshal(pref, &b); err != nil || b == nil {
					return nil, wireSkip("providers[%d].%s[%d].preferred is not true or false", i, res, j)
				}
				hin.Preferred = *b
				if fields == 3 {
					var n *int64
					if err := json.Unmarshal(score, &n); err != nil || n == nil || *n < 0 || *n > MaxScore {
						return nil, wireSkip("providers[%d].%s[%d].score is not an integer from 0 to %d: %s", i, res, j, MaxScore, score)
					}
					hin.Score = n
				}
				list = append(list, hin)
			}
			out[res] = list
		}
		c.Providers[i] = out
	}
	return c, nil
}

// ClassifyTopologyManagerError gives numaspec's error kind for an error
// returned by topologymanager.NewManager (or its bitmask), by kubelet's own
// error text, or "" when the text is none of these:
//
//	unknown policy: "x"                                  unknown-policy
//	unsupported on machines with more than N NUMA Nodes  too-many-numa-nodes
//	unknown Topology Manager Policy option: "x"          unknown-policy-option
//	... (alpha|beta)-level options not enabled ...       policy-option-not-enabled
//	bad value for option / unable to convert policy
//	option to integer / the minimum value of             invalid-policy-option-value
//	... getting NUMA distances ...                       missing-numa-distances
//	bit number must be ...                               invalid-numa-id
func ClassifyTopologyManagerError(msg string) string {
	lower := strings.ToLower(msg)
	switch {
	case strings.HasPrefix(msg, "unknown policy:"):
		return "unknown-policy"
	case strings.Contains(msg, "unsupported on machines with more than"):
		return "too-many-numa-nodes"
	case strings.HasPrefix(msg, "unknown Topology Manager Policy option"):
		return "unknown-policy-option"
	case strings.Contains(lower, "level options not enabled, but option"):
		return "policy-option-not-enabled"
	case strings.HasPrefix(msg, "bad value for option"),
		strings.HasPrefix(msg, "unable to convert policy option to integer"),
		strings.HasPrefix(msg, "the minimum value of"):
		return "invalid-policy-option-value"
	case strings.Contains(msg, "NUMA distances"):
		return "missing-numa-distances"
	case strings.HasPrefix(msg, "bit number must be"):
		return "invalid-numa-id"
	}
	return ""
}

// ClassifyConfigError gives numaspec's kind for an error of kubelet's config
// start-up steps before the Topology Manager: setting the feature gates
// (an unknown gate, a locked gate: invalid-field naming the gate) and
// ValidateKubeletConfiguration (the topologyManagerPolicy check:
// unknown-policy). "" when the text is none of these.
func ClassifyConfigError(msg string) string {
	switch {
	case strings.Contains(msg, "topologyManagerPolicy"):
		return "unknown-policy"
	case strings.Contains(msg, "feature gate"), strings.Contains(msg, "feature is locked"):
		return "invalid-field"
	}
	return ""
}

// ---- node results ----

// NumaspecHints converts provider hints (resource -> hints; a nil list stays
// null) into the NWIRE-4 form, each list in numaspec's canonical order: by the
// mask as a 64-bit word (no affinity first), then not preferred before preferred.
func NumaspecHints(in map[string][]NodeHint) map[string]any {
	out := make(map[string]any, len(in))
	for res, hints := range in {
		if hints == nil {
			out[res] = nil
			continue
		}
		sorted := append([]NodeHint{}, hints...)
		less := func(a, b NodeHint) bool {
			if (a.NUMA == nil) != (b.NUMA == nil) {
				return a.NUMA == nil
			}
			wa, wb := maskWord(a.NUMA), maskWord(b.NUMA)
			if wa != wb {
				return wa < wb
			}
			return !a.Preferred && b.Preferred
		}
		sort.SliceStable(sorted, func(i, j int) bool { return less(sorted[i], sorted[j]) })
		out[res] = sorted
	}
	return out
}

func maskWord(ids []int) uint64 {
	var w uint64
	for _, b := range ids {
		w |= 1 << uint(b)
	}
	return w
}
