// numaspec FINDING-14 (spec/conformance/findings.md, rule MASK-1): kubelet starts on a
// machine whose NUMA node ids go past 63, then panics at the first merge.
//
// cadvisor reports whatever node ids the kernel gives; a NUMA bitmask holds ids 0-63 only.
// NewManager accepts such a machine, each policy builds its mask of every node with
// bitmask.NewBitMask and drops the error, and the first Merge converts the nil mask and
// panics. The test asks for either answer kubelet could give safely: refuse the machine in
// NewManager, or merge without panicking.
//
// Written by numaspec (https://github.com/numaspec/numaspec); run it with
//   go test -run '^TestNumaspecFINDING14$' ./pkg/kubelet/cm/topologymanager/

package topologymanager

import (
	"testing"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	"k8s.io/kubernetes/test/utils/ktesting"
)

func TestNumaspecFINDING14(t *testing.T) {
	tcases := []struct {
		name     string
		policy   string
		topology []cadvisorapi.Node
	}{
		{name: "best-effort, nodes 0 and 64", policy: PolicyBestEffort, topology: []cadvisorapi.Node{{Id: 0}, {Id: 64}}},
		{name: "restricted, nodes 0 and 64", policy: PolicyRestricted, topology: []cadvisorapi.Node{{Id: 0}, {Id: 64}}},
		{name: "single-numa-node, nodes 0 and 64", policy: PolicySingleNumaNode, topology: []cadvisorapi.Node{{Id: 0}, {Id: 64}}},
	}
	for _, tc := range tcases {
		t.Run(tc.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			mngr, err := NewManager(logger, tc.topology, tc.policy, ContainerTopologyScope, nil)
			if err != nil {
				return // refused at start-up: safe
			}
			policy := mngr.(*manager).scope.(*containerScope).policy
			hints := []map[string][]TopologyHint{{"cpu": {{NUMANodeAffinity: nil, Preferred: true}}}}
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("NewManager accepted NUMA node 64 under %s, then the first Merge panicked: %v", tc.policy, r)
				}
			}()
			policy.Merge(logger, hints)
		})
	}
}
