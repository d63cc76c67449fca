package probe

// In-place resize (NWIRE-6, spec/node/resize.md): a live pod's containers ask for
// new resources, and kubelet's own allocation manager (1.34+) decides, with
// its resize admit handler (1.36+), the Topology Manager's handler and the
// resource fit of this node. Releases whose shim does not implement
// ResizeKubelet answer that they do not serve resize.

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	v1qos "k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/devicemanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	schedulerframework "k8s.io/kubernetes/pkg/scheduler/framework"

	"numaspec.invalid/kubelet-oracle/common"
)

// ResizeEnv is what a release's resize path reads of the node.
type ResizeEnv struct {
	TM        topologymanager.Manager
	FitNode   *v1.Node
	Update    func(*schedulerframework.NodeInfo, *lifecycle.PodAdmitAttributes) error
	CPUPolicy string
	MemPolicy string
	// CPU, Memory and Devices are the node's managers (Memory nil when the
	// release does not build it, Devices when the probe has none): 1.38's
	// resize admit handler asks them which resources they allocate
	// exclusively (the container manager's AllocationMode).
	CPU     cpumanager.Manager
	Memory  memorymanager.Manager
	Devices *devicemanager.ManagerImpl
	// Absolute is the container manager's GetNodeAllocatableAbsolute:
	// capacity minus systemReserved and kubeReserved, never below zero.
	Absolute v1.ResourceList
	// Allocated are the live pods at their allocated resources; Active the
	// same with Desired in place of the resized pod (kubelet's pod manager
	// holds the desired spec).
	Allocated []*v1.Pod
	Active    []*v1.Pod
	Desired   *v1.Pod
}

// ResizeKubelet is the optional capability of a release shim that runs
// kubelet's resize path.
type ResizeKubelet interface {
	Resize(env ResizeEnv) common.ResizeAnswer
	// ContainerRequests is the pod's requests without its pod-level ones
	// (component-helpers PodRequests with SkipPodLevelResources).
	ContainerRequests(pod *v1.Pod) v1.ResourceList
	// PodLevel is the pod's spec.resources (nil when unset); the field is
	// the release's (1.29 and 1.30 have none), so the shim reads it.
	PodLevel(pod *v1.Pod) *v1.ResourceRequirements
	// AdmitResize runs the release's API-server admission plugins that
	// judge a resize against the node (1.36+: PodResizeValidator, RESIZE-2):
	// the refusal's text, "" when none refuses.
	AdmitResize(old, desired *v1.Pod, node *v1.Node) (string, error)
	// ResizeEnabled says whether kubelet evaluates resizes at all with the
	// current feature gates: the InPlacePodVerticalScaling gate (1.34-1.37);
	// always from 1.38, where the gate is gone (GA, removed).
	ResizeEnabled() bool
}

// absoluteAllocatable is getNodeAllocatableAbsoluteImpl over the capacity:
// each resource minus systemReserved and kubeReserved, never below zero.
func absoluteAllocatable(capacity, kubeReserved, systemReserved v1.ResourceList) v1.ResourceList {
	out := v1.ResourceList{}
	for name, q := range capacity {
		left := q.DeepCopy()
		if r, ok := systemReserved[name]; ok {
			left.Sub(r)
		}
		if r, ok := kubeReserved[name]; ok {
			left.Sub(r)
		}
		if left.Sign() < 0 {
			left.Set(0)
		}
		out[name] = left
	}
	return out
}

func (p *probe) Resize(uid string, changes []common.ContainerResize, podLevel *common.ResourcesSpec) common.NodeResponse {
	if p.tm == nil {
		return noNode()
	}
	pod, ok := p.pods[uid]
	if !ok {
		return common.ErrResponse(common.Errf("unknown-pod", "resize", "no admitted pod with uid %q", uid))
	}
	k, ok := p.k.(ResizeKubelet)
	if !ok {
		// A case with a resize is not this release's to answer (the runner skips it).
		return common.ErrResponse(common.ErrNS("skip", "invalid", "resize", "this probe (%s) does not drive kubelet's resize path", p.k.Version()))
	}
	if !k.ResizeEnabled() {
		// GLUE: kubelet's calls into the resize path sit behind the gate
		// (HandlePodUpdates): with it off a resize is never evaluated (RESIZE-3).
		return common.ErrResponse(common.ErrNS("invalid-field", "invalid", "resize", "InPlacePodVerticalScaling is off: kubelet never evaluates a resize"))
	}
	if len(changes) == 0 && podLevel == nil {
		return common.ErrResponse(common.ErrNS("invalid-field", "invalid", "resize", "containers: a resize names at least one container"))
	}
	desired := pod.DeepCopy()
	seen := map[string]bool{}
	for i, ch := range changes {
		if seen[ch.Name] {
			return common.ErrResponse(common.ErrNS("invalid-field", "invalid", "resize", "containers[%d].name: %q is named twice", i, ch.Name))
		}
		seen[ch.Name] = true
		target := findContainer(desired, ch.Name)
		if target == nil {
			return common.ErrResponse(common.ErrNS("invalid-field", "invalid", "resize", "containers[%d].name: pod %q has no container %q", i, uid, ch.Name))
		}
		req, e := resourceList(ch.Resources.Requests, fmt.Sprintf("containers[%d].resources.requests", i))
		if e != nil {
			return common.ErrResponse(e)
		}
		lim, e := resourceList(ch.Resources.Limits, fmt.Sprintf("containers[%d].resources.limits", i))
		if e != nil {
			return common.ErrResponse(e)
		}
		// GLUE: ValidatePodResize's container checks (RESIZE-2): no request
		// or limit removed, only cpu and memory changed.
		defaulted := v1.ResourceList{} // the API server's defaulting: a request defaults to its limit
		for name, q := range lim {
			defaulted[name] = q
		}
		for name, q := range req {
			defaulted[name] = q
		}
		for _, pair := range [][2]v1.ResourceList{{target.Resources.Requests, defaulted}, {target.Resources.Limits, lim}} {
			before, after := pair[0], pair[1]
			for name, q := range before {
				a, kept := after[name]
				if !kept {
					return common.ErrResponse(common.ErrNS("invalid-field", "invalid", "resize", "containers[%d]: resource requirements cannot be removed (%s)", i, name))
				}
				if name != v1.ResourceCPU && name != v1.ResourceMemory && !a.Equal(q) {
					return common.ErrResponse(common.ErrNS("invalid-field", "invalid", "resize", "containers[%d]: only cpu and memory resources are mutable", i))
				}
			}
			for name := range after {
				if _, had := before[name]; !had && name != v1.ResourceCPU && name != v1.ResourceMemory {
					return common.ErrResponse(common.ErrNS("invalid-field", "invalid", "resize", "containers[%d]: only cpu and memory resources are mutable", i))
				}
			}
		}
		if isRegularInit(desired, ch.Name) && !initResizable() &&
			(!equalLists(target.Resources.Requests, defaulted) || !equalLists(target.Resources.Limits, lim)) {
			return common.ErrResponse(common.ErrNS("invalid-field", "invalid", "resize", "containers[%d]: resources for non-sidecar init containers are immutable", i))
		}
		target.Resources = v1.ResourceRequirements{Requests: req, Limits: lim}
	}
	// The pod-level resources the resized pod asks (RESIZE-8): the request's,
	// else the pod's own (a resize leaves them unless it names them).
	newLevel := k.PodLevel(pod).DeepCopy()
	if podLevel != nil {
		var e *common.NodeError
		if newLevel, e = podResources(podLevel); e != nil {
			return common.ErrResponse(e)
		}
	}
	// The API server's defaulting of the resized pod (requests default to
	// limits; pod-level resources as at creation), then the rest of
	// ValidatePodResize that the model speaks of: the QoS class may not
	// change (RESIZE-2).
	if err := p.k.DefaultPod(desired, newLevel); err != nil {
		return common.ErrResponse(common.Errf("probe", "resize", "defaulting: %v", err))
	}
	if e := podLevelResize(k.PodLevel(pod), k.PodLevel(desired)); e != nil {
		return common.ErrResponse(e)
	}
	if level := k.PodLevel(desired); podLevelSet(level) {
		// GLUE: validatePodResourceConsistency on the resized pod (ADMIT-7,
		// RESIZE-8): a pod-level request at most its limit, and at least what
		// the containers request together.
		together := k.ContainerRequests(desired)
		for name, q := range level.Requests {
			if l, ok := level.Limits[name]; ok && q.Cmp(l) > 0 {
				return common.ErrResponse(common.ErrNS("invalid-field", "invalid", "resize", "resources.requests[%s]: the pod-level request is above its limit", name))
			}
			if c, ok := together[name]; ok && c.Cmp(q) > 0 {
				return common.ErrResponse(common.ErrNS("invalid-field", "invalid", "resize", "resources.requests[%s]: the pod-level request is below what the containers request together", name))
			}
		}
	}
	if v1qos.ComputePodQOS(desired) != v1qos.GetPodQOS(pod) {
		return common.ErrResponse(common.ErrNS("invalid-field", "invalid", "resize", "containers: Pod QOS Class may not change as a result of resizing"))
	}
	// The API server's validating admission (after validation): the
	// release's own PodResizeValidator (1.36+) refuses a resize whose
	// requests alone exceed the node's allocatable (RESIZE-2).
	if !apiequality.Semantic.DeepEqual(pod.Spec, desired.Spec) {
		refusal, err := k.AdmitResize(pod, desired, p.fitNode())
		if err != nil {
			return common.ErrResponse(common.Errf("probe", "resize", "admission: %v", err))
		}
		if refusal != "" {
			return common.ErrResponse(common.ErrNS("invalid-field", "forbidden", "resize", "%s", refusal))
		}
	}
	desired.Generation = pod.Generation + 1
	env := ResizeEnv{TM: p.tm, FitNode: p.fitNode(), Update: p.pluginResources, CPUPolicy: p.cpuPolicy,
		MemPolicy: p.memPolicy, CPU: p.cpu, Memory: p.mem, Absolute: p.absolute, Desired: desired}
	if p.devs != nil {
		env.Devices = p.devs.dm
	}
	for _, q := range p.activePods() {
		env.Allocated = append(env.Allocated, q)
		if q.UID == desired.UID {
			q = desired
		}
		env.Active = append(env.Active, q)
	}
	answer := k.Resize(env)
	if answer.Status == "InProgress" {
		// Kubelet's allocated pods now hold the desired resources.
		p.mu.Lock()
		for i, q := range p.live {
			if q.UID == desired.UID {
				p.live[i] = desired
			}
		}
		p.mu.Unlock()
		p.pods[uid] = desired
	}
	return common.NodeResponse{Resize: &answer}
}

// podLevelSet is ValidatePodResize's test for pod-level resources r: a
// request or a limit of any name.
func podLevelSet(r *v1.ResourceRequirements) bool {
	return r != nil && len(r.Requests)+len(r.Limits) > 0
}

// podLevelResize is GLUE: the part of ValidatePodResize that concerns
// pod-level resources (RESIZE-8), from the pod's old and desired ones. Before the InPlacePodLevelResourcesVerticalScaling
// gate exists (1.34) no pod that has them, or is given them, is resizable;
// with the gate off neither; with it on no pod-level request or limit may be
// removed and only cpu and memory may change.
func podLevelResize(old, desired *v1.ResourceRequirements) *common.NodeError {
	if !podLevelSet(old) && !podLevelSet(desired) {
		return nil
	}
	const gate = featuregate.Feature("InPlacePodLevelResourcesVerticalScaling")
	if _, known := utilfeature.DefaultMutableFeatureGate.GetAll()[gate]; !known {
		return common.ErrNS("invalid-field", "invalid", "resize", "pods with pod-level resources cannot be resized")
	}
	if !utilfeature.DefaultFeatureGate.Enabled(gate) {
		return common.ErrNS("invalid-field", "invalid", "resize", "resize of pods with pod-level resources is forbidden when InPlacePodLevelResourcesVerticalScaling is disabled")
	}
	if old == nil {
		return nil
	}
	if desired == nil {
		return common.ErrNS("invalid-field", "invalid", "resize", "resources: pod-level resources cannot be removed")
	}
	for _, pair := range [][2]v1.ResourceList{{old.Requests, desired.Requests}, {old.Limits, desired.Limits}} {
		before, after := pair[0], pair[1]
		for name, q := range before {
			a, kept := after[name]
			if !kept {
				return common.ErrNS("invalid-field", "invalid", "resize", "resources: pod-level resource requirements cannot be removed (%s)", name)
			}
			if name != v1.ResourceCPU && name != v1.ResourceMemory && !a.Equal(q) {
				return common.ErrNS("invalid-field", "invalid", "resize", "resources: only cpu and memory resources are mutable at pod-level")
			}
		}
		for name := range after {
			if _, had := before[name]; !had && name != v1.ResourceCPU && name != v1.ResourceMemory {
				return common.ErrNS("invalid-field", "invalid", "resize", "resources: only cpu and memory resources are mutable at pod-level")
			}
		}
	}
	return nil
}

// isRegularInit says whether name is an init container of pod that is not a
// sidecar.
func isRegularInit(pod *v1.Pod, name string) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways
		}
	}
	return false
}

// initResizable is the InPlacePodVerticalScalingInitContainers gate (1.36+;
// releases before know no such gate).
func initResizable() bool {
	const gate = featuregate.Feature("InPlacePodVerticalScalingInitContainers")
	if _, known := utilfeature.DefaultMutableFeatureGate.GetAll()[gate]; !known {
		return false
	}
	return utilfeature.DefaultFeatureGate.Enabled(gate)
}

func equalLists(a, b v1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		r, ok := b[name]
		if !ok || !q.Equal(r) {
			return false
		}
	}
	return true
}

func findContainer(pod *v1.Pod, name string) *v1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}

// ResizeConditions turns the status manager's resize conditions into the
// answer (named by their strings: k8s.io/api before 1.33 has no constants); refused is the first admit handler that refused (its reason is
// kubelet's log's, given for a Deferred resize only).
func ResizeConditions(conditions []*v1.PodCondition, refused lifecycle.PodAdmitResult) common.ResizeAnswer {
	for _, c := range conditions {
		if c.Type == "PodResizePending" {
			a := common.ResizeAnswer{Status: c.Reason, Message: c.Message}
			if c.Reason == "Deferred" {
				a.Reason = refused.Reason
			}
			return a
		}
	}
	for _, c := range conditions {
		if c.Type == "PodResizeInProgress" {
			return common.ResizeAnswer{Status: "InProgress"}
		}
	}
	return common.ResizeAnswer{Status: "Unchanged"}
}
