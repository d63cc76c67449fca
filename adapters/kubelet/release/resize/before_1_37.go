//go:build !kubelet1.37

package resize

// 1.34-1.36: the allocation manager's calls and admission take no logger or
// context.

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/kubelet/allocation"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

func (r recording) Admit(attrs *lifecycle.PodAdmitAttributes) lifecycle.PodAdmitResult {
	return r.note(r.h.Admit(attrs))
}

func setAllocatedResources(am allocation.Manager, pod *v1.Pod) error {
	return am.SetAllocatedResources(pod)
}

// resize: the pending resize of uid, retried as kubelet does after a pod update.
func resize(am allocation.Manager, uid types.UID) {
	am.PushPendingResize(uid)
	am.RetryPendingResizes(allocation.TriggerReasonPodResized)
}
