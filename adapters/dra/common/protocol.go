// Package common is the release-independent part of the dra-allocator
// adapters (../README.md): the numaspec adapter protocol (spec/protocols/adapter-protocol.md,
// protocol version 1, PROTO-1..5) on stdin/stdout, the decoding of the
// "allocate" case envelope, the result shapes, the watchdog that keeps one case
// from hanging the process, and the binary's flags. It imports no Kubernetes
// module: each pinned release's driver (../v1alloc for resource.k8s.io/v1,
// ../v0_33 for v1beta1) supplies a Driver that calls its own
// k8s.io/dynamic-resource-allocation.
package common

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
)

// ProtocolVersion is the adapter protocol version this code speaks.
const ProtocolVersion = 1

// DebugEnv, when set, lets the adapter write diagnostics (and the allocator's
// klog output) to stderr. Without it the adapter writes nothing there.
const DebugEnv = "NUMASPEC_ADAPTER_DEBUG"

// OpAllocate is the one operation these adapters serve.
const OpAllocate = "allocate"

// Debug reports whether DebugEnv is set.
func Debug() bool { return os.Getenv(DebugEnv) != "" }

// Debugf writes to stderr only when DebugEnv is set.
func Debugf(format string, args ...any) {
	if Debug() {
		fmt.Fprintf(os.Stderr, "dra-allocator: "+format+"\n", args...)
	}
}

// Skip is a "skipped" answer: the adapter knowingly does not answer the case.
type Skip struct {
	Message  string
	IssueURL string
}

// Skipf builds a Skip.
func Skipf(format string, args ...any) *Skip { return &Skip{Message: fmt.Sprintf(format, args...)} }

// Errored is an "errored" answer: the adapter caught an error of its own
// (a malformed case, a panic, a timeout).
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
	Cmd     string          `json:"cmd"`
	Seq     json.RawMessage `json:"seq"`
	Op      string          `json:"op"`
	Case    json.RawMessage `json:"case"`
	Version *int            `json:"version"`
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

func erroredAt(seq *int64, msg, trace string) erroredAnswer {
	return erroredAnswer{Seq: seq, Errored: true, Context: errContext{Message: msg, Traceback: trace}}
}

// server answers request lines for one driver.
type server struct {
	impl   Implementation
	driver Driver
}

// runCase answers one run request; a panic becomes an errored answer.
func (s *server) runCase(seq int64, op string, raw json.RawMessage) (answer any) {
	defer func() {
		if p := recover(); p != nil {
			answer = erroredAt(&seq, fmt.Sprintf("panic while answering the %s case: %v", op, p), string(debug.Stack()))
		}
	}()
	if op != OpAllocate {
		return skippedAnswer{Seq: seq, Skipped: true,
			Message: fmt.Sprintf("operation %q is not served by this adapter (it serves %q only)", op, OpAllocate)}
	}
	res, skip, err := s.allocate(raw)
	switch {
	case err != nil:
		return erroredAt(&seq, err.Message, err.Traceback)
	case skip != nil:
		return skippedAnswer{Seq: seq, Skipped: true, Message: skip.Message, IssueURL: skip.IssueURL}
	case res == nil:
		return erroredAt(&seq, "internal error: the driver returned neither a result nor a skip", "")
	}
	return resultAnswer{Seq: seq, Result: res}
}

// handle answers one request line. stop is true for {"cmd":"stop"}.
func (s *server) handle(line []byte) (out any, stop bool) {
	defer func() {
		if p := recover(); p != nil {
			out, stop = erroredAt(nil, fmt.Sprintf("panic while reading the request: %v", p), string(debug.Stack())), false
		}
	}()
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return erroredAt(nil, "request line is not a JSON object: "+err.Error(), ""), false
	}
	switch req.Cmd {
	case "start":
		if req.Version == nil || *req.Version != ProtocolVersion {
			got := "none"
			if req.Version != nil {
				got = strconv.Itoa(*req.Version)
			}
			return map[string]any{"ready": false, "version": ProtocolVersion,
				"message": fmt.Sprintf("this adapter speaks protocol version %d, not %s", ProtocolVersion, got)}, false
		}
		return map[string]any{"ready": true, "version": ProtocolVersion, "implementation": s.impl}, false
	case "stop":
		return nil, true
	case "run":
		seq, err := strconv.ParseInt(string(bytes.TrimSpace(req.Seq)), 10, 64)
		if err != nil || seq < 1 {
			return erroredAt(nil, fmt.Sprintf("run request without a positive integer seq (%s)", req.Seq), ""), false
		}
		return s.runCase(seq, req.Op, req.Case), false
	default:
		return erroredAt(nil, fmt.Sprintf("unknown cmd %q (want start, run or stop)", req.Cmd), ""), false
	}
}

// serve runs the line loop: each non-blank stdin line gets one JSON answer
// line on stdout, flushed at once, until stop or the end of stdin. stdout
// carries protocol answers only.
func (s *server) serve(stdin io.Reader, stdout io.Writer) error {
	in := bufio.NewReaderSize(stdin, 1<<20)
	out := bufio.NewWriter(stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for {
		line, rerr := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			a, stop := s.handle(line)
			if stop {
				return out.Flush()
			}
			if e := enc.Encode(a); e != nil {
				Debugf("encode: %v", e)
				// An unencodable answer is a bug of ours: say so in-band.
				if e2 := enc.Encode(erroredAt(nil, "could not encode the answer: "+e.Error(), "")); e2 != nil {
					return e2
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
			return rerr
		}
	}
}
