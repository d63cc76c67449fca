//go:build !kubelet1.33

package release

// 1.29-1.32: evictionHard replaced whole, CPU Manager options behind a gate.

import (
	"fmt"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/features"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/eviction"
)

// DefaultEvictionHard: server.go's defaulting when evictionHard is absent.
func (Kubelet) DefaultEvictionHard(kc *kubeletconfig.KubeletConfiguration) {
	if kc.EvictionHard == nil {
		kc.EvictionHard = eviction.DefaultEvictionHard
	}
}

// CPUManagerPolicyOptions: server.go passes them on only while the
// CPUManagerPolicyOptions gate is on, and refuses them when it is off.
func (Kubelet) CPUManagerPolicyOptions(kc *kubeletconfig.KubeletConfiguration) (map[string]string, error) {
	if utilfeature.DefaultFeatureGate.Enabled(features.CPUManagerPolicyOptions) {
		return kc.CPUManagerPolicyOptions, nil
	} else if kc.CPUManagerPolicyOptions != nil {
		return nil, fmt.Errorf("CPU Manager policy options %v require feature gates %q, %q enabled",
			kc.CPUManagerPolicyOptions, features.CPUManager, features.CPUManagerPolicyOptions)
	}
	return nil, nil
}
