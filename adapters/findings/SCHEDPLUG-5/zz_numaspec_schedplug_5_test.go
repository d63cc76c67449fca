/*
Copyright 2026 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Finding SCHEDPLUG-5 of numaspec (a suite checking NUMA alignment
// implementations against kubelet): the Filter compares the cpu request of a
// Guaranteed container asking for a fraction of a CPU with the exclusive CPUs
// a NUMA zone has left, and refuses the node when none is left.
//
// Kubelet's rule: the static CPU Manager gives exclusive CPUs only to
// containers of Guaranteed pods asking for a whole number of CPUs
// (cpumanager/policy_static.go guaranteedCPUs); any other container runs on
// the shared pool and gets no CPU hint, in either scope. The
// NodeResourceTopology counts exclusive CPUs only: the shared pool is not in
// it (kubernetes#102190).

package noderesourcetopology

import (
	"context"
	"testing"

	topologyv1alpha2 "github.com/k8stopologyawareschedwg/noderesourcetopology-api/pkg/apis/topology/v1alpha2"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	nrtcache "sigs.k8s.io/scheduler-plugins/pkg/noderesourcetopology/cache"
	"sigs.k8s.io/scheduler-plugins/pkg/noderesourcetopology/nodeconfig"
	tu "sigs.k8s.io/scheduler-plugins/test/util"
)

func TestNumaspecSCHEDPLUG5(t *testing.T) {
	resInfo := func(name, capacity, allocatable, available string) topologyv1alpha2.ResourceInfo {
		return topologyv1alpha2.ResourceInfo{
			Name:        name,
			Capacity:    resource.MustParse(capacity),
			Allocatable: resource.MustParse(allocatable),
			Available:   resource.MustParse(available),
		}
	}
	// Two NUMA nodes of 4 CPUs; kubeReserved cpu 500m keeps CPU 0 out of the
	// exclusive CPUs, and other pods hold every other exclusive CPU but
	// freeCPUs of NUMA 1. The shared pool still has CPU 0.
	makeNRT := func(scope, freeCPUs string) *topologyv1alpha2.NodeResourceTopology {
		return &topologyv1alpha2.NodeResourceTopology{
			ObjectMeta: metav1.ObjectMeta{Name: "numaspec-node"},
			Attributes: topologyv1alpha2.AttributeList{
				{Name: nodeconfig.AttributePolicy, Value: "single-numa-node"},
				{Name: nodeconfig.AttributeScope, Value: scope},
			},
			Zones: topologyv1alpha2.ZoneList{
				{
					Name: "node-0",
					Type: "Node",
					Resources: topologyv1alpha2.ResourceInfoList{
						resInfo(cpu, "4", "3", "0"),
						resInfo(memory, "8Gi", "7680Mi", "7424Mi"),
					},
				},
				{
					Name: "node-1",
					Type: "Node",
					Resources: topologyv1alpha2.ResourceInfoList{
						resInfo(cpu, "4", "4", freeCPUs),
						resInfo(memory, "8Gi", "8Gi", "7936Mi"),
					},
				},
			},
		}
	}
	nodeRes := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("7500m"),
		v1.ResourceMemory: resource.MustParse("15872Mi"),
	}
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "numaspec-node"},
		Status:     v1.NodeStatus{Capacity: nodeRes, Allocatable: nodeRes},
	}

	testCases := []struct {
		name     string
		scope    string
		freeCPUs string
		cpus     []string // one Guaranteed container each, with 256Mi
		want     string   // expected Unschedulable message, empty if the pod fits
	}{
		{
			// kubelet: no CPU hint, the Memory Manager gives NUMA 0: admitted
			name:     "half a CPU, no exclusive CPU left, container scope",
			scope:    "container",
			freeCPUs: "0",
			cpus:     []string{"500m"},
		},
		{
			name:     "half a CPU, no exclusive CPU left, pod scope",
			scope:    "pod",
			freeCPUs: "0",
			cpus:     []string{"500m"},
		},
		{
			// kubelet: the pod needs 1 exclusive CPU, NUMA 1 has it: admitted
			name:     "one CPU and half a CPU, one exclusive CPU left, pod scope",
			scope:    "pod",
			freeCPUs: "1",
			cpus:     []string{"1", "500m"},
		},
		{
			// kubelet: no CPU hint for the whole CPU: rejected
			name:     "one CPU, no exclusive CPU left",
			scope:    "container",
			freeCPUs: "0",
			cpus:     []string{"1"},
			want:     "cannot align container",
		},
	}

	for _, testCase := range testCases {
		t.Run(testCase.name, func(t *testing.T) {
			fakeClient, err := tu.NewFakeClient()
			if err != nil {
				t.Fatalf("cannot create the fake client: %v", err)
			}
			if err := fakeClient.Create(context.Background(), makeNRT(testCase.scope, testCase.freeCPUs)); err != nil {
				t.Fatal(err)
			}
			tm := TopologyMatch{
				nrtCache: nrtcache.NewPassthrough(klog.Background(), fakeClient),
			}

			var containers []v1.ResourceList
			for _, cpus := range testCase.cpus {
				containers = append(containers, v1.ResourceList{
					v1.ResourceCPU:    resource.MustParse(cpus),
					v1.ResourceMemory: resource.MustParse("256Mi"),
				})
			}
			pod := makePodByResourceLists(containers...)

			nodeInfo := framework.NewNodeInfo()
			nodeInfo.SetNode(node)
			got := tm.Filter(context.Background(), framework.NewCycleState(), pod, nodeInfo)

			if testCase.want == "" {
				if !got.IsSuccess() {
					t.Errorf("SCHEDPLUG-5: Filter refused a pod kubelet admits (a fraction of a CPU counted against exclusive CPUs): %v", got)
				}
				return
			}
			if got.IsSuccess() {
				t.Errorf("SCHEDPLUG-5: Filter let through a pod kubelet rejects, want %q", testCase.want)
				return
			}
			if got.Code() != framework.Unschedulable || got.Message() != testCase.want {
				t.Errorf("SCHEDPLUG-5: Filter status %v %q, want Unschedulable %q", got.Code(), got.Message(), testCase.want)
			}
		})
	}
}
