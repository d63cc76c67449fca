package main

// The Memory Manager of 1.36 (memorymanager.NewManager, Static policy) for the
// memory-group-release scenario: logger and context arguments for NewManager, Start,
// AddContainer and RemoveContainer, Allocate with neither, a Topology Manager Store of
// GetAffinity, GetPolicy and Name.

import (
	"context"

	cadvisorapi "github.com/google/cadvisor/info/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask"

	"numaspec.invalid/kubelet-checkpoints/scenarios"
)

// store answers each container's Topology Manager affinity from a table, preferred.
type store map[string][]int

func (s store) GetAffinity(podUID string, containerName string) topologymanager.TopologyHint {
	ids, ok := s[podUID+"/"+containerName]
	if !ok {
		return topologymanager.TopologyHint{Preferred: true}
	}
	mask, err := bitmask.NewBitMask(ids...)
	must(err)
	return topologymanager.TopologyHint{NUMANodeAffinity: mask, Preferred: true}
}

func (store) GetPolicy() topologymanager.Policy { return nil }
func (store) Name() string                      { return "scenario-affinity" }

type memManager struct{ m memorymanager.Manager }

func (*release) NewMemManager(dir string, nodes []uint64, nodeAllocatable v1.ResourceList,
	reserved []kubeletconfig.MemoryReservation, affinity map[string][]int) (scenarios.MemManager, error) {
	mi := &cadvisorapi.MachineInfo{NumCores: len(nodes)}
	for id, size := range nodes {
		mi.MemoryCapacity += size
		mi.Topology = append(mi.Topology, cadvisorapi.Node{Id: id, Memory: size,
			Cores: []cadvisorapi.Core{{Id: id, Threads: []int{id}, SocketID: 0}}})
	}
	m, err := memorymanager.NewManager(klog.Background(), "Static", mi, nodeAllocatable, reserved, dir, store(affinity))
	if err != nil {
		return nil, err
	}
	return &memManager{m}, nil
}

func (mm *memManager) Start(activePods func() []*v1.Pod) error {
	return mm.m.Start(context.Background(), activePods, scenarios.AllReady{}, nil, nil, containermap.NewContainerMap())
}

func (mm *memManager) Allocate(pod *v1.Pod, c *v1.Container) error { return mm.m.Allocate(pod, c) }

func (mm *memManager) AddContainer(pod *v1.Pod, c *v1.Container, id string) {
	mm.m.AddContainer(klog.Background(), pod, c, id)
}

func (mm *memManager) RemoveContainer(id string) error {
	return mm.m.RemoveContainer(klog.Background(), id)
}
