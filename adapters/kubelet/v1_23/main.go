// kubelet-merge for k8s.io/kubernetes v1.23.x: answers numaspec merge
// requests with the real kubelet topologymanager code. See ../README.md.
package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	cadvisorapi "github.com/google/cadvisor/info/v1"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask"

	"numaspec.invalid/kubelet-oracle/common"
)

const kubeletVersion = "v1.23.17" // keep in sync with go.mod

type evaluator struct{}

func (evaluator) Version() string { return kubeletVersion }

func (evaluator) Evaluate(req *common.Request) common.Response {
	// Kubelet 1.23 has no Topology Manager policy options at all (no
	// topologyManagerPolicyOptions config field, no NewPolicyOptions).
	// GLUE: any non-empty policy_options is refused before kubelet runs.
	if len(req.PolicyOptions) > 0 {
		names := make([]string, 0, len(req.PolicyOptions))
		for k := range req.PolicyOptions {
			names = append(names, strconv.Quote(k))
		}
		sort.Strings(names)
		return common.Fail("unsupported", "policy-options",
			fmt.Sprintf("kubelet %s has no Topology Manager policy options (got %s)", kubeletVersion, strings.Join(names, ", ")))
	}
	// numa_distances is ignored: 1.23 does not use NUMA distances.
	topo := make([]cadvisorapi.Node, 0, len(req.NUMANodes))
	for _, id := range req.NUMANodes {
		topo = append(topo, cadvisorapi.Node{Id: id})
	}
	// REAL: kubelet's own startup checks (node-count limit unless "none",
	// then unknown policy), with kubelet's error texts.
	if _, err := topologymanager.NewManager(topo, req.Policy, "container"); err != nil {
		return common.Fail("kubelet-error", "new-manager", err.Error())
	}
	// GLUE: 1.23's Manager does not expose its policy, so build the same
	// policy NewManager built, with the same exported constructors and the
	// same numaNodes list (node ids in topology order).
	numaNodes := make([]int, 0, len(topo))
	for _, n := range topo {
		numaNodes = append(numaNodes, n.Id)
	}
	var policy topologymanager.Policy
	switch req.Policy {
	case topologymanager.PolicyNone:
		policy = topologymanager.NewNonePolicy()
	case topologymanager.PolicyBestEffort:
		policy = topologymanager.NewBestEffortPolicy(numaNodes)
	case topologymanager.PolicyRestricted:
		policy = topologymanager.NewRestrictedPolicy(numaNodes)
	case topologymanager.PolicySingleNumaNode:
		policy = topologymanager.NewSingleNumaNodePolicy(numaNodes)
	default: // unreachable: NewManager rejected it
		return common.Fail("internal", "policy", "unexpected policy "+req.Policy)
	}
	providers, err := common.ConvertProviders(req.Providers, mkHint)
	if err != nil {
		return common.Fail("kubelet-error", "bitmask", err.Error())
	}
	hint, admit := policy.Merge(providers)
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
