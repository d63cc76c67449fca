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

// Finding SCHEDPLUG-7 of numaspec (a suite checking NUMA alignment
// implementations against kubelet): GetPodEffectiveRequest treats a sidecar
// (an init container with RestartPolicy Always) like a regular init container.
//
// Kubelet's rule (KEP-753, and the CPU and Memory Managers' pod-scope request
// in pkg/kubelet/cm/cpumanager/policy_static.go podGuaranteedCPUs):
// a sidecar keeps running, so for every resource the pod's request is the
// larger of
//   - the app containers' sum plus every sidecar's request, and
//   - for each regular init container, its own request plus the requests of
//     the sidecars listed before it,
// plus the pod overhead.

package util

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestNumaspecSCHEDPLUG7(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways

	cpuMem := func(cpu, memGi string) v1.ResourceList {
		return v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse(cpu),
			v1.ResourceMemory: resource.MustParse(memGi + "Gi"),
		}
	}
	sidecar := func(name string, req v1.ResourceList) v1.Container {
		return v1.Container{
			Name:          name,
			RestartPolicy: &always,
			Resources:     v1.ResourceRequirements{Requests: req},
		}
	}
	plain := func(name string, req v1.ResourceList) v1.Container {
		return v1.Container{
			Name:      name,
			Resources: v1.ResourceRequirements{Requests: req},
		}
	}

	testCases := []struct {
		name  string
		inits []v1.Container
		apps  []v1.Container
		want  v1.ResourceList
	}{
		{
			// kubelet: 3 (sidecar) + 1 (app) = 4 CPUs, 2+1 = 3Gi
			name:  "sidecar runs beside the app container",
			inits: []v1.Container{sidecar("proxy", cpuMem("3", "2"))},
			apps:  []v1.Container{plain("app", cpuMem("1", "1"))},
			want:  cpuMem("4", "3"),
		},
		{
			// kubelet: max(2 + 1, 2 + 3) = 5 CPUs; max(1 + 1, 1 + 4) = 5Gi
			name: "regular init container starts while an earlier sidecar runs",
			inits: []v1.Container{
				sidecar("proxy", cpuMem("2", "1")),
				plain("setup", cpuMem("3", "4")),
			},
			apps: []v1.Container{plain("app", cpuMem("1", "1"))},
			want: cpuMem("5", "5"),
		},
		{
			// a sidecar listed after a regular init container is not running
			// when that init container runs: max(1 + 1, 4) = 4 CPUs, max(1 + 1, 1) = 2Gi
			name: "sidecar listed after the regular init container",
			inits: []v1.Container{
				plain("setup", cpuMem("4", "1")),
				sidecar("proxy", cpuMem("1", "1")),
			},
			apps: []v1.Container{plain("app", cpuMem("1", "1"))},
			want: cpuMem("4", "2"),
		},
	}

	for _, testCase := range testCases {
		t.Run(testCase.name, func(t *testing.T) {
			pod := &v1.Pod{}
			pod.Spec.InitContainers = testCase.inits
			pod.Spec.Containers = testCase.apps

			got := GetPodEffectiveRequest(pod)
			for name, wantQty := range testCase.want {
				gotQty, ok := got[name]
				if !ok {
					t.Errorf("SCHEDPLUG-7: effective %s request missing, kubelet's is %s", name, wantQty.String())
					continue
				}
				if gotQty.Cmp(wantQty) != 0 {
					t.Errorf("SCHEDPLUG-7: effective %s request is %s, kubelet's is %s (sidecars must add to the containers running beside them)",
						name, gotQty.String(), wantQty.String())
				}
			}
			if len(got) != len(testCase.want) {
				t.Errorf("SCHEDPLUG-7: effective request has %d resources (%v), want %d", len(got), got, len(testCase.want))
			}
		})
	}
}
