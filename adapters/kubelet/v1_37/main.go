// kubelet-merge for k8s.io/kubernetes v1.37.x: answers numaspec merge
// requests with the real kubelet topologymanager code. See ../README.md.
package main

import (
	"github.com/go-logr/logr"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask"

	"numaspec.invalid/kubelet-oracle/common"
)

const kubeletVersion = "v1.37.1" // keep in sync with go.mod

// logger receives kubelet's contextual logging; discarded (see klog.go).
var logger = logr.Discard()

type evaluator struct{}

func (evaluator) Version() string { return kubeletVersion }

func (evaluator) Evaluate(req *common.Request) common.Response {
	// Fabricated cadvisor topology: one Node per requested NUMA id, in the
	// given order, with the distance row for that id (nil if not given).
	topo := make([]cadvisorapi.Node, 0, len(req.NUMANodes))
	for _, id := range req.NUMANodes {
		topo = append(topo, cadvisorapi.Node{Id: id, Distances: req.NUMADistances[id]})
	}
	// Real kubelet startup checks: none short-circuit, option parsing,
	// NUMA info (distances), node-count limit, unknown policy.
	mgr, err := topologymanager.NewManager(logger, topo, req.Policy, "container", req.PolicyOptions)
	if err != nil {
		return common.Fail("kubelet-error", "new-manager", err.Error())
	}
	providers, err := common.ConvertProviders(req.Providers, mkHint)
	if err != nil {
		return common.Fail("kubelet-error", "bitmask", err.Error())
	}
	hint, admit := mgr.GetPolicy().Merge(logger, providers)
	return common.OK(common.OutHint(hint.NUMANodeAffinity, hint.Preferred), admit)
}

func mkHint(aff []int, isNil bool, preferred bool) (topologymanager.TopologyHint, error) {
	h := topologymanager.TopologyHint{Preferred: preferred}
	if !isNil {
		m, err := bitmask.NewBitMask(aff...)
		if err != nil {
			return h, err
		}
		h.NUMANodeAffinity = m
	}
	return h, nil
}

func main() {
	common.SilenceKlog()
	common.Main(evaluator{})
}
