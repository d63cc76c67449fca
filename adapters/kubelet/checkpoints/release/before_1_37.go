//go:build !kubelet1.37

package release

// 1.30-1.36: the Topology Manager's store and the Memory Manager's Allocate
// take no logger, context or operation.

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
)

func (s store) GetAffinity(podUID string, containerName string) topologymanager.TopologyHint {
	return s.affinity(podUID, containerName)
}

func (mm *memManager) Allocate(pod *v1.Pod, c *v1.Container) error { return mm.m.Allocate(pod, c) }
