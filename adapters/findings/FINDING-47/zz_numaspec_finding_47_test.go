// numaspec FINDING-47 (spec/conformance/findings.md, rules MERGE-14 and MERGE-11 in
// spec/topology/merge.md).
//
// What kubelet does: from 1.38 a merged hint carries a Score, the mean of the scores of the
// permutation it was merged from (aggregateHintScores). HintMerger.Merge keeps the first
// permutation that merges to the winning affinity and preference (compare never replaces an
// equal candidate), and filterProvidersHints lists a provider's resources in Go's random map
// order. A winner reached by several permutations with different scores therefore gets
// whichever score the walk meets first, so the same hints merge to different scores from one
// admission to the next.
//
// What it should do: the merged hint, its score included, should be a function of the hints
// alone, not of the order Go happens to range over a provider's resources.
//
// Written by numaspec (https://github.com/numaspec/numaspec)

package topologymanager

import (
	"sort"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask"
)

func TestNumaspecFINDING47(t *testing.T) {
	// How many times each request is merged; each merge ranges over a provider's map afresh,
	// so both orders of two resources come up with overwhelming probability.
	const merges = 200

	mask := func(nodes ...int) bitmask.BitMask {
		m, err := bitmask.NewBitMask(nodes...)
		if err != nil {
			t.Fatalf("bitmask.NewBitMask(%v): %v", nodes, err)
		}
		return m
	}
	threeNodes := &NUMAInfo{
		Nodes: []int{0, 1, 2},
		NUMADistances: NUMADistances{
			0: {10, 11, 11},
			1: {11, 10, 11},
			2: {11, 11, 10},
		},
	}

	// One provider with two resources, nothing preferred. Both resources' hints intersect to
	// {0} the narrowest way, reached by two permutations: ({0,1} of the first resource,
	// {0,2} of the second) and ({0,2} of the first, {0,1} of the second). Walking "a" first
	// meets (10+90)/2 = 50 first; walking "b" first meets (30+20)/2 = 25.
	providers := func() []map[string][]TopologyHint {
		return []map[string][]TopologyHint{{
			"a": {
				{NUMANodeAffinity: mask(0, 1), Preferred: false, Score: 10},
				{NUMANodeAffinity: mask(0, 2), Preferred: false, Score: 20},
				{NUMANodeAffinity: mask(2), Preferred: false},
			},
			"b": {
				{NUMANodeAffinity: mask(0, 1), Preferred: false, Score: 30},
				{NUMANodeAffinity: mask(0, 2), Preferred: false, Score: 90},
				{NUMANodeAffinity: mask(2), Preferred: false},
			},
		}}
	}

	tcases := []struct {
		name             string
		policy           Policy
		expectedAffinity bitmask.BitMask
		expectedAdmit    bool
	}{
		{
			name:             "best-effort, one provider with two resources, nothing preferred",
			policy:           NewBestEffortPolicy(threeNodes, PolicyOptions{}),
			expectedAffinity: mask(0),
			expectedAdmit:    true,
		},
		{
			name:             "restricted, one provider with two resources, nothing preferred",
			policy:           NewRestrictedPolicy(threeNodes, PolicyOptions{}),
			expectedAffinity: mask(0),
			expectedAdmit:    false,
		},
	}

	for _, tc := range tcases {
		t.Run(tc.name, func(t *testing.T) {
			logger := klog.Background()
			seen := map[int64]int{}
			for i := 0; i < merges; i++ {
				hint, admit := tc.policy.Merge(logger, providers())
				// The affinity, the preference and the admission do not depend on the order
				// (MERGE-11); a failure here would be a different defect.
				if !hint.NUMANodeAffinity.IsEqual(tc.expectedAffinity) || hint.Preferred {
					t.Fatalf("merge %d: expected affinity %v, not preferred; got %v, preferred %v",
						i, tc.expectedAffinity, hint.NUMANodeAffinity, hint.Preferred)
				}
				if admit != tc.expectedAdmit {
					t.Fatalf("merge %d: expected admit %v, got %v", i, tc.expectedAdmit, admit)
				}
				seen[hint.Score]++
			}
			if len(seen) != 1 {
				scores := make([]int64, 0, len(seen))
				for score := range seen {
					scores = append(scores, score)
				}
				sort.Slice(scores, func(i, j int) bool { return scores[i] < scores[j] })
				counts := make([]int, 0, len(scores))
				for _, score := range scores {
					counts = append(counts, seen[score])
				}
				t.Errorf("FINDING-47: the merged hint's score depends on Go map order: "+
					"%d distinct scores %v (seen %v times) over %d merges of the same hints",
					len(seen), scores, counts, merges)
			}
		})
	}
}
