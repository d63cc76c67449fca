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

	"numaspec.invalid/kubelet-checkpoints/scenarios"
)

// release implements scenarios.Release for 1.37.
type release struct{}

var must = scenarios.Must

func (*release) ForHash(v any) string { return dump.ForHash(v) }

func (*release) NewCPUState(dir, policy string) cpustate.State {
	s, err := cpustate.NewCheckpointState(klog.Background(), dir, "cpu_manager_state", policy, containermap.NewContainerMap())
	must(err)
	return s
}

func (*release) NewMemState(dir, policy string) memstate.State {
	s, err := memstate.NewCheckpointState(klog.Background(), dir, "memory_manager_state", policy)
	must(err)
	return s
}

func (*release) PodLevelGate() bool { return true }
func (*release) EnablePodLevel() {
	must(utilfeature.DefaultMutableFeatureGate.Set("PodLevelResourceManagers=true"))
}
func (*release) SetPodLevel(cs cpustate.State, ms memstate.State, pod string, cpus cpuset.CPUSet, blocks []memstate.Block) {
	cs.SetPodCPUSet(pod, cpus)
	ms.SetPodMemoryBlocks(pod, blocks)
}

func (r *release) CPUSpew(blob []byte) map[string]string {
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

func (r *release) MemSpew(blob []byte) map[string]string {
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
