//go:build kubelet1.28

package mergeonly

// 1.28 on: server.go checks the policy options against their own gate only.

import (
	"fmt"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
)

// policyOptions is server.go's check (RE-IMPLEMENTED: package main; same
// condition, same text): options while the TopologyManagerPolicyOptions gate
// is off stop the kubelet.
func policyOptions(kc *kubeletconfig.KubeletConfiguration) (map[string]string, error) {
	if utilfeature.DefaultFeatureGate.Enabled(kubefeatures.TopologyManagerPolicyOptions) {
		return kc.TopologyManagerPolicyOptions, nil
	} else if kc.TopologyManagerPolicyOptions != nil {
		return nil, fmt.Errorf("topology manager policy options %v require feature gates %q enabled",
			kc.TopologyManagerPolicyOptions, kubefeatures.TopologyManagerPolicyOptions)
	}
	return nil, nil
}
