//go:build !kubelet1.36

package release

// 1.29-1.35: admit attributes have no operation.

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

// fitAttributes: what the resource fit's Admit gets for a pod being added.
func fitAttributes(pod *v1.Pod, others []*v1.Pod) *lifecycle.PodAdmitAttributes {
	return &lifecycle.PodAdmitAttributes{Pod: pod, OtherPods: others}
}
