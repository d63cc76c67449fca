// numaspec FINDING-34 (spec/conformance/findings.md, rule MEM-2): the Memory Manager cannot
// read every spelling of a reservedMemory limit that the rest of kubelet accepts.
//
// NewManager first checks that the reservedMemory limits add up to the Node Allocatable
// reservation (validateReservedMemory, with Quantity arithmetic), then converts each limit with
// Quantity.AsInt64 (convertReserved). AsInt64 answers only for a quantity held as an integer at
// a scale of zero or more, so 0.25Gi (a fraction with a binary suffix) and 268435456000m (256Mi
// in thousandths) pass the sum check and are whole numbers of bytes, yet stop kubelet with
// "could not covert a variable of type Quantity to int64", while 262144Ki or 268435.456k, the
// same 256Mi, are read. NewManager should read every spelling of a whole number of bytes.
//
// Written by numaspec (https://github.com/numaspec/numaspec); run it with
//   go test -run '^TestNumaspecFINDING34$' ./pkg/kubelet/cm/memorymanager/

package memorymanager

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/test/utils/ktesting"
)

func TestNumaspecFINDING34(t *testing.T) {
	// every spelling below is 256Mi, a whole number of bytes
	testCases := []struct {
		description string
		limit       string
	}{
		{description: "binary suffix, integer", limit: "262144Ki"},
		{description: "decimal suffix, fraction", limit: "268435.456k"},
		{description: "binary suffix, fraction", limit: "0.25Gi"},
		{description: "milli-bytes", limit: "268435456000m"},
	}
	const want = 256 * mb
	for _, testCase := range testCases {
		t.Run(testCase.description, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			machineInfo := returnMachineInfo()
			nodeAllocatableReservation := v1.ResourceList{v1.ResourceMemory: *resource.NewQuantity(want, resource.BinarySI)}
			reserved := []kubeletconfig.MemoryReservation{
				{
					NumaNode: 0,
					Limits:   v1.ResourceList{v1.ResourceMemory: resource.MustParse(testCase.limit)},
				},
			}

			mgr, err := NewManager(logger, string(getPolicyNameForOs()), &machineInfo, nodeAllocatableReservation, reserved, t.TempDir(), getAffinityForOs(logger))
			if err != nil {
				t.Fatalf("reservedMemory limit %q (%d bytes, equal to the Node Allocatable reservation) was refused by NewManager: %v", testCase.limit, int64(want), err)
			}
			if getPolicyNameForOs() != PolicyTypeStatic {
				return
			}
			expected := systemReservedMemory{
				0: map[v1.ResourceName]uint64{v1.ResourceMemory: want},
				1: {},
			}
			if got := mgr.(*manager).policy.(*staticPolicy).systemReserved; !reflect.DeepEqual(got, expected) {
				t.Errorf("reservedMemory limit %q: expected system reserved %+v, got %+v", testCase.limit, expected, got)
			}
		})
	}
}
