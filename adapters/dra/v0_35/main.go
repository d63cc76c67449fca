// dra-allocator-<version>: this release's adapter binary (../README.md), the
// driver for resource.k8s.io/v1 (../v1alloc) with the release's public
// EnableAllocators (-variant forces the allocator) and
// ErrFailedAllocationOnNode (an Allocate error that is the node's alone).
// ../build.sh builds it with the version of releases.json stamped in.
package main

import (
	"k8s.io/dynamic-resource-allocation/structured"

	"numaspec.invalid/dra-adapter/v1alloc"
)

func main() {
	v1alloc.Main(v1alloc.Hooks{
		EnableAllocators: structured.EnableAllocators,
		FailedOnNode:     structured.ErrFailedAllocationOnNode,
		NewAllocator:     structured.NewAllocator,
	})
}
