// numaspec FINDING-4 (spec/conformance/findings.md, rule OPT-6): with prefer-closest-numa-nodes,
// a machine without NUMA distances stops kubelet even under single-numa-node, which never reads
// distances.
//
// NewManager asks NewNUMAInfo for every node's distance row whenever the option is true, and
// fails ("error getting NUMA distances from cadvisor") when cadvisor has none, whatever the
// policy. Yet the single-numa-node policy compares masks by width only: NewHintMerger calls
// Closest only when the policy is not single-numa-node. Under that policy the option changes
// nothing, so a missing distance file should not be a start-up error. The test asks only that:
// under single-numa-node with prefer-closest-numa-nodes=true and no distances, NewManager
// returns a manager.
//
// Written by numaspec (https://github.com/numaspec/numaspec); run it with
//   go test -run '^TestNumaspecFINDING4$' ./pkg/kubelet/cm/topologymanager/

package topologymanager

import (
	"testing"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	"k8s.io/kubernetes/test/utils/ktesting"
)

func TestNumaspecFINDING4(t *testing.T) {
	tcases := []struct {
		name     string
		scope    string
		topology []cadvisorapi.Node
	}{
		{
			name:     "two nodes without distances, container scope",
			scope:    ContainerTopologyScope,
			topology: []cadvisorapi.Node{{Id: 0}, {Id: 1}},
		},
		{
			name:     "two nodes without distances, pod scope",
			scope:    PodTopologyScope,
			topology: []cadvisorapi.Node{{Id: 0}, {Id: 1}},
		},
		{
			name:     "one node without distances",
			scope:    ContainerTopologyScope,
			topology: []cadvisorapi.Node{{Id: 0}},
		},
	}
	options := map[string]string{PreferClosestNUMANodes: "true"}
	for _, tc := range tcases {
		t.Run(tc.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			mngr, err := NewManager(logger, tc.topology, PolicySingleNumaNode, tc.scope, options)
			if err != nil {
				t.Fatalf("single-numa-node never uses NUMA distances, yet NewManager with %s=true failed without them: %v", PreferClosestNUMANodes, err)
			}
			if mngr == nil {
				t.Fatalf("NewManager returned neither a manager nor an error")
			}
		})
	}
}
