//go:build linux

/*
numaspec FINDING-17 (spec/conformance/findings.md, rule NODE-9 in spec/node/admission.md).

What kubelet does: containerManagerImpl.validateNodeAllocatable formats the reservation and the
capacity of a resource whose reservation exceeds its capacity with %v. Both are
resource.Quantity values, whose String method has a pointer receiver, so fmt prints the
struct: "has a reservation of {{100 0} {<nil>}  DecimalSI} but capacity of {{2 0} {<nil>}
DecimalSI}". Where apimachinery holds the amount as an arbitrary-precision decimal (a
fractional binary quantity such as 4.5Gi) the text holds the decimal's heap address and
changes from run to run.

What it should do: print the quantities as users write them ("has a reservation of 100 but
capacity of 2", "4708Mi but capacity of 4Gi").

Written by numaspec (https://github.com/numaspec/numaspec)
*/

package cm

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

func TestNumaspecFINDING17(t *testing.T) {
	memoryEvictionThreshold := resource.MustParse("100Mi")
	testCases := []struct {
		description   string
		kubeReserved  v1.ResourceList
		capacity      v1.ResourceList
		hardThreshold evictionapi.ThresholdValue
		wantInError   string
	}{
		{
			description:  "cpu reservation above capacity",
			kubeReserved: getResourceList("100", ""),
			capacity:     getResourceList("2", "10Gi"),
			wantInError:  `Resource "cpu" has a reservation of 100 but capacity of 2.`,
		},
		{
			description:  "fractional binary memory reservation (held as an inf.Dec) above capacity",
			kubeReserved: getResourceList("", "4.5Gi"),
			capacity:     getResourceList("2", "4Gi"),
			hardThreshold: evictionapi.ThresholdValue{
				Quantity: &memoryEvictionThreshold,
			},
			wantInError: `Resource "memory" has a reservation of 4708Mi but capacity of 4Gi.`,
		},
	}

	for _, tc := range testCases {
		t.Run(tc.description, func(t *testing.T) {
			cm := &containerManagerImpl{
				NodeConfig: NodeConfig{
					NodeAllocatableConfig: NodeAllocatableConfig{
						KubeReserved: tc.kubeReserved,
						HardEvictionThresholds: []evictionapi.Threshold{
							{
								Signal:   evictionapi.SignalMemoryAvailable,
								Operator: evictionapi.OpLessThan,
								Value:    tc.hardThreshold,
							},
						},
					},
				},
				capacity: tc.capacity,
			}
			err := cm.validateNodeAllocatable()
			if err == nil {
				t.Fatalf("validateNodeAllocatable: expected an invalid Node Allocatable configuration, got none")
			}
			if !strings.Contains(err.Error(), tc.wantInError) {
				t.Errorf("FINDING-17: the node-allocatable error prints the quantities as Go structs:\n got: %s\nwant it to contain: %s", err.Error(), tc.wantInError)
			}
		})
	}
}
