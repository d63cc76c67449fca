//go:build kubelet1.36

package release

// 1.36 on: the PodLevelResourceManagers gate (pod-level entries), and the
// state files and the Memory Manager take a logger or context (NewManager,
// Start, AddContainer, RemoveContainer).

import (
	"context"

	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	cpustate "k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/state"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	memstate "k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
	"k8s.io/utils/cpuset"

	"numaspec.invalid/kubelet-checkpoints/scenarios"
	"numaspec.invalid/kubelet-oracle/machineinfo"
)

func (*Release) NewCPUState(dir, policy string) cpustate.State {
	s, err := cpustate.NewCheckpointState(klog.Background(), dir, "cpu_manager_state", policy, containermap.NewContainerMap())
	must(err)
	return s
}

func (*Release) NewMemState(dir, policy string) memstate.State {
	s, err := memstate.NewCheckpointState(klog.Background(), dir, "memory_manager_state", policy)
	must(err)
	return s
}

func (*Release) PodLevelGate() bool { return true }
func (r *Release) EnablePodLevel() {
	must(utilfeature.DefaultMutableFeatureGate.Set("PodLevelResourceManagers=true"))
	r.podLevel = true
}
func (*Release) SetPodLevel(cs cpustate.State, ms memstate.State, pod string, cpus cpuset.CPUSet, blocks []memstate.Block) {
	cs.SetPodCPUSet(pod, cpus)
	ms.SetPodMemoryBlocks(pod, blocks)
}

func newMemoryManager(mi *machineinfo.MachineInfo, nodeAllocatable v1.ResourceList,
	reserved []kubeletconfig.MemoryReservation, dir string, s store) (memorymanager.Manager, error) {
	return memorymanager.NewManager(klog.Background(), "Static", mi, nodeAllocatable, reserved, dir, s)
}

func (mm *memManager) Start(activePods func() []*v1.Pod) error {
	return mm.m.Start(context.Background(), activePods, scenarios.AllReady{}, nil, nil, containermap.NewContainerMap())
}

func (mm *memManager) AddContainer(pod *v1.Pod, c *v1.Container, id string) {
	mm.m.AddContainer(klog.Background(), pod, c, id)
}

func (mm *memManager) RemoveContainer(id string) error {
	return mm.m.RemoveContainer(klog.Background(), id)
}
