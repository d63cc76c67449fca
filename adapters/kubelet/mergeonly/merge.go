// Package mergeonly drives the kubelet code of the releases before the node
// model (1.18-1.28), whose adapter serves the merge only: the merge oracle's
// evaluator (Oracle), the adapter's merge (Merge) and the adapter (Adapter).
// One Go source for all of them, compiled inside each release module
// (../v1_XX), whose go.mod pins k8s.io/kubernetes, so this go.mod requires no
// Kubernetes module. What is the same in every release is in this file; what
// kubelet changed at release 1.N is in from_1_N.go (//go:build kubelet1.N),
// the form before it in before_1_N.go, a form of one stretch in
// from_1_N_before_1_M.go (../build.sh passes release 1.M the tags kubelet1.1
// ... kubelet1.M). A file may import only packages every one of these
// releases has (go mod tidy reads every file, whatever its tags); the feature
// gates kubelet's binary registers outside pkg/features come from packages
// that moved, so each release's main.go passes them to Main. See
// ../README.md.
package mergeonly

import (
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletscheme "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask"
	utilcodec "k8s.io/kubernetes/pkg/kubelet/kubeletconfig/util/codec"

	"numaspec.invalid/kubelet-oracle/common"
)

// Main is the main of a merge-only release's binary: Setup with the feature
// gates that release's kubelet binary adds (gates), then the mode
// common.ReleaseMain picks (the adapter protocol or "merge"; no node probe).
func Main(gates ...func(featuregate.MutableFeatureGate) error) {
	Setup(gates...)
	common.ReleaseMain(Adapter{}, Oracle{}, nil)
}

var (
	setupOnce     sync.Once
	pristineGates featuregate.MutableFeatureGate
)

// Setup silences klog, adds the feature gates kubelet's binary registers
// outside pkg/features (gates: e.g. the logging gates of
// cmd/kubelet/app/server.go's init and the metrics gates of
// pkg/kubelet/server's, from 1.24 and 1.26), and keeps a copy of the feature
// gate as kubelet's init leaves it, for every case.
func Setup(gates ...func(featuregate.MutableFeatureGate) error) {
	setupOnce.Do(func() {
		common.SilenceKlog()
		for _, add := range gates {
			if err := add(utilfeature.DefaultMutableFeatureGate); err != nil {
				panic(fmt.Sprintf("adding kubelet's feature gates: %v", err))
			}
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

func (Oracle) Version() string { return common.PinnedVersion() }

func (Oracle) Evaluate(req *common.Request) common.Response {
	if refused, ok := refuseOptions(req); ok {
		return refused
	}
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

// newManagerAndMerge runs NewManager (kubelet's start-up checks) and merges
// with the policy newPolicy gives (the release's).
func newManagerAndMerge(req *common.Request, policyName, scope string, options map[string]string) (common.Hint, bool, *stageErr) {
	policy, serr := newPolicy(req, policyName, scope, options)
	if serr != nil {
		return common.Hint{}, false, serr
	}
	providers, err := common.ConvertProviders(req.Providers, mkHint)
	if err != nil {
		return common.Hint{}, false, &stageErr{"bitmask", err}
	}
	hint, admit := policy.Merge(providers)
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

// loadConfig reads a KubeletConfiguration file as the release's configfiles
// loader does (utilcodec.DecodeKubeletConfiguration: up to 1.25 strict
// first, then lenient decoding, which drops fields v1beta1 lacks there, such
// as topologyManagerPolicyOptions; from 1.26 strict, with v1beta1
// defaulting).
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

// Merge answers a numaspec merge case as the release's kubelet starting with
// that configuration would: a fresh feature gate; the config file read by
// kubelet's decoder; SetFromMap of its featureGates;
// ValidateKubeletConfiguration; server.go's policy-options gate check (1.26
// on); NewManager; the policy's Merge.
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
	if err := validate(kc); err != nil {
		return classified(common.ClassifyConfigError(err.Error()), err)
	}
	options, err := policyOptions(kc)
	if err != nil {
		return common.MergeFail("policy-option-not-enabled", err.Error())
	}
	hint, admit, serr := newManagerAndMerge(&c.Request, kc.TopologyManagerPolicy, scopeOf(kc), options)
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

// Adapter is the release's numaspec adapter: merge only (no node probe).
type Adapter struct{}

func (Adapter) Implementation() common.Implementation {
	return common.KubeletImplementation(common.PinnedVersion(), []string{"merge"}, false)
}

func (Adapter) Run(op string, raw json.RawMessage) (any, *common.Skip) {
	var head struct {
		KubeletVersion json.RawMessage `json:"kubelet_version"`
	}
	_ = json.Unmarshal(raw, &head)
	if e := common.CaseVersion(head.KubeletVersion, common.PinnedVersion()); e != nil {
		return common.MergeResult{Error: e}, nil
	}
	c, skip := common.DecodeMergeCase(raw)
	if skip != nil {
		return nil, skip
	}
	return Merge(c), nil
}
