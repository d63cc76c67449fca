//go:build kubelet1.36 && !kubelet1.37

package release

// 1.36: by default the formats of 1.29 to 1.35 (cpu_manager_state V2,
// memory_manager_state V1); with the PodLevelResourceManagers gate on,
// cpu_manager_state V3 and memory_manager_state V2 (pod-level entries added).

import (
	"encoding/json"
	"strings"

	cpustate "k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/state"
	memstate "k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
)

func (r *Release) CPUSpew(blob []byte) map[string]string {
	if r.podLevel { // V3: checksum.New over the V3 struct, whose name is CPUManagerCheckpoint
		cp := &cpustate.CPUManagerCheckpoint{Entries: map[string]map[string]string{}, PodEntries: cpustate.PodCPUAssignments{}}
		must(json.Unmarshal(blob, cp))
		cp.Checksum = 0
		return map[string]string{"checksum": r.ForHash(cp)}
	}
	cp := &cpustate.CPUManagerCheckpointV2{Entries: map[string]map[string]string{}}
	must(json.Unmarshal(blob, cp))
	cp.Checksum = 0
	return map[string]string{"checksum": strings.Replace(r.ForHash(cp), "CPUManagerCheckpointV2", "CPUManagerCheckpoint", 1)}
}

func (r *Release) MemSpew(blob []byte) map[string]string {
	if r.podLevel {
		cp := &memstate.MemoryManagerCheckpoint{Entries: memstate.ContainerMemoryAssignments{},
			PodEntries: memstate.PodMemoryAssignments{}, MachineState: memstate.NUMANodeMap{}}
		must(json.Unmarshal(blob, cp))
		cp.Checksum = 0
		return map[string]string{"checksum": r.ForHash(cp)}
	}
	cp := &memstate.MemoryManagerCheckpointV1{Entries: memstate.ContainerMemoryAssignments{}, MachineState: memstate.NUMANodeMap{}}
	must(json.Unmarshal(blob, cp))
	cp.Checksum = 0
	return map[string]string{"checksum": strings.Replace(r.ForHash(cp), "MemoryManagerCheckpointV1", "MemoryManagerCheckpoint", 1)}
}
