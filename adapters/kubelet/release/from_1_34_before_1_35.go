//go:build kubelet1.34 && !kubelet1.35

package release

// 1.34 only: the Memory Manager's constructor and AddContainer take a
// context (a logger from 1.35).

import (
	v1 "k8s.io/api/core/v1"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"

	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/kubelet-oracle/machineinfo"
)

func (Kubelet) NewMemoryManager(policy string, m *common.Machine, reservation v1.ResourceList,
	reserved []kubeletconfig.MemoryReservation, stateDir string, tm topologymanager.Manager) (memorymanager.Manager, error) {
	return memorymanager.NewManager(Context(), policy, machineinfo.Info(m), reservation, reserved, stateDir, tm)
}

func addMemoryContainer(mem memorymanager.Manager, pod *v1.Pod, c *v1.Container, id string) {
	mem.AddContainer(Context(), pod, c, id)
}
