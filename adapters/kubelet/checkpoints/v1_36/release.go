package main

// Release 1.36: by default the formats of 1.29 to 1.35 (cpu_manager_state V2,
// memory_manager_state V1); with the PodLevelResourceManagers gate on,
// cpu_manager_state V3 and memory_manager_state V2 (pod-level entries added).

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

// release implements scenarios.Release for 1.36; podLevel is whether the gate
// has been turned on (it decides which checkpoint version is written).
type release struct{ podLevel bool }

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
func (r *release) EnablePodLevel() {
	must(utilfeature.DefaultMutableFeatureGate.Set("PodLevelResourceManagers=true"))
	r.podLevel = true
}
func (*release) SetPodLevel(cs cpustate.State, ms memstate.State, pod string, cpus cpuset.CPUSet, blocks []memstate.Block) {
	cs.SetPodCPUSet(pod, cpus)
	ms.SetPodMemoryBlocks(pod, blocks)
}

func (r *release) CPUSpew(blob []byte) map[string]string {
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

func (r *release) MemSpew(blob []byte) map[string]string {
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
