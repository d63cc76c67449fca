package release

// The predicate admit handler and the node-allocatable sentence of kubelet
// 1.30 (../../probe/fit.go).

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	schedulerframework "k8s.io/kubernetes/pkg/scheduler/framework"
)

// FitAdmit: 1.30's handler reads the node through a function without arguments.
func (Kubelet) FitAdmit(node *v1.Node, update func(*schedulerframework.NodeInfo, *lifecycle.PodAdmitAttributes) error,
	pod *v1.Pod, others []*v1.Pod) lifecycle.PodAdmitResult {
	h := lifecycle.NewPredicateAdmitHandler(func() (*v1.Node, error) { return node, nil }, lifecycle.NewAdmissionFailureHandlerStub(), update)
	return h.Admit(&lifecycle.PodAdmitAttributes{Pod: pod, OtherPods: others})
}

// AllocatableError: 1.30 words it as the reservation and the capacity, both quantity values (so Go prints their structs).
func (Kubelet) AllocatableError(name v1.ResourceName, reservation, capacity resource.Quantity) string {
	return fmt.Sprintf("Resource %q has a reservation of %v but capacity of %v. Expected capacity >= reservation.", name, reservation, capacity)
}
