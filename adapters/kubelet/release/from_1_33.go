//go:build kubelet1.33

package release

// 1.33 on: mergeDefaultEvictionSettings, CPU Manager options without a gate.

import (
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/eviction"
)

// DefaultEvictionHard: server.go's defaulting when evictionHard is absent,
// and with mergeDefaultEvictionSettings the defaults merged into a given one.
func (Kubelet) DefaultEvictionHard(kc *kubeletconfig.KubeletConfiguration) {
	if kc.EvictionHard == nil {
		kc.EvictionHard = eviction.DefaultEvictionHard
	} else if kc.MergeDefaultEvictionSettings {
		for k, v := range eviction.DefaultEvictionHard {
			if _, exists := kc.EvictionHard[k]; !exists {
				kc.EvictionHard[k] = v
			}
		}
	}
}

// CPUManagerPolicyOptions: from 1.33 server.go no longer checks them against a gate.
func (Kubelet) CPUManagerPolicyOptions(kc *kubeletconfig.KubeletConfiguration) (map[string]string, error) {
	return kc.CPUManagerPolicyOptions, nil
}
