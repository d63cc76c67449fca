package main

// Release 1.30 (the formats of 1.29 to 1.35): cpu_manager_state V2 and
// memory_manager_state with one checksum each; no pod-level entries.

import (
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/util/dump"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	cpustate "k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/state"
	memstate "k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
	"k8s.io/utils/cpuset"
)

func forHash(v any) string { return dump.ForHash(v) }

func newCPUState(dir, policy string) cpustate.State {
	s, err := cpustate.NewCheckpointState(dir, "cpu_manager_state", policy, containermap.NewContainerMap())
	must(err)
	return s
}

func newMemState(dir, policy string) memstate.State {
	s, err := memstate.NewCheckpointState(dir, "memory_manager_state", policy)
	must(err)
	return s
}

func podLevelGate() bool { return false }
func enablePodLevel()    {}
func setPodLevel(cpustate.State, memstate.State, string, cpuset.CPUSet, []memstate.Block) {}

// cpuSpew: VerifyChecksum of CPUManagerCheckpointV2 (an alias of CPUManagerCheckpoint).
func cpuSpew(blob []byte) map[string]string {
	cp := cpustate.NewCPUManagerCheckpoint()
	must(json.Unmarshal(blob, cp))
	cp.Checksum = 0
	return map[string]string{"checksum": forHash(cp)}
}

func memSpew(blob []byte) map[string]string {
	cp := memstate.NewMemoryManagerCheckpoint()
	must(json.Unmarshal(blob, cp))
	cp.Checksum = 0
	return map[string]string{"checksum": forHash(cp)}
}

var _ = strings.Replace
