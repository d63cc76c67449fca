// Package common holds the kubelet-version-independent part of the
// numaspec kubelet oracle: the JSON line protocol, request decoding (keeping
// the nil/empty distinctions), panic recovery and the output encoding.
//
// The kubelet code is called by package probe (../probe, 1.29 and later,
// through each release's shim) and by ../v1_23/release, which supply the
// Evaluator, the adapter Release and the NodeProbe of ReleaseMain.
package common

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strconv"

	"numaspec.invalid/adapter/protocol"
)

// HintIn is one decoded hint. Affinity == nil means "numa_affinity": null
// (or absent); a non-nil pointer to an empty slice means []. Score is the
// hint's optional "score" (HINT-5; nil when absent), which only releases
// whose TopologyHint has a Score (1.38 on) pass on to kubelet.
type HintIn struct {
	Affinity  *[]int `json:"numa_affinity"`
	Preferred bool   `json:"preferred"`
	Score     *int64 `json:"score"`
}

// MaxScore is the largest hint score numaspec's wire format accepts (HINT-5:
// a percentage; kubelet's TopologyHint.Score is documented as [0,100]).
const MaxScore = 100

// Provider is one hint provider: nil map when the JSON element was null.
// A resource mapped to nil means a nil hint slice; to a non-nil empty slice
// means [].
type Provider map[string][]HintIn

// Request is one decoded merge request.
type Request struct {
	KubeletVersion string
	NUMANodes      []int
	// NUMADistances: node id -> row (indexed by node id). nil when absent.
	NUMADistances map[int][]uint64
	Policy        string
	// PolicyOptions: nil when absent or null.
	PolicyOptions map[string]string
	// Providers: nil when absent or null.
	Providers []Provider
}

// Hint is the answer hint. Affinity nil => null; non-nil (maybe empty) => list.
// Score is kubelet's merged hint's Score, set (0 included) by the releases
// whose TopologyHint has one (1.38 on) and absent from the others' answers.
type Hint struct {
	Affinity  []int  `json:"numa_affinity"`
	Preferred bool   `json:"preferred"`
	Score     *int64 `json:"score,omitempty"`
}

// Scored is h with its score (a release whose hints carry one: 1.38 on).
func (h Hint) Scored(score int64) Hint {
	h.Score = &score
	return h
}

// Error is the error object of a response.
type Error struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Stage says which step produced the error (decode, new-manager,
	// policy-options, bitmask, merge, ...). Informational.
	Stage string `json:"stage,omitempty"`
	// Variants lists the distinct results seen when repeated evaluation
	// of the same request gave different answers (kind "nondeterministic").
	Variants []json.RawMessage `json:"variants,omitempty"`
}

// Response is one output line.
type Response struct {
	Hint  *Hint  `json:"hint,omitempty"`
	Admit *bool  `json:"admit,omitempty"`
	Error *Error `json:"error,omitempty"`
}

// Evaluator computes the answer for one request with real kubelet code.
type Evaluator interface {
	// Version is the pinned k8s.io/kubernetes version, e.g. "v1.30.14".
	Version() string
	Evaluate(req *Request) Response
}

// OK builds a success response.
func OK(h Hint, admit bool) Response { return Response{Hint: &h, Admit: &admit} }

// Fail builds an error response.
func Fail(kind, stage, msg string) Response {
	return Response{Error: &Error{Kind: kind, Stage: stage, Message: msg}}
}

// Mask is what every kubelet release's bitmask.BitMask offers that the output needs.
type Mask interface{ GetBits() []int }

// OutHint turns a kubelet hint (its mask, nil for no affinity, and its preferred flag) into
// the output form, node ids ascending.
func OutHint(mask Mask, preferred bool) Hint {
	if mask == nil {
		return Hint{Preferred: preferred}
	}
	bits := mask.GetBits()
	sort.Ints(bits)
	return Hint{Affinity: AffinityBits(false, bits), Preferred: preferred}
}

// AffinityBits converts a kubelet bitmask (via isNil + GetBits) into the
// output form: nil mask -> null, non-nil mask -> (possibly empty) list.
func AffinityBits(isNil bool, bits []int) []int {
	if isNil {
		return nil
	}
	out := make([]int, 0, len(bits))
	return append(out, bits...)
}

// ConvertProviders turns decoded providers into the kubelet
// []map[string][]H shape, preserving nil maps, nil slices and empty slices.
// mk builds one kubelet hint; affinity is nil for a null numa_affinity.
func ConvertProviders[H any](ps []Provider, mk func(affinity []int, isNil bool, preferred bool) (H, error)) ([]map[string][]H, error) {
	return ConvertHints(ps, func(h HintIn) (H, error) {
		var aff []int
		isNil := h.Affinity == nil
		if !isNil {
			aff = *h.Affinity
		}
		return mk(aff, isNil, h.Preferred)
	})
}

// ConvertHints is ConvertProviders with mk given each decoded hint whole
// (its score too).
func ConvertHints[H any](ps []Provider, mk func(HintIn) (H, error)) ([]map[string][]H, error) {
	if ps == nil {
		return nil, nil
	}
	out := make([]map[string][]H, len(ps))
	for i, p := range ps {
		if p == nil {
			continue // nil map
		}
		m := make(map[string][]H, len(p))
		for res, hints := range p {
			if hints == nil {
				m[res] = nil
				continue
			}
			hs := make([]H, 0, len(hints))
			for _, h := range hints {
				kh, err := mk(h)
				if err != nil {
					return nil, err
				}
				hs = append(hs, kh)
			}
			m[res] = hs
		}
		out[i] = m
	}
	return out, nil
}

type rawRequest struct {
	KubeletVersion string              `json:"kubelet_version"`
	NUMANodes      []int               `json:"numa_nodes"`
	NUMADistances  map[string][]uint64 `json:"numa_distances"`
	Policy         string              `json:"policy"`
	PolicyOptions  map[string]string   `json:"policy_options"`
	Providers      []json.RawMessage   `json:"providers"` // unknown fields are ignored
}

func isNull(r json.RawMessage) bool {
	return len(bytes.TrimSpace(r)) == 0 || string(bytes.TrimSpace(r)) == "null"
}

// Decode parses one request line.
func Decode(line []byte) (*Request, error) {
	if t := bytes.TrimSpace(line); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("request line is not a JSON object")
	}
	var rr rawRequest
	if err := json.Unmarshal(line, &rr); err != nil {
		return nil, err
	}
	req := &Request{
		KubeletVersion: rr.KubeletVersion,
		NUMANodes:      rr.NUMANodes,
		Policy:         rr.Policy,
		PolicyOptions:  rr.PolicyOptions,
	}
	if rr.NUMADistances != nil {
		req.NUMADistances = make(map[int][]uint64, len(rr.NUMADistances))
		for k, row := range rr.NUMADistances {
			id, err := strconv.Atoi(k)
			if err != nil {
				return nil, fmt.Errorf("numa_distances key %q is not an integer node id", k)
			}
			req.NUMADistances[id] = row
		}
	}
	if rr.Providers != nil {
		req.Providers = make([]Provider, len(rr.Providers))
		for i, raw := range rr.Providers {
			if isNull(raw) {
				continue
			}
			var res map[string]json.RawMessage
			if err := json.Unmarshal(raw, &res); err != nil {
				return nil, fmt.Errorf("providers[%d]: %v", i, err)
			}
			p := make(Provider, len(res))
			for name, hraw := range res {
				if isNull(hraw) {
					p[name] = nil
					continue
				}
				var hints []HintIn
				if err := json.Unmarshal(hraw, &hints); err != nil {
					return nil, fmt.Errorf("providers[%d][%q]: %v", i, name, err)
				}
				if hints == nil {
					hints = []HintIn{}
				}
				p[name] = hints
			}
			req.Providers[i] = p
		}
	}
	return req, nil
}

func safeEvaluate(ev Evaluator, req *Request) (resp Response) {
	defer func() {
		if r := recover(); r != nil {
			msg := fmt.Sprint(r)
			if os.Getenv("ORACLE_PANIC_STACK") != "" {
				msg += "\n" + string(debug.Stack())
			}
			resp = Fail("kubelet-panic", "evaluate", msg)
		}
	}()
	return ev.Evaluate(req)
}

// evaluateRepeated runs the evaluation n times and reports a
// "nondeterministic" error if the answers differ (kubelet iterates Go maps,
// e.g. over policy options, so with several bad options the reported error
// depends on map iteration order).
func evaluateRepeated(ev Evaluator, req *Request, n int) Response {
	first := safeEvaluate(ev, req)
	if n <= 1 {
		return first
	}
	firstJSON, _ := json.Marshal(first)
	seen := map[string]bool{string(firstJSON): true}
	for i := 1; i < n; i++ {
		r := safeEvaluate(ev, req)
		j, _ := json.Marshal(r)
		seen[string(j)] = true
	}
	if len(seen) == 1 {
		return first
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	variants := make([]json.RawMessage, len(keys))
	for i, k := range keys {
		variants[i] = json.RawMessage(k)
	}
	return Response{Error: &Error{
		Kind:     "nondeterministic",
		Stage:    "evaluate",
		Message:  fmt.Sprintf("kubelet %s gave %d different answers in %d evaluations of the same request (Go map iteration order)", ev.Version(), len(keys), n),
		Variants: variants,
	}}
}

// ServeLines answers every non-blank stdin line with answer(line), one JSON line
// on stdout each, flushed after each. It never exits on a bad line; it exits 2
// only when stdin or stdout fail.
func ServeLines(answer func(line []byte) any) {
	if err := protocol.Serve(os.Stdin, os.Stdout, func(line []byte) (any, bool) { return answer(line), false }, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// oracleMain runs the merge oracle's line protocol on stdin/stdout (the
// "merge" mode of ReleaseMain; args are its flags). It never exits on a bad
// line.
func oracleMain(ev Evaluator, args []string) {
	fs := flag.NewFlagSet("merge", flag.ExitOnError)
	repeat := fs.Int("repeat", 0, "evaluate each request N times and report kind \"nondeterministic\" if answers differ (0 = auto: 1, or 16 when the request has >= 2 policy options)")
	version := fs.Bool("version", false, "print the pinned k8s.io/kubernetes version and exit")
	_ = fs.Parse(args)
	if *version {
		fmt.Println(ev.Version())
		return
	}
	ServeLines(func(line []byte) any {
		var resp Response
		req, derr := Decode(line)
		if derr != nil {
			resp = Fail("bad-request", "decode", derr.Error())
		} else {
			n := *repeat
			if n == 0 {
				n = 1
				if len(req.PolicyOptions) >= 2 {
					n = 16
				}
			}
			resp = evaluateRepeated(ev, req, n)
		}
		return resp
	})
}
