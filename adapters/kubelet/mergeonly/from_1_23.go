//go:build kubelet1.23

package mergeonly

// 1.23 on (scopes came in 1.20): the config's topologyManagerScope.

import kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"

func scopeOf(kc *kubeletconfig.KubeletConfiguration) string { return kc.TopologyManagerScope }
