/*
Copyright 2026 The Koordinator Authors.

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

// Finding KOORD-4 of numaspec (a conformance suite for NUMA hint merging):
// when a resource has no possible NUMA placement (an empty, non-nil hint
// list) the restricted policy returns at once with every NUMA node as the
// affinity. Kubelet lets that resource contribute a non-preferred hint with
// no affinity and merges on, so it refuses the pod with the best merge of the
// other resources' hints. The case is numaspec's minimal vector, with kubelet
// 1.24's answer as the expectation.

package topologymanager

import (
	"testing"

	"github.com/koordinator-sh/koordinator/apis/extension"
)

func TestNumaspecKOORD4(t *testing.T) {
	tcases := []struct {
		name          string
		numaNodes     []int
		hints         []map[string][]NUMATopologyHint
		expected      NUMATopologyHint
		expectedAdmit bool
	}{
		{
			name:      "one resource without any possible placement",
			numaNodes: []int{0, 1},
			hints: []map[string][]NUMATopologyHint{
				{
					"cpu": {
						{NUMANodeAffinity: NewTestBitMask(0), Preferred: true},
					},
					"gpu": {},
				},
			},
			expected:      NUMATopologyHint{NUMANodeAffinity: NewTestBitMask(0), Preferred: false},
			expectedAdmit: false,
		},
	}

	for _, tc := range tcases {
		policy := NewRestrictedPolicy(tc.numaNodes)
		actual, admit, _ := policy.Merge(tc.hints, extension.NumaTopologyExclusivePreferred, []extension.NumaNodeStatus{})
		// Only the affinity and the preferred flag are compared: kubelet's hint
		// has no Unsatisfied mark and no score.
		if !actual.IsEqual(tc.expected) || admit != tc.expectedAdmit {
			t.Errorf("%v: restricted answered %v (admit %t), want the merge of the other hints %v (admit %t)",
				tc.name, actual, admit, tc.expected, tc.expectedAdmit)
		}
	}
}
