package release

// In-place resize through kubelet 1.34's allocation manager (../../probe/resize.go):
// its in-memory manager with a status manager of its own; canResizePod's
// checks, then the Topology Manager's handler and the resource fit, as
// NewMainKubelet registers them.

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/kubernetes/pkg/kubelet/allocation"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	"k8s.io/kubernetes/pkg/kubelet/config"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	"k8s.io/kubernetes/pkg/kubelet/status"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"

	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/kubelet-oracle/probe"
)

var _ probe.ResizeKubelet = Kubelet{}

// resizeRuntime: the container runtime's swap answer (the node runs no swap);
// any other call panics.
type resizeRuntime struct{ kubecontainer.Runtime }

func (resizeRuntime) GetContainerSwapBehavior(*v1.Pod, *v1.Container) kubetypes.SwapBehavior {
	return kubetypes.NoSwap
}

// resizeContainerManager: the container manager's node config (its policies)
// and GetNodeAllocatableAbsolute; any other call panics.
type resizeContainerManager struct {
	cm.ContainerManager
	config   cm.NodeConfig
	absolute v1.ResourceList
}

func (c resizeContainerManager) GetNodeConfig() cm.NodeConfig { return c.config }

func (c resizeContainerManager) GetNodeAllocatableAbsolute() v1.ResourceList { return c.absolute }

// resizePods: the pod manager the status manager asks for a pod by uid;
// any other call panics.
type resizePods struct {
	status.PodManager
	byUID func(types.UID) (*v1.Pod, bool)
}

func (p resizePods) GetPodByUID(uid types.UID) (*v1.Pod, bool) { return p.byUID(uid) }

// recording remembers the first admit handler that refused (kubelet logs it).
type recording struct {
	h       lifecycle.PodAdmitHandler
	refused *lifecycle.PodAdmitResult
}

func (r recording) Admit(attrs *lifecycle.PodAdmitAttributes) lifecycle.PodAdmitResult {
	res := r.h.Admit(attrs)
	if !res.Admit && r.refused.Reason == "" && r.refused.Message == "" {
		*r.refused = res
	}
	return res
}

func (Kubelet) Resize(env probe.ResizeEnv) common.ResizeAnswer {
	active := func() []*v1.Pod { return env.Active }
	byUID := func(uid types.UID) (*v1.Pod, bool) {
		for _, p := range env.Active {
			if p.UID == uid {
				return p, true
			}
		}
		return nil, false
	}
	sm := status.NewManager(nil, resizePods{byUID: byUID}, nil, nil)
	containers := resizeContainerManager{
		config:   cm.NodeConfig{CPUManagerPolicy: env.CPUPolicy, MemoryManagerPolicy: env.MemPolicy},
		absolute: env.Absolute,
	}
	ready := config.NewSourcesReady(func(sets.Set[string]) bool { return true })
	am := allocation.NewInMemoryManager(containers, sm, func(*v1.Pod) {}, active, byUID, ready)
	am.SetContainerRuntime(resizeRuntime{})
	for _, p := range env.Allocated {
		if err := am.SetAllocatedResources(p); err != nil {
			return common.ResizeAnswer{Status: "error", Message: err.Error()}
		}
	}
	var refused lifecycle.PodAdmitResult
	fit := lifecycle.NewPredicateAdmitHandler(func() (*v1.Node, error) { return env.FitNode, nil },
		lifecycle.NewAdmissionFailureHandlerStub(), env.Update)
	am.AddPodAdmitHandlers(lifecycle.PodAdmitHandlers{
		recording{env.TM, &refused},
		recording{fit, &refused},
	})
	am.PushPendingResize(env.Desired.UID)
	am.RetryPendingResizes(allocation.TriggerReasonPodResized)
	return probe.ResizeConditions(sm.GetPodResizeConditions(env.Desired.UID), refused)
}

// ContainerRequests is what the pod's containers request together, its
// pod-level resources left out.
func (Kubelet) ContainerRequests(pod *v1.Pod) v1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{SkipPodLevelResources: true})
}

// PodLevel is the pod's spec.resources.
func (Kubelet) PodLevel(pod *v1.Pod) *v1.ResourceRequirements { return pod.Spec.Resources }
