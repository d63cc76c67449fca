package probe

// The merge evaluators: the merge oracle's (Oracle) and the adapter's merge
// operation (Merge).

import (
	"fmt"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	kubeletconfigvalidation "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask"

	"numaspec.invalid/kubelet-oracle/common"
)

// Oracle answers the merge oracle's own line format (kubelet-adapter-* merge):
// NewManager with this binary's default feature gates, then the policy's
// Merge; errors are kind kubelet-error with kubelet's text.
type Oracle struct{ K Kubelet }

func (o Oracle) Version() string { return o.K.Version() }

func (o Oracle) Evaluate(req *common.Request) common.Response {
	mgr, err := o.K.NewTopologyManager(caseMachine(req), req.Policy, "container", req.PolicyOptions)
	if err != nil {
		return common.Fail("kubelet-error", "new-manager", err.Error())
	}
	providers, err := convertProviders(o.K, req.Providers)
	if err != nil {
		return common.Fail("kubelet-error", "bitmask", err.Error())
	}
	hint, admit := o.K.Merge(mgr, providers)
	return common.OK(outHint(o.K, hint), admit)
}

// caseMachine is the fabricated machine whose cadvisor topology
// NewTopologyManager reads: one node per requested NUMA id, in the given
// order, with the distance row for that id (nil if not given), nothing else.
func caseMachine(req *common.Request) *common.Machine {
	m := &common.Machine{Topology: make([]common.MachineNode, 0, len(req.NUMANodes))}
	for _, id := range req.NUMANodes {
		m.Topology = append(m.Topology, common.MachineNode{ID: id, Distances: req.NUMADistances[id]})
	}
	return m
}

// convertProviders builds kubelet's providers' hints from the decoded ones
// (masks with kubelet's bitmask.NewBitMask), each hint's score set where the
// release's hints have one (k.HintScores; a score given to an older release
// has nowhere to go: the adapter's decoding refuses it, the merge oracle
// ignores it as it does any field kubelet's hint lacks).
func convertProviders(k Kubelet, ps []common.Provider) ([]map[string][]topologymanager.TopologyHint, error) {
	scores := k.HintScores()
	return common.ConvertHints(ps, func(in common.HintIn) (topologymanager.TopologyHint, error) {
		h := topologymanager.TopologyHint{Preferred: in.Preferred}
		if in.Affinity != nil {
			m, err := bitmask.NewBitMask(*in.Affinity...)
			if err != nil {
				return h, err
			}
			h.NUMANodeAffinity = m
		}
		if scores && in.Score != nil {
			h = k.WithScore(h, *in.Score)
		}
		return h, nil
	})
}

// outHint is the answer's form of kubelet's merged hint: with its Score
// (0 included) where the release's hints have one.
func outHint(k Kubelet, h topologymanager.TopologyHint) common.Hint {
	out := common.OutHint(h.NUMANodeAffinity, h.Preferred)
	if k.HintScores() {
		out = out.Scored(k.Score(h))
	}
	return out
}

// Merge answers a numaspec merge case as a kubelet of this release starting
// with that configuration would, then merges the providers' hints:
//
//  1. a fresh copy of the feature gate as kubelet's init leaves it;
//  2. a KubeletConfiguration file with topologyManagerPolicy,
//     topologyManagerPolicyOptions (when the case has the field) and
//     featureGates, read by kubelet's config decoder (strict, defaulted);
//  3. the feature gates set from it (SetFromMap), as server.go does;
//  4. ValidateKubeletConfiguration;
//  5. server.go's refusal of policy options while the
//     TopologyManagerPolicyOptions gate is off (RE-IMPLEMENTED: server.go is
//     package main; same condition, same text);
//  6. topologymanager.NewManager (options, distances, node count, policy);
//  7. the policy's Merge over the providers (hints built with kubelet's
//     bitmask.NewBitMask; from 1.38 with their scores, and the merged
//     hint's Score answered).
//
// Errors carry kubelet's text; their numaspec kind comes from the step that
// failed and common.Classify*.
func Merge(k Kubelet, c *common.MergeCase) common.MergeResult {
	gates := freshGates()
	policy := c.Policy
	spec := common.ConfigSpec{TopologyManagerPolicy: &policy, TopologyManagerPolicyOptions: c.PolicyOptions, FeatureGates: c.FeatureGates}
	kc, resp := loadConfig(k, spec)
	if resp != nil {
		return configFail(resp.Error)
	}
	if err := gates.SetFromMap(kc.FeatureGates); err != nil {
		return common.MergeFail("invalid-field", err.Error())
	}
	k.ForModelledHost(kc)
	if err := kubeletconfigvalidation.ValidateKubeletConfiguration(kc, utilfeature.DefaultFeatureGate); err != nil {
		return classified(common.ClassifyConfigError(err.Error()), err)
	}
	var options map[string]string
	if utilfeature.DefaultFeatureGate.Enabled(kubefeatures.TopologyManagerPolicyOptions) {
		options = kc.TopologyManagerPolicyOptions
	} else if kc.TopologyManagerPolicyOptions != nil {
		return common.MergeFail("policy-option-not-enabled", fmt.Sprintf("topology manager policy options %v require feature gates %q enabled",
			kc.TopologyManagerPolicyOptions, kubefeatures.TopologyManagerPolicyOptions))
	}
	mgr, err := k.NewTopologyManager(caseMachine(&c.Request), kc.TopologyManagerPolicy, kc.TopologyManagerScope, options)
	if err != nil {
		return classified(common.ClassifyTopologyManagerError(err.Error()), err)
	}
	providers, err := convertProviders(k, c.Providers)
	if err != nil {
		return classified(common.ClassifyTopologyManagerError(err.Error()), err)
	}
	hint, admit := k.Merge(mgr, providers)
	return common.MergeOK(outHint(k, hint), admit)
}

func classified(kind string, err error) common.MergeResult {
	if kind == "" {
		return common.MergeResult{Error: &common.MergeError{Kind: "internal-error", KubeletMessage: err.Error(),
			Message: "kubelet refused the case with an error the adapter does not classify: " + err.Error()}}
	}
	return common.MergeFail(kind, err.Error())
}

// configFail classifies an error of kubelet's config decoding: a panic in
// its defaulting (an unknown feature gate) or a decoding error, both about
// a field numaspec names (invalid-field).
func configFail(e *common.NodeError) common.MergeResult {
	return common.MergeFail("invalid-field", e.Message)
}
