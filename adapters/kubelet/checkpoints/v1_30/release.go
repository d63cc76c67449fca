package main

// Release 1.30 (the formats of 1.29 to 1.35): cpu_manager_state V2 and
// memory_manager_state with one checksum each; no pod-level entries.

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/util/dump"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	cpustate "k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/state"
	memstate "k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
	"k8s.io/utils/cpuset"

	"numaspec.invalid/kubelet-checkpoints/scenarios"
)

// release implements scenarios.Release for 1.30.
type release struct{}

var must = scenarios.Must

func (*release) ForHash(v any) string { return dump.ForHash(v) }

func (*release) NewCPUState(dir, policy string) cpustate.State {
	s, err := cpustate.NewCheckpointState(dir, "cpu_manager_state", policy, containermap.NewContainerMap())
	must(err)
	return s
}

func (*release) NewMemState(dir, policy string) memstate.State {
	s, err := memstate.NewCheckpointState(dir, "memory_manager_state", policy)
	must(err)
	return s
}

func (*release) PodLevelGate() bool { return false }
func (*release) EnablePodLevel()    {}
func (*release) SetPodLevel(cpustate.State, memstate.State, string, cpuset.CPUSet, []memstate.Block) {
}

// CPUSpew: VerifyChecksum of CPUManagerCheckpointV2 (an alias of CPUManagerCheckpoint).
func (r *release) CPUSpew(blob []byte) map[string]string {
	cp := cpustate.NewCPUManagerCheckpoint()
	must(json.Unmarshal(blob, cp))
	cp.Checksum = 0
	return map[string]string{"checksum": r.ForHash(cp)}
}

func (r *release) MemSpew(blob []byte) map[string]string {
	cp := memstate.NewMemoryManagerCheckpoint()
	must(json.Unmarshal(blob, cp))
	cp.Checksum = 0
	return map[string]string{"checksum": r.ForHash(cp)}
}
