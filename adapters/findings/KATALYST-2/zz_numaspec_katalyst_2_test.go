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

// Finding KATALYST-2 of numaspec (a conformance suite for NUMA hint merging):
// NewManager checks the number of NUMA nodes before the policy name, so an
// unknown policy on a machine with more than eight NUMA nodes is refused for
// the machine ("unsupported on machines with more than 8 NUMA Nodes").
// Kubelet (1.20 and later) validates the policy name with the rest of its
// configuration, before the topology manager counts NUMA nodes, and refuses
// the unknown name. The case is numaspec's minimal vector, with kubelet
// 1.24's answer as the expectation.

package topology

import (
	"fmt"
	"strings"
	"testing"

	cadvisorapi "github.com/google/cadvisor/info/v1"
)

func TestNumaspecKATALYST2(t *testing.T) {
	t.Parallel()
	tcases := []struct {
		description   string
		numaNodes     int
		policyName    string
		expectedError error
	}{
		{
			description:   "unknown policy on nine NUMA nodes",
			numaNodes:     9,
			policyName:    "bogus",
			expectedError: fmt.Errorf("unknown policy: \"bogus\""),
		},
	}

	for _, tc := range tcases {
		var topology []cadvisorapi.Node
		for id := 0; id < tc.numaNodes; id++ {
			topology = append(topology, cadvisorapi.Node{Id: id})
		}

		_, err := NewManager(topology, tc.policyName, nil)
		if err == nil {
			t.Errorf("%s: NewManager accepted policy %q, wants error %q", tc.description, tc.policyName, tc.expectedError)
			continue
		}
		if !strings.Contains(err.Error(), tc.expectedError.Error()) {
			t.Errorf("%s: Unexpected error message. Have: %s wants %s (the policy name is checked before the NUMA node count)",
				tc.description, err.Error(), tc.expectedError.Error())
		}
	}
}
