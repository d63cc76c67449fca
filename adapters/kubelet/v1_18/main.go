// kubelet-adapter-<version>: this release's one binary (../README.md): the
// numaspec adapter protocol (merge only), or with "merge" the merge oracle,
// over ../mergeonly; no node probe. ../build.sh builds it with the release's
// tags and version (releases.json). Its kubelet binary adds no feature gates
// outside pkg/features.
package main

import (
	// This module's own import of k8s.io/kubernetes, which keeps the pinned
	// release a direct requirement of go.mod (go mod tidy marks one only the
	// shared packages import as indirect).
	_ "k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"

	"numaspec.invalid/kubelet-oracle/mergeonly"
)

func main() { mergeonly.Main() }
