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

// Finding SCHEDPLUG-8 of numaspec (a suite checking NUMA alignment
// implementations against kubelet; SCHEDPLUG-7's container-scope sibling): the Filter checks a
// sidecar (an init container with RestartPolicy Always) on its own and then
// forgets it, like a regular init container.
//
// Kubelet's rule: the Topology Manager's container scope admits the init
// containers, then the app containers, one at a time
// (pkg/kubelet/cm/topologymanager/scope_container.go). A sidecar keeps running,
// so the CPUs and memory it was given are never handed back for reuse
// (cpumanager policy_static.go updateCPUsToReuse, memorymanager
// policy_static.go): every container admitted after a sidecar must fit in what
// the sidecar left on its NUMA node.

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

func TestNumaspecSCHEDPLUG8(t *testing.T) {
	// NUMA 0 has 4 free CPUs, NUMA 1 has 2: a 3-CPU sidecar can only go to
	// NUMA 0, and leaves 1 CPU there.
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
					MakeTopologyResInfo(cpu, "4", "4"),
					MakeTopologyResInfo(memory, "8Gi", "8Gi"),
				},
			},
			{
				Name: "node-1",
				Type: "Node",
				Resources: topologyv1alpha2.ResourceInfoList{
					MakeTopologyResInfo(cpu, "2", "2"),
					MakeTopologyResInfo(memory, "8Gi", "8Gi"),
				},
			},
		},
	}
	nodeRes := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("6"),
		v1.ResourceMemory: resource.MustParse("16Gi"),
	}
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nrt.Name},
		Status:     v1.NodeStatus{Capacity: nodeRes, Allocatable: nodeRes},
	}

	always := v1.ContainerRestartPolicyAlways
	guaranteed := func(name, cpus string, sidecar bool) v1.Container {
		res := v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse(cpus),
			v1.ResourceMemory: resource.MustParse("1Gi"),
		}
		cnt := v1.Container{
			Name:      name,
			Resources: v1.ResourceRequirements{Requests: res, Limits: res},
		}
		if sidecar {
			cnt.RestartPolicy = &always
		}
		return cnt
	}

	testCases := []struct {
		name  string
		inits []v1.Container
		apps  []v1.Container
		want  string // expected Unschedulable message, empty if the pod fits
	}{
		{
			// kubelet: the app container finds 1 CPU on NUMA 0, 2 on NUMA 1: rejected
			name:  "app container needs the CPUs the sidecar holds",
			inits: []v1.Container{guaranteed("proxy", "3", true)},
			apps:  []v1.Container{guaranteed("app", "3", false)},
			want:  "cannot align container",
		},
		{
			// kubelet: the init container finds 1 CPU on NUMA 0, 2 on NUMA 1: rejected
			name: "regular init container needs the CPUs an earlier sidecar holds",
			inits: []v1.Container{
				guaranteed("proxy", "3", true),
				guaranteed("setup", "3", false),
			},
			apps: []v1.Container{guaranteed("app", "1", false)},
			want: "cannot align init container",
		},
		{
			// kubelet: the app container takes the CPU left on NUMA 0: admitted
			name:  "app container fits beside the sidecar",
			inits: []v1.Container{guaranteed("proxy", "3", true)},
			apps:  []v1.Container{guaranteed("app", "1", false)},
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
					t.Errorf("SCHEDPLUG-8: Filter refused a pod kubelet admits: %v", got)
				}
				return
			}
			if got.IsSuccess() {
				t.Errorf("SCHEDPLUG-8: Filter let through a pod kubelet rejects (container scope, the sidecar's CPUs counted as free), want %q", testCase.want)
				return
			}
			if got.Code() != framework.Unschedulable || got.Message() != testCase.want {
				t.Errorf("SCHEDPLUG-8: Filter status %v %q, want Unschedulable %q", got.Code(), got.Message(), testCase.want)
			}
		})
	}
}
