// Package protocol is the plumbing every numaspec adapter shares, whatever it
// wraps (kubelet's managers in ../kubelet, the peers in ../peers, the
// scheduler's DRA allocator in ../dra): the numaspec adapter protocol
// (spec/protocols/adapter-protocol.md, protocol version 1, PROTO-1..5) on
// stdin/stdout, JSON lines both ways. It reads the request lines, answers
// start and stop, hands each run to the adapter, turns a panic into an
// errored answer, writes one answer line per request, flushed at once, and
// nothing else on stdout. What a run means is the adapter's: it imports no
// Kubernetes module.
package protocol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
)

// Version is the adapter protocol version this code speaks.
const Version = 1

// Batch is the most runs an adapter served here answers in one batch request
// (PROTO-8); the start answer declares it as the implementation's "batch".
const Batch = 64

// DebugEnv, when set, lets an adapter write diagnostics to stderr. Without it
// an adapter writes nothing there.
const DebugEnv = "NUMASPEC_ADAPTER_DEBUG"

// Debug says whether DebugEnv is set.
func Debug() bool { return os.Getenv(DebugEnv) != "" }

// Skip is a "skipped" answer: the adapter knowingly does not answer the case.
type Skip struct {
	Message  string
	IssueURL string
}

// Skipf builds a Skip.
func Skipf(format string, args ...any) *Skip { return &Skip{Message: fmt.Sprintf(format, args...)} }

// Errored is an "errored" answer's context: what went wrong, and where.
type Errored struct {
	Message   string
	Traceback string
}

func (e *Errored) Error() string { return e.Message }

// Erroredf builds an Errored.
func Erroredf(format string, args ...any) *Errored {
	return &Errored{Message: fmt.Sprintf(format, args...)}
}

type request struct {
	Cmd     string            `json:"cmd"`
	Seq     json.RawMessage   `json:"seq"`
	Op      string            `json:"op"`
	Case    json.RawMessage   `json:"case"`
	Version *int              `json:"version"`
	Runs    []json.RawMessage `json:"runs"`
}

type batchAnswer struct {
	Answers []any `json:"answers"`
}

type errContext struct {
	Message   string `json:"message"`
	Traceback string `json:"traceback,omitempty"`
}

type erroredAnswer struct {
	Seq     *int64     `json:"seq"`
	Errored bool       `json:"errored"`
	Context errContext `json:"context"`
}

type resultAnswer struct {
	Seq    int64 `json:"seq"`
	Result any   `json:"result"`
}

type skippedAnswer struct {
	Seq      int64  `json:"seq"`
	Skipped  bool   `json:"skipped"`
	Message  string `json:"message"`
	IssueURL string `json:"issue_url,omitempty"`
}

// ErroredAt is the errored answer to the run numbered seq (nil: to a line
// that is no run request).
func ErroredAt(seq *int64, e *Errored) any {
	return erroredAnswer{Seq: seq, Errored: true, Context: errContext{Message: e.Message, Traceback: e.Traceback}}
}

// Skipped is the skipped answer to the run numbered seq.
func Skipped(seq int64, s *Skip) any {
	return skippedAnswer{Seq: seq, Skipped: true, Message: s.Message, IssueURL: s.IssueURL}
}

// Result is the result answer to the run numbered seq.
func Result(seq int64, result any) any { return resultAnswer{Seq: seq, Result: result} }

// Adapter is what an adapter brings: its start answer's implementation
// object, and the answer to one run (Result, Skipped or ErroredAt of seq).
type Adapter interface {
	Implementation() any
	Run(seq int64, op string, c json.RawMessage) any
}

// run answers one run request; a panic becomes an errored answer.
func run(a Adapter, seq int64, op string, c json.RawMessage) (answer any) {
	defer func() {
		if p := recover(); p != nil {
			answer = ErroredAt(&seq, &Errored{Message: fmt.Sprintf("panic while answering the %s case: %v", op, p),
				Traceback: string(debug.Stack())})
		}
	}()
	return a.Run(seq, op, c)
}

// Answer is the answer to one request line; stop is true for {"cmd":"stop"}.
func Answer(a Adapter, line []byte) (out any, stop bool) {
	defer func() {
		if p := recover(); p != nil {
			out, stop = ErroredAt(nil, &Errored{Message: fmt.Sprintf("panic while reading the request: %v", p),
				Traceback: string(debug.Stack())}), false
		}
	}()
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return ErroredAt(nil, Erroredf("request line is not a JSON object: %v", err)), false
	}
	switch req.Cmd {
	case "start":
		if req.Version == nil || *req.Version != Version {
			got := "none"
			if req.Version != nil {
				got = strconv.Itoa(*req.Version)
			}
			return map[string]any{"ready": false, "version": Version,
				"message": fmt.Sprintf("this adapter speaks protocol version %d, not %s", Version, got)}, false
		}
		return map[string]any{"ready": true, "version": Version, "implementation": declaringBatch(a.Implementation())}, false
	case "stop":
		return nil, true
	case "run":
		return runRequest(a, req), false
	case "batch":
		// PROTO-8: one answer line for the batch, a run answer for each of its
		// runs, in order; a panic in one run is that run's errored answer.
		if len(req.Runs) == 0 || len(req.Runs) > Batch {
			return ErroredAt(nil, Erroredf("a batch holds 1 to %d runs, not %d", Batch, len(req.Runs))), false
		}
		answers := make([]any, len(req.Runs))
		for i, raw := range req.Runs {
			var r request
			if err := json.Unmarshal(raw, &r); err != nil || r.Cmd != "run" {
				answers[i] = ErroredAt(nil, Erroredf("batch run %d is not a run request", i))
				continue
			}
			answers[i] = runRequest(a, r)
		}
		return batchAnswer{Answers: answers}, false
	default:
		return ErroredAt(nil, Erroredf("unknown cmd %q (want start, run, batch or stop)", req.Cmd)), false
	}
}

// runRequest answers one run request (alone or in a batch).
func runRequest(a Adapter, req request) any {
	seq, err := strconv.ParseInt(string(bytes.TrimSpace(req.Seq)), 10, 64)
	if err != nil || seq < 1 {
		return ErroredAt(nil, Erroredf("run request without a positive integer seq (%s)", req.Seq))
	}
	return run(a, seq, req.Op, req.Case)
}

// declaringBatch is the implementation object with "batch": Batch added
// (PROTO-8), so that every adapter served here declares what Answer serves;
// an object that cannot be read as a JSON object is left as it is.
func declaringBatch(impl any) any {
	data, err := json.Marshal(impl)
	if err != nil {
		return impl
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil || fields == nil {
		return impl
	}
	fields["batch"] = json.RawMessage(strconv.Itoa(Batch))
	return fields
}

// Serve is the one line loop of every adapter binary: each non-blank line of
// stdin gets answer's answer as one JSON line on stdout, flushed at once,
// until answer says stop or stdin ends (nil), or reading or writing fails
// (that error). An answer that cannot be encoded is a bug of the adapter:
// encodeFailed's answer says so in-band (nil: Serve returns the error).
func Serve(stdin io.Reader, stdout io.Writer, answer func(line []byte) (any, bool),
	encodeFailed func(error) any) error {
	in := bufio.NewReaderSize(stdin, 1<<20)
	out := bufio.NewWriter(stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for {
		line, rerr := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			a, stop := answer(line)
			if stop {
				return out.Flush()
			}
			if e := enc.Encode(a); e != nil {
				if encodeFailed == nil {
					return fmt.Errorf("encode: %w", e)
				}
				if e2 := enc.Encode(encodeFailed(e)); e2 != nil {
					return fmt.Errorf("encode: %w", e2)
				}
			}
			if e := out.Flush(); e != nil {
				return e
			}
		}
		if rerr == io.EOF {
			return out.Flush()
		}
		if rerr != nil {
			return fmt.Errorf("read: %w", rerr)
		}
	}
}

// GCPercent is the garbage collector's target an adapter runs with when GOGC
// is not set: kubelet's configuration code, run afresh for every case, makes
// mostly short-lived garbage, and at Go's default of 100 the collector took
// about 30% of a merge case's CPU time (4.0 s of user time for 5,000 merges
// against 2.8 s at 400, for a peak of 121 MB instead of 86 MB;
// docs/guides/benchmarks.md).
const GCPercent = 400

// ServeAdapter serves an adapter: Serve answering each line with Answer, an
// answer that cannot be encoded said in-band (EncodeFailed), with the garbage
// collector at GCPercent unless GOGC says otherwise.
func ServeAdapter(a Adapter, stdin io.Reader, stdout io.Writer) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	return Serve(stdin, stdout, func(line []byte) (any, bool) { return Answer(a, line) }, EncodeFailed)
}

// EncodeFailed is the usual encodeFailed of Serve: an errored answer naming
// the encoding error.
func EncodeFailed(e error) any {
	return ErroredAt(nil, Erroredf("could not encode the answer: %v", e))
}

// ModuleVersion is the version of the module path in this binary's build
// information, its replacement's when replaced ("" when it has none). The
// build information is read once: kubelet adapters ask for the version of
// every case they answer, and parsing it each time cost about 6% of a merge
// case's time.
func ModuleVersion(path string) string {
	readVersions.Do(func() {
		moduleVersions = map[string]string{}
		info, ok := debug.ReadBuildInfo()
		if !ok {
			return
		}
		for _, dep := range info.Deps {
			if _, seen := moduleVersions[dep.Path]; seen {
				continue // the first entry of a path, as a search would find
			}
			if dep.Replace != nil {
				moduleVersions[dep.Path] = dep.Replace.Version
			} else {
				moduleVersions[dep.Path] = dep.Version
			}
		}
	})
	return moduleVersions[path]
}

var (
	readVersions   sync.Once
	moduleVersions map[string]string
)
