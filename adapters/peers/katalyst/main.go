// katalyst-adapter-<version>: the numaspec adapter protocol (merge only) over
// Katalyst's agent-side topology manager (the ORM's),
// github.com/kubewharf/katalyst-core pkg/agent/orm/topology, a Go module
// dependency pinned in go.mod (none of its code is here). Its native
// policies only: "numeric", Katalyst's own, is not modelled. See ../README.md.
package main

import (
	"fmt"
	"sort"
	"strings"

	cadvisorapi "github.com/google/cadvisor/info/v1"
	"github.com/kubewharf/katalyst-core/pkg/agent/orm/topology"
	"github.com/kubewharf/katalyst-core/pkg/util/bitmask"

	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/peers/peer"
)

// version is the pinned github.com/kubewharf/katalyst-core (keep in sync with go.mod).
const version = "0.5.0"

const tree = "https://github.com/kubewharf/katalyst-core/blob/v" + version + "/pkg/agent/orm/topology/"

func main() {
	peer.Main(peer.Info{
		Name:     "katalyst",
		Version:  version,
		Homepage: "https://github.com/kubewharf/katalyst-core",
		Issues:   "https://github.com/kubewharf/katalyst-core/issues",
		Source:   "github.com/kubewharf/katalyst-core@v" + version + " (pkg/agent/orm/topology: NewManager, then New*Policy(numaNodes).Merge)",
		// A copy of kubelet 1.24/1.25's merge (#108052 and #108154, no
		// HintMerger): 1.24 and 1.25 do not differ for the merge.
		DefaultKubeletVersions: []string{"1.24"},
		Policies:               []string{"none", "best-effort", "restricted", "single-numa-node"},
		// NewManager refuses an unknown policy name and, for any policy but
		// none, more than 8 NUMA nodes, in kubelet's words.
		Refusals: []string{"unknown-policy", "too-many-numa-nodes"},
		Metadata: map[string]any{
			"module":  "github.com/kubewharf/katalyst-core@v" + version,
			"package": tree,
			"scope":   "container (scope does not change the merge operation)",
			"glue": "NewManager runs for its refusals, then the same policy is built with its exported constructor (the manager does not expose it); " +
				"Merge's per-resource result is answered as one hint when every resource got the same one (the native policies give every resource the same hint), " +
				"and an empty result (policy none) as the zero hint, which the manager's GetAffinity returns for it",
		},
	}, merge)
}

func merge(c *common.MergeCase) (any, *common.Skip) {
	if c.Policy == topology.PolicyNumeric {
		return nil, common.Skipf("katalyst's own numeric policy is not modelled by this adapter")
	}
	topo := make([]cadvisorapi.Node, 0, len(c.NUMANodes))
	for _, id := range c.NUMANodes {
		topo = append(topo, cadvisorapi.Node{Id: id})
	}
	if _, err := topology.NewManager(topo, c.Policy, nil); err != nil {
		kind := common.ClassifyTopologyManagerError(err.Error())
		if kind == "" {
			return &common.Errored{Message: "katalyst's NewManager: " + err.Error()}, nil
		}
		// katalyst's own words: no kubelet_message.
		return common.MergeResult{Error: &common.MergeError{Kind: kind, Message: err.Error()}}, nil
	}
	var policy topology.Policy
	switch c.Policy {
	case topology.PolicyNone, "": // "" reaches here only where NewManager reads it as none (KATALYST-1 fixed)
		policy = topology.NewNonePolicy()
	case topology.PolicyBestEffort:
		policy = topology.NewBestEffortPolicy(c.NUMANodes)
	case topology.PolicyRestricted:
		policy = topology.NewRestrictedPolicy(c.NUMANodes)
	case topology.PolicySingleNumaNode:
		policy = topology.NewSingleNumaNodePolicy(c.NUMANodes)
	default: // NewManager refused it
		return &common.Errored{Message: fmt.Sprintf("katalyst's NewManager accepted policy %q, which this adapter does not know", c.Policy)}, nil
	}
	providers, err := common.ConvertProviders(c.Providers, mkHint)
	if err != nil {
		return nil, common.Skipf("katalyst's bitmask refuses this hint (%v): no hint provider can produce it", err)
	}
	perResource, admit := policy.Merge(providers)
	hint, differ := oneHint(perResource)
	if differ != "" {
		return &common.Errored{Message: "katalyst's merge gave resources different hints: " + differ}, nil
	}
	return common.MergeOK(common.OutHint(hint.NUMANodeAffinity, hint.Preferred), admit), nil
}

// oneHint is the hint every resource got, or why there is none.
func oneHint(perResource map[string]topology.TopologyHint) (topology.TopologyHint, string) {
	names := make([]string, 0, len(perResource))
	for name := range perResource {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return topology.TopologyHint{}, ""
	}
	first := perResource[names[0]]
	for _, name := range names[1:] {
		if h := perResource[name]; !first.IsEqual(h) {
			parts := make([]string, len(names))
			for i, n := range names {
				parts[i] = fmt.Sprintf("%s: %v", n, perResource[n])
			}
			return first, strings.Join(parts, ", ")
		}
	}
	return first, ""
}

func mkHint(aff []int, isNil bool, preferred bool) (topology.TopologyHint, error) {
	h := topology.TopologyHint{Preferred: preferred}
	if !isNil {
		m, err := bitmask.NewBitMask(aff...)
		if err != nil {
			return h, err
		}
		h.NUMANodeAffinity = m
	}
	return h, nil
}
