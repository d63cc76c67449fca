//go:build kubelet1.31

package release

// 1.31 on: validation looks at the host's cgroup version.

import kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"

// ForModelledHost: the one host-dependent check in validation
// (validation_linux.go, from 1.31) looks at this machine's cgroup version;
// the modelled node is taken to run cgroup v2.
func (Kubelet) ForModelledHost(kc *kubeletconfig.KubeletConfiguration) { kc.FailCgroupV1 = false }
