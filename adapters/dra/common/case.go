package common

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	sigsjson "sigs.k8s.io/json"
)

// CaseTimeout bounds one case: the allocator gets a context with this
// deadline, and the watchdog answers errored if the allocator has not
// returned WatchdogGrace after it.
const (
	CaseTimeout   = 10 * time.Second // the scheduler's default DRA FilterTimeout (1.34+)
	WatchdogGrace = 2 * time.Second
)

// Node is the case's node: a v1.Node with this name and these labels.
type Node struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
}

// Case is a decoded "allocate" case envelope. The API objects stay raw JSON
// (resource.k8s.io/v1): each driver decodes them into its release's types.
type Case struct {
	Release  string
	Features []string
	// Variant is the variant the case forces ("" when the features choose),
	// as the scheduler's EnableAllocators does (spec/dra/dra.md, DRA-8).
	Variant   string
	Node      Node
	Slices    []json.RawMessage
	Classes   []json.RawMessage
	Allocated []DeviceRef
	// Shares are the allocated shares of devices that allow multiple
	// allocations (results with a shareID and no admin access), each with
	// the capacity it consumes (nil: none recorded) (spec/dra/dra.md, DRA-20).
	Shares []Share
	Claims []json.RawMessage
}

// Share is one allocated share of a device: ConsumedCapacity maps a
// capacity name, as the result spells it, to a quantity; nil when the result
// has none (an empty map is dropped by the API server, so it is nil too).
type Share struct {
	Device           DeviceRef
	ConsumedCapacity map[string]string
}

type wireShare struct {
	Device           *string           `json:"device"`
	ConsumedCapacity map[string]string `json:"consumedCapacity"`
}

type wireCase struct {
	Release   *string           `json:"release"`
	Features  []string          `json:"features"`
	Variant   *string           `json:"variant"`
	Node      *Node             `json:"node"`
	Slices    []json.RawMessage `json:"slices"`
	Classes   []json.RawMessage `json:"classes"`
	Allocated []string          `json:"allocated"`
	Shares    []wireShare       `json:"allocatedShares"`
	Claims    []json.RawMessage `json:"claims"`
}

// DeviceRef names one device: "driver/pool/device" on the wire.
type DeviceRef struct{ Driver, Pool, Device string }

// ParseDeviceRef splits "driver/pool/device". A driver name is a DNS
// subdomain and a device name a DNS label, neither with a slash, while a
// pool name may hold slashes: the pool is everything between the first and
// the last slash.
func ParseDeviceRef(s string) (DeviceRef, error) {
	i, j := strings.Index(s, "/"), strings.LastIndex(s, "/")
	if i < 0 || i == j {
		return DeviceRef{}, fmt.Errorf("%q is not driver/pool/device", s)
	}
	r := DeviceRef{Driver: s[:i], Pool: s[i+1 : j], Device: s[j+1:]}
	if r.Driver == "" || r.Pool == "" || r.Device == "" {
		return DeviceRef{}, fmt.Errorf("%q has an empty driver, pool or device name", s)
	}
	return r, nil
}

// DecodeCase decodes the case envelope. What is malformed (not an object,
// a field of the wrong JSON type, an unknown or repeated top-level field, no
// release, a bad allocated entry) is an Errored naming the field.
func DecodeCase(raw json.RawMessage) (*Case, *Errored) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, Erroredf("case: missing (want an object with release, features, variant, node, slices, classes, allocated, allocatedShares, claims)")
	}
	var w wireCase
	strict, err := sigsjson.UnmarshalStrict(raw, &w)
	if err != nil {
		return nil, Erroredf("case: %v", err)
	}
	if len(strict) > 0 {
		return nil, Erroredf("case: %v", joinErrors(strict))
	}
	if w.Release == nil {
		return nil, Erroredf("case.release: missing (want the Kubernetes minor, e.g. \"1.37\")")
	}
	c := &Case{Release: *w.Release, Features: w.Features, Slices: w.Slices, Classes: w.Classes, Claims: w.Claims}
	if w.Variant != nil {
		if !slices.Contains(Variants, *w.Variant) {
			return nil, Erroredf("case.variant: %q is not a variant (want one of %s)", *w.Variant, strings.Join(Variants, ", "))
		}
		c.Variant = *w.Variant
	}
	if w.Node != nil {
		c.Node = *w.Node
	}
	for i, s := range w.Allocated {
		ref, err := ParseDeviceRef(s)
		if err != nil {
			return nil, Erroredf("case.allocated[%d]: %v", i, err)
		}
		c.Allocated = append(c.Allocated, ref)
	}
	for i, w := range w.Shares {
		if w.Device == nil {
			return nil, Erroredf("case.allocatedShares[%d].device: missing (want driver/pool/device)", i)
		}
		ref, err := ParseDeviceRef(*w.Device)
		if err != nil {
			return nil, Erroredf("case.allocatedShares[%d].device: %v", i, err)
		}
		share := Share{Device: ref}
		if len(w.ConsumedCapacity) > 0 {
			share.ConsumedCapacity = w.ConsumedCapacity
		}
		c.Shares = append(c.Shares, share)
	}
	return c, nil
}

// DecodeObject decodes one API object of the kind (raw, at where, e.g.
// "slices[0]") into v, strictly and case-sensitively, as the API server's
// strict decoding does. Malformed JSON, a wrong type or a repeated field is
// an Errored naming the field; a field the pinned Go type does not have is a
// Skip naming it and api (the types decoded into, e.g. "resource.k8s.io/v1
// of k8s.io/api v0.34.2"): the release cannot represent that object.
func DecodeObject(raw json.RawMessage, v any, where, kind, api string) (*Skip, *Errored) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, Erroredf("case.%s: null (want a %s)", where, kind)
	}
	strict, err := sigsjson.UnmarshalStrict(raw, v)
	if err != nil {
		return nil, Erroredf("case.%s: %v", where, err)
	}
	var unknown, other []error
	for _, e := range strict {
		if strings.Contains(e.Error(), "unknown field") {
			unknown = append(unknown, e)
		} else {
			other = append(other, e)
		}
	}
	if len(other) > 0 {
		return nil, Erroredf("case.%s: %v", where, joinErrors(other))
	}
	if len(unknown) > 0 {
		return Skipf("case.%s: %v: not a field of %s in %s", where, joinErrors(unknown), kind, api), nil
	}
	return nil, nil
}

func joinErrors(errs []error) string {
	s := make([]string, len(errs))
	for i, e := range errs {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

// DeviceResult is one allocated device of a claim; AdminAccess as the
// allocator's result sets it (spec/dra/dra.md, DRA-17).
type DeviceResult struct {
	Request     string `json:"request"`
	Driver      string `json:"driver"`
	Pool        string `json:"pool"`
	Device      string `json:"device"`
	AdminAccess bool   `json:"adminAccess,omitempty"`
	// Shared: the result has a shareID (a share of a device that allows
	// multiple allocations; the ID itself is random); ConsumedCapacity: the
	// result's, each quantity as an exact rational ("2147483648", "3/2")
	// (spec/dra/dra.md, DRA-20).
	Shared           bool              `json:"shared,omitempty"`
	ConsumedCapacity map[string]string `json:"consumedCapacity,omitempty"`
}

// ClaimResult is one claim's allocation.
type ClaimResult struct {
	Devices []DeviceResult `json:"devices"`
}

// Outcomes of a result.
const (
	Allocated     = "allocated"
	Unschedulable = "unschedulable"
	OutcomeError  = "error"
)

// Result is the "result" object of an allocate answer.
type Result struct {
	Outcome string        `json:"outcome"`
	Variant string        `json:"variant"`
	Message string        `json:"message,omitempty"`
	Claims  []ClaimResult `json:"claims,omitzero"` // nil unless allocated
}

// Driver is one pinned release's allocator.
type Driver interface {
	// ModuleVersion is the pinned k8s.io/dynamic-resource-allocation
	// version the driver links ("v0.37.2").
	ModuleVersion() string
	// Setup is called once, before any case, with the -variant flag.
	Setup(variant string) error
	// VariantFeatures lists, sorted, the Features fields the configured
	// variant supports (all that any allocator supports for "auto").
	VariantFeatures() []string
	// Allocate answers one decoded case whose release is this driver's,
	// within ctx. A panic is turned into an errored answer by the caller.
	Allocate(ctx context.Context, c *Case) (*Result, *Skip, *Errored)
}

// allocate decodes and checks the case envelope, then runs the driver under
// the watchdog.
func (s *server) allocate(raw json.RawMessage) (*Result, *Skip, *Errored) {
	c, e := DecodeCase(raw)
	if e != nil {
		return nil, nil, e
	}
	if c.Release != s.impl.AllocateVersions[0] {
		return nil, Skipf("case.release %q: this adapter runs k8s.io/dynamic-resource-allocation %s, Kubernetes %s only",
			c.Release, s.impl.Version, s.impl.AllocateVersions[0]), nil
	}
	return Guarded(CaseTimeout, WatchdogGrace, func(ctx context.Context) (*Result, *Skip, *Errored) {
		return s.driver.Allocate(ctx, c)
	})
}

// Guarded runs fn in its own goroutine with a context that expires after
// timeout: a panic in fn is an Errored with its stack, and if fn has not
// returned grace after the deadline the answer is an Errored too (fn's
// goroutine is left behind; the process keeps serving).
func Guarded(timeout, grace time.Duration, fn func(ctx context.Context) (*Result, *Skip, *Errored)) (*Result, *Skip, *Errored) {
	type answer struct {
		r *Result
		s *Skip
		e *Errored
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	done := make(chan answer, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- answer{e: &Errored{Message: fmt.Sprintf("panic in the allocator: %v", p), Traceback: string(debug.Stack())}}
			}
		}()
		r, s, e := fn(ctx)
		done <- answer{r, s, e}
	}()
	t := time.NewTimer(timeout + grace)
	defer t.Stop()
	select {
	case a := <-done:
		return a.r, a.s, a.e
	case <-t.C:
		return nil, nil, Erroredf("watchdog: the allocator did not return within %s (context deadline %s)", timeout+grace, timeout)
	}
}
