//go:build !kubelet1.26

package mergeonly

// 1.18-1.25: no Topology Manager policy options at all (no
// topologyManagerPolicyOptions config field, no NewPolicyOptions), and no
// GetPolicy.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"

	"numaspec.invalid/kubelet-oracle/common"
)

// refuseOptions: GLUE: any non-empty policy_options of a merge oracle request
// is refused before kubelet runs.
func refuseOptions(req *common.Request) (common.Response, bool) {
	if len(req.PolicyOptions) == 0 {
		return common.Response{}, false
	}
	names := make([]string, 0, len(req.PolicyOptions))
	for k := range req.PolicyOptions {
		names = append(names, strconv.Quote(k))
	}
	sort.Strings(names)
	return common.Fail("unsupported", "policy-options",
		fmt.Sprintf("kubelet %s has no Topology Manager policy options (got %s)", common.PinnedVersion(), strings.Join(names, ", "))), true
}

// policyOptions: none (the decoder dropped topologyManagerPolicyOptions).
func policyOptions(*kubeletconfig.KubeletConfiguration) (map[string]string, error) { return nil, nil }

// rebuiltPolicy is the policy NewManager builds for policyName over
// numaNodes, built again with the same exported constructor.
func rebuiltPolicy(policyName string, numaNodes []int) (topologymanager.Policy, *stageErr) {
	switch policyName {
	case topologymanager.PolicyNone:
		return topologymanager.NewNonePolicy(), nil
	case topologymanager.PolicyBestEffort:
		return topologymanager.NewBestEffortPolicy(numaNodes), nil
	case topologymanager.PolicyRestricted:
		return topologymanager.NewRestrictedPolicy(numaNodes), nil
	case topologymanager.PolicySingleNumaNode:
		return topologymanager.NewSingleNumaNodePolicy(numaNodes), nil
	default: // unreachable: NewManager rejected it
		return nil, &stageErr{"policy", fmt.Errorf("unexpected policy %q", policyName)}
	}
}
