// numaspec FINDING-5 (spec/conformance/findings.md, rule OPT-6, SYSFS rows of
// spec/operators/machine-import.md): with prefer-closest-numa-nodes, a machine whose NUMA node
// ids have gaps makes the merge index a distance row out of range.
//
// The kernel writes /sys/devices/system/node/nodeN/distance with one entry per online node, in
// ascending node id order, and cadvisor hands the row on as it is (Node.Distances). NewNUMAInfo
// keeps each row unchanged and NUMADistances.CalculateAverageFor reads it by node id
// (d[node1][node2]). With ids 0 and 2 a row has two entries, so the distance from node 0 to
// node 2 is read at index 2: the first comparison of two equally wide masks under best-effort
// or restricted panics ("index out of range"), and with more nodes the distances it does read
// belong to other nodes. The test feeds rows in the kernel's layout and asks for the answer
// those distances give, without a panic.
//
// Written by numaspec (https://github.com/numaspec/numaspec); run it with
//   go test -run '^TestNumaspecFINDING5$' ./pkg/kubelet/cm/topologymanager/

package topologymanager

import (
	"testing"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	"k8s.io/kubernetes/test/utils/ktesting"
)

func TestNumaspecFINDING5(t *testing.T) {
	tcases := []struct {
		name     string
		policy   string
		topology []cadvisorapi.Node // Distances as the kernel writes them: one entry per node, by ascending id
		hints    []TopologyHint
		expected TopologyHint
	}{
		{
			name:   "best-effort, nodes 0 and 2, one node each",
			policy: PolicyBestEffort,
			topology: []cadvisorapi.Node{
				{Id: 0, Distances: []uint64{10, 20}},
				{Id: 2, Distances: []uint64{20, 10}},
			},
			hints: []TopologyHint{
				{NUMANodeAffinity: NewTestBitMask(0), Preferred: true},
				{NUMANodeAffinity: NewTestBitMask(2), Preferred: true},
			},
			expected: TopologyHint{NUMANodeAffinity: NewTestBitMask(0), Preferred: true},
		},
		{
			name:   "restricted, nodes 0, 2 and 3: 0 and 2 are the close pair",
			policy: PolicyRestricted,
			topology: []cadvisorapi.Node{
				{Id: 0, Distances: []uint64{10, 12, 30}},
				{Id: 2, Distances: []uint64{12, 10, 30}},
				{Id: 3, Distances: []uint64{30, 30, 10}},
			},
			hints: []TopologyHint{
				{NUMANodeAffinity: NewTestBitMask(2, 3), Preferred: true},
				{NUMANodeAffinity: NewTestBitMask(0, 3), Preferred: true},
				{NUMANodeAffinity: NewTestBitMask(0, 2), Preferred: true},
			},
			expected: TopologyHint{NUMANodeAffinity: NewTestBitMask(0, 2), Preferred: true},
		},
		{
			name:   "best-effort, nodes 1 and 3 (node 0 offline)",
			policy: PolicyBestEffort,
			topology: []cadvisorapi.Node{
				{Id: 1, Distances: []uint64{10, 21}},
				{Id: 3, Distances: []uint64{21, 10}},
			},
			hints: []TopologyHint{
				{NUMANodeAffinity: NewTestBitMask(3), Preferred: true},
				{NUMANodeAffinity: NewTestBitMask(1), Preferred: true},
			},
			expected: TopologyHint{NUMANodeAffinity: NewTestBitMask(1), Preferred: true},
		},
	}
	options := map[string]string{PreferClosestNUMANodes: "true"}
	for _, tc := range tcases {
		t.Run(tc.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			mngr, err := NewManager(logger, tc.topology, tc.policy, ContainerTopologyScope, options)
			if err != nil {
				t.Fatalf("NewManager refused a machine whose distance rows are in the kernel's layout: %v", err)
			}
			policy := mngr.(*manager).scope.(*containerScope).policy
			providersHints := []map[string][]TopologyHint{{"cpu": tc.hints}}

			var got TopologyHint
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("NUMA node ids %v with a distance row per node: the merge under %s indexed a row by node id and panicked: %v", numaspecNodeIDs(tc.topology), tc.policy, r)
					}
				}()
				got, _ = policy.Merge(logger, providersHints)
			}()
			if !got.IsEqual(tc.expected) {
				t.Errorf("NUMA node ids %v: expected the closest hint %v, got %v (distances read by node id instead of by row position)", numaspecNodeIDs(tc.topology), tc.expected, got)
			}
		})
	}
}

func numaspecNodeIDs(topology []cadvisorapi.Node) []int {
	ids := make([]int, 0, len(topology))
	for _, node := range topology {
		ids = append(ids, node.Id)
	}
	return ids
}
