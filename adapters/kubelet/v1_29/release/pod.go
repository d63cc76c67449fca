package release

// The pod as kubelet 1.29's API server stores it (../../probe, buildPod).

import (
	v1 "k8s.io/api/core/v1"
	corev1defaults "k8s.io/kubernetes/pkg/apis/core/v1"
)

// DefaultPod: 1.29's PodSpec has no pod-level resources (spec.resources came
// in 1.32) and its API server drops the unknown field, so r is ignored.
func (Kubelet) DefaultPod(pod *v1.Pod, _ *v1.ResourceRequirements) error {
	corev1defaults.SetObjectDefaults_Pod(pod)
	return nil
}
