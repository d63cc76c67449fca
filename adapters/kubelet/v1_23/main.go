// kubelet-merge: answers the merge oracle's line format (../README.md) with
// this release's kubelet Topology Manager code (package release).
package main

import (
	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/kubelet-oracle/v1_23/release"
)

func main() {
	release.Setup()
	common.Main(release.Oracle{})
}
