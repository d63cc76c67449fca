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
	"encoding/json"
	"fmt"
	"os"

	"numaspec.invalid/adapter/protocol"
)

// ProtocolVersion is the adapter protocol version this code speaks.
const ProtocolVersion = protocol.Version

// DebugEnv, when set, lets the adapter write diagnostics (and the allocator's
// klog output) to stderr. Without it the adapter writes nothing there.
const DebugEnv = protocol.DebugEnv

// OpAllocate is the one operation these adapters serve.
const OpAllocate = "allocate"

// Debug reports whether DebugEnv is set.
func Debug() bool { return protocol.Debug() }

// Debugf writes to stderr only when DebugEnv is set.
func Debugf(format string, args ...any) {
	if Debug() {
		fmt.Fprintf(os.Stderr, "dra-allocator: "+format+"\n", args...)
	}
}

// Skip is a "skipped" answer: the adapter knowingly does not answer the case.
type Skip = protocol.Skip

// Skipf builds a Skip.
func Skipf(format string, args ...any) *Skip { return protocol.Skipf(format, args...) }

// Errored is an "errored" answer: the adapter caught an error of its own
// (a malformed case, a panic, a timeout).
type Errored = protocol.Errored

// Erroredf builds an Errored.
func Erroredf(format string, args ...any) *Errored { return protocol.Erroredf(format, args...) }

// server answers the run requests for one driver (../../protocol reads the
// lines and answers start and stop).
type server struct {
	impl   Implementation
	driver Driver
}

func (s *server) Implementation() any { return s.impl }

// Run answers one run request.
func (s *server) Run(seq int64, op string, raw json.RawMessage) any {
	if op != OpAllocate {
		return protocol.Skipped(seq, Skipf("operation %q is not served by this adapter (it serves %q only)", op, OpAllocate))
	}
	res, skip, err := s.allocate(raw)
	switch {
	case err != nil:
		return protocol.ErroredAt(&seq, err)
	case skip != nil:
		return protocol.Skipped(seq, skip)
	case res == nil:
		return protocol.ErroredAt(&seq, Erroredf("internal error: the driver returned neither a result nor a skip"))
	}
	return protocol.Result(seq, res)
}
