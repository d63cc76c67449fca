package main

// Release 1.37: cpu_manager_state V4 and memory_manager_state V3: the old
// top-level fields with their checksum, plus the whole state as a JSON string
// in "data" with "dataChecksum" (the checksum 1.37 itself verifies).

import (
	"encoding/json"
	"strings"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	cpustate "k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/state"
	memstate "k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
	"k8s.io/utils/cpuset"
	"k8s.io/utils/dump"
)

func forHash(v any) string { return dump.ForHash(v) }

func newCPUState(dir, policy string) cpustate.State {
	s, err := cpustate.NewCheckpointState(klog.Background(), dir, "cpu_manager_state", policy, containermap.NewContainerMap())
	must(err)
	return s
}

func newMemState(dir, policy string) memstate.State {
	s, err := memstate.NewCheckpointState(klog.Background(), dir, "memory_manager_state", policy)
	must(err)
	return s
}

func podLevelGate() bool { return true }
func enablePodLevel() {
	must(utilfeature.DefaultMutableFeatureGate.Set("PodLevelResourceManagers=true"))
}
func setPodLevel(cs cpustate.State, ms memstate.State, pod string, cpus cpuset.CPUSet, blocks []memstate.Block) {
	cs.SetPodCPUSet(pod, cpus)
	ms.SetPodMemoryBlocks(pod, blocks)
}

func cpuSpew(blob []byte) map[string]string {
	legacy := &cpustate.CPUManagerCheckpointV2{Entries: map[string]map[string]string{}}
	must(json.Unmarshal(blob, legacy))
	legacy.Checksum = 0
	var cp cpustate.CPUManagerCheckpoint
	must(json.Unmarshal(blob, &cp))
	return map[string]string{
		"checksum":     strings.Replace(forHash(legacy), "CPUManagerCheckpointV2", "CPUManagerCheckpoint", 1),
		"dataChecksum": forHash(cp.Data),
	}
}

func memSpew(blob []byte) map[string]string {
	legacy := &memstate.MemoryManagerCheckpointV1{Entries: memstate.ContainerMemoryAssignments{}, MachineState: memstate.NUMANodeMap{}}
	must(json.Unmarshal(blob, legacy))
	legacy.Checksum = 0
	var cp memstate.MemoryManagerCheckpoint
	must(json.Unmarshal(blob, &cp))
	return map[string]string{
		"checksum":     strings.Replace(forHash(legacy), "MemoryManagerCheckpointV1", "MemoryManagerCheckpoint", 1),
		"dataChecksum": forHash(cp.Data),
	}
}
