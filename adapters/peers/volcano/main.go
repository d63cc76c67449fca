// volcano-adapter-<version>: the numaspec adapter protocol (merge only) over
// the Volcano scheduler's numa-aware plugin, volcano.sh/volcano
// pkg/scheduler/plugins/numaaware/policy, a Go module dependency pinned in
// go.mod (none of its code is here). See ../README.md.
package main

import (
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask"
	"volcano.sh/volcano/pkg/scheduler/plugins/numaaware/policy"

	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/peers/peer"
)

// version is the pinned volcano.sh/volcano (keep in sync with go.mod): the
// only tag the Go module proxy serves this project.
const version = "1.10.0"

const tree = "https://github.com/volcano-sh/volcano/blob/v" + version + "/pkg/scheduler/plugins/numaaware/policy/"

func main() {
	peer.Main(peer.Info{
		Name:     "volcano",
		Version:  version,
		Homepage: "https://github.com/volcano-sh/volcano",
		Issues:   "https://github.com/volcano-sh/volcano/issues",
		Source:   "volcano.sh/volcano@v" + version + " (pkg/scheduler/plugins/numaaware/policy: NewPolicy*(numaNodes).Predicate)",
		// Kubelet's merge before 1.24 (a null affinity taken as every node,
		// preferred when every hint is, the narrowest non-preferred mask),
		// as 1.18-1.23 have it.
		DefaultKubeletVersions: []string{"1.23"},
		Policies:               []string{"none", "best-effort", "restricted", "single-numa-node"},
		Refusals:               false,
		Metadata: map[string]any{
			"module":  "volcano.sh/volcano@v" + version,
			"package": tree,
			"scope":   "container (scope does not change the merge operation)",
			"glue":    "hints converted to kubelet's bitmask (k8s.io/kubernetes v1.30.2, which volcano uses); the policy is picked by name as GetPolicy does from a node's Numatopology policies",
		},
	}, merge)
}

func merge(c *common.MergeCase) (any, *common.Skip) {
	var p policy.Policy
	// GLUE: GetPolicy reads the name from a NodeInfo's NUMA scheduler info
	// and takes an unknown one for none; here the name picks the same
	// constructor, and an unknown one is not claimed.
	switch c.Policy {
	case "none":
		p = policy.NewPolicyNone(c.NUMANodes)
	case "best-effort":
		p = policy.NewPolicyBestEffort(c.NUMANodes)
	case "restricted":
		p = policy.NewPolicyRestricted(c.NUMANodes)
	case "single-numa-node":
		p = policy.NewPolicySingleNumaNode(c.NUMANodes)
	default:
		return nil, common.Skipf("volcano has no policy %q", c.Policy)
	}
	providers, err := common.ConvertProviders(c.Providers, mkHint)
	if err != nil {
		return nil, common.Skipf("kubelet's bitmask refuses this hint (%v): no hint provider can produce it", err)
	}
	hint, admit := p.Predicate(providers)
	return common.MergeOK(common.OutHint(hint.NUMANodeAffinity, hint.Preferred), admit), nil
}

func mkHint(aff []int, isNil bool, preferred bool) (policy.TopologyHint, error) {
	h := policy.TopologyHint{Preferred: preferred}
	if !isNil {
		m, err := bitmask.NewBitMask(aff...)
		if err != nil {
			return h, err
		}
		h.NUMANodeAffinity = m
	}
	return h, nil
}
