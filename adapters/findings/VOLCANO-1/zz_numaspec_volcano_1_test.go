/*
Copyright 2026 The Volcano Authors.

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

// Finding VOLCANO-1 of numaspec (a conformance suite for NUMA hint merging):
// the single-numa-node policy returns the merged hint as it is, so when the
// best hint covers every NUMA node of the machine it reports that mask as the
// affinity. Kubelet's single-numa-node Merge turns such a best hint into no
// affinity (a nil mask) and keeps its preferred flag; admission is unchanged.
// The cases below are numaspec's minimal vectors for the finding, with
// kubelet 1.23's answer as the expectation.

package policy

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask"
)

func TestNumaspecVOLCANO1(t *testing.T) {
	testCases := []struct {
		name           string
		numaNodes      []int
		providersHints []map[string][]TopologyHint
		expect         TopologyHint
		expectAdmit    bool
	}{
		{
			name:           "no hint provider at all",
			numaNodes:      []int{0, 1},
			providersHints: []map[string][]TopologyHint{},
			expect:         TopologyHint{NUMANodeAffinity: nil, Preferred: true},
			expectAdmit:    true,
		},
		{
			name:      "only a two-node hint, nothing fits one node",
			numaNodes: []int{0, 1},
			providersHints: []map[string][]TopologyHint{
				{
					"cpu": []TopologyHint{
						{
							NUMANodeAffinity: func() bitmask.BitMask {
								mask, _ := bitmask.NewBitMask(0, 1)
								return mask
							}(),
							Preferred: true,
						},
					},
				},
			},
			expect:      TopologyHint{NUMANodeAffinity: nil, Preferred: false},
			expectAdmit: false,
		},
		{
			name:      "machine with a single NUMA node",
			numaNodes: []int{0},
			providersHints: []map[string][]TopologyHint{
				{
					"cpu": []TopologyHint{
						{
							NUMANodeAffinity: func() bitmask.BitMask {
								mask, _ := bitmask.NewBitMask(0)
								return mask
							}(),
							Preferred: true,
						},
					},
				},
			},
			expect:      TopologyHint{NUMANodeAffinity: nil, Preferred: true},
			expectAdmit: true,
		},
	}

	for _, testcase := range testCases {
		policy := NewPolicySingleNumaNode(testcase.numaNodes)
		bestHit, admit := policy.Predicate(testcase.providersHints)
		if !equality.Semantic.DeepEqual(bestHit, testcase.expect) || admit != testcase.expectAdmit {
			t.Errorf("%s: bestHit= %v admit= %v, want %v admit= %v: a best hint spanning the whole machine should be reported as no affinity (nil), as kubelet's single-numa-node policy does",
				testcase.name, bestHit, admit, testcase.expect, testcase.expectAdmit)
		}
	}
}
