//go:build kubelet1.37

package release

// 1.37 on: cpu_manager_state V4 and memory_manager_state V3: the old
// top-level fields with their checksum, plus the whole state as a JSON string
// in "data" with "dataChecksum" (the checksum 1.37 itself verifies); the
// store's GetAffinity takes a logger, Allocate a context and the add
// operation.

import (
	"context"
	"encoding/json"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	cpustate "k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/state"
	memstate "k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

func (r *Release) CPUSpew(blob []byte) map[string]string {
	legacy := &cpustate.CPUManagerCheckpointV2{Entries: map[string]map[string]string{}}
	must(json.Unmarshal(blob, legacy))
	legacy.Checksum = 0
	var cp cpustate.CPUManagerCheckpoint
	must(json.Unmarshal(blob, &cp))
	return map[string]string{
		"checksum":     strings.Replace(r.ForHash(legacy), "CPUManagerCheckpointV2", "CPUManagerCheckpoint", 1),
		"dataChecksum": r.ForHash(cp.Data),
	}
}

func (r *Release) MemSpew(blob []byte) map[string]string {
	legacy := &memstate.MemoryManagerCheckpointV1{Entries: memstate.ContainerMemoryAssignments{}, MachineState: memstate.NUMANodeMap{}}
	must(json.Unmarshal(blob, legacy))
	legacy.Checksum = 0
	var cp memstate.MemoryManagerCheckpoint
	must(json.Unmarshal(blob, &cp))
	return map[string]string{
		"checksum":     strings.Replace(r.ForHash(legacy), "MemoryManagerCheckpointV1", "MemoryManagerCheckpoint", 1),
		"dataChecksum": r.ForHash(cp.Data),
	}
}

func (s store) GetAffinity(_ klog.Logger, podUID string, containerName string) topologymanager.TopologyHint {
	return s.affinity(podUID, containerName)
}

func (mm *memManager) Allocate(pod *v1.Pod, c *v1.Container) error {
	return mm.m.Allocate(context.Background(), pod, c, lifecycle.AddOperation)
}
