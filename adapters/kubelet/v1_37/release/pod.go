package release

// The pod as kubelet 1.37's API server stores it (../../probe, buildPod).

import (
	v1 "k8s.io/api/core/v1"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"numaspec.invalid/kubelet-oracle/podlevel"
)

// DefaultPod: as 1.32-1.36 (../../podlevel), then DefaultPodLevelResources:
// 1.37's v1 defaulting leaves pod-level resources alone while
// PodLevelResourcesFixDefaulting is on (its default), and PrepareForCreate
// defaults them there instead, after DropDisabledPodFields.
func (Kubelet) DefaultPod(pod *v1.Pod, r *v1.ResourceRequirements) error {
	return podlevel.DefaultPod(pod, r, podutil.DefaultPodLevelResources)
}
