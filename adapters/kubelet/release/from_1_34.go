//go:build kubelet1.34

package release

// 1.34 on: config decoding and the Memory Manager's Start take a context.

import (
	"k8s.io/apimachinery/pkg/runtime/serializer"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	utilcodec "k8s.io/kubernetes/pkg/kubelet/kubeletconfig/util/codec"

	"numaspec.invalid/kubelet-oracle/probe"
)

func (Kubelet) DecodeConfig(codecs *serializer.CodecFactory, data []byte) (*kubeletconfig.KubeletConfiguration, error) {
	return utilcodec.DecodeKubeletConfiguration(Context(), codecs, data)
}

func (Kubelet) StartMemoryManager(mem memorymanager.Manager, active memorymanager.ActivePodsFunc) error {
	return mem.Start(Context(), active, probe.SourcesReady{}, probe.PodStatusProvider{}, probe.RuntimeService{}, containermap.NewContainerMap())
}
