//go:build kubelet1.38

package resize

// 1.38 on: InPlacePodVerticalScaling is GA and removed (kubelet always
// evaluates a resize); the allocation manager reads the pods through a pod
// provider and checkpoints a pod's whole spec; the resize admit handler asks
// a resource manager (the container manager's AllocationMode) which
// resources are allocated exclusively, where it read the CPU and Memory
// Managers' policy names.

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	v1helper "k8s.io/kubernetes/pkg/apis/core/v1/helper"
	"k8s.io/kubernetes/pkg/kubelet/allocation"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	"numaspec.invalid/kubelet-oracle/probe"
	"numaspec.invalid/kubelet-oracle/release"
)

// ResizeEnabled: the gate is gone, a resize is always evaluated.
func (Kubelet) ResizeEnabled() bool { return true }

// podProvider is the kubelet methods the allocation manager reads: the
// probe's live pods (none of them terminating) and no pod sync.
type podProvider struct{ d managerDeps }

func (p podProvider) GetActivePods() []*v1.Pod                  { return p.d.active() }
func (p podProvider) GetPodByUID(uid types.UID) (*v1.Pod, bool) { return p.d.byUID(uid) }
func (podProvider) IsPodTerminatingOrTerminal(*v1.Pod) bool     { return false }
func (podProvider) SyncPodNow(context.Context, *v1.Pod)         {}

// setAllocatedResources checkpoints the pod as allocated. GLUE: 1.38 keeps
// the pod's whole spec, with its name, and takes a stored pod without a name
// for one migrated from the old (V1) checkpoint, whose pod-level resources
// and other fields it then does not compare (state.IsMigratedFromV1). The
// API server gives every pod a name; a numaspec pod may have none, so a
// nameless pod is stored under its uid.
func setAllocatedResources(am allocation.Manager, pod *v1.Pod) error {
	if pod.Name == "" {
		pod = pod.DeepCopy()
		pod.Name = string(pod.UID)
	}
	return am.SetAllocatedResources(release.Logger, pod)
}

func newAllocationManager(d managerDeps) allocation.Manager {
	return allocation.NewInMemoryManager(release.Logger, d.status, podProvider{d}, d.ready, record.NewFakeRecorder(100))
}

// allocationModes is the container manager's AllocationMode (GLUE: a method
// of its unexported struct, container_manager_linux.go; the same test) over
// the node's own CPU, Memory and Device Managers.
type allocationModes struct{ env probe.ResizeEnv }

func (a allocationModes) AllocationMode(res v1.ResourceName) cm.ResourceAllocationMode {
	if a.env.CPU.CanAllocateExclusively(res) ||
		(a.env.Memory != nil && a.env.Memory.CanAllocateExclusively(res)) ||
		(a.env.Devices != nil && a.env.Devices.CanAllocateExclusively(res)) {
		return cm.ResourceAllocationModeExclusive
	}
	if res == v1.ResourceCPU || res == v1.ResourceMemory || v1helper.IsHugePageResourceName(res) {
		return cm.ResourceAllocationModeShared
	}
	return cm.ResourceAllocationModeUnsupported
}

func resizeAdmitHandlers(env probe.ResizeEnv, am allocation.Manager) []lifecycle.PodAdmitHandler {
	containers := resizeContainerManager{config: nodeConfig(env)}
	return []lifecycle.PodAdmitHandler{allocation.NewPodResizesAdmitHandler(containers, allocationModes{env}, resizeRuntime{}, am)}
}
