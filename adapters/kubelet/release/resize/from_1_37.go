//go:build kubelet1.37

package resize

// 1.37 on: the allocation manager and the resize admit handler take a logger
// (the runtime only through the handler), the allocation manager's calls and
// admission a logger or context.

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/kubernetes/pkg/kubelet/allocation"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	"numaspec.invalid/kubelet-oracle/probe"
	"numaspec.invalid/kubelet-oracle/release"
)

func newAllocationManager(d managerDeps) allocation.Manager {
	return allocation.NewInMemoryManager(release.Logger, d.status, func(context.Context, *v1.Pod) {},
		d.active, d.byUID, d.ready, record.NewFakeRecorder(100))
}

func resizeAdmitHandlers(env probe.ResizeEnv, am allocation.Manager) []lifecycle.PodAdmitHandler {
	containers := resizeContainerManager{config: nodeConfig(env)}
	return []lifecycle.PodAdmitHandler{allocation.NewPodResizesAdmitHandler(containers, resizeRuntime{}, am)}
}

func (r recording) Admit(c context.Context, attrs *lifecycle.PodAdmitAttributes) lifecycle.PodAdmitResult {
	return r.note(r.h.Admit(c, attrs))
}

func setAllocatedResources(am allocation.Manager, pod *v1.Pod) error {
	return am.SetAllocatedResources(release.Logger, pod)
}

// resize: the pending resize of uid, retried as kubelet does after a pod update.
func resize(am allocation.Manager, uid types.UID) {
	am.PushPendingResize(release.Logger, uid)
	am.RetryPendingResizes(release.Context(), allocation.TriggerReasonPodResized)
}
