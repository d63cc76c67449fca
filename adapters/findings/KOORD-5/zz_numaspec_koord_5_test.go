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

// Finding KOORD-5 of numaspec (a conformance suite for NUMA hint merging):
// the merge result depends on the order in which resources are visited, and
// a provider's resources are visited in Go map order. Two permutations can
// merge to the same mask, one marked Unsatisfied and one not; whichever is met
// first stays best, and best-effort then either keeps it or gives up and
// answers every NUMA node. Kubelet's answer does not depend on the order of
// providers, resources or hints.
//
// One provider returning both resources gives either order at random. To make
// the failure deterministic the two resources are handed over by two
// providers, in both orders; each order is one of the two map orders of the
// single-provider case. The expectation is kubelet 1.24's answer to
// numaspec's minimal vector.

package topologymanager

import (
	"testing"

	"github.com/koordinator-sh/koordinator/apis/extension"
)

func TestNumaspecKOORD5(t *testing.T) {
	resourceA := map[string][]NUMATopologyHint{
		"a": {
			{NUMANodeAffinity: NewTestBitMask(0, 1), Preferred: false},
			{NUMANodeAffinity: NewTestBitMask(0), Preferred: false},
		},
	}
	resourceB := map[string][]NUMATopologyHint{
		"b": {
			{NUMANodeAffinity: nil, Preferred: false},
			{NUMANodeAffinity: NewTestBitMask(0), Preferred: false},
		},
	}
	expected := NUMATopologyHint{NUMANodeAffinity: NewTestBitMask(0), Preferred: false}

	tcases := []struct {
		name  string
		hints []map[string][]NUMATopologyHint
	}{
		{
			name:  "resource a visited first",
			hints: []map[string][]NUMATopologyHint{resourceA, resourceB},
		},
		{
			name:  "resource b visited first",
			hints: []map[string][]NUMATopologyHint{resourceB, resourceA},
		},
	}

	var answers []NUMATopologyHint
	for _, tc := range tcases {
		policy := NewBestEffortPolicy([]int{0, 1})
		actual, admit, _ := policy.Merge(tc.hints, extension.NumaTopologyExclusivePreferred, []extension.NumaNodeStatus{})
		// Only the affinity and the preferred flag are compared: kubelet's hint
		// has no Unsatisfied mark and no score.
		if !actual.IsEqual(expected) || !admit {
			t.Errorf("%v: best-effort merged to %v (admit %t), want %v (admit true)", tc.name, actual, admit, expected)
		}
		answers = append(answers, actual)
	}
	if !answers[0].IsEqual(answers[1]) {
		t.Errorf("the merge depends on the order of resources: %v with a first, %v with b first", answers[0], answers[1])
	}
}
