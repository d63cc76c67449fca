package common

import (
	"fmt"
	"os"

	"numaspec.invalid/adapter/protocol"
)

// pinnedVersion is the kubelet release a binary is built for, as
// ../releases.json names it: ../build.sh stamps it with
// -ldflags "-X numaspec.invalid/kubelet-oracle/common.pinnedVersion=v1.37.2".
var pinnedVersion string

// patchName names the change a patched build carries ("" for a release as
// released): ../build.sh --patch FILE / --source DIR stamps it with
// -ldflags "-X numaspec.invalid/kubelet-oracle/common.patchName=NAME".
var patchName string

// PatchName is the change this binary carries on top of its release, or "".
func PatchName() string { return patchName }

// kubernetesModule is the module every release's go.mod pins.
const kubernetesModule = "k8s.io/kubernetes"

// PinnedVersion is the pinned k8s.io/kubernetes version of this binary, e.g.
// "v1.37.2": the stamped one, or (built without ../build.sh) the version of
// the k8s.io/kubernetes module the binary links, from its build information.
func PinnedVersion() string {
	if pinnedVersion != "" {
		return pinnedVersion
	}
	return ModuleVersion(kubernetesModule)
}

// ModuleVersion is the version of the module path in this binary's build
// information, its replacement's when replaced ("" when it has none).
func ModuleVersion(path string) string { return protocol.ModuleVersion(path) }

// checkPinnedVersion exits (status 2) when the stamped version is not the
// k8s.io/kubernetes the binary links: releases.json and the release's
// go.mod disagree (../build.sh checks that too, before building).
func checkPinnedVersion() {
	linked := ModuleVersion(kubernetesModule)
	// a patched build links a directory copy of the release ("(devel)")
	if pinnedVersion == "" || linked == "" || pinnedVersion == linked || patchName != "" {
		return
	}
	fmt.Fprintf(os.Stderr, "kubelet adapter built as %s (releases.json) but linking %s %s (go.mod)\n",
		pinnedVersion, kubernetesModule, linked)
	os.Exit(2)
}
