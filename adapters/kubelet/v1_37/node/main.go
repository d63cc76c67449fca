// kubelet-node: the node probe's line protocol (../../README.md, "Node
// probe") over this release's kubelet managers (package release).
package main

import (
	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/kubelet-oracle/v1_37/release"
)

func main() {
	release.Setup()
	p := release.NewProbe()
	common.NodeMain(p)
	p.Close() // removes the state-file directory
}
