//go:build !kubelet1.23

package mergeonly

// 1.18 (the one pinned release before 1.23): NewManager takes cpumanager's
// NUMANodeInfo map and no scope, and the config has no topologyManagerScope.

import (
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	cputopology "k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/topology"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"

	"numaspec.invalid/kubelet-oracle/common"
)

// newPolicy runs NewManager (kubelet's start-up checks: node count unless
// none, then the policy name; 1.18 has no scope, no options and no NUMA
// distances, and takes the NUMA nodes as the keys of cpumanager's
// NUMANodeInfo map, each an empty CPU set) and gives the policy to merge
// with. GLUE: 1.18's Manager does not expose its policy, so the same policy
// is built again (rebuiltPolicy) from the node ids collected the way
// NewManager collects them (ranging over the map).
func newPolicy(req *common.Request, policyName, _ string, _ map[string]string) (topologymanager.Policy, *stageErr) {
	info := make(cputopology.NUMANodeInfo, len(req.NUMANodes))
	for _, id := range req.NUMANodes {
		info[id] = emptyOf(info)
	}
	if _, err := topologymanager.NewManager(info, policyName); err != nil {
		return nil, &stageErr{"new-manager", err}
	}
	var numaNodes []int
	for id := range info {
		numaNodes = append(numaNodes, id)
	}
	return rebuiltPolicy(policyName, numaNodes)
}

// emptyOf is the zero value of m's elements: for NUMANodeInfo an empty CPU
// set (named so because pkg/kubelet/cm/cpuset, its package, is gone by 1.28,
// and a file here may import only what every merge-only release has).
func emptyOf[K comparable, V any](map[K]V) (empty V) { return }

// scopeOf: 1.18 has no topologyManagerScope.
func scopeOf(*kubeletconfig.KubeletConfiguration) string { return "" }
