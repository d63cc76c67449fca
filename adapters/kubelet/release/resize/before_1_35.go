//go:build !kubelet1.35

package resize

// 1.34: the allocation manager reads the node config and the absolute
// allocatable from the container manager, and runs canResizePod's checks
// itself (no resize admit handler).

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/allocation"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	"numaspec.invalid/kubelet-oracle/probe"
)

// absoluteContainerManager: the node config and GetNodeAllocatableAbsolute;
// any other call panics.
type absoluteContainerManager struct {
	resizeContainerManager
	absolute v1.ResourceList
}

func (c absoluteContainerManager) GetNodeAllocatableAbsolute() v1.ResourceList { return c.absolute }

func newAllocationManager(d managerDeps) allocation.Manager {
	containers := absoluteContainerManager{resizeContainerManager{config: nodeConfig(d.env)}, d.env.Absolute}
	am := allocation.NewInMemoryManager(containers, d.status, func(*v1.Pod) {}, d.active, d.byUID, d.ready)
	am.SetContainerRuntime(resizeRuntime{})
	return am
}

func resizeAdmitHandlers(probe.ResizeEnv, allocation.Manager) []lifecycle.PodAdmitHandler { return nil }
