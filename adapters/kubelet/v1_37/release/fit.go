package release

// The predicate admit handler and the node-allocatable sentence of kubelet
// 1.37 (../../probe/fit.go).

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	schedulerframework "k8s.io/kubernetes/pkg/scheduler/framework"
)

// FitAdmit: 1.37's handler reads the node through a function of a context and a use-cache flag.
func (Kubelet) FitAdmit(node *v1.Node, update func(*schedulerframework.NodeInfo, *lifecycle.PodAdmitAttributes) error,
	pod *v1.Pod, others []*v1.Pod) lifecycle.PodAdmitResult {
	h := lifecycle.NewPredicateAdmitHandler(func(context.Context, bool) (*v1.Node, error) { return node, nil }, lifecycle.NewAdmissionFailureHandlerStub(), update)
	return h.Admit(context.Background(), &lifecycle.PodAdmitAttributes{Pod: pod, OtherPods: others, Operation: lifecycle.AddOperation})
}

// AllocatableError: 1.37 words it as the reservation and the capacity, both quantity values (so Go prints their structs).
func (Kubelet) AllocatableError(name v1.ResourceName, reservation, capacity resource.Quantity) string {
	return fmt.Sprintf("Resource %q has a reservation of %v but capacity of %v. Expected capacity >= reservation.", name, reservation, capacity)
}
