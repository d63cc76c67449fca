// Package scenarios writes kubelet's own state files (cpu_manager_state,
// memory_manager_state, kubelet_internal_checkpoint) for a few scenarios, using
// the pinned release's state packages and checkpoint manager, and records for
// each file the exact text the release hashes into its checksum(s). It is
// shared by every release directory (../v1_30, ../v1_36, ...), whose release.go
// implements Release: what differs between releases. Like ../../probe, this
// module requires no k8s.io module itself: the versions of the k8s.io packages
// it imports come from the release's main module.
package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/checkpointmanager"
	cpustate "k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/state"
	devcheckpoint "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/checkpoint"
	memstate "k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
	"k8s.io/utils/cpuset"
)

// Release is what differs between kubelet releases: the state constructors'
// signatures, the PodLevelResourceManagers gate, and the structs whose go-spew
// rendering each release hashes into a file's checksum field(s).
type Release interface {
	// NewCPUState opens (creating) dir/cpu_manager_state for the CPU policy.
	NewCPUState(dir, policy string) cpustate.State
	// NewMemState opens (creating) dir/memory_manager_state for the Memory policy.
	NewMemState(dir, policy string) memstate.State
	// PodLevelGate reports whether the release has the PodLevelResourceManagers gate.
	PodLevelGate() bool
	// EnablePodLevel turns the gate on (called only when PodLevelGate is true).
	EnablePodLevel()
	// SetPodLevel records pod-level CPU and memory assignments for pod.
	SetPodLevel(cs cpustate.State, ms memstate.State, pod string, cpus cpuset.CPUSet, blocks []memstate.Block)
	// CPUSpew gives, per checksum field of cpu_manager_state, the text hashed into it.
	CPUSpew(blob []byte) map[string]string
	// MemSpew gives, per checksum field of memory_manager_state, the text hashed into it.
	MemSpew(blob []byte) map[string]string
	// ForHash is the release's go-spew rendering used by its checksums.
	ForHash(v any) string
	// NewMemManager is the release's memorymanager.NewManager with the Static policy on a
	// machine of nodes (NUMA node i has nodes[i] bytes and the hugepages hugepages[i], if
	// hugepages has an entry i), state file under dir, and a Topology Manager store answering
	// affinity[podUID+"/"+container] (NUMA ids, preferred) for every container.
	NewMemManager(dir string, nodes []uint64, hugepages [][]HugePages, nodeAllocatable v1.ResourceList,
		reserved []kubeletconfig.MemoryReservation, affinity map[string][]int) (MemManager, error)
}

// MemManager is what the scenarios call of a release's memorymanager.Manager, without the
// release's logger, context and operation arguments.
type MemManager interface {
	// Start is the manager's Start with these active pods, all sources ready, an empty
	// container map and no status provider or runtime (Start does not call them).
	Start(activePods func() []*v1.Pod) error
	// Allocate is the manager's Allocate (the add operation where the release has one).
	Allocate(pod *v1.Pod, container *v1.Container) error
	// AddContainer records the container's runtime ID, as kubelet does once it is created.
	AddContainer(pod *v1.Pod, container *v1.Container, id string)
	// RemoveContainer is the manager's RemoveContainer(containerID).
	RemoveContainer(id string) error
}

// AllReady is a config.SourcesReady whose sources are all ready.
type AllReady struct{}

// AddSource does nothing.
func (AllReady) AddSource(string) {}

// AllReady is always true.
func (AllReady) AllReady() bool { return true }

const (
	gi   = uint64(1) << 30
	podA = "6f1c2a7e-0d3b-4c55-9a01-000000000a01" // default/db
	podB = "6f1c2a7e-0d3b-4c55-9a01-000000000b02" // default/trainer
)

// memory gives one NUMA node's memory tables: regular memory and an empty 2Mi hugepage pool.
func memory(total, sysReserved, reserved uint64) map[string]*memstate.MemoryTable {
	return map[string]*memstate.MemoryTable{
		"memory": {TotalMemSize: total, SystemReserved: sysReserved, Allocatable: total - sysReserved,
			Reserved: reserved, Free: total - sysReserved - reserved},
		"hugepages-2Mi": {},
	}
}

func tables(in map[string]*memstate.MemoryTable) map[v1.ResourceName]*memstate.MemoryTable {
	out := map[v1.ResourceName]*memstate.MemoryTable{}
	for k, v := range in {
		out[v1.ResourceName(k)] = v
	}
	return out
}

func machineState(used bool) memstate.NUMANodeMap {
	ms := memstate.NUMANodeMap{}
	for n := 0; n < 4; n++ {
		ms[n] = &memstate.NUMANodeState{MemoryMap: tables(memory(16*gi, 0, 0)), Cells: []int{n}}
	}
	ms[0].MemoryMap = tables(memory(16*gi, gi, 0))
	if used {
		ms[0].MemoryMap = tables(memory(16*gi, gi, 2*gi))
		ms[0].NumberOfAssignments = 2
		ms[2].MemoryMap = tables(memory(16*gi, 0, 16*gi))
		ms[2].NumberOfAssignments = 1
		ms[2].Cells = []int{2, 3}
		ms[3].MemoryMap = tables(memory(16*gi, 0, 4*gi))
		ms[3].NumberOfAssignments = 1
		ms[3].Cells = []int{2, 3}
	}
	return ms
}

func mustDir(p string) string {
	if err := os.MkdirAll(p, 0o755); err != nil {
		panic(err)
	}
	return p
}

// Must panics on a non-nil error (the programs have no recoverable failures).
func Must(err error) {
	if err != nil {
		panic(err)
	}
}

// allocResp is a ContainerAllocateResponse (envs {"GPU": "gpu2,gpu3"}) in protobuf wire form.
var allocResp = append([]byte{0x0a, 0x10, 0x0a, 0x03}, append([]byte("GPU"), append([]byte{0x12, 0x09}, []byte("gpu2,gpu3")...)...)...)

func writeScenario(r Release, dir string, busy bool, podLevel bool) {
	policy, mpolicy := "none", "None"
	if busy {
		policy, mpolicy = "static", "Static"
	}
	cs := r.NewCPUState(dir, policy)
	ms := r.NewMemState(dir, mpolicy)
	if busy {
		cs.SetDefaultCPUSet(cpuset.New(0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31))
		cs.SetCPUSet(podA, "app", cpuset.New(1, 2, 3, 4))
		cs.SetCPUSet(podB, "worker", cpuset.New(16, 17, 18, 19, 20, 21, 22, 23))
		ms.SetMachineState(machineState(true))
		ms.SetMemoryBlocks(podA, "init", []memstate.Block{{NUMAAffinity: []int{0}, Type: "memory", Size: 0}})
		ms.SetMemoryBlocks(podA, "app", []memstate.Block{{NUMAAffinity: []int{0}, Type: "memory", Size: 2 * gi}})
		ms.SetMemoryBlocks(podB, "worker", []memstate.Block{{NUMAAffinity: []int{2, 3}, Type: "memory", Size: 20 * gi}})
		if podLevel {
			r.SetPodLevel(cs, ms, podB, cpuset.New(16, 17, 18, 19, 20, 21, 22, 23),
				[]memstate.Block{{NUMAAffinity: []int{2, 3}, Type: "memory", Size: 20 * gi}})
		}
	}
	entries := []devcheckpoint.PodDevicesEntry{}
	registered := map[string][]string{}
	if busy {
		entries = []devcheckpoint.PodDevicesEntry{
			{PodUID: podA, ContainerName: "app", ResourceName: "example.com/nic",
				DeviceIDs: devcheckpoint.DevicesPerNUMA{0: {"nic0"}}, AllocResp: []byte{}},
			{PodUID: podB, ContainerName: "worker", ResourceName: "example.com/gpu",
				DeviceIDs: devcheckpoint.DevicesPerNUMA{2: {"gpu2"}, 3: {"gpu3"}}, AllocResp: allocResp},
			{PodUID: podB, ContainerName: "worker", ResourceName: "example.com/fpga",
				DeviceIDs: devcheckpoint.DevicesPerNUMA{-1: {"fpga0"}}, AllocResp: nil},
		}
		registered = map[string][]string{
			"example.com/gpu":  {"gpu0", "gpu1", "gpu2", "gpu3"},
			"example.com/nic":  {"nic0", "nic1"},
			"example.com/fpga": {"fpga0"},
		}
	}
	writeDevAndHashed(r, dir, entries, registered)
}

// writeDevAndHashed writes dir/device-plugins/kubelet_internal_checkpoint with these entries,
// then hashed.json for the three files.
func writeDevAndHashed(r Release, dir string, entries []devcheckpoint.PodDevicesEntry, registered map[string][]string) {
	devDir := mustDir(filepath.Join(dir, "device-plugins"))
	mgr, err := checkpointmanager.NewCheckpointManager(devDir)
	Must(err)
	Must(mgr.CreateCheckpoint("kubelet_internal_checkpoint", devcheckpoint.New(entries, registered)))

	hashed := map[string]map[string]string{}
	read := func(name string) []byte {
		blob, err := os.ReadFile(filepath.Join(dir, name))
		Must(err)
		return blob
	}
	hashed["cpu_manager_state"] = r.CPUSpew(read("cpu_manager_state"))
	hashed["memory_manager_state"] = r.MemSpew(read("memory_manager_state"))
	hashed["device-plugins/kubelet_internal_checkpoint"] = devSpew(r, read("device-plugins/kubelet_internal_checkpoint"))
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	Must(enc.Encode(hashed))
	Must(os.WriteFile(filepath.Join(dir, "hashed.json"), out.Bytes(), 0o644))
}

func devSpew(r Release, blob []byte) map[string]string {
	cp := devcheckpoint.New(make([]devcheckpoint.PodDevicesEntry, 0), make(map[string][]string)).(*devcheckpoint.Data)
	Must(json.Unmarshal(blob, cp))
	return map[string]string{"Checksum": r.ForHash(cp.Data)}
}

// Pods of the memory-group-release scenario: default/big (removed) and default/small.
const (
	podBig   = "3c9e5d20-7b41-4f8a-9c6e-00000000a015"
	podSmall = "3c9e5d20-7b41-4f8a-9c6e-00000000b003"
	// the runtime's container IDs of their containers "app"
	ctrBig   = "a015a015a015a015a015a015a015a015a015a015a015a015a015a015a015a015"
	ctrSmall = "b003b003b003b003b003b003b003b003b003b003b003b003b003b003b003b003"
)

// guaranteedPod is default/name with one container "app" whose requests equal its limits.
func guaranteedPod(uid, name, cpu, memory string) *v1.Pod {
	rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(memory)}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(uid)},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "app",
			Resources: v1.ResourceRequirements{Requests: rl, Limits: rl}}}},
	}
}

// writeMemoryGroupRelease: a 2-NUMA machine (11Gi per node, no hugepages), Memory Manager
// Static with reservedMemory 1Gi per node (node allocatable reservation 2Gi: 1948Mi
// system-reserved + the 100Mi eviction threshold), CPU Manager none. Through the release's
// own memorymanager.Manager: pod big (15Gi) gets affinity {0,1} (node 0 10Gi, node 1 5Gi),
// pod small (3Gi) affinity {0,1} (node 1 3Gi), then big's container is removed. The files
// are as kubelet leaves them; then a fresh manager is started on the same directory, as a
// restarting kubelet does, and what its Start answers goes to restart.txt ("started" or
// the error).
func writeMemoryGroupRelease(r Release, dir string) {
	r.NewCPUState(dir, "none")
	nodes := []uint64{11 * gi, 11 * gi}
	allocatable := v1.ResourceList{v1.ResourceMemory: resource.MustParse("2048Mi")}
	reserved := []kubeletconfig.MemoryReservation{
		{NumaNode: 0, Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}},
		{NumaNode: 1, Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}},
	}
	affinity := map[string][]int{podBig + "/app": {0, 1}, podSmall + "/app": {0, 1}}
	big := guaranteedPod(podBig, "big", "500m", "15Gi")
	small := guaranteedPod(podSmall, "small", "500m", "3Gi")

	mm, err := r.NewMemManager(dir, nodes, nil, allocatable, reserved, affinity)
	Must(err)
	active := []*v1.Pod{big, small}
	Must(mm.Start(func() []*v1.Pod { return active }))
	Must(mm.Allocate(big, &big.Spec.Containers[0]))
	mm.AddContainer(big, &big.Spec.Containers[0], ctrBig)
	Must(mm.Allocate(small, &small.Spec.Containers[0]))
	mm.AddContainer(small, &small.Spec.Containers[0], ctrSmall)
	active = []*v1.Pod{small}
	Must(mm.RemoveContainer(ctrBig))

	statePath := filepath.Join(dir, "memory_manager_state")
	before, err := os.ReadFile(statePath)
	Must(err)
	restarted, err := r.NewMemManager(dir, nodes, nil, allocatable, reserved, affinity)
	Must(err)
	answer := "started"
	if err := restarted.Start(func() []*v1.Pod { return []*v1.Pod{small} }); err != nil {
		answer = err.Error()
	}
	after, err := os.ReadFile(statePath)
	Must(err)
	if !bytes.Equal(before, after) {
		panic("memory-group-release: the restart rewrote memory_manager_state")
	}
	Must(os.WriteFile(filepath.Join(dir, "restart.txt"), []byte(answer+"\n"), 0o644))
	writeDevAndHashed(r, dir, []devcheckpoint.PodDevicesEntry{}, map[string][]string{})
}

// Main is each release's program: usage `go run . OUTDIR [SCENARIO...]`; writes
// OUTDIR/<scenario>/... for empty, guaranteed, memory-group-release and, where the release
// has the PodLevelResourceManagers gate, guaranteed-podlevel (only the SCENARIOs named, if
// any are); `go run . read DIR` reads DIR's state files instead (read.go); `go run .
// restart DIR N` starts a Memory Manager on them N times (restart.go).
func Main(r Release) {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: checkpoints OUTDIR [SCENARIO...]")
		os.Exit(2)
	}
	out := os.Args[1]
	if out == "read" && len(os.Args) == 3 { // read.go
		ReadMain(r, os.Args[2])
		return
	}
	if out == "restart" && len(os.Args) == 4 { // restart.go
		RestartMain(r, os.Args[2], os.Args[3])
		return
	}
	wanted := map[string]bool{}
	for _, name := range os.Args[2:] {
		wanted[name] = true
	}
	want := func(name string) bool { return len(wanted) == 0 || wanted[name] }
	if want("empty") {
		writeScenario(r, mustDir(filepath.Join(out, "empty")), false, false)
	}
	if want("guaranteed") {
		writeScenario(r, mustDir(filepath.Join(out, "guaranteed")), true, false)
	}
	if want("memory-group-release") {
		writeMemoryGroupRelease(r, mustDir(filepath.Join(out, "memory-group-release")))
	}
	if r.PodLevelGate() && want("guaranteed-podlevel") {
		r.EnablePodLevel()
		writeScenario(r, mustDir(filepath.Join(out, "guaranteed-podlevel")), true, true)
	}
}
