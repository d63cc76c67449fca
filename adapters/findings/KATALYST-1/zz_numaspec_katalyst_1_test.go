/*
Copyright 2026 The Katalyst Authors.

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

// Finding KATALYST-1 of numaspec (a conformance suite for NUMA hint merging):
// NewManager refuses an empty policy name as an unknown policy (and on more
// than eight NUMA nodes refuses the machine first, since "" is not "none").
// Kubelet reads an empty topology manager policy as "none": no alignment,
// every pod admitted, no NUMA affinity. The first case is numaspec's minimal
// vector, with kubelet 1.24's answer as the expectation; the second is the
// same policy name on nine NUMA nodes.

package topology

import (
	"testing"

	cadvisorapi "github.com/google/cadvisor/info/v1"
	v1 "k8s.io/api/core/v1"
	v12 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNumaspecKATALYST1(t *testing.T) {
	t.Parallel()
	tcases := []struct {
		description      string
		numaNodes        int
		hp               []HintProvider
		expectedPolicy   string
		expectedAffinity TopologyHint
	}{
		{
			description: "empty policy name on two NUMA nodes",
			numaNodes:   2,
			hp: []HintProvider{
				&mockHintProvider{
					map[string][]TopologyHint{
						"cpu": {{NUMANodeAffinity: NewTestBitMask(0), Preferred: true}},
					},
				},
			},
			expectedPolicy:   PolicyNone,
			expectedAffinity: TopologyHint{NUMANodeAffinity: nil, Preferred: false},
		},
		{
			description:      "empty policy name on nine NUMA nodes",
			numaNodes:        9,
			hp:               []HintProvider{},
			expectedPolicy:   PolicyNone,
			expectedAffinity: TopologyHint{NUMANodeAffinity: nil, Preferred: false},
		},
	}

	for _, tc := range tcases {
		var topology []cadvisorapi.Node
		for id := 0; id < tc.numaNodes; id++ {
			topology = append(topology, cadvisorapi.Node{Id: id})
		}

		mngr, err := NewManager(topology, "", nil)
		if err != nil {
			t.Errorf("%s: NewManager refused an empty policy name (%v); kubelet reads it as %q", tc.description, err, tc.expectedPolicy)
			continue
		}
		rawMgr := mngr.(*manager)
		if rawMgr.policy.Name() != tc.expectedPolicy {
			t.Errorf("%s: Unexpected policy name. Have: %q wants %q", tc.description, rawMgr.policy.Name(), tc.expectedPolicy)
		}
		for _, provider := range tc.hp {
			mngr.AddHintProvider(provider)
		}

		pod := &v1.Pod{
			ObjectMeta: v12.ObjectMeta{UID: "numaspec-pod"},
			Spec: v1.PodSpec{
				Containers: []v1.Container{{Name: "c0"}},
			},
		}
		if err := mngr.Admit(pod); err != nil {
			t.Errorf("%s: pod not admitted: %v", tc.description, err)
		}
		affinity := mngr.GetAffinity("numaspec-pod", "c0", "cpu")
		if !affinity.IsEqual(tc.expectedAffinity) {
			t.Errorf("%s: Unexpected affinity. Have: %v wants %v", tc.description, affinity, tc.expectedAffinity)
		}
	}
}
