/*
numaspec FINDING-18 (spec/conformance/findings.md, F-DEV-CHOICE; rules DEV-4, DEV-6, RUN-12
in spec/node/devices.md).

What kubelet does: ManagerImpl.devicesToAllocate takes a container's devices from each group
(the reusable devices, the free ones in the Topology Manager's affinity, those elsewhere,
those without topology) by ranging over a sets.Set, that is over a Go map. When a group holds
devices on more than one NUMA node and only part of it is needed, which devices the container
gets - and so on which NUMA nodes they are, and which hints are regenerated from them later -
changes from one run to the next for the same node, the same state and the same pod.

What it should do: give the same devices for the same inputs, e.g. by walking each group in a
fixed order (the device ids sorted).

The test repeats the same allocation on a fresh manager many times and fails when the answers
differ.

Written by numaspec (https://github.com/numaspec/numaspec)
*/

package devicemanager

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask"
	"k8s.io/kubernetes/test/utils/ktesting"
)

// numaspecFixedAffinity is a topologymanager.Store that answers one hint for every container,
// without logging: the test asks it hundreds of times.
type numaspecFixedAffinity struct {
	hint topologymanager.TopologyHint
}

func (s numaspecFixedAffinity) GetAffinity(klog.Logger, string, string) topologymanager.TopologyHint {
	return s.hint
}
func (s numaspecFixedAffinity) GetPolicy() topologymanager.Policy {
	return topologymanager.NewNonePolicy()
}
func (s numaspecFixedAffinity) Name() string { return "numaspec-fixed-affinity" }

func TestNumaspecFINDING18(t *testing.T) {
	_, tCtx := ktesting.NewTestContext(t)
	const (
		resource = "example.com/dev"
		runs     = 200
	)

	// numa lists a device's NUMA nodes; an empty list is a device without topology.
	type device struct {
		id   string
		numa []int64
	}
	noAffinity := topologymanager.TopologyHint{}
	affinity := func(nodes ...int) topologymanager.TopologyHint {
		mask, err := bitmask.NewBitMask(nodes...)
		if err != nil {
			t.Fatalf("bitmask %v: %v", nodes, err)
		}
		return topologymanager.TopologyHint{NUMANodeAffinity: mask, Preferred: true}
	}

	testCases := []struct {
		description string
		devices     []device
		hint        topologymanager.TopologyHint
		required    int
	}{
		{
			description: "none policy (no affinity): one device on each of two NUMA nodes, one asked",
			devices:     []device{{"gpu0", []int64{0}}, {"gpu1", []int64{1}}},
			hint:        noAffinity,
			required:    1,
		},
		{
			description: "affinity {0,1}: aligned devices on both nodes, one asked",
			devices: []device{
				{"d0", []int64{0}}, {"d1", []int64{0}}, {"d2", []int64{1}}, {"d3", []int64{1}}, {"d4", nil},
			},
			hint:     affinity(0, 1),
			required: 1,
		},
		{
			description: "affinity {0}: both aligned devices taken, the third from two other nodes",
			devices: []device{
				{"d0", []int64{0}}, {"d1", []int64{0}}, {"d2", []int64{1}}, {"d3", []int64{2}},
			},
			hint:     affinity(0),
			required: 3,
		},
	}

	for _, testCase := range testCases {
		t.Run(testCase.description, func(t *testing.T) {
			numaOf := map[string][]int64{}
			instances := map[string]*pluginapi.Device{}
			healthy := sets.New[string]()
			for _, d := range testCase.devices {
				numaOf[d.id] = d.numa
				dev := &pluginapi.Device{ID: d.id, Health: pluginapi.Healthy}
				if len(d.numa) > 0 {
					dev.Topology = &pluginapi.TopologyInfo{}
					for _, n := range d.numa {
						dev.Topology.Nodes = append(dev.Topology.Nodes, &pluginapi.NUMANode{ID: n})
					}
				}
				instances[d.id] = dev
				healthy.Insert(d.id)
			}

			seen := map[string]int{}
			numaSets := sets.New[string]()
			for range runs {
				testManager := &ManagerImpl{
					endpoints:             map[string]endpointInfo{resource: {e: &MockEndpoint{}, opts: &pluginapi.DevicePluginOptions{}}},
					healthyDevices:        map[string]sets.Set[string]{resource: healthy.Clone()},
					unhealthyDevices:      make(map[string]sets.Set[string]),
					allocatedDevices:      make(map[string]sets.Set[string]),
					allDevices:            ResourceDeviceInstances{resource: instances},
					podDevices:            newPodDevices(),
					activePods:            func() []*v1.Pod { return []*v1.Pod{} },
					sourcesReady:          &sourcesReadyStub{},
					topologyAffinityStore: numaspecFixedAffinity{hint: testCase.hint},
				}
				allocated, err := testManager.devicesToAllocate(tCtx, "pod", "cnt", resource, testCase.required, sets.New[string]())
				if err != nil {
					t.Fatalf("devicesToAllocate: unexpected error: %v", err)
				}
				if allocated.Len() != testCase.required {
					t.Fatalf("devicesToAllocate: got %d devices %v, want %d", allocated.Len(), sets.List(allocated), testCase.required)
				}
				var answer []string
				nodes := sets.New[int64]()
				for _, id := range sets.List(allocated) {
					answer = append(answer, fmt.Sprintf("%s (NUMA %v)", id, numaOf[id]))
					nodes.Insert(numaOf[id]...)
				}
				numaSets.Insert(fmt.Sprint(sets.List(nodes)))
				seen[strings.Join(answer, ", ")]++
			}

			if len(seen) > 1 {
				var answers []string
				for answer, n := range seen {
					answers = append(answers, fmt.Sprintf("[%s] %d times", answer, n))
				}
				sort.Strings(answers)
				t.Errorf("F-DEV-CHOICE: devicesToAllocate is not deterministic: %d identical allocations gave %d distinct answers on %d distinct NUMA node sets (Go map order): %s",
					runs, len(seen), numaSets.Len(), strings.Join(answers, "; "))
			}
		})
	}
}
