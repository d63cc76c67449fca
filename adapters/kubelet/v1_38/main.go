// kubelet-adapter-<version>: this release's one binary (../README.md): the
// numaspec adapter protocol, or with "node" the node probe, with "merge" the
// merge oracle, all in package probe over the release shim with in-place
// resize (../release/resize). ../build.sh builds it with the release's tags
// and version (releases.json).
package main

import (
	// This module's own import of k8s.io/kubernetes, which keeps the pinned
	// release a direct requirement of go.mod (go mod tidy marks one only the
	// shared packages import as indirect).
	_ "k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"

	"numaspec.invalid/kubelet-oracle/probe"
	"numaspec.invalid/kubelet-oracle/release/resize"
)

func main() { probe.Main(resize.Kubelet{}) }
