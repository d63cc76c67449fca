// Command checkpoints writes kubelet's own state files for a few scenarios with
// this release's code; the scenarios are ../scenarios, ../release holds what
// differs between releases, its files picked by the release's build tags.
// Usage: go run -tags "$(../../build.sh -tags v1_N)" . OUTDIR   (writes
// OUTDIR/<scenario>/...; ../README.md, Regenerate)
package main

import (
	// This module's own import of k8s.io/kubernetes, which keeps the pinned
	// release a direct requirement of go.mod (go mod tidy marks one only the
	// shared packages import as indirect).
	_ "k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"

	"numaspec.invalid/kubelet-checkpoints/release"
	"numaspec.invalid/kubelet-checkpoints/scenarios"
)

func main() { scenarios.Main(&release.Release{}) }
