//go:build kubelet1.30

package release

// 1.30 on: the container manager's node-allocatable sentence.

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// AllocatableError: from 1.30 worded as the reservation and the capacity,
// both quantity values (so Go prints their structs).
func (Kubelet) AllocatableError(name v1.ResourceName, reservation, capacity resource.Quantity) string {
	return fmt.Sprintf("Resource %q has a reservation of %v but capacity of %v. Expected capacity >= reservation.", name, reservation, capacity)
}
