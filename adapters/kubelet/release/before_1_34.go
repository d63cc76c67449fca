//go:build !kubelet1.34

package release

// 1.29-1.33: config decoding and the Memory Manager take no context.

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	utilcodec "k8s.io/kubernetes/pkg/kubelet/kubeletconfig/util/codec"

	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/kubelet-oracle/machineinfo"
	"numaspec.invalid/kubelet-oracle/probe"
)

func (Kubelet) DecodeConfig(codecs *serializer.CodecFactory, data []byte) (*kubeletconfig.KubeletConfiguration, error) {
	return utilcodec.DecodeKubeletConfiguration(codecs, data)
}

func (Kubelet) NewMemoryManager(policy string, m *common.Machine, reservation v1.ResourceList,
	reserved []kubeletconfig.MemoryReservation, stateDir string, tm topologymanager.Manager) (memorymanager.Manager, error) {
	return memorymanager.NewManager(policy, machineinfo.Info(m), reservation, reserved, stateDir, tm)
}

func (Kubelet) StartMemoryManager(mem memorymanager.Manager, active memorymanager.ActivePodsFunc) error {
	return mem.Start(active, probe.SourcesReady{}, probe.PodStatusProvider{}, probe.RuntimeService{}, containermap.NewContainerMap())
}

func addMemoryContainer(mem memorymanager.Manager, pod *v1.Pod, c *v1.Container, id string) {
	mem.AddContainer(pod, c, id)
}
