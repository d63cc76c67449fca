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

// Finding SCHEDPLUG-2 of numaspec (a suite checking NUMA alignment
// implementations against kubelet): under the container scope the Filter
// checks each regular init container on its own and then forgets where it
// went, so a later container can be aligned on a NUMA node kubelet never
// offers it.
//
// Kubelet's rule: the CPU Manager keeps the exclusive CPUs of a regular init
// container for the pod and hands them over to the containers admitted after
// it (cpusToReuse, cpumanager/policy_static.go updateCPUsToReuse); while any
// of them is left, every CPU hint of a later container must include their
// NUMA node (generateCPUTopologyHints). Under single-numa-node that container
// must then fit on that NUMA node, reused CPUs included.

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

func TestNumaspecSCHEDPLUG2(t *testing.T) {
	// Two NUMA nodes of 4 CPUs: another pod holds 2 CPUs of NUMA 0, and one
	// CPU of NUMA 1 is reserved: NUMA 0 has 2 free CPUs, NUMA 1 has 3 (vector
	// predict-init-then-app-container-scope).
	nrt := &topologyv1alpha2.NodeResourceTopology{
		ObjectMeta: metav1.ObjectMeta{Name: "numaspec-node"},
		Attributes: topologyv1alpha2.AttributeList{
			{Name: nodeconfig.AttributePolicy, Value: "single-numa-node"},
			{Name: nodeconfig.AttributeScope, Value: "container"},
		},
		Zones: topologyv1alpha2.ZoneList{
			{
				Name: "node-0",
				Type: "Node",
				Resources: topologyv1alpha2.ResourceInfoList{
					MakeTopologyResInfo(cpu, "4", "2"),
					MakeTopologyResInfo(memory, "7680Mi", "7424Mi"),
				},
			},
			{
				Name: "node-1",
				Type: "Node",
				Resources: topologyv1alpha2.ResourceInfoList{
					MakeTopologyResInfo(cpu, "3", "3"),
					MakeTopologyResInfo(memory, "8Gi", "8Gi"),
				},
			},
		},
	}
	nodeRes := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("7"),
		v1.ResourceMemory: resource.MustParse("16Gi"),
	}
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nrt.Name},
		Status:     v1.NodeStatus{Capacity: nodeRes, Allocatable: nodeRes},
	}

	guaranteed := func(name, cpus string) v1.Container {
		res := v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse(cpus),
			v1.ResourceMemory: resource.MustParse("256Mi"),
		}
		return v1.Container{
			Name:      name,
			Resources: v1.ResourceRequirements{Requests: res, Limits: res},
		}
	}

	testCases := []struct {
		name  string
		inits []v1.Container
		apps  []v1.Container
		want  string // expected Unschedulable message, empty if the pod fits
	}{
		{
			// kubelet: the init container gets NUMA 0's 2 CPUs; the app
			// container's hints must include NUMA 0, which has only those 2
			name:  "app container must go where the init container's CPUs are",
			inits: []v1.Container{guaranteed("setup", "2")},
			apps:  []v1.Container{guaranteed("app", "3")},
			want:  "cannot align container",
		},
		{
			// kubelet: the second init container's hints must include NUMA 0 too
			name: "init container must go where the previous init container's CPUs are",
			inits: []v1.Container{
				guaranteed("setup", "2"),
				guaranteed("migrate", "3"),
			},
			apps: []v1.Container{guaranteed("app", "1")},
			want: "cannot align init container",
		},
		{
			// kubelet: the first app container reuses 1 CPU, the second one
			// is still bound to NUMA 0 by the CPU left there
			name:  "a reusable CPU left binds the next app container",
			inits: []v1.Container{guaranteed("setup", "2")},
			apps:  []v1.Container{guaranteed("app", "1"), guaranteed("worker", "3")},
			want:  "cannot align container",
		},
		{
			// kubelet: the app container reuses the init container's CPUs
			name:  "app container reuses the init container's CPUs",
			inits: []v1.Container{guaranteed("setup", "2")},
			apps:  []v1.Container{guaranteed("app", "2")},
		},
		{
			// kubelet: once the reusable CPUs are taken, NUMA 1 is free to use
			name:  "app container after the reusable CPUs are taken",
			inits: []v1.Container{guaranteed("setup", "2")},
			apps:  []v1.Container{guaranteed("app", "2"), guaranteed("worker", "3")},
		},
	}

	for _, testCase := range testCases {
		t.Run(testCase.name, func(t *testing.T) {
			fakeClient, err := tu.NewFakeClient()
			if err != nil {
				t.Fatalf("cannot create the fake client: %v", err)
			}
			if err := fakeClient.Create(context.Background(), nrt.DeepCopy()); err != nil {
				t.Fatal(err)
			}
			tm := TopologyMatch{
				nrtCache: nrtcache.NewPassthrough(klog.Background(), fakeClient),
			}

			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "numaspec-pod"}}
			pod.Spec.InitContainers = testCase.inits
			pod.Spec.Containers = testCase.apps

			nodeInfo := framework.NewNodeInfo()
			nodeInfo.SetNode(node)
			got := tm.Filter(context.Background(), framework.NewCycleState(), pod, nodeInfo)

			if testCase.want == "" {
				if !got.IsSuccess() {
					t.Errorf("SCHEDPLUG-2: Filter refused a pod kubelet admits: %v", got)
				}
				return
			}
			if got.IsSuccess() {
				t.Errorf("SCHEDPLUG-2: Filter let through a pod kubelet rejects (container scope, a later container aligned away from the init container's reusable CPUs), want %q", testCase.want)
				return
			}
			if got.Code() != framework.Unschedulable || got.Message() != testCase.want {
				t.Errorf("SCHEDPLUG-2: Filter status %v %q, want Unschedulable %q", got.Code(), got.Message(), testCase.want)
			}
		})
	}
}
