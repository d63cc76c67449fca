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

// Finding KOORD-2 of numaspec (a conformance suite for NUMA hint merging):
// a merge is marked Unsatisfied by comparing its node count with the count of
// each hint as given, before the hint is restricted to the NUMA nodes the
// machine has. A hint naming a node the machine lacks therefore spoils every
// merge it is in, and best-effort then answers every NUMA node, not preferred.
// Kubelet ANDs each hint with the machine's nodes first and keeps the merge:
// here the single-node machine's {0}, preferred. The case is numaspec's
// minimal vector, with kubelet 1.24's answer as the expectation.

package topologymanager

import (
	"testing"

	"github.com/koordinator-sh/koordinator/apis/extension"
)

func TestNumaspecKOORD2(t *testing.T) {
	tcases := []struct {
		name          string
		numaNodes     []int
		hints         []map[string][]NUMATopologyHint
		expected      NUMATopologyHint
		expectedAdmit bool
	}{
		{
			name:      "hint wider than a one-node machine",
			numaNodes: []int{0},
			hints: []map[string][]NUMATopologyHint{
				{
					"cpu": {
						{NUMANodeAffinity: NewTestBitMask(0, 1), Preferred: true},
					},
				},
			},
			expected:      NUMATopologyHint{NUMANodeAffinity: NewTestBitMask(0), Preferred: true},
			expectedAdmit: true,
		},
	}

	for _, tc := range tcases {
		policy := NewBestEffortPolicy(tc.numaNodes)
		actual, admit, _ := policy.Merge(tc.hints, extension.NumaTopologyExclusivePreferred, []extension.NumaNodeStatus{})
		// Only the affinity and the preferred flag are compared: kubelet's hint
		// has no Unsatisfied mark and no score.
		if !actual.IsEqual(tc.expected) || admit != tc.expectedAdmit {
			t.Errorf("%v: best-effort merged to %v (admit %t), want %v (admit %t): nodes the machine does not have should not count against a merge",
				tc.name, actual, admit, tc.expected, tc.expectedAdmit)
		}
	}
}
