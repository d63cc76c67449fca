// kubelet-adapter-<version>: this release's one binary (../README.md): the
// numaspec adapter protocol, or with "node" the node probe, with "merge" the
// merge oracle, all in package probe over this release's shim (release).
package main

import (
	"numaspec.invalid/kubelet-oracle/probe"
	"numaspec.invalid/kubelet-oracle/v1_32/release"
)

func main() { probe.Main(release.Kubelet{}) }
