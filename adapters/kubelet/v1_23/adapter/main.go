// kubelet-adapter: the numaspec adapter protocol (spec/adapter-protocol.md)
// over this release's kubelet code (package release). See ../../README.md.
package main

import (
	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/kubelet-oracle/v1_23/release"
)

func main() {
	release.Setup()
	common.AdapterMain(release.Adapter{})
}
