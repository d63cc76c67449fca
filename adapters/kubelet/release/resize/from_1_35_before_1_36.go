//go:build kubelet1.35 && !kubelet1.36

package resize

// 1.35: the allocation manager's constructor takes the node config and the
// absolute allocatable (and an event recorder), and runs canResizePod's
// checks itself (no resize admit handler).

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/kubernetes/pkg/kubelet/allocation"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	"numaspec.invalid/kubelet-oracle/probe"
)

func newAllocationManager(d managerDeps) allocation.Manager {
	am := allocation.NewInMemoryManager(nodeConfig(d.env), d.env.Absolute, d.status, func(*v1.Pod) {},
		d.active, d.byUID, d.ready, record.NewFakeRecorder(100))
	am.SetContainerRuntime(resizeRuntime{})
	return am
}

func resizeAdmitHandlers(probe.ResizeEnv, allocation.Manager) []lifecycle.PodAdmitHandler { return nil }
