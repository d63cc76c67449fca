//go:build kubelet1.36

package release

// The read mode (../scenarios/read.go) from 1.36: the states take a logger
// and keep pod-level entries (PodLevelResourceManagers, off by default: the
// read mode leaves the gates at their defaults).

import (
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	cpustate "k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/state"
	memstate "k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
)

func (*Release) OpenCPUState(dir, policy string) (cpustate.State, error) {
	return cpustate.NewCheckpointState(klog.Background(), dir, "cpu_manager_state", policy, containermap.NewContainerMap())
}

func (*Release) OpenMemState(dir, policy string) (memstate.State, error) {
	return memstate.NewCheckpointState(klog.Background(), dir, "memory_manager_state", policy)
}

func (*Release) PodCPUs(s cpustate.State) map[string]string {
	out := map[string]string{}
	for pod, entry := range s.GetPodCPUAssignments() {
		out[pod] = entry.CPUSet.String()
	}
	return out
}

func (*Release) PodMemory(s memstate.State) map[string][]memstate.Block {
	out := map[string][]memstate.Block{}
	for pod, entry := range s.GetPodMemoryAssignments() {
		out[pod] = entry.MemoryBlocks
	}
	return out
}
