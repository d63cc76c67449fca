// Package v1alloc is the driver of the dra-allocator adapters for the
// releases whose structured allocator takes resource.k8s.io/v1 objects
// (k8s.io/dynamic-resource-allocation v0.34 on): it decodes a case's API
// objects into k8s.io/api/resource/v1 types, calls structured.NewAllocator
// and Allocate, and maps their answer onto the wire result (../README.md).
// What differs between those releases comes in as Hooks from the release
// dir's main.go; everything else (Features fields, the CEL cache features)
// is reached by reflection, so the one source serves every release.
package v1alloc

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"

	"numaspec.invalid/dra-adapter/common"
)

// Hooks are the release-specific parts of the public API.
type Hooks struct {
	// EnableAllocators is structured.EnableAllocators (v0.35 on); nil when
	// the release has none, and -variant then only filters: a case the
	// module's own choice answers with another variant is skipped.
	EnableAllocators func(names ...string)
	// FailedOnNode is structured.ErrFailedAllocationOnNode (v0.35 on); nil
	// when the release has none (every Allocate error is then "error").
	FailedOnNode error
	// NewAllocator is structured.NewAllocator over resource.k8s.io/v1
	// slices: the module's own from v0.34 to v0.37; from v0.38, which takes
	// the module's internal slices (k8s.io/dynamic-resource-allocation/api),
	// the release converts each slice as the scheduler's informer does and
	// calls it (../v0_38/main.go). Required.
	NewAllocator func(ctx context.Context, features structured.Features, state structured.AllocatedState,
		classes structured.DeviceClassLister, slices []*resourceapi.ResourceSlice, celCache *cel.Cache) (structured.Allocator, error)
}

// insertShare records the n-th allocated share of a device in
// state.AllocatedSharedDeviceIDs as the release's scheduler does (spec/dra/dra.md,
// DRA-20). The set's element type is the release's, reached by reflection so
// that one source serves every release: a SharedDeviceID, the device with a
// share ID of the adapter's making (the allocator reads only that a device has
// shares, never their IDs), to v0.37; the DeviceID alone from v0.38.
func insertShare(state *structured.AllocatedState, id structured.DeviceID, n int) {
	set := reflect.ValueOf(&state.AllocatedSharedDeviceIDs).Elem()
	key := reflect.ValueOf(id)
	if set.Type().Key() != key.Type() {
		uid := types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", n))
		key = reflect.ValueOf(structured.MakeSharedDeviceID(id, &uid))
	}
	set.SetMapIndex(key, reflect.Zero(set.Type().Elem()))
}

// Main runs the adapter for the release linked into this binary.
func Main(h Hooks) { common.Main(&driver{hooks: h}) }

const celCacheSize = 10

type driver struct {
	hooks   Hooks
	variant string
	// supported holds, for each variant, the Features fields it supports
	// (probed at Setup).
	supported map[string]sets.Set[string]

	mu     sync.Mutex
	caches map[cel.Features]*cel.Cache
	// forceMu serialises a case's EnableAllocators with its NewAllocator.
	forceMu sync.Mutex
}

func (d *driver) ModuleVersion() string { return common.ModuleVersion(common.DRAModule) }

// celCache is one CEL cache per set of CEL features (a cache compiles with
// the features it was made with).
func (d *driver) celCache(f structured.Features) *cel.Cache {
	var cf cel.Features
	common.CopyEnableFlags(&cf, f)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.caches == nil {
		d.caches = map[cel.Features]*cel.Cache{}
	}
	c, ok := d.caches[cf]
	if !ok {
		c = cel.NewCache(celCacheSize, cf)
		d.caches[cf] = c
	}
	return c
}

func (d *driver) Setup(variant string) error {
	if !common.Debug() {
		klog.SetLogger(logr.Discard())
	}
	d.variant = variant
	if err := d.probe(); err != nil {
		return err
	}
	if variant != common.VariantAuto && d.hooks.EnableAllocators != nil {
		d.hooks.EnableAllocators(variant)
	}
	return nil
}

// variantOf names the variant of an allocator by its Go package
// (k8s.io/dynamic-resource-allocation/structured/internal/<variant>).
func variantOf(a structured.Allocator) string {
	t := reflect.TypeOf(a)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	p := t.PkgPath()
	return p[strings.LastIndex(p, "/")+1:]
}

func rank(variant string) int {
	for i, v := range common.Variants {
		if v == variant {
			return i
		}
	}
	return len(common.Variants)
}

// probe fills d.supported: which Features fields each variant supports,
// by asking NewAllocator (cheap: no slices) for each single feature. With
// EnableAllocators each variant is asked alone; without it (v0.34) the
// module's own pick for a feature tells it, the variants being nested
// (stable within incubating within experimental, as upstream designs them).
func (d *driver) probe() error {
	ctx := klog.NewContext(context.Background(), logr.Discard())
	names := common.FeatureNames(structured.Features{})
	d.supported = map[string]sets.Set[string]{}
	for _, v := range common.Variants {
		d.supported[v] = sets.New[string]()
	}
	for _, n := range names {
		var f structured.Features
		_ = common.SetFeatures(&f, []string{n})
		if d.hooks.EnableAllocators != nil {
			for _, v := range common.Variants {
				d.hooks.EnableAllocators(v)
				if _, err := d.newAllocator(ctx, f, structured.AllocatedState{}, nil, nil); err == nil {
					d.supported[v].Insert(n)
				}
			}
			d.hooks.EnableAllocators()
			continue
		}
		a, err := d.newAllocator(ctx, f, structured.AllocatedState{}, nil, nil)
		if err != nil {
			continue
		}
		for _, v := range common.Variants[rank(variantOf(a)):] {
			d.supported[v].Insert(n)
		}
	}
	return nil
}

// newForced is newAllocator with the variant forced as EnableAllocators
// does, the -variant flag's setting put back after. EnableAllocators sets a
// package variable that NewAllocator reads, so the two run under one lock
// (a case the watchdog gave up on may still be running).
func (d *driver) newForced(ctx context.Context, forced string, f structured.Features, state structured.AllocatedState,
	classes []*resourceapi.DeviceClass, slices []*resourceapi.ResourceSlice) (structured.Allocator, error) {
	if d.hooks.EnableAllocators == nil {
		return d.newAllocator(ctx, f, state, classes, slices)
	}
	d.forceMu.Lock()
	defer d.forceMu.Unlock()
	if forced == d.variant {
		return d.newAllocator(ctx, f, state, classes, slices)
	}
	d.hooks.EnableAllocators(forced)
	defer func() {
		if d.variant == common.VariantAuto {
			d.hooks.EnableAllocators()
		} else {
			d.hooks.EnableAllocators(d.variant)
		}
	}()
	return d.newAllocator(ctx, f, state, classes, slices)
}

func (d *driver) VariantFeatures() []string {
	if d.variant == common.VariantAuto {
		all := sets.New[string]()
		for _, s := range d.supported {
			all = all.Union(s)
		}
		return sets.List(all)
	}
	return sets.List(d.supported[d.variant])
}

// pick is the variant NewAllocator chooses for the features among the
// enabled ones ("" when none supports them), forced the one named unless
// auto.
func (d *driver) pick(f structured.Features, forced string) string {
	want := common.EnabledFeatures(f)
	for _, v := range common.Variants {
		if forced != common.VariantAuto && d.hooks.EnableAllocators != nil && v != forced {
			continue
		}
		if d.supported[v].HasAll(want...) {
			return v
		}
	}
	return ""
}

func (d *driver) newAllocator(ctx context.Context, f structured.Features, state structured.AllocatedState,
	classes []*resourceapi.DeviceClass, slices []*resourceapi.ResourceSlice) (a structured.Allocator, err error) {
	return d.hooks.NewAllocator(ctx, f, state, classLister(classes), slices, d.celCache(f))
}

// emptySet makes *s an empty set of its own element type.
func emptySet[T comparable](s *sets.Set[T]) { *s = sets.New[T]() }

// classLister serves the case's DeviceClasses as the scheduler's informer
// lister does: in order, and a NotFound API error for an unknown name.
type classLister []*resourceapi.DeviceClass

func (l classLister) List() ([]*resourceapi.DeviceClass, error) { return l, nil }

func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	for _, c := range l {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: resourceapi.GroupName, Resource: "deviceclass"}, name)
}

func (d *driver) Allocate(ctx context.Context, c *common.Case) (*common.Result, *common.Skip, *common.Errored) {
	ver := d.ModuleVersion()
	var features structured.Features
	if err := common.SetFeatures(&features, c.Features); err != nil {
		return nil, common.Skipf("case.features: %v is not a field of structured.Features in %s %s (it has %s)",
			err, common.DRAModule, ver, strings.Join(common.FeatureNames(features), ", ")), nil
	}
	api := "resource.k8s.io/v1 of k8s.io/api " + common.ModuleVersion("k8s.io/api")

	slices := make([]*resourceapi.ResourceSlice, len(c.Slices))
	for i, raw := range c.Slices {
		slices[i] = new(resourceapi.ResourceSlice)
		if s, e := common.DecodeObject(raw, slices[i], fmt.Sprintf("slices[%d]", i), "ResourceSlice", api); s != nil || e != nil {
			return nil, s, e
		}
	}
	classes := make([]*resourceapi.DeviceClass, len(c.Classes))
	for i, raw := range c.Classes {
		classes[i] = new(resourceapi.DeviceClass)
		if s, e := common.DecodeObject(raw, classes[i], fmt.Sprintf("classes[%d]", i), "DeviceClass", api); s != nil || e != nil {
			return nil, s, e
		}
	}
	claims := make([]*resourceapi.ResourceClaim, len(c.Claims))
	for i, raw := range c.Claims {
		claims[i] = new(resourceapi.ResourceClaim)
		if s, e := common.DecodeObject(raw, claims[i], fmt.Sprintf("claims[%d]", i), "ResourceClaim", api); s != nil || e != nil {
			return nil, s, e
		}
		applyClaimDefaults(claims[i])
	}
	state := structured.AllocatedState{
		AllocatedDevices:   sets.New[structured.DeviceID](),
		AggregatedCapacity: structured.NewConsumedCapacityCollection(),
	}
	// A set of SharedDeviceID to v0.37, of DeviceID from v0.38: made empty
	// whatever its element type.
	emptySet(&state.AllocatedSharedDeviceIDs)
	for _, r := range c.Allocated {
		state.AllocatedDevices.Insert(structured.MakeDeviceID(r.Driver, r.Pool, r.Device))
	}
	// Shares as the scheduler gathers them (dynamicresources' allocated
	// devices): with ConsumableCapacity each share's device is a shared one
	// and its consumed capacity is summed per device; without it every share
	// is an allocated device like any other.
	for i, sh := range c.Shares {
		id := structured.MakeDeviceID(sh.Device.Driver, sh.Device.Pool, sh.Device.Device)
		if !features.ConsumableCapacity {
			state.AllocatedDevices.Insert(id)
			continue
		}
		insertShare(&state, id, i)
		if sh.ConsumedCapacity == nil {
			continue
		}
		consumed := make(map[resourceapi.QualifiedName]resource.Quantity, len(sh.ConsumedCapacity))
		for name, value := range sh.ConsumedCapacity {
			q, err := resource.ParseQuantity(value)
			if err != nil {
				return nil, nil, common.Erroredf("case.allocatedShares[%d].consumedCapacity.%s: %v", i, name, err)
			}
			consumed[resourceapi.QualifiedName(name)] = q
		}
		state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, consumed))
	}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: c.Node.Name, Labels: c.Node.Labels}}

	logger := logr.Discard()
	if common.Debug() {
		logger = klog.Background()
	}
	ctx = klog.NewContext(ctx, logger)

	// The case's variant, else the -variant flag's, is forced as the
	// scheduler's EnableAllocators does (DRA-8); the flag's is restored after.
	forced := d.variant
	if c.Variant != "" {
		forced = c.Variant
	}
	picked := d.pick(features, forced)
	alloc, err := d.newForced(ctx, forced, features, state, classes, slices)
	if err != nil {
		if forced != common.VariantAuto && strings.Contains(err.Error(), "no allocator available") {
			return nil, common.Skipf("variant %s does not support features %v", forced,
				sets.List(sets.New(common.EnabledFeatures(features)...).Difference(d.supported[forced]))), nil
		}
		return &common.Result{Outcome: common.OutcomeError, Variant: picked, Message: err.Error()}, nil, nil
	}
	variant := variantOf(alloc)
	if forced != common.VariantAuto && variant != forced {
		// v0.34: no EnableAllocators, a forced variant only filters.
		return nil, common.Skipf("variant %s not used: %s %s picks %s for features %v and cannot be told otherwise",
			forced, common.DRAModule, ver, variant, c.Features), nil
	}
	results, err := alloc.Allocate(ctx, node, claims)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			// As the scheduler's DynamicResources Filter answers from 1.34: the node is
			// unschedulable when the allocator passes its FilterTimeout (default 10s,
			// DRASchedulerFilterTimeout), which CaseTimeout mirrors (spec/dra/dra.md, DRA-7).
			return &common.Result{Outcome: common.Unschedulable, Variant: variant, Message: "timed out trying to allocate devices"}, nil, nil
		}
		if errors.Is(err, context.Canceled) {
			return nil, nil, common.Erroredf("the allocator gave up at the adapter's %s deadline: %v", common.CaseTimeout, err)
		}
		if d.hooks.FailedOnNode != nil && errors.Is(err, d.hooks.FailedOnNode) {
			return &common.Result{Outcome: common.Unschedulable, Variant: variant, Message: err.Error()}, nil, nil
		}
		return &common.Result{Outcome: common.OutcomeError, Variant: variant, Message: err.Error()}, nil, nil
	}
	if results == nil && len(claims) > 0 {
		return &common.Result{Outcome: common.Unschedulable, Variant: variant}, nil, nil
	}
	if len(results) != len(claims) {
		return nil, nil, common.Erroredf("the allocator returned %d allocation results for %d claims", len(results), len(claims))
	}
	out := &common.Result{Outcome: common.Allocated, Variant: variant, Claims: make([]common.ClaimResult, len(results))}
	for i, r := range results {
		devs := []common.DeviceResult{}
		for _, dr := range r.Devices.Results {
			dev := common.DeviceResult{Request: dr.Request, Driver: dr.Driver, Pool: dr.Pool, Device: dr.Device,
				AdminAccess: dr.AdminAccess != nil && *dr.AdminAccess, Shared: dr.ShareID != nil}
			if dr.ConsumedCapacity != nil {
				dev.ConsumedCapacity = make(map[string]string, len(dr.ConsumedCapacity))
				for name, q := range dr.ConsumedCapacity {
					dev.ConsumedCapacity[string(name)] = exact(q)
				}
			}
			devs = append(devs, dev)
		}
		out.Claims[i] = common.ClaimResult{Devices: devs}
	}
	return out, nil, nil
}

// exact is a quantity as an exact rational ("2147483648", "3/2"), so that
// results compare by value whatever format the allocator wrote them in.
func exact(q resource.Quantity) string {
	r, ok := new(big.Rat).SetString(q.AsDec().String())
	if !ok {
		return q.String()
	}
	return r.RatString()
}
