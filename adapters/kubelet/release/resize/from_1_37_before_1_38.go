//go:build kubelet1.37 && !kubelet1.38

package resize

// 1.37: the allocation manager takes a logger and the pod functions one by
// one, and the resize admit handler reads the CPU and Memory Managers'
// policies from the container manager's node config; the allocation
// checkpoints a pod's resources only.

import (
	"context"

	v1 "k8s.io/api/core/v1"
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

func setAllocatedResources(am allocation.Manager, pod *v1.Pod) error {
	return am.SetAllocatedResources(release.Logger, pod)
}
