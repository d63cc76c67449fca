package release

// The "kconf" mode of a node release's binary: what kubelet does with its
// configuration file at start-up, up to the point where the managers are
// built, by kubelet's own code: configfiles.NewFsLoader(...).Load (read,
// strict-then-lenient decode, v1beta1 defaulting, conversion), the
// evictionHard defaulting of cmd/kubelet/app/server.go's loadConfigFile (an
// unexported function: DefaultEvictionHard, the shim's copy of its lines),
// the feature gates set from the file, ValidateKubeletConfiguration (with
// the host check of ForModelledHost), the hard eviction thresholds parsed
// (eviction.ParseThresholdConfig, as server.go's run does), and the CPU
// Manager options gate of server.go before 1.33. For each file named, one JSON line on stdout: the
// stage that refused it and kubelet's message, or the fields that reach the
// managers, as kubelet then holds them.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletconfigvalidation "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
	"k8s.io/kubernetes/pkg/kubelet/eviction"
	"k8s.io/kubernetes/pkg/kubelet/kubeletconfig/configfiles"
	utilfs "k8s.io/kubernetes/pkg/util/filesystem"

	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/kubelet-oracle/probe"
)

type reservedMemoryOut struct {
	NumaNode int32             `json:"numaNode"`
	Limits   map[string]string `json:"limits"`
}

type kconfOut struct {
	CPUManagerPolicy             string              `json:"cpuManagerPolicy"`
	CPUManagerPolicyOptions      map[string]string   `json:"cpuManagerPolicyOptions"`
	TopologyManagerPolicy        string              `json:"topologyManagerPolicy"`
	TopologyManagerScope         string              `json:"topologyManagerScope"`
	TopologyManagerPolicyOptions map[string]string   `json:"topologyManagerPolicyOptions"`
	MemoryManagerPolicy          string              `json:"memoryManagerPolicy"`
	ReservedMemory               []reservedMemoryOut `json:"reservedMemory"`
	ReservedSystemCPUs           string              `json:"reservedSystemCPUs"`
	KubeReserved                 map[string]string   `json:"kubeReserved"`
	SystemReserved               map[string]string   `json:"systemReserved"`
	EvictionHard                 map[string]string   `json:"evictionHard"`
	FeatureGates                 map[string]bool     `json:"featureGates"`
	MaxPods                      int32               `json:"maxPods"`
	PodsPerCore                  int32               `json:"podsPerCore"`
}

type kconfResult struct {
	File    string    `json:"file"`
	Version string    `json:"version"`
	Stage   string    `json:"stage,omitempty"` // the step that refused the file
	Error   string    `json:"error,omitempty"`
	Config  *kconfOut `json:"config,omitempty"`
}

func orEmpty[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return m
}

func kconfMain(args []string) {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: kconf FILE... (KubeletConfiguration files)")
		os.Exit(2)
	}
	probe.Setup()
	pristine := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	enc := json.NewEncoder(os.Stdout)
	for _, name := range args {
		// every file starts from the feature gates of a freshly started kubelet
		gates := pristine.DeepCopy()
		utilfeature.DefaultMutableFeatureGate = gates
		utilfeature.DefaultFeatureGate = gates
		r := kconfOne(name)
		r.File, r.Version = name, common.PinnedVersion()
		if err := enc.Encode(r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func kconfOne(name string) (r kconfResult) {
	defer func() {
		// kubelet's defaulting panics on some feature gates (1.32): kubelet
		// does not start
		if p := recover(); p != nil {
			r = kconfResult{Stage: "load-panic", Error: fmt.Sprint(p)}
		}
	}()
	path, err := filepath.Abs(name)
	if err != nil {
		return kconfResult{Stage: "load", Error: err.Error()}
	}
	loader, err := configfiles.NewFsLoader(&utilfs.DefaultFs{}, path)
	if err != nil {
		return kconfResult{Stage: "load", Error: err.Error()}
	}
	kc, err := load(loader)
	if err != nil {
		return kconfResult{Stage: "load", Error: err.Error()}
	}
	k := Kubelet{}
	k.DefaultEvictionHard(kc)
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(kc.FeatureGates); err != nil {
		return kconfResult{Stage: "feature-gates", Error: err.Error()}
	}
	k.ForModelledHost(kc)
	if err := kubeletconfigvalidation.ValidateKubeletConfiguration(kc, utilfeature.DefaultFeatureGate); err != nil {
		return kconfResult{Stage: "validate", Error: err.Error()}
	}
	// server.go's run: the hard eviction thresholds, parsed as the probe parses them
	if _, err := eviction.ParseThresholdConfig([]string{}, kc.EvictionHard, nil, nil, nil); err != nil {
		return kconfResult{Stage: "eviction-thresholds", Error: err.Error()}
	}
	if _, err := k.CPUManagerPolicyOptions(kc); err != nil {
		return kconfResult{Stage: "cpu-manager-policy-options", Error: err.Error()}
	}
	return kconfResult{Config: kconfFields(kc)}
}

func kconfFields(kc *kubeletconfig.KubeletConfiguration) *kconfOut {
	out := &kconfOut{
		CPUManagerPolicy:             kc.CPUManagerPolicy,
		CPUManagerPolicyOptions:      orEmpty(kc.CPUManagerPolicyOptions),
		TopologyManagerPolicy:        kc.TopologyManagerPolicy,
		TopologyManagerScope:         kc.TopologyManagerScope,
		TopologyManagerPolicyOptions: orEmpty(kc.TopologyManagerPolicyOptions),
		MemoryManagerPolicy:          kc.MemoryManagerPolicy,
		ReservedMemory:               []reservedMemoryOut{},
		ReservedSystemCPUs:           kc.ReservedSystemCPUs,
		KubeReserved:                 orEmpty(kc.KubeReserved),
		SystemReserved:               orEmpty(kc.SystemReserved),
		EvictionHard:                 orEmpty(kc.EvictionHard),
		FeatureGates:                 orEmpty(kc.FeatureGates),
		MaxPods:                      kc.MaxPods,
		PodsPerCore:                  kc.PodsPerCore,
	}
	for _, m := range kc.ReservedMemory {
		limits := map[string]string{}
		names := make([]string, 0, len(m.Limits))
		for n := range m.Limits {
			names = append(names, string(n))
		}
		sort.Strings(names)
		for _, n := range names {
			q := m.Limits[v1.ResourceName(n)]
			limits[n] = q.String()
		}
		out.ReservedMemory = append(out.ReservedMemory, reservedMemoryOut{NumaNode: m.NumaNode, Limits: limits})
	}
	return out
}
