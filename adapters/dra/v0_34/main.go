// dra-allocator-v0.34.2: this release's adapter binary (../README.md), the
// driver for resource.k8s.io/v1 (../v1alloc). v0.34 has neither
// EnableAllocators (-variant only filters: a case the module answers with
// another variant is skipped) nor ErrFailedAllocationOnNode (every Allocate
// error is an "error" outcome). ../build.sh builds it with the version of
// releases.json stamped in.
package main

import (
	"k8s.io/dynamic-resource-allocation/structured"

	"numaspec.invalid/dra-adapter/v1alloc"
)

func main() { v1alloc.Main(v1alloc.Hooks{NewAllocator: structured.NewAllocator}) }
