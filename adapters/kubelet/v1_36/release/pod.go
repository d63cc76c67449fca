package release

// The pod as kubelet 1.36's API server stores it (../../probe, buildPod).

import (
	v1 "k8s.io/api/core/v1"
	"numaspec.invalid/kubelet-oracle/podlevel"
)

// DefaultPod: spec.resources set, v1 defaulting, DropDisabledPodFields
// (../../podlevel).
func (Kubelet) DefaultPod(pod *v1.Pod, r *v1.ResourceRequirements) error {
	return podlevel.DefaultPod(pod, r)
}
