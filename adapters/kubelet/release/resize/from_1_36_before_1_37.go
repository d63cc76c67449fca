//go:build kubelet1.36 && !kubelet1.37

package resize

// 1.36: canResizePod's checks are the resize admit handler (with a logger),
// registered first.

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/kubernetes/pkg/kubelet/allocation"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	"numaspec.invalid/kubelet-oracle/probe"
	"numaspec.invalid/kubelet-oracle/release"
)

func newAllocationManager(d managerDeps) allocation.Manager {
	am := allocation.NewInMemoryManager(d.status, func(*v1.Pod) {}, d.active, d.byUID, d.ready, record.NewFakeRecorder(100))
	am.SetContainerRuntime(resizeRuntime{})
	return am
}

func resizeAdmitHandlers(env probe.ResizeEnv, am allocation.Manager) []lifecycle.PodAdmitHandler {
	containers := resizeContainerManager{config: nodeConfig(env)}
	return []lifecycle.PodAdmitHandler{allocation.NewPodResizesAdmitHandler(containers, resizeRuntime{}, am, release.Logger)}
}
