// koordinator-adapter-<version>: the numaspec adapter protocol (merge only)
// over Koordinator's scheduler-side copy of the Topology Manager,
// github.com/koordinator-sh/koordinator pkg/scheduler/frameworkext/topologymanager,
// a Go module dependency pinned in go.mod (none of its code is here).
// See ../README.md.
package main

import (
	apiext "github.com/koordinator-sh/koordinator/apis/extension"
	tm "github.com/koordinator-sh/koordinator/pkg/scheduler/frameworkext/topologymanager"
	"github.com/koordinator-sh/koordinator/pkg/util/bitmask"

	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/peers/peer"
)

// version is the pinned github.com/koordinator-sh/koordinator (keep in sync with go.mod).
const version = "1.7.0"

const tree = "https://github.com/koordinator-sh/koordinator/blob/v" + version + "/pkg/scheduler/frameworkext/topologymanager/"

func main() {
	peer.Main(peer.Info{
		Name:     "koordinator",
		Version:  version,
		Homepage: "https://github.com/koordinator-sh/koordinator",
		Issues:   "https://github.com/koordinator-sh/koordinator/issues",
		Source:   "github.com/koordinator-sh/koordinator@v" + version + " (pkg/scheduler/frameworkext/topologymanager: New*Policy(numaNodes).Merge)",
		// Kubelet 1.24's preferred rule (#108052, adopted in koordinator
		// #2010) without 1.24's non-preferred ranking (#108154): no release
		// matches it exactly; 1.24 is the nearest.
		DefaultKubeletVersions: []string{"1.24"},
		Policies:               []string{"none", "best-effort", "restricted", "single-numa-node"},
		Refusals:               false,
		Metadata: map[string]any{
			"module":           "github.com/koordinator-sh/koordinator@v" + version,
			"package":          tree,
			"scope":            "pod (the scheduler merges a pod's hints once; scope does not change the merge operation)",
			"exclusive_policy": "none given (a node-level policy without a pod-level one; the plugin then passes no SingleNUMANodeExclusive)",
			"glue":             "hints converted to koordinator's own bitmask; Score 0 and Unsatisfied false on every input hint (numaspec's hints carry neither)",
		},
	}, merge)
}

func merge(c *common.MergeCase) (any, *common.Skip) {
	var policy tm.Policy
	switch c.Policy {
	case tm.PolicyNone:
		// The plugin never builds the none policy (createNUMATopologyPolicy
		// returns nil for it and the NUMA filter is skipped); its Merge is
		// the exported equivalent.
		policy = tm.NewNonePolicy()
	case tm.PolicyBestEffort:
		policy = tm.NewBestEffortPolicy(c.NUMANodes)
	case tm.PolicyRestricted:
		policy = tm.NewRestrictedPolicy(c.NUMANodes)
	case tm.PolicySingleNumaNode:
		policy = tm.NewSingleNumaNodePolicy(c.NUMANodes)
	default:
		return nil, common.Skipf("koordinator has no policy %q", c.Policy)
	}
	providers, err := common.ConvertProviders(c.Providers, mkHint)
	if err != nil {
		return nil, common.Skipf("koordinator's bitmask refuses this hint (%v): no hint provider can produce it", err)
	}
	// GLUE: exclusivePolicy "" and no NUMA node status: the kubelet-like
	// configuration (see metadata.exclusive_policy).
	hint, admit, _ := policy.Merge(providers, apiext.NumaTopologyExclusive(""), nil)
	return common.MergeOK(common.OutHint(hint.NUMANodeAffinity, hint.Preferred), admit), nil
}

func mkHint(aff []int, isNil bool, preferred bool) (tm.NUMATopologyHint, error) {
	h := tm.NUMATopologyHint{Preferred: preferred}
	if !isNil {
		m, err := bitmask.NewBitMask(aff...)
		if err != nil {
			return h, err
		}
		h.NUMANodeAffinity = m
	}
	return h, nil
}
