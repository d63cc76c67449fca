//go:build !kubelet1.30

package release

// 1.29: the container manager's node-allocatable sentence before 1.30.

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// AllocatableError: 1.29 words it as the reservation and the capacity left,
// both quantity values (so Go prints their structs).
func (Kubelet) AllocatableError(name v1.ResourceName, reservation, capacity resource.Quantity) string {
	left := capacity.DeepCopy()
	left.Sub(reservation)
	return fmt.Sprintf("Resource %q has an allocatable of %v, capacity of %v", name, reservation, left)
}
