//go:build kubelet1.26 && !kubelet1.28

package mergeonly

// 1.26-1.27: server.go checks the policy options under the TopologyManager gate.

import (
	"fmt"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
)

// policyOptions is server.go's check (RE-IMPLEMENTED: package main; same
// condition, same text): with the TopologyManager gate on, options while the
// TopologyManagerPolicyOptions gate is off stop the kubelet.
func policyOptions(kc *kubeletconfig.KubeletConfiguration) (map[string]string, error) {
	if !utilfeature.DefaultFeatureGate.Enabled(kubefeatures.TopologyManager) {
		return nil, nil
	}
	if utilfeature.DefaultFeatureGate.Enabled(kubefeatures.TopologyManagerPolicyOptions) {
		return kc.TopologyManagerPolicyOptions, nil
	} else if kc.TopologyManagerPolicyOptions != nil {
		return nil, fmt.Errorf("topology manager policy options %v require feature gates %q, %q enabled",
			kc.TopologyManagerPolicyOptions, kubefeatures.TopologyManager, kubefeatures.TopologyManagerPolicyOptions)
	}
	return nil, nil
}
