// Package release drives the kubelet code of k8s.io/kubernetes v1.25.x for
// numaspec: the merge oracle's evaluator (Oracle), the adapter's merge
// (Merge) and the adapter (Adapter). 1.25 has no node probe. See ../../README.md.
package release

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	cadvisorapi "github.com/google/cadvisor/info/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletscheme "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme"
	kubeletconfigvalidation "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask"
	utilcodec "k8s.io/kubernetes/pkg/kubelet/kubeletconfig/util/codec"

	"numaspec.invalid/kubelet-oracle/common"
)

const kubeletVersion = "v1.25.16" // keep in sync with ../go.mod

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
		// cmd/kubelet/app/server.go's init adds the logging feature gates.
		if err := logsapi.AddFeatureGates(utilfeature.DefaultMutableFeatureGate); err != nil {
			panic(fmt.Sprintf("adding logging feature gates: %v", err))
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
	// Kubelet 1.25 has no Topology Manager policy options at all (no
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
	hint, admit, err := newManagerAndMerge(req, req.Policy, "container")
	if err != nil {
		return common.Fail("kubelet-error", err.stage, err.err.Error())
	}
	return common.OK(hint, admit)
}

type stageErr struct {
	stage string
	err   error
}

// newManagerAndMerge runs NewManager (kubelet's start-up checks: node count
// unless none, then the policy name; 1.25 does not use NUMA distances) and
// merges. GLUE: 1.25's Manager does not expose its policy, so the same
// policy is built again with the same exported constructor and the same
// numaNodes list (node ids in topology order) and its Merge is called.
func newManagerAndMerge(req *common.Request, policyName, scope string) (common.Hint, bool, *stageErr) {
	topo := make([]cadvisorapi.Node, 0, len(req.NUMANodes))
	for _, id := range req.NUMANodes {
		topo = append(topo, cadvisorapi.Node{Id: id})
	}
	if _, err := topologymanager.NewManager(topo, policyName, scope); err != nil {
		return common.Hint{}, false, &stageErr{"new-manager", err}
	}
	numaNodes := make([]int, 0, len(topo))
	for _, n := range topo {
		numaNodes = append(numaNodes, n.Id)
	}
	var policy topologymanager.Policy
	switch policyName {
	case topologymanager.PolicyNone:
		policy = topologymanager.NewNonePolicy()
	case topologymanager.PolicyBestEffort:
		policy = topologymanager.NewBestEffortPolicy(numaNodes)
	case topologymanager.PolicyRestricted:
		policy = topologymanager.NewRestrictedPolicy(numaNodes)
	case topologymanager.PolicySingleNumaNode:
		policy = topologymanager.NewSingleNumaNodePolicy(numaNodes)
	default: // unreachable: NewManager rejected it
		return common.Hint{}, false, &stageErr{"policy", fmt.Errorf("unexpected policy %q", policyName)}
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

// loadConfig reads a KubeletConfiguration file as kubelet 1.25's
// configfiles loader does (utilcodec.DecodeKubeletConfiguration: strict
// first, then lenient decoding, which drops fields v1beta1 of 1.25 lacks,
// such as topologyManagerPolicyOptions).
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

// Merge answers a numaspec merge case as kubelet 1.25 starting with that
// configuration would: a fresh feature gate; the config file read by
// kubelet's decoder (options dropped); SetFromMap of its featureGates;
// ValidateKubeletConfiguration; NewManager; the policy's Merge.
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
	hint, admit, serr := newManagerAndMerge(&c.Request, kc.TopologyManagerPolicy, kc.TopologyManagerScope)
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
