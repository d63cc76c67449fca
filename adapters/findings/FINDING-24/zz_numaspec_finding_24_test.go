/*
numaspec FINDING-24 (spec/conformance/findings.md, rules OPS-2, MEM-9, ADMIT-6): a refused
pod's memory, released from a NUMA node of a cross-NUMA group, leaves memory Reserved that no
block holds.

What kubelet does: under the best-effort policy in pod scope, when the Memory Manager has no
hint for the whole pod, the Topology Manager takes the CPU Manager's NUMA node 0, and Allocate
pins the pod's first container to {0} although node 0 belongs to the group [0 1]
(isAffinityViolatingNUMAAllocations only checks multi-node hints). The next container cannot
be placed and the pod is refused; stale-state cleanup releases the pinned block, but
releaseMemory only resets a node's cells when its last assignment goes, so node 0 keeps the
cells [0] the refused pod gave it while the group's block still holds it. From then on
calculateHints offers {0} as a preferred single-node hint, under any policy: the next pod is
pinned to node 0 inside the group. When the group's pod goes, releaseMemory frees its block
lowest NUMA node first, from whoever holds the memory there: it takes that pod's memory on
node 0 and leaves its own on node 1. When that pod goes, nothing is left on node 0 to free:
NUMA node 1 keeps memory Reserved with no assignment at all, for good (and a kubelet restart
would refuse the state file).

What it should do: every byte reserved is freed when the last pod goes. Allocate should refuse
a single-NUMA-node hint on a node that belongs to a cross-NUMA group, as calculateHints
already does, so that a refused pod never takes a node out of its group.

Written by numaspec (https://github.com/numaspec/numaspec).
*/

package memorymanager

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	cadvisorapi "github.com/google/cadvisor/lib/model"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	"k8s.io/kubernetes/test/utils/ktesting"
)

func TestNumaspecFINDING24(t *testing.T) {
	logger, ctx := ktesting.NewTestContext(t)

	// NUMA node 0: 4Gi of memory allocatable and no 1Gi hugepages; NUMA node 1: 4Gi of
	// memory and two 1Gi hugepages.
	machineInfo := &cadvisorapi.MachineInfo{
		Topology: []cadvisorapi.Node{
			{Id: 0, Memory: 5 * gb, HugePages: []cadvisorapi.HugePagesInfo{{PageSize: pageSize1Gb, NumPages: 0}}},
			{Id: 1, Memory: 6 * gb, HugePages: []cadvisorapi.HugePagesInfo{{PageSize: pageSize1Gb, NumPages: 2}}},
		},
	}
	hint := &topologymanager.TopologyHint{}
	policy, err := NewPolicyStatic(logger, machineInfo, systemReservedMemory{0: {v1.ResourceMemory: 1 * gb}},
		topologymanager.NewFakeManagerWithHint(logger, hint))
	if err != nil {
		t.Fatalf("NewPolicyStatic: %v", err)
	}
	var active []*v1.Pod
	mgr := &manager{
		policy:            policy,
		state:             state.NewMemoryState(logger),
		containerMap:      containermap.NewContainerMap(),
		containerRuntime:  mockRuntimeService{},
		activePods:        func() []*v1.Pod { return active },
		podStatusProvider: mockPodStatusProvider{},
		sourcesReady:      &sourcesReadyStub{},
	}
	if err := policy.Start(logger, mgr.state); err != nil {
		t.Fatalf("Start: %v", err)
	}
	numaInfo, err := topologymanager.NewNUMAInfo(machineInfo.Topology, topologymanager.PolicyOptions{})
	if err != nil {
		t.Fatalf("NewNUMAInfo: %v", err)
	}
	bestEffort := topologymanager.NewBestEffortPolicy(numaInfo, topologymanager.PolicyOptions{})
	// The CPU Manager's hints: the pods' CPUs fit on NUMA node 0 only.
	cpuHints := map[string][]topologymanager.TopologyHint{
		string(v1.ResourceCPU): {
			{NUMANodeAffinity: newNUMAAffinity(0), Preferred: true},
			{NUMANodeAffinity: newNUMAAffinity(0, 1), Preferred: false},
		},
	}

	// A Guaranteed pod, one container per entry.
	pod := func(uid string, containers ...map[v1.ResourceName]string) *v1.Pod {
		var list []v1.Container
		for i, quantities := range containers {
			resources := v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}
			for name, quantity := range quantities {
				resources[name] = resource.MustParse(quantity)
			}
			list = append(list, v1.Container{Name: fmt.Sprintf("c%d", i),
				Resources: v1.ResourceRequirements{Limits: resources, Requests: resources.DeepCopy()}})
		}
		return getPodWithInitContainers(uid, list, nil)
	}
	var story []string
	// admit does what the Topology Manager's pod scope does: merge the providers' pod
	// hints, then allocate each container with the merged hint; a failed allocation
	// refuses the pod, which is then no longer active.
	admit := func(pod *v1.Pod) {
		active = append(active, pod)
		memoryHints := mgr.GetPodTopologyHints(logger, pod, lifecycle.AddOperation)
		merged, admitted := bestEffort.Merge(logger, []map[string][]topologymanager.TopologyHint{memoryHints, cpuHints})
		if !admitted {
			active = active[:len(active)-1]
			story = append(story, fmt.Sprintf("%s refused by the Topology Manager", pod.UID))
			return
		}
		*hint = merged
		for i := range pod.Spec.Containers {
			container := &pod.Spec.Containers[i]
			if err := mgr.Allocate(klog.NewContext(ctx, logger), pod, container, lifecycle.AddOperation); err != nil {
				active = active[:len(active)-1]
				story = append(story, fmt.Sprintf("%s refused (%v)", pod.UID, err))
				return
			}
			for _, block := range mgr.GetMemory(logger, string(pod.UID), container.Name) {
				if block.Type == v1.ResourceMemory {
					story = append(story, fmt.Sprintf("%s/%s on %v", pod.UID, container.Name, block.NUMAAffinity))
				}
			}
		}
	}
	remove := func(uid string) {
		for i, pod := range active {
			if string(pod.UID) == uid {
				active = append(active[:i], active[i+1:]...)
			}
		}
		// the next admission starts with the stale-state cleanup
		mgr.removeStaleState(logger)
	}

	// pod-a fits no single NUMA node: {0,1}, 4Gi on node 0 and 512Mi on node 1.
	admit(pod("pod-a", map[v1.ResourceName]string{v1.ResourceMemory: "4608Mi"}))
	// pod-b joins the group; node 0 is full, its 1Gi goes to node 1.
	admit(pod("pod-b", map[v1.ResourceName]string{v1.ResourceMemory: "1Gi", hugepages1Gi: "1Gi"}))
	// pod-a goes: node 0 is free again, still in the group [0 1] with pod-b.
	remove("pod-a")
	// pod-c asks for two 1Gi hugepages, the group has one free: no memory hint, the CPU
	// Manager's {0} wins; c0 is pinned to node 0, c1 cannot be placed: refused.
	admit(pod("pod-c",
		map[v1.ResourceName]string{v1.ResourceMemory: "512Mi"},
		map[v1.ResourceName]string{v1.ResourceMemory: "64Mi", hugepages1Gi: "2Gi"}))
	remove("pod-c")
	// pod-d: 256Mi.
	admit(pod("pod-d", map[v1.ResourceName]string{v1.ResourceMemory: "256Mi"}))
	remove("pod-b")
	remove("pod-d")

	// No pod holds memory any more: nothing may stay reserved.
	machineState := mgr.state.GetMachineState()
	var nodes []int
	for id := range machineState {
		nodes = append(nodes, id)
	}
	sort.Ints(nodes)
	var leaked []string
	for _, id := range nodes {
		node := machineState[id]
		for resourceName, table := range node.MemoryMap {
			if table.Reserved != 0 {
				leaked = append(leaked, fmt.Sprintf("NUMA %d has %dMi of %s reserved (%d assignments)",
					id, table.Reserved/mb, resourceName, node.NumberOfAssignments))
			}
		}
	}
	if len(leaked) > 0 || len(mgr.state.GetMemoryAssignments()) > 0 {
		t.Errorf("memory reserved that no block holds after every pod went: %s; assignments left: %v\nsession: %s",
			strings.Join(leaked, ", "), mgr.state.GetMemoryAssignments(), strings.Join(story, "; "))
	}
}
