//go:build kubelet1.26

package mergeonly

// 1.26 on: policy options, NUMA distances, the Manager's own policy.

import (
	cadvisorapi "github.com/google/cadvisor/info/v1"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"

	"numaspec.invalid/kubelet-oracle/common"
)

// refuseOptions: options reach kubelet.
func refuseOptions(*common.Request) (common.Response, bool) { return common.Response{}, false }

// newPolicy runs NewManager (kubelet's start-up checks: policy options, NUMA
// distances, node count unless none, the policy name) with a made-up
// cadvisor topology (one node per id, in order, with its distance row) and
// gives the Manager's own policy (GetPolicy).
func newPolicy(req *common.Request, policyName, scope string, options map[string]string) (topologymanager.Policy, *stageErr) {
	topo := make([]cadvisorapi.Node, 0, len(req.NUMANodes))
	for _, id := range req.NUMANodes {
		topo = append(topo, cadvisorapi.Node{Id: id, Distances: req.NUMADistances[id]})
	}
	mgr, err := topologymanager.NewManager(topo, policyName, scope, options)
	if err != nil {
		return nil, &stageErr{"new-manager", err}
	}
	return mgr.GetPolicy(), nil
}
