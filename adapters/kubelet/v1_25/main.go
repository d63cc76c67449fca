// kubelet-adapter-v1.25: this release's one binary (../README.md): the
// numaspec adapter protocol (merge only), or with "merge" the merge oracle.
// 1.25 has no node probe and does not use package probe.
package main

import (
	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/kubelet-oracle/v1_25/release"
)

func main() {
	release.Setup()
	common.ReleaseMain(release.Adapter{}, release.Oracle{}, nil)
}
