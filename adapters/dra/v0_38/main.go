// dra-allocator-<version>: this release's adapter binary (../README.md), the
// driver for resource.k8s.io/v1 (../v1alloc) with the release's public
// EnableAllocators (-variant forces the allocator) and
// ErrFailedAllocationOnNode (an Allocate error that is the node's alone).
// From v0.38 NewAllocator takes the module's internal ResourceSlice
// (k8s.io/dynamic-resource-allocation/api): each case slice is converted with
// the module's own conversion, as the scheduler's slice informer converts
// what it watches. ../build.sh builds it with the version of releases.json
// stamped in, with Go go1.27.3 (releases.json "toolchain").
package main

import (
	"context"
	"fmt"

	resourceapi "k8s.io/api/resource/v1"
	draapi "k8s.io/dynamic-resource-allocation/api"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"

	"numaspec.invalid/dra-adapter/v1alloc"
)

func newAllocator(ctx context.Context, features structured.Features, state structured.AllocatedState,
	classes structured.DeviceClassLister, slices []*resourceapi.ResourceSlice, celCache *cel.Cache) (structured.Allocator, error) {
	converted := make([]*draapi.ResourceSlice, len(slices))
	for i, in := range slices {
		converted[i] = new(draapi.ResourceSlice)
		if err := draapi.Convert_v1_ResourceSlice_To_api_ResourceSlice(in, converted[i], nil); err != nil {
			return nil, fmt.Errorf("slices[%d]: converting to the allocator's internal ResourceSlice: %w", i, err)
		}
	}
	return structured.NewAllocator(ctx, features, state, classes, converted, celCache)
}

func main() {
	v1alloc.Main(v1alloc.Hooks{
		EnableAllocators: structured.EnableAllocators,
		FailedOnNode:     structured.ErrFailedAllocationOnNode,
		NewAllocator:     newAllocator,
	})
}
