//go:build !kubelet1.25

package mergeonly

// 1.18-1.24: validation without the feature gate.

import (
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletconfigvalidation "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
)

func validate(kc *kubeletconfig.KubeletConfiguration) error {
	return kubeletconfigvalidation.ValidateKubeletConfiguration(kc)
}
