/*
numaspec FINDING-59 (spec/conformance/findings.md, rules OPS-2, MEM-6, MEM-7): whether kubelet
restarts on the memory state file it wrote itself depends on Go's map order.

What kubelet does: at start, validateState rebuilds the expected machine state by reserving
every recorded block again, ranging over the pods and then the containers of each pod in Go's
map order, and updateExpectedMachineState gives each NUMA node the group (cells) of the last
block it reserves there. When blocks over different NUMA sets share a node, the rebuilt
groups depend on that order. Kubelet 1.37 writes such files: in pod scope the pod's memory
hint is computed over the memory types the app containers ask for, so a sidecar that alone
asks for hugepages NUMA node 0 does not have is widened to {0,1}, and the app container,
which fits the pod's hint {0}, is pinned to NUMA node 0 (isAffinityViolatingNUMAAllocations
does not check single-node hints). The file records cells [0] on node 0 (the app was
allocated last); rebuilt with the app first and the sidecar last, node 0 gets [0 1] and Start
fails with "the expected machine state is different from the real one". The same file is
accepted by some starts and refused by others.

What it should do: a state file kubelet wrote must give the same answer at every start. The
groups must not overlap (refuse a single-NUMA-node hint on a node of a cross-NUMA group, as
calculateHints and the multi-node check of Allocate already do), so that the rebuilt groups
do not depend on the order.

Written by numaspec (https://github.com/numaspec/numaspec).
*/

package memorymanager

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	cadvisorapi "github.com/google/cadvisor/lib/model"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	"k8s.io/kubernetes/test/utils/ktesting"
)

func TestNumaspecFINDING59(t *testing.T) {
	logger, ctx := ktesting.NewTestContext(t)

	// NUMA node 0 has the 2Mi hugepages, NUMA node 1 the 1Gi ones.
	machineInfo := &cadvisorapi.MachineInfo{
		Topology: []cadvisorapi.Node{
			{Id: 0, Memory: 4 * gb, HugePages: []cadvisorapi.HugePagesInfo{
				{PageSize: 2048, NumPages: 256}, {PageSize: pageSize1Gb, NumPages: 0}}},
			{Id: 1, Memory: 4 * gb, HugePages: []cadvisorapi.HugePagesInfo{
				{PageSize: 2048, NumPages: 0}, {PageSize: pageSize1Gb, NumPages: 2}}},
		},
	}
	nodeAllocatableReservation := v1.ResourceList{v1.ResourceMemory: *resource.NewQuantity(gb, resource.BinarySI)}
	reservedMemory := []kubeletconfig.MemoryReservation{
		{NumaNode: 0, Limits: v1.ResourceList{v1.ResourceMemory: *resource.NewQuantity(gb, resource.BinarySI)}},
	}
	stateDir := t.TempDir()
	hint := &topologymanager.TopologyHint{}
	affinity := topologymanager.NewFakeManagerWithHint(logger, hint)
	var active []*v1.Pod
	start := func(ctx context.Context) (Manager, error) {
		mgr, err := NewManager(klog.FromContext(ctx), string(PolicyTypeStatic), machineInfo, nodeAllocatableReservation,
			reservedMemory, stateDir, affinity)
		if err != nil {
			t.Fatalf("NewManager: %v", err)
		}
		return mgr, mgr.Start(ctx, func() []*v1.Pod { return active }, &sourcesReadyStub{}, mockPodStatusProvider{},
			mockRuntimeService{}, containermap.NewContainerMap())
	}

	mgr, err := start(ctx)
	if err != nil {
		t.Fatalf("first start: %v", err)
	}

	// A Guaranteed pod: a sidecar asking for memory and both hugepage sizes, and an app
	// container asking for memory only.
	guaranteed := func(quantities map[v1.ResourceName]string) v1.ResourceRequirements {
		list := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}
		for name, quantity := range quantities {
			list[name] = resource.MustParse(quantity)
		}
		return v1.ResourceRequirements{Limits: list, Requests: list.DeepCopy()}
	}
	pod := getPodWithInitContainers("pod1",
		[]v1.Container{{Name: "app", Resources: guaranteed(map[v1.ResourceName]string{v1.ResourceMemory: "64Mi"})}},
		[]v1.Container{{Name: "sidecar", RestartPolicy: &containerRestartPolicyAlways,
			Resources: guaranteed(map[v1.ResourceName]string{
				v1.ResourceMemory: "64Mi", v1.ResourceName(v1.ResourceHugePagesPrefix + "2Mi"): "2Mi", hugepages1Gi: "1Gi",
			})}},
	)

	active = []*v1.Pod{pod}

	// The Topology Manager's pod scope under best-effort: merge the Memory Manager's pod
	// hints with the CPU Manager's (its CPUs fit NUMA node 0 only), then allocate each
	// container with the merged hint.
	numaInfo, err := topologymanager.NewNUMAInfo(machineInfo.Topology, topologymanager.PolicyOptions{})
	if err != nil {
		t.Fatalf("NewNUMAInfo: %v", err)
	}
	cpuHints := map[string][]topologymanager.TopologyHint{
		string(v1.ResourceCPU): {
			{NUMANodeAffinity: newNUMAAffinity(0), Preferred: true},
			{NUMANodeAffinity: newNUMAAffinity(0, 1), Preferred: false},
		},
	}
	memoryHints := mgr.GetPodTopologyHints(logger, pod, lifecycle.AddOperation)
	merged, admitted := topologymanager.NewBestEffortPolicy(numaInfo, topologymanager.PolicyOptions{}).Merge(logger,
		[]map[string][]topologymanager.TopologyHint{memoryHints, cpuHints})
	if !admitted {
		t.Fatalf("the Topology Manager refused the pod")
	}
	*hint = merged
	var pinned []string
	for _, container := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		if err := mgr.Allocate(ctx, pod, &container, lifecycle.AddOperation); err != nil {
			// the pod is refused; what its earlier containers hold stays in the file
			pinned = append(pinned, fmt.Sprintf("%s refused: %v", container.Name, err))
			break
		}
		for _, block := range mgr.GetMemory(logger, string(pod.UID), container.Name) {
			if block.Type == v1.ResourceMemory {
				pinned = append(pinned, fmt.Sprintf("%s on %v", container.Name, block.NUMAAffinity))
			}
		}
	}
	t.Logf("pod hint %v; memory: %s", merged, strings.Join(pinned, ", "))

	// Restart kubelet's Memory Manager on the file it has just written, many times.
	const starts = 200
	answers := map[string]int{}
	quiet := klog.NewContext(ctx, logr.Discard())
	for range starts {
		_, err := start(quiet)
		answer := "started"
		if err != nil {
			answer = err.Error()
		}
		answers[answer]++
	}
	if len(answers) > 1 {
		var seen []string
		for answer, count := range answers {
			seen = append(seen, fmt.Sprintf("  %3d x  %s", count, answer))
		}
		sort.Strings(seen)
		t.Errorf("overlapping memory groups (%s): the Memory Manager gave %d different answers in %d starts on "+
			"the same state file:\n%s", strings.Join(pinned, ", "), len(answers), starts, strings.Join(seen, "\n"))
	}
}
