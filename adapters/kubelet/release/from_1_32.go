//go:build kubelet1.32

package release

// 1.32 on: the Memory Manager always built, pod-level resources.

import (
	v1 "k8s.io/api/core/v1"

	"numaspec.invalid/kubelet-oracle/podlevel"
)

// MemoryManagerEnabled: from 1.32 NewContainerManager always builds the
// Memory Manager (the MemoryManager gate check is gone).
func (Kubelet) MemoryManagerEnabled() bool { return true }

// DefaultPod: spec.resources set, v1 defaulting, DropDisabledPodFields
// (../podlevel), then the release's later PrepareForCreate steps
// (podLevelSteps: 1.37's DefaultPodLevelResources).
func (Kubelet) DefaultPod(pod *v1.Pod, r *v1.ResourceRequirements) error {
	return podlevel.DefaultPod(pod, r, podLevelSteps...)
}
