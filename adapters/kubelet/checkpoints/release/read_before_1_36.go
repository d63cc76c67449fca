//go:build !kubelet1.36

package release

// The read mode (../scenarios/read.go) before 1.36: the states take no
// logger and keep no pod-level entries.

import (
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	cpustate "k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/state"
	memstate "k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
)

func (*Release) OpenCPUState(dir, policy string) (cpustate.State, error) {
	return cpustate.NewCheckpointState(dir, "cpu_manager_state", policy, containermap.NewContainerMap())
}

func (*Release) OpenMemState(dir, policy string) (memstate.State, error) {
	return memstate.NewCheckpointState(dir, "memory_manager_state", policy)
}

func (*Release) PodCPUs(cpustate.State) map[string]string             { return nil }
func (*Release) PodMemory(memstate.State) map[string][]memstate.Block { return nil }
