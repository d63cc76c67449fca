// Package peer is the glue every adapter over a peer implementation shares
// (adapters/peers/README.md): flags, the start answer with its claims, the
// checks that keep a case the peer does not model from reaching it, and the
// repeated evaluation that turns Go-map-order nondeterminism into an
// "errored" answer whose message starts with "nondeterministic:".
//
// The protocol loop, the decoding of merge cases and the panic recovery are
// the kubelet adapters' (numaspec.invalid/kubelet-oracle/common); nothing of
// a peer's code is here.
package peer

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"

	"numaspec.invalid/kubelet-oracle/common"
)

// The kubelet releases numaspec models for merge (VER-3).
const (
	firstMinor = 18
	lastMinor  = 37
)

// DefaultRepeat is how many times each merge case is evaluated.
const DefaultRepeat = 8

// Info describes one peer.
type Info struct {
	Name     string // "koordinator"
	Version  string // the pinned module version without "v": "1.7.0"
	Homepage string
	Issues   string
	Source   string // module@version (package, function)
	// DefaultKubeletVersions is the kubelet release(s) whose merge rules
	// the peer copied, declared unless --kubelet-versions says otherwise.
	DefaultKubeletVersions []string
	// Policies are the kubelet Topology Manager policies the peer models.
	Policies []string
	// Refusals is the claims' merge.refusals: false, or the error kinds
	// (WIRE-2) the peer answers.
	Refusals any
	Metadata map[string]any
}

// Merge answers one decoded merge case with the peer's code: a
// common.MergeResult, or a *common.Errored; or skips it. It may panic.
// It is called Repeat times per case, on a freshly decoded case each time.
type Merge func(c *common.MergeCase) (any, *common.Skip)

type adapter struct {
	info     Info
	versions []string
	repeat   int
	merge    Merge
}

// Main parses the flags and runs the adapter protocol on stdin/stdout.
//
//	--kubelet-versions 1.23,1.24   the releases declared (default: Info's; "all": 1.18-1.37)
//	--repeat N                     evaluations per case (default 8)
//	--version                      print the pinned peer version and exit
func Main(info Info, merge Merge) {
	common.SilenceKlog()
	fs := flag.NewFlagSet(info.Name+"-adapter", flag.ExitOnError)
	versions := fs.String("kubelet-versions", strings.Join(info.DefaultKubeletVersions, ","),
		"comma-separated kubelet minors (\"1.23,1.24\") whose merge this adapter declares, or \"all\"")
	repeat := fs.Int("repeat", DefaultRepeat, "evaluations of every case; answers that differ are reported as nondeterministic")
	version := fs.Bool("version", false, "print the pinned "+info.Name+" version and exit")
	_ = fs.Parse(os.Args[1:])
	if *version {
		fmt.Println(info.Version)
		return
	}
	minors, err := ParseVersions(*versions)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s-adapter: --kubelet-versions: %v\n", info.Name, err)
		os.Exit(2)
	}
	if *repeat < 1 {
		fmt.Fprintf(os.Stderr, "%s-adapter: --repeat must be at least 1\n", info.Name)
		os.Exit(2)
	}
	common.AdapterMain(&adapter{info: info, versions: minors, repeat: *repeat, merge: merge})
}

// ParseVersions reads --kubelet-versions: "all", or minors in any form
// VER-1 accepts, each within 1.18-1.37; the result is "1.<minor>" strings,
// ascending, without repeats.
func ParseVersions(s string) ([]string, error) {
	seen := map[int]bool{}
	if strings.TrimSpace(s) == "all" {
		for m := firstMinor; m <= lastMinor; m++ {
			seen[m] = true
		}
	} else {
		for _, part := range strings.Split(s, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			m := minorNumber(part)
			if m < firstMinor || m > lastMinor {
				return nil, fmt.Errorf("%q is not a kubelet release numaspec models (1.%d-1.%d)", part, firstMinor, lastMinor)
			}
			seen[m] = true
		}
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("no release given")
	}
	ms := make([]int, 0, len(seen))
	for m := range seen {
		ms = append(ms, m)
	}
	sort.Ints(ms)
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = "1." + strconv.Itoa(m)
	}
	return out, nil
}

// minorNumber is the minor of a version string (VER-1), or -1.
func minorNumber(v string) int {
	minor := common.MinorOf(v)
	if minor == "" {
		return -1
	}
	m, err := strconv.Atoi(strings.TrimPrefix(minor, "1."))
	if err != nil {
		return -1
	}
	return m
}

func (a *adapter) Implementation() common.Implementation {
	meta := map[string]any{"evaluations_per_case": a.repeat}
	for k, v := range a.info.Metadata {
		meta[k] = v
	}
	return common.Implementation{
		Name:            a.info.Name,
		Version:         a.info.Version,
		Language:        "go",
		Homepage:        a.info.Homepage,
		Issues:          a.info.Issues,
		Source:          a.info.Source,
		KubeletVersions: a.versions,
		Operations:      []string{"merge"},
		Claims: map[string]any{
			"format": false,
			"merge": map[string]any{
				"policies":       a.info.Policies,
				"policy_options": []string{},
				"feature_gates":  false,
				"refusals":       a.info.Refusals,
			},
		},
		Metadata: meta,
	}
}

// Run answers a merge case: cases outside the claims are skipped (the runner
// does not send them to an adapter that declares its claims; the checks
// keep a runner that ignores claims from reading a peer's answer as one).
func (a *adapter) Run(op string, raw json.RawMessage) (any, *common.Skip) {
	var head struct {
		KubeletVersion json.RawMessage `json:"kubelet_version"`
		Policy         json.RawMessage `json:"policy"`
		PolicyOptions  json.RawMessage `json:"policy_options"`
		FeatureGates   json.RawMessage `json:"feature_gates"`
	}
	_ = json.Unmarshal(raw, &head)
	if skip := a.checkVersion(head.KubeletVersion); skip != nil {
		return nil, skip
	}
	if !isEmpty(head.FeatureGates) {
		return nil, common.Skipf("%s models no kubelet feature gates (claims: merge.feature_gates false)", a.info.Name)
	}
	if !isEmpty(head.PolicyOptions) {
		return nil, common.Skipf("%s models no kubelet Topology Manager policy options (claims: merge.policy_options [])", a.info.Name)
	}
	var policy string
	if json.Unmarshal(head.Policy, &policy) == nil && !a.claimsPolicy(policy) && a.info.Refusals == false {
		return nil, common.Skipf("%s has no policy %q and does not refuse one (claims: merge.policies %v, refusals false)",
			a.info.Name, policy, a.info.Policies)
	}
	if _, skip := common.DecodeMergeCase(raw); skip != nil {
		return nil, skip
	}
	return a.repeated(raw)
}

func (a *adapter) claimsPolicy(p string) bool {
	for _, q := range a.info.Policies {
		if p == q {
			return true
		}
	}
	return false
}

// checkVersion: the case's release (VER-1; absent is the newest) must be
// one this adapter declares. A peer follows no kubelet release, so a
// version numaspec refuses (VER-3) is a refusal it does not model.
func (a *adapter) checkVersion(raw json.RawMessage) *common.Skip {
	minor := common.NewestModelled
	if !isEmpty(raw) {
		var s string
		if json.Unmarshal(raw, &s) != nil || common.MinorOf(s) == "" {
			return common.Skipf("kubelet_version %s is not a version: %s follows no kubelet release and refuses no version", raw, a.info.Name)
		}
		minor = common.MinorOf(s)
	}
	for _, v := range a.versions {
		if v == minor {
			return nil
		}
	}
	return common.Skipf("kubelet %s is not declared by this adapter (--kubelet-versions %s)", minor, strings.Join(a.versions, ","))
}

func isEmpty(raw json.RawMessage) bool {
	t := string(bytes.TrimSpace(raw))
	return t == "" || t == "null" || t == "{}"
}

type outcome struct {
	key    string // the answer as JSON, or "panic: ..."
	result any
	skip   *common.Skip
	panic  *common.Errored
}

// once decodes the case afresh and runs the peer's merge on it.
func (a *adapter) once(raw json.RawMessage) (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			msg := fmt.Sprintf("panic in %s's merge: %v", a.info.Name, p)
			o = outcome{key: msg, panic: &common.Errored{Message: msg, Traceback: string(debug.Stack())}}
		}
	}()
	c, skip := common.DecodeMergeCase(raw)
	if skip != nil {
		return outcome{key: "skipped: " + skip.Message, skip: skip}
	}
	result, skip := a.merge(c)
	if skip != nil {
		return outcome{key: "skipped: " + skip.Message, skip: skip}
	}
	if e, ok := result.(*common.Errored); ok {
		return outcome{key: "errored: " + e.Message, result: e}
	}
	j, err := json.Marshal(result)
	if err != nil {
		e := &common.Errored{Message: "could not encode " + a.info.Name + "'s answer: " + err.Error()}
		return outcome{key: "errored: " + e.Message, result: e}
	}
	return outcome{key: string(j), result: result}
}

// repeated evaluates the case a.repeat times; different answers are the
// finding "nondeterministic: ..." (the peer iterates Go maps).
func (a *adapter) repeated(raw json.RawMessage) (any, *common.Skip) {
	first := a.once(raw)
	seen := map[string]int{first.key: 1}
	order := []string{first.key}
	for i := 1; i < a.repeat; i++ {
		o := a.once(raw)
		if seen[o.key] == 0 {
			order = append(order, o.key)
		}
		seen[o.key]++
	}
	if len(order) > 1 {
		sort.Strings(order)
		parts := make([]string, len(order))
		for i, k := range order {
			parts[i] = fmt.Sprintf("%s (%d of %d)", k, seen[k], a.repeat)
		}
		return &common.Errored{Message: fmt.Sprintf("nondeterministic: %s gave %d different answers in %d evaluations of the same case: %s",
			a.info.Name, len(order), a.repeat, strings.Join(parts, "; "))}, nil
	}
	switch {
	case first.panic != nil:
		return first.panic, nil
	case first.skip != nil:
		return nil, first.skip
	}
	return first.result, nil
}
