//go:build kubelet1.37 && !kubelet1.38

package release

// 1.37 only: server.go's parseResourceList rounds a reserved cpu quantity to
// millicores through its micro-value, which wraps past int64 (NODE-3).

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ReservedQuantity: server.go's parseResourceList rounds cpu to millicores.
func (Kubelet) ReservedQuantity(name v1.ResourceName, q *resource.Quantity) {
	if name == v1.ResourceCPU {
		q.SetMilli((q.ScaledValue(resource.Micro) + 500) / 1000)
	}
}
