//go:build kubelet1.23 && !kubelet1.26

package mergeonly

// 1.23-1.25: NewManager takes cadvisor's topology and the scope, no options,
// and the Manager does not expose its policy.

import (
	cadvisorapi "github.com/google/cadvisor/info/v1"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"

	"numaspec.invalid/kubelet-oracle/common"
)

// newPolicy runs NewManager (kubelet's start-up checks: node count unless
// none, then the policy name; NUMA distances are not used) and gives the
// policy to merge with. GLUE: the Manager does not expose its policy, so the
// same policy is built again (rebuiltPolicy) with the same numaNodes list
// (node ids in topology order).
func newPolicy(req *common.Request, policyName, scope string, _ map[string]string) (topologymanager.Policy, *stageErr) {
	topo := make([]cadvisorapi.Node, 0, len(req.NUMANodes))
	for _, id := range req.NUMANodes {
		topo = append(topo, cadvisorapi.Node{Id: id})
	}
	if _, err := topologymanager.NewManager(topo, policyName, scope); err != nil {
		return nil, &stageErr{"new-manager", err}
	}
	numaNodes := make([]int, 0, len(topo))
	for _, n := range topo {
		numaNodes = append(numaNodes, n.Id)
	}
	return rebuiltPolicy(policyName, numaNodes)
}
