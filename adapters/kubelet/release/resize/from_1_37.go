//go:build kubelet1.37

package resize

// 1.37 on: the allocation manager's calls and admission take a logger or
// context (its constructor, the resize admit handler and the checkpoint of a
// pod: 1.37 in from_1_37_before_1_38.go, 1.38 on in from_1_38.go).

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/kubelet/allocation"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	"numaspec.invalid/kubelet-oracle/release"
)

func (r recording) Admit(c context.Context, attrs *lifecycle.PodAdmitAttributes) lifecycle.PodAdmitResult {
	return r.note(r.h.Admit(c, attrs))
}

// resize: the pending resize of uid, retried as kubelet does after a pod update.
func resize(am allocation.Manager, uid types.UID) {
	am.PushPendingResize(release.Logger, uid)
	am.RetryPendingResizes(release.Context(), allocation.TriggerReasonPodResized)
}
