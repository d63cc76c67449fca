//go:build kubelet1.25

package mergeonly

// 1.25 on: validation reads the feature gate.

import (
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletconfigvalidation "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
)

func validate(kc *kubeletconfig.KubeletConfiguration) error {
	return kubeletconfigvalidation.ValidateKubeletConfiguration(kc, utilfeature.DefaultFeatureGate)
}
