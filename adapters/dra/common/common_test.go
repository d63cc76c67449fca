package common

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"numaspec.invalid/adapter/protocol"
)

func TestParseDeviceRef(t *testing.T) {
	r, err := ParseDeviceRef("gpu.example.com/rack-1/node-a/gpu-0")
	if err != nil || r != (DeviceRef{"gpu.example.com", "rack-1/node-a", "gpu-0"}) {
		t.Fatalf("got %+v, %v", r, err)
	}
	for _, bad := range []string{"", "a", "a/b", "/p/d", "d//x", "d/p/"} {
		if _, err := ParseDeviceRef(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

type fakeFeatures struct {
	AdminAccess        bool
	ConsumableCapacity bool
	ListTypeAttributes bool
	hidden             bool
	Count              int
}

type fakeCELFeatures struct {
	EnableConsumableCapacity bool
	EnableListTypeAttributes bool
	EnableNothingLikeThis    bool
}

func TestFeatures(t *testing.T) {
	if got := FeatureNames(fakeFeatures{}); !reflect.DeepEqual(got, []string{"AdminAccess", "ConsumableCapacity", "ListTypeAttributes"}) {
		t.Fatalf("FeatureNames: %v", got)
	}
	var f fakeFeatures
	if err := SetFeatures(&f, []string{"ConsumableCapacity", "ListTypeAttributes"}); err != nil {
		t.Fatal(err)
	}
	if got := EnabledFeatures(f); !reflect.DeepEqual(got, []string{"ConsumableCapacity", "ListTypeAttributes"}) {
		t.Fatalf("EnabledFeatures: %v", got)
	}
	for _, bad := range []string{"hidden", "Count", "Nope"} {
		if err := SetFeatures(&fakeFeatures{}, []string{bad}); err == nil {
			t.Errorf("SetFeatures(%q): no error", bad)
		}
	}
	var c fakeCELFeatures
	CopyEnableFlags(&c, f)
	if c != (fakeCELFeatures{EnableConsumableCapacity: true, EnableListTypeAttributes: true}) {
		t.Fatalf("CopyEnableFlags: %+v", c)
	}
}

func TestGuarded(t *testing.T) {
	_, _, e := Guarded(10*time.Millisecond, 10*time.Millisecond, func(ctx context.Context) (*Result, *Skip, *Errored) {
		time.Sleep(time.Second) // ignores ctx: the watchdog answers
		return &Result{}, nil, nil
	})
	if e == nil || !strings.Contains(e.Message, "did not return") {
		t.Fatalf("timeout: %+v", e)
	}
	_, _, e = Guarded(time.Second, time.Second, func(ctx context.Context) (*Result, *Skip, *Errored) { panic("boom") })
	if e == nil || !strings.Contains(e.Message, "boom") || e.Traceback == "" {
		t.Fatalf("panic: %+v", e)
	}
	r, _, e := Guarded(time.Second, time.Second, func(ctx context.Context) (*Result, *Skip, *Errored) {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("no deadline")
		}
		return &Result{Outcome: Allocated}, nil, nil
	})
	if e != nil || r.Outcome != Allocated {
		t.Fatalf("plain: %+v %+v", r, e)
	}
}

type fakeDriver struct{}

func (fakeDriver) ModuleVersion() string     { return "v0.99.0" }
func (fakeDriver) Setup(string) error        { return nil }
func (fakeDriver) VariantFeatures() []string { return nil }
func (fakeDriver) Allocate(_ context.Context, c *Case) (*Result, *Skip, *Errored) {
	if len(c.Claims) > 0 {
		panic("claims")
	}
	return &Result{Outcome: Unschedulable, Variant: "stable"}, nil, nil
}

func TestServe(t *testing.T) {
	s := &server{driver: fakeDriver{}, impl: Implementation{Version: "v0.99.0", AllocateVersions: []string{"1.99"}}}
	in := strings.Join([]string{
		`{"cmd":"start","version":1}`,
		`{"cmd":"start","version":2}`,
		``,
		`{"cmd":"run","seq":1,"op":"allocate","case":{"release":"1.99"}}`,
		`{"cmd":"run","seq":2,"op":"allocate","case":{"release":"1.98"}}`,
		`{"cmd":"run","seq":3,"op":"merge","case":{}}`,
		`{"cmd":"run","seq":4,"op":"allocate","case":{"release":"1.99","claims":[{}]}}`,
		`{"cmd":"run","seq":5,"op":"allocate","case":{"release":1}}`,
		`not json`,
		`{"cmd":"stop"}`,
		`{"cmd":"run","seq":6,"op":"allocate","case":{"release":"1.99"}}`,
	}, "\n")
	var out bytes.Buffer
	if err := protocol.ServeAdapter(s, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{`"ready":true`, `"ready":false`, `"outcome":"unschedulable"`, `"skipped":true`,
		`"skipped":true`, `"panic in the allocator: claims"`, `wireCase.release of type string`, `"errored":true`}
	if len(lines) != len(want) {
		t.Fatalf("%d answers, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("answer %d: %s lacks %s", i, lines[i], w)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &m); err != nil {
			t.Errorf("answer %d is not JSON: %v", i, err)
		}
	}
}

func TestDecodeCaseVariant(t *testing.T) {
	c, e := DecodeCase([]byte(`{"release":"1.37","variant":"incubating"}`))
	if e != nil || c.Variant != "incubating" {
		t.Fatalf("variant incubating: got %+v, %+v", c, e)
	}
	c, e = DecodeCase([]byte(`{"release":"1.37"}`))
	if e != nil || c.Variant != "" {
		t.Fatalf("no variant: got %+v, %+v", c, e)
	}
	if _, e = DecodeCase([]byte(`{"release":"1.37","variant":"newest"}`)); e == nil || !strings.Contains(e.Message, "case.variant") {
		t.Fatalf("variant newest: want an error naming case.variant, got %+v", e)
	}
}
