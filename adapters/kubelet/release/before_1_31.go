//go:build !kubelet1.31

package release

// 1.29-1.30: validation does not look at the host.

import kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"

// ForModelledHost: 1.29 and 1.30's validation does not look at the host.
func (Kubelet) ForModelledHost(*kubeletconfig.KubeletConfiguration) {}
