//go:build !kubelet1.36

package release

// 1.30 (the formats of 1.29 to 1.35): cpu_manager_state V2 and
// memory_manager_state with one checksum each; no pod-level entries; the
// state files and the Memory Manager take no logger or context.

import (
	"encoding/json"

	v1 "k8s.io/api/core/v1"
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
	s, err := cpustate.NewCheckpointState(dir, "cpu_manager_state", policy, containermap.NewContainerMap())
	must(err)
	return s
}

func (*Release) NewMemState(dir, policy string) memstate.State {
	s, err := memstate.NewCheckpointState(dir, "memory_manager_state", policy)
	must(err)
	return s
}

func (*Release) PodLevelGate() bool { return false }
func (*Release) EnablePodLevel()    {}
func (*Release) SetPodLevel(cpustate.State, memstate.State, string, cpuset.CPUSet, []memstate.Block) {
}

// CPUSpew: VerifyChecksum of CPUManagerCheckpointV2 (an alias of CPUManagerCheckpoint).
func (r *Release) CPUSpew(blob []byte) map[string]string {
	cp := cpustate.NewCPUManagerCheckpoint()
	must(json.Unmarshal(blob, cp))
	cp.Checksum = 0
	return map[string]string{"checksum": r.ForHash(cp)}
}

func (r *Release) MemSpew(blob []byte) map[string]string {
	cp := memstate.NewMemoryManagerCheckpoint()
	must(json.Unmarshal(blob, cp))
	cp.Checksum = 0
	return map[string]string{"checksum": r.ForHash(cp)}
}

func newMemoryManager(mi *machineinfo.MachineInfo, nodeAllocatable v1.ResourceList,
	reserved []kubeletconfig.MemoryReservation, dir string, s store) (memorymanager.Manager, error) {
	return memorymanager.NewManager("Static", mi, nodeAllocatable, reserved, dir, s)
}

func (mm *memManager) Start(activePods func() []*v1.Pod) error {
	return mm.m.Start(activePods, scenarios.AllReady{}, nil, nil, containermap.NewContainerMap())
}

func (mm *memManager) AddContainer(pod *v1.Pod, c *v1.Container, id string) {
	mm.m.AddContainer(pod, c, id)
}

func (mm *memManager) RemoveContainer(id string) error { return mm.m.RemoveContainer(id) }
