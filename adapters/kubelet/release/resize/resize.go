// Package resize is in-place resize (NWIRE-6, spec/node/resize.md) through the
// release's own allocation manager, for the node releases that have one
// (1.34 on): Kubelet is the release shim (package release) with
// probe.ResizeKubelet (../../probe/resize.go). Only those releases' main.go
// import it: were package release to import it, go mod tidy would look for
// package allocation in every node release. The resize path builds the
// in-memory allocation manager with a status manager of its own, registers
// the admit handlers as NewMainKubelet does (1.36 on: the resize admit
// handler first; then the Topology Manager's handler and the resource fit),
// and runs the resize. As in package release, what kubelet changed at
// release 1.N is in from_1_N.go (//go:build kubelet1.N), the form before it
// in before_1_N.go, and a form of one stretch in from_1_N_before_1_M.go.
package resize

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	"k8s.io/kubernetes/pkg/kubelet/config"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	"k8s.io/kubernetes/pkg/kubelet/status"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"

	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/kubelet-oracle/probe"
	"numaspec.invalid/kubelet-oracle/release"
)

// Kubelet is release.Kubelet that also drives kubelet's resize path.
type Kubelet struct{ release.Kubelet }

var _ probe.ResizeKubelet = Kubelet{}

// resizeRuntime: the container runtime's swap answer (the node runs no swap);
// any other call panics.
type resizeRuntime struct{ kubecontainer.Runtime }

func (resizeRuntime) GetContainerSwapBehavior(*v1.Pod, *v1.Container) kubetypes.SwapBehavior {
	return kubetypes.NoSwap
}

// resizeContainerManager: the container manager's node config (its
// policies); any other call panics.
type resizeContainerManager struct {
	cm.ContainerManager
	config cm.NodeConfig
}

func (c resizeContainerManager) GetNodeConfig() cm.NodeConfig { return c.config }

func nodeConfig(env probe.ResizeEnv) cm.NodeConfig {
	return cm.NodeConfig{CPUManagerPolicy: env.CPUPolicy, MemoryManagerPolicy: env.MemPolicy}
}

// resizePods: the pod manager the status manager asks for a pod by uid;
// any other call panics.
type resizePods struct {
	status.PodManager
	byUID func(types.UID) (*v1.Pod, bool)
}

func (p resizePods) GetPodByUID(uid types.UID) (*v1.Pod, bool) { return p.byUID(uid) }

// recording remembers the first admit handler that refused (kubelet logs
// it); its Admit has the release's signature.
type recording struct {
	h       lifecycle.PodAdmitHandler
	refused *lifecycle.PodAdmitResult
}

func (r recording) note(res lifecycle.PodAdmitResult) lifecycle.PodAdmitResult {
	if !res.Admit && r.refused.Reason == "" && r.refused.Message == "" {
		*r.refused = res
	}
	return res
}

// managerDeps is what the release's allocation manager is built from
// (newAllocationManager).
type managerDeps struct {
	env    probe.ResizeEnv
	status status.Manager
	active func() []*v1.Pod
	byUID  func(types.UID) (*v1.Pod, bool)
	ready  config.SourcesReady
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
	ready := config.NewSourcesReady(func(sets.Set[string]) bool { return true })
	am := newAllocationManager(managerDeps{env, sm, active, byUID, ready})
	for _, p := range env.Allocated {
		if err := setAllocatedResources(am, p); err != nil {
			return common.ResizeAnswer{Status: "error", Message: err.Error()}
		}
	}
	var refused lifecycle.PodAdmitResult
	fit := lifecycle.NewPredicateAdmitHandler(release.NodeGetter(env.FitNode),
		lifecycle.NewAdmissionFailureHandlerStub(), env.Update)
	var handlers lifecycle.PodAdmitHandlers
	for _, h := range append(resizeAdmitHandlers(env, am), env.TM, fit) {
		handlers = append(handlers, recording{h, &refused})
	}
	am.AddPodAdmitHandlers(handlers)
	resize(am, env.Desired.UID)
	return probe.ResizeConditions(sm.GetPodResizeConditions(env.Desired.UID), refused)
}

// ContainerRequests is what the pod's containers request together, its
// pod-level resources left out.
func (Kubelet) ContainerRequests(pod *v1.Pod) v1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{SkipPodLevelResources: true})
}

// PodLevel is the pod's spec.resources.
func (Kubelet) PodLevel(pod *v1.Pod) *v1.ResourceRequirements { return pod.Spec.Resources }
