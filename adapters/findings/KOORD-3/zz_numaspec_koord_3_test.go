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

// Finding KOORD-3 of numaspec (a conformance suite for NUMA hint merging):
// among non-preferred merges Koordinator keeps the narrowest one, which is
// kubelet's rule up to 1.23. From 1.24 (kubernetes PR #108154) kubelet ranks
// non-preferred merges around a target width, the largest over resources of
// the node count of that resource's narrowest hint: a merge of exactly that
// width first, then narrower ones (widest first), then wider ones (narrowest
// first). The case is numaspec's minimal vector, with kubelet 1.24's answer
// as the expectation.

package topologymanager

import (
	"testing"

	"github.com/koordinator-sh/koordinator/apis/extension"
)

func TestNumaspecKOORD3(t *testing.T) {
	tcases := []struct {
		name          string
		numaNodes     []int
		hints         []map[string][]NUMATopologyHint
		expected      NUMATopologyHint
		expectedAdmit bool
	}{
		{
			name:      "non-preferred merge at the target width beats a narrower one",
			numaNodes: []int{0, 1},
			hints: []map[string][]NUMATopologyHint{
				{
					"cpu": {
						{NUMANodeAffinity: NewTestBitMask(0), Preferred: false},
						{NUMANodeAffinity: NewTestBitMask(0, 1), Preferred: false},
					},
				},
				{
					"gpu": {
						{NUMANodeAffinity: NewTestBitMask(0, 1), Preferred: false},
					},
				},
			},
			expected:      NUMATopologyHint{NUMANodeAffinity: NewTestBitMask(0, 1), Preferred: false},
			expectedAdmit: false,
		},
	}

	for _, tc := range tcases {
		policy := NewRestrictedPolicy(tc.numaNodes)
		actual, admit, _ := policy.Merge(tc.hints, extension.NumaTopologyExclusivePreferred, []extension.NumaNodeStatus{})
		// Only the affinity and the preferred flag are compared: kubelet's hint
		// has no Unsatisfied mark and no score.
		if !actual.IsEqual(tc.expected) || admit != tc.expectedAdmit {
			t.Errorf("%v: restricted merged to %v (admit %t), want %v (admit %t): the non-preferred merge at the target width",
				tc.name, actual, admit, tc.expected, tc.expectedAdmit)
		}
	}
}
