// Package release drives the kubelet code of k8s.io/kubernetes v1.28.x for
// numaspec: the merge oracle's evaluator (Oracle), the adapter's merge
// (Merge) and the adapter (Adapter). 1.28 has no node probe. See ../../README.md.
package release

import (
	"fmt"
	"sync"

	cadvisorapi "github.com/google/cadvisor/info/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	metricsfeatures "k8s.io/component-base/metrics/features"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletscheme "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme"
	kubeletconfigvalidation "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask"
	utilcodec "k8s.io/kubernetes/pkg/kubelet/kubeletconfig/util/codec"

	"numaspec.invalid/kubelet-oracle/common"
)

const kubeletVersion = "v1.28.15" // keep in sync with ../go.mod

var (
	setupOnce     sync.Once
	pristineGates featuregate.MutableFeatureGate
)

// Setup silences klog, adds the feature gates kubelet's binary registers
// outside pkg/features, and keeps a copy of the feature gate as kubelet's
// init leaves it, for every case.
func Setup() {
	setupOnce.Do(func() {
		common.SilenceKlog()
		// What kubelet's binary registers besides pkg/features: the logging
		// gates (cmd/kubelet/app/server.go init) and the metrics gates
		// (pkg/kubelet/server init).
		if err := logsapi.AddFeatureGates(utilfeature.DefaultMutableFeatureGate); err != nil {
			panic(fmt.Sprintf("adding logging feature gates: %v", err))
		}
		if err := metricsfeatures.AddFeatureGates(utilfeature.DefaultMutableFeatureGate); err != nil {
			panic(fmt.Sprintf("adding metrics feature gates: %v", err))
		}
		pristineGates = utilfeature.DefaultMutableFeatureGate.DeepCopy()
	})
}

func freshGates() featuregate.MutableFeatureGate {
	gates := pristineGates.DeepCopy()
	utilfeature.DefaultMutableFeatureGate = gates
	utilfeature.DefaultFeatureGate = gates
	return gates
}

// Oracle answers the merge oracle's own line format (kubelet-adapter-* merge).
type Oracle struct{}

func (Oracle) Version() string { return kubeletVersion }

func (Oracle) Evaluate(req *common.Request) common.Response {
	hint, admit, err := newManagerAndMerge(req, req.Policy, "container", req.PolicyOptions)
	if err != nil {
		return common.Fail("kubelet-error", err.stage, err.err.Error())
	}
	return common.OK(hint, admit)
}

type stageErr struct {
	stage string
	err   error
}

// newManagerAndMerge runs NewManager (kubelet's start-up checks: policy
// options, NUMA distances, node count unless none, the policy name) with a
// made-up cadvisor topology (one node per id, in order, with its distance
// row) and merges with the Manager's own policy (GetPolicy).
func newManagerAndMerge(req *common.Request, policyName, scope string, options map[string]string) (common.Hint, bool, *stageErr) {
	topo := make([]cadvisorapi.Node, 0, len(req.NUMANodes))
	for _, id := range req.NUMANodes {
		topo = append(topo, cadvisorapi.Node{Id: id, Distances: req.NUMADistances[id]})
	}
	mgr, err := topologymanager.NewManager(topo, policyName, scope, options)
	if err != nil {
		return common.Hint{}, false, &stageErr{"new-manager", err}
	}
	providers, err := common.ConvertProviders(req.Providers, mkHint)
	if err != nil {
		return common.Hint{}, false, &stageErr{"bitmask", err}
	}
	hint, admit := mgr.GetPolicy().Merge(providers)
	return common.OutHint(hint.NUMANodeAffinity, hint.Preferred), admit, nil
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

// loadConfig reads a KubeletConfiguration file as kubelet 1.28's
// configfiles loader does (utilcodec.DecodeKubeletConfiguration: strict,
// with v1beta1 defaulting).
func loadConfig(spec common.ConfigSpec) (kc *kubeletconfig.KubeletConfiguration, err error) {
	defer func() {
		if r := recover(); r != nil {
			kc, err = nil, fmt.Errorf("%v", r)
		}
	}()
	data, err := spec.KubeletConfigJSON()
	if err != nil {
		return nil, err
	}
	_, codecs, err := kubeletscheme.NewSchemeAndCodecs(serializer.EnableStrict)
	if err != nil {
		return nil, err
	}
	return utilcodec.DecodeKubeletConfiguration(codecs, data)
}

// Merge answers a numaspec merge case as kubelet 1.28 starting with that
// configuration would: a fresh feature gate; the config file read by
// kubelet's decoder; SetFromMap of its featureGates;
// ValidateKubeletConfiguration; server.go's policy-options gate check; NewManager; the policy's Merge.
func Merge(c *common.MergeCase) common.MergeResult {
	gates := freshGates()
	policy := c.Policy
	spec := common.ConfigSpec{TopologyManagerPolicy: &policy, TopologyManagerPolicyOptions: c.PolicyOptions, FeatureGates: c.FeatureGates}
	kc, err := loadConfig(spec)
	if err != nil {
		return common.MergeFail("invalid-field", err.Error())
	}
	if err := gates.SetFromMap(kc.FeatureGates); err != nil {
		return common.MergeFail("invalid-field", err.Error())
	}
	if err := kubeletconfigvalidation.ValidateKubeletConfiguration(kc, utilfeature.DefaultFeatureGate); err != nil {
		return classified(common.ClassifyConfigError(err.Error()), err)
	}
	// server.go (RE-IMPLEMENTED: package main; same condition, same text):
	// options while the TopologyManagerPolicyOptions gate is off stop the
	// kubelet.
	var options map[string]string
	if utilfeature.DefaultFeatureGate.Enabled(kubefeatures.TopologyManagerPolicyOptions) {
		options = kc.TopologyManagerPolicyOptions
	} else if kc.TopologyManagerPolicyOptions != nil {
		return common.MergeFail("policy-option-not-enabled", fmt.Sprintf("topology manager policy options %v require feature gates %q enabled",
			kc.TopologyManagerPolicyOptions, kubefeatures.TopologyManagerPolicyOptions))
	}
	hint, admit, serr := newManagerAndMerge(&c.Request, kc.TopologyManagerPolicy, kc.TopologyManagerScope, options)
	if serr != nil {
		return classified(common.ClassifyTopologyManagerError(serr.err.Error()), serr.err)
	}
	return common.MergeOK(hint, admit)
}

func classified(kind string, err error) common.MergeResult {
	if kind == "" {
		return common.MergeResult{Error: &common.MergeError{Kind: "internal-error", KubeletMessage: err.Error(),
			Message: "kubelet refused the case with an error the adapter does not classify: " + err.Error()}}
	}
	return common.MergeFail(kind, err.Error())
}
