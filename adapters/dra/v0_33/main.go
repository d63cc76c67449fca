// dra-allocator-v0.33.5: this release's adapter binary (../README.md).
// k8s.io/dynamic-resource-allocation v0.33.5 has one allocator (no variants;
// results say "single"), a NewAllocator that takes the claims, and
// resource.k8s.io/v1beta1 types, to which convert.go moves a case's v1
// objects. It has no ErrFailedAllocationOnNode: every Allocate error is an
// "error" outcome. ../build.sh builds it with the version of releases.json
// stamped in.
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"

	"numaspec.invalid/dra-adapter/common"
)

func main() { common.Main(&driver{}) }

// variantSingle is what a result says for the one allocator of v0.33.
const variantSingle = "single"

type driver struct {
	variant  string
	celCache *cel.Cache
}

func (d *driver) ModuleVersion() string { return common.ModuleVersion(common.DRAModule) }

func (d *driver) Setup(variant string) error {
	if !common.Debug() {
		klog.SetLogger(logr.Discard())
	}
	d.variant = variant
	d.celCache = cel.NewCache(10)
	return nil
}

// VariantFeatures: every Features field for auto; none for a forced
// variant, which this release does not have.
func (d *driver) VariantFeatures() []string {
	if d.variant != common.VariantAuto {
		return nil
	}
	return common.FeatureNames(structured.Features{})
}

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
	if c.Variant != "" {
		return nil, common.Skipf("case.variant %q: %s %s has a single allocator, no variants to force",
			c.Variant, common.DRAModule, ver), nil
	}
	if d.variant != common.VariantAuto {
		return nil, common.Skipf("%s %s has a single allocator, no variant %s (run with -variant auto)",
			common.DRAModule, ver, d.variant), nil
	}
	var features structured.Features
	if err := common.SetFeatures(&features, c.Features); err != nil {
		return nil, common.Skipf("case.features: %v is not a field of structured.Features in %s %s (it has %s)",
			err, common.DRAModule, ver, strings.Join(common.FeatureNames(features), ", ")), nil
	}
	// The mirrors know only what v1beta1 of this k8s.io/api carries.
	api := "resource.k8s.io/v1beta1 of k8s.io/api " + common.ModuleVersion("k8s.io/api") +
		", the API v0.33's allocator takes (convert.go): the v1 field cannot be carried"

	slices := make([]*resourceapi.ResourceSlice, len(c.Slices))
	for i, raw := range c.Slices {
		var s v1Slice
		if sk, e := common.DecodeObject(raw, &s, fmt.Sprintf("slices[%d]", i), "ResourceSlice", api); sk != nil || e != nil {
			return nil, sk, e
		}
		slices[i] = s.toV1beta1()
	}
	classes := make([]*resourceapi.DeviceClass, len(c.Classes))
	for i, raw := range c.Classes {
		classes[i] = new(resourceapi.DeviceClass)
		if sk, e := common.DecodeObject(raw, classes[i], fmt.Sprintf("classes[%d]", i), "DeviceClass", api); sk != nil || e != nil {
			return nil, sk, e
		}
	}
	claims := make([]*resourceapi.ResourceClaim, len(c.Claims))
	for i, raw := range c.Claims {
		var cl v1Claim
		if sk, e := common.DecodeObject(raw, &cl, fmt.Sprintf("claims[%d]", i), "ResourceClaim", api); sk != nil || e != nil {
			return nil, sk, e
		}
		claims[i] = cl.toV1beta1()
	}
	if len(c.Shares) > 0 {
		// 1.33's allocator has no shared allocations (consumable capacity, DRA-20).
		return nil, common.Skipf("case.allocatedShares: %s has no shared allocations", api), nil
	}
	allocated := sets.New[structured.DeviceID]()
	for _, r := range c.Allocated {
		allocated.Insert(structured.MakeDeviceID(r.Driver, r.Pool, r.Device))
	}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: c.Node.Name, Labels: c.Node.Labels}}

	logger := logr.Discard()
	if common.Debug() {
		logger = klog.Background()
	}
	ctx = klog.NewContext(ctx, logger)

	alloc, err := structured.NewAllocator(ctx, features, claims, allocated, classLister(classes), slices, d.celCache)
	if err != nil {
		return &common.Result{Outcome: common.OutcomeError, Variant: variantSingle, Message: err.Error()}, nil, nil
	}
	results, err := alloc.Allocate(ctx, node)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return nil, nil, common.Erroredf("the allocator gave up at the adapter's %s deadline: %v", common.CaseTimeout, err)
		}
		return &common.Result{Outcome: common.OutcomeError, Variant: variantSingle, Message: err.Error()}, nil, nil
	}
	if results == nil && len(claims) > 0 {
		return &common.Result{Outcome: common.Unschedulable, Variant: variantSingle}, nil, nil
	}
	if len(results) != len(claims) {
		return nil, nil, common.Erroredf("the allocator returned %d allocation results for %d claims", len(results), len(claims))
	}
	out := &common.Result{Outcome: common.Allocated, Variant: variantSingle, Claims: make([]common.ClaimResult, len(results))}
	for i, r := range results {
		devs := []common.DeviceResult{}
		for _, dr := range r.Devices.Results {
			devs = append(devs, common.DeviceResult{Request: dr.Request, Driver: dr.Driver, Pool: dr.Pool, Device: dr.Device,
				AdminAccess: dr.AdminAccess != nil && *dr.AdminAccess})
		}
		out.Claims[i] = common.ClaimResult{Devices: devs}
	}
	return out, nil, nil
}
