//go:build !kubelet1.32

package release

// 1.29-1.31: the Memory Manager behind its gate, no pod-level resources.

import (
	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	corev1defaults "k8s.io/kubernetes/pkg/apis/core/v1"
	"k8s.io/kubernetes/pkg/features"
)

// MemoryManagerEnabled: NewContainerManager builds the Memory Manager only
// while the MemoryManager gate is on.
func (Kubelet) MemoryManagerEnabled() bool {
	return utilfeature.DefaultFeatureGate.Enabled(features.MemoryManager)
}

// DefaultPod: the PodSpec has no pod-level resources before 1.32
// (spec.resources came in 1.32) and the API server drops the unknown field,
// so r is ignored.
func (Kubelet) DefaultPod(pod *v1.Pod, _ *v1.ResourceRequirements) error {
	corev1defaults.SetObjectDefaults_Pod(pod)
	return nil
}
