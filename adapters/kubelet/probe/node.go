package probe

// The node probe: one modelled node, driven through kubelet's own Topology,
// CPU and Memory Managers (see ../README.md, "Node probe").

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	v1helper "k8s.io/kubernetes/pkg/apis/core/v1/helper"
	v1qos "k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletscheme "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme"
	kubeletconfigvalidation "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/eviction"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
	"k8s.io/kubernetes/pkg/kubelet/stats/pidlimit"
	"k8s.io/utils/cpuset"

	"numaspec.invalid/kubelet-oracle/common"
)

// ReconcilePeriod keeps the CPU manager's reconcile loop asleep after its
// first (immediate) run.
const ReconcilePeriod = 1000000 * time.Hour

type probe struct {
	k Kubelet

	mu      sync.Mutex // guards live and pending (read by the managers' activePods)
	live    []*v1.Pod  // admitted, not removed, in admission order
	pending *v1.Pod    // the pod under admission (kubelet's pod manager already holds it)

	dir  string
	tm   topologymanager.Manager
	cpu  cpumanager.Manager
	mem  memorymanager.Manager // nil when the release does not build it (1.30: MemoryManager gate off)
	devs *devices              // the Device Manager (devices.go)
	pods map[string]*v1.Pod    // live pods by uid

	cpuPolicy, memPolicy string // the started node's configured policies
	allCPUs              []int  // the machine's logical CPUs

	node *v1.Node // the node object the fit handler reads (fit.go)
	// absolute is the container manager's GetNodeAllocatableAbsolute (resize.go).
	absolute v1.ResourceList
}

func (p *probe) Version() string { return p.k.Version() }

// activePods is what kubelet's GetActivePods returns: pods in the pod manager
// that are not terminal. Kubelet adds a pod to its pod manager before running
// the admit handlers, so the pod under admission is in it; a rejected pod is
// marked Failed and drops out.
func (p *probe) activePods() []*v1.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*v1.Pod, 0, len(p.live)+1)
	out = append(out, p.live...)
	if p.pending != nil {
		out = append(out, p.pending)
	}
	return out
}

func (p *probe) setPending(pod *v1.Pod) {
	p.mu.Lock()
	p.pending = pod
	p.mu.Unlock()
}

// Recover drops the pod whose request panicked and frees what it had
// allocated (it is not active).
func (p *probe) Recover() {
	p.setPending(nil)
	if p.cpu != nil {
		p.cleanup()
	}
}

// ---- fakes (the shims pass them to the managers' Start) ----

// SourcesReady says every pod source is ready.
type SourcesReady struct{}

func (SourcesReady) AddSource(string) {}
func (SourcesReady) AllReady() bool   { return true }

// PodStatusProvider knows no pod status.
type PodStatusProvider struct{}

func (PodStatusProvider) GetPodStatus(types.UID) (v1.PodStatus, bool) { return v1.PodStatus{}, false }

// RuntimeService is a container runtime that accepts every resource update.
type RuntimeService struct{}

func (RuntimeService) UpdateContainerResources(context.Context, string, *runtimeapi.ContainerResources) error {
	return nil
}

// ---- create ----

func startupErr(stage string, err error) common.NodeResponse {
	return common.ErrResponse(&common.NodeError{Kind: "startup", Stage: stage, Message: err.Error()})
}

func memBytes(s string) (uint64, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, err
	}
	v, ok := q.AsInt64()
	if !ok || v < 0 {
		return 0, fmt.Errorf("not a non-negative whole number of bytes")
	}
	return uint64(v), nil
}

func pageKiB(name string) (uint64, error) {
	q, err := v1helper.HugePageSizeFromResourceName(v1.ResourceName(name))
	if err != nil {
		return 0, err
	}
	v, ok := q.AsInt64()
	if !ok || v <= 0 || v%1024 != 0 {
		return 0, fmt.Errorf("page size is not a positive multiple of 1Ki")
	}
	return uint64(v / 1024), nil
}

// loadConfig does what kubelet does with a config file: strict decode with
// v1beta1 defaulting (pkg/kubelet/kubeletconfig/util/codec), then
// cmd/kubelet/app/server.go:loadConfigFile's evictionHard default.
// A panic in kubelet's defaulting (which crashes kubelet at startup) is
// answered as a "startup" error too.
func loadConfig(k Kubelet, spec common.ConfigSpec) (kc *kubeletconfig.KubeletConfiguration, resp *common.NodeResponse) {
	defer func() {
		if r := recover(); r != nil {
			e := common.ErrResponse(&common.NodeError{Kind: "startup", Stage: "decode-config-panic", Message: fmt.Sprint(r)})
			kc, resp = nil, &e
		}
	}()
	kc, err := decodeConfig(k, spec)
	if err != nil {
		e := startupErr("decode-config", err)
		return nil, &e
	}
	return kc, nil
}

func decodeConfig(k Kubelet, spec common.ConfigSpec) (*kubeletconfig.KubeletConfiguration, error) {
	data, err := spec.KubeletConfigJSON()
	if err != nil {
		return nil, err
	}
	_, codecs, err := kubeletscheme.NewSchemeAndCodecs(serializer.EnableStrict)
	if err != nil {
		return nil, err
	}
	kc, err := k.DecodeConfig(codecs, data)
	if err != nil {
		return nil, err
	}
	k.DefaultEvictionHard(kc)
	return kc, nil
}

// The next three functions redo what cmd/kubelet/app/server.go (unexported
// getReservedCPUs, parseResourceList) and pkg/kubelet/cm
// (GetNodeAllocatableReservation, hardEvictionReservation: methods of an
// unexported type) compute, with the same exported kubelet helpers.

func getReservedCPUs(k Kubelet, m *common.Machine, cpus string) (cpuset.CPUSet, error) {
	emptyCPUSet := cpuset.New()
	if cpus == "" {
		return emptyCPUSet, nil
	}
	allCPUSet, err := k.OnlineCPUs(m)
	if err != nil {
		return emptyCPUSet, fmt.Errorf("unable to discover CPU topology info: %s", err)
	}
	reservedCPUSet, err := cpuset.Parse(cpus)
	if err != nil {
		return emptyCPUSet, fmt.Errorf("unable to parse reserved-cpus list: %s", err)
	}
	if !reservedCPUSet.IsSubsetOf(allCPUSet) {
		return emptyCPUSet, fmt.Errorf("reserved-cpus: %s is not a subset of online-cpus: %s", cpus, allCPUSet.String())
	}
	return reservedCPUSet, nil
}

func parseResourceList(k Kubelet, m map[string]string) (v1.ResourceList, error) {
	if len(m) == 0 {
		return nil, nil
	}
	rl := make(v1.ResourceList)
	for name, v := range m {
		switch v1.ResourceName(name) {
		case v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, pidlimit.PIDs:
			q, err := resource.ParseQuantity(v)
			if err != nil {
				return nil, fmt.Errorf("failed to parse quantity %q for %q resource: %w", v, name, err)
			}
			if q.Sign() == -1 {
				return nil, fmt.Errorf("resource quantity for %q cannot be negative: %v", name, v)
			}
			k.ReservedQuantity(v1.ResourceName(name), &q)
			rl[v1.ResourceName(name)] = q
		default:
			return nil, fmt.Errorf("cannot reserve %q resource", name)
		}
	}
	return rl, nil
}

// capacityFromMachineInfo is pkg/kubelet/cadvisor.CapacityFromMachineInfo
// (that package drags all of cadvisor's container handlers in on linux), on
// the fields of the MachineInfo the shims build from the same Machine.
func capacityFromMachineInfo(info *common.Machine) v1.ResourceList {
	c := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(int64(info.NumCores*1000), resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(int64(info.MemoryCapacity), resource.BinarySI),
	}
	for _, hp := range info.HugePages {
		pageSizeBytes := int64(hp.PageSize * 1024)
		pageSizeQuantity := resource.NewQuantity(pageSizeBytes, resource.BinarySI)
		c[v1helper.HugePageResourceName(*pageSizeQuantity)] = *resource.NewQuantity(pageSizeBytes*int64(hp.NumPages), resource.BinarySI)
	}
	return c
}

func nodeAllocatableReservation(capacity, kubeReserved, systemReserved v1.ResourceList, thresholds []evictionapi.Threshold) v1.ResourceList {
	var evictionReservation v1.ResourceList
	if len(thresholds) > 0 {
		evictionReservation = v1.ResourceList{}
		for _, t := range thresholds {
			if t.Operator != evictionapi.OpLessThan {
				continue
			}
			switch t.Signal {
			case evictionapi.SignalMemoryAvailable:
				c := capacity[v1.ResourceMemory]
				evictionReservation[v1.ResourceMemory] = *evictionapi.GetThresholdQuantity(t.Value, &c)
			case evictionapi.SignalNodeFsAvailable:
				c := capacity[v1.ResourceEphemeralStorage]
				evictionReservation[v1.ResourceEphemeralStorage] = *evictionapi.GetThresholdQuantity(t.Value, &c)
			}
		}
	}
	result := make(v1.ResourceList)
	for k := range capacity {
		value := resource.NewQuantity(0, resource.DecimalSI)
		if systemReserved != nil {
			value.Add(systemReserved[k])
		}
		if kubeReserved != nil {
			value.Add(kubeReserved[k])
		}
		if evictionReservation != nil {
			value.Add(evictionReservation[k])
		}
		if !value.IsZero() {
			result[k] = *value
		}
	}
	return result
}

func (p *probe) Create(spec *common.NodeSpec) common.NodeResponse {
	k := p.k
	if e := common.CheckKubeletVersion(spec.KubeletVersion, k.Version()); e != nil {
		return common.ErrResponse(e)
	}
	m, e := common.BuildMachine(spec.Machine, memBytes, pageKiB)
	if e != nil {
		return common.ErrResponse(e)
	}
	// A new create replaces the node, also when it fails.
	p.reset()

	// cmd/kubelet/app/server.go: load the config file, set the feature
	// gates from it, validate it.
	// The process-wide feature gate starts from this binary's defaults for
	// every node (kubelet's config defaulting may read it).
	gates := freshGates()
	kc, resp := loadConfig(k, spec.Config)
	if resp != nil {
		return *resp
	}
	if err := gates.SetFromMap(kc.FeatureGates); err != nil {
		return startupErr("feature-gates", err)
	}
	k.ForModelledHost(kc)
	if err := kubeletconfigvalidation.ValidateKubeletConfiguration(kc, utilfeature.DefaultFeatureGate); err != nil {
		return startupErr("validate-config", err)
	}

	// server.go run(): reserved CPUs override the cpu reservations.
	reservedSystemCPUs, err := getReservedCPUs(k, m, kc.ReservedSystemCPUs)
	if err != nil {
		return startupErr("reserved-cpus", err)
	}
	kubeReservedIn := copyMap(kc.KubeReserved)
	systemReservedIn := copyMap(kc.SystemReserved)
	if reservedSystemCPUs.Size() > 0 {
		if kubeReservedIn != nil {
			delete(kubeReservedIn, "cpu")
		}
		if systemReservedIn == nil {
			systemReservedIn = make(map[string]string)
		}
		systemReservedIn["cpu"] = strconv.Itoa(reservedSystemCPUs.Size())
	}
	kubeReserved, err := parseResourceList(k, kubeReservedIn)
	if err != nil {
		return startupErr("kube-reserved", fmt.Errorf("--kube-reserved value failed to parse: %w", err))
	}
	systemReserved, err := parseResourceList(k, systemReservedIn)
	if err != nil {
		return startupErr("system-reserved", fmt.Errorf("--system-reserved value failed to parse: %w", err))
	}
	// (--experimental-allocatable-ignore-eviction is a flag, default false)
	thresholds, err := eviction.ParseThresholdConfig([]string{}, kc.EvictionHard, nil, nil, nil)
	if err != nil {
		return startupErr("eviction-hard", err)
	}
	cpuManagerPolicyOptions, err := k.CPUManagerPolicyOptions(kc)
	if err != nil {
		return startupErr("cpu-manager-policy-options", err)
	}
	var topologyManagerPolicyOptions map[string]string
	if utilfeature.DefaultFeatureGate.Enabled(kubefeatures.TopologyManagerPolicyOptions) {
		topologyManagerPolicyOptions = kc.TopologyManagerPolicyOptions
	} else if kc.TopologyManagerPolicyOptions != nil {
		return startupErr("topology-manager-policy-options", fmt.Errorf("topology manager policy options %v require feature gates %q enabled",
			kc.TopologyManagerPolicyOptions, kubefeatures.TopologyManagerPolicyOptions))
	}

	// pkg/kubelet/cm/container_manager_linux.go NewContainerManager.
	reservation := nodeAllocatableReservation(capacityFromMachineInfo(m), kubeReserved, systemReserved, thresholds)
	dir, err := makeStateDir()
	if err != nil {
		return common.ErrResponse(common.Errf("probe", "tempdir", "%v", err))
	}
	p.dir = dir

	tm, err := k.NewTopologyManager(m, kc.TopologyManagerPolicy, kc.TopologyManagerScope, topologyManagerPolicyOptions)
	if err != nil {
		return startupErr("topologymanager.NewManager", err)
	}
	// The Device Manager comes first (devices.go).
	if resp := p.newDevices(m, spec.Machine.Devices, spec.Machine.DevicePlugins, dir, tm); resp != nil {
		return *resp
	}
	cpu, err := k.NewCPUManager(kc.CPUManagerPolicy, cpuManagerPolicyOptions, m, reservedSystemCPUs, reservation, dir, tm)
	if err != nil {
		return startupErr("cpumanager.NewManager", err)
	}
	k.AddHintProvider(tm, cpu)
	var mem memorymanager.Manager
	if k.MemoryManagerEnabled() {
		mem, err = k.NewMemoryManager(kc.MemoryManagerPolicy, m, reservation, kc.ReservedMemory, dir, tm)
		if err != nil {
			return startupErr("memorymanager.NewManager", err)
		}
		k.AddHintProvider(tm, mem)
	}

	// ContainerManager.Start: no containers exist yet.
	var once sync.Once
	firstCall := make(chan struct{})
	active := func() []*v1.Pod {
		once.Do(func() { close(firstCall) })
		return p.activePods()
	}
	if err := k.StartCPUManager(cpu, active); err != nil {
		return startupErr("cpumanager.Start", err)
	}
	if kc.CPUManagerPolicy != "none" {
		// Let the reconcile loop's immediate first pass finish its
		// activePods call before the first request (it finds nothing).
		select {
		case <-firstCall:
		case <-time.After(5 * time.Second):
		}
	}
	if mem != nil {
		if err := k.StartMemoryManager(mem, p.activePods); err != nil {
			return startupErr("memorymanager.Start", err)
		}
	}
	// ContainerManager.Start, after the CPU and Memory Managers started,
	// and before the Device Manager starts.
	capacity := capacityFromMachineInfo(m)
	if err := validateNodeAllocatable(k, capacity, reservation); err != nil {
		return startupErr("validateNodeAllocatable", err)
	}
	p.node = nodeObject(capacity, reservation, int(kc.MaxPods))
	p.absolute = absoluteAllocatable(capacity, kubeReserved, systemReserved)
	if resp := p.startDevices(); resp != nil {
		return *resp
	}
	p.tm, p.cpu, p.mem = tm, cpu, mem
	p.cpuPolicy, p.memPolicy = kc.CPUManagerPolicy, kc.MemoryManagerPolicy
	for _, n := range m.Topology {
		for _, c := range n.Cores {
			p.allCPUs = append(p.allCPUs, c.Threads...)
		}
	}
	return common.OKResponse()
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (p *probe) reset() {
	p.stopDevices()
	if p.dir != "" {
		removeStateDir(p.dir)
	}
	p.mu.Lock()
	p.live, p.pending = nil, nil
	p.mu.Unlock()
	p.dir, p.tm, p.cpu, p.mem = "", nil, nil, nil
	p.pods = map[string]*v1.Pod{}
	p.cpuPolicy, p.memPolicy, p.allCPUs = "", "", nil
}

// ---- admit / remove ----

func noNode() common.NodeResponse {
	return common.ErrResponse(common.Errf("invalid", "no-node", "no node: send a successful create first"))
}

func resourceList(m map[string]string, where string) (v1.ResourceList, *common.NodeError) {
	if m == nil {
		return nil, nil
	}
	rl := v1.ResourceList{}
	for k, s := range m {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return nil, common.ErrNS("invalid-quantity", "invalid", "pod", "%s[%q] %q: %v", where, k, s, err)
		}
		// A pod reaches kubelet through the API server, which stores each quantity in its
		// canonical form ("0.5Gi" as "512Mi") and kubelet parses that: the Memory
		// Manager's AsInt64 sees the canonical form, never the spelling (QTY-1, MEM-3).
		if canonical, err := resource.ParseQuantity(q.String()); err == nil {
			q = canonical
		}
		rl[v1.ResourceName(k)] = q
	}
	return rl, nil
}

// checkQuantities redoes the API server's non-negativity check of a resource
// list and refuses a value beyond kubelet's int64 arithmetic; who names the
// list's owner in the message.
func checkQuantities(rl v1.ResourceList, who string) *common.NodeError {
	for name, q := range rl {
		if f := q.AsApproximateFloat64(); f >= 9.2e18 {
			return common.ErrNS("skip", "invalid", "pod", "%s %s %q: the value does not fit kubelet's int64 arithmetic "+
				"(numaspec refuses it as invalid-quantity; kubelet overflows, or hangs when the exponent wrapped)", who, name, q.String())
		}
		if q.Sign() < 0 {
			return common.ErrNS("invalid-quantity", "invalid", "pod", "%s %s %q: must be greater than or equal to 0 (API server validation)", who, name, q.String())
		}
	}
	return nil
}

// podResources parses a pod's pod-level resources (spec.resources,
// KEP-2837; NWIRE-2): nil when the request has none. The same checks in
// every release, including those that then ignore the field (1.29, 1.30):
// quantities as for a container, and only the names the field takes (cpu,
// memory, hugepages-*: numaspec's wire shape, also what the API server's
// validation accepts from 1.32).
func podResources(spec *common.ResourcesSpec) (*v1.ResourceRequirements, *common.NodeError) {
	if spec == nil {
		return nil, nil
	}
	req, e := resourceList(spec.Requests, "pod.resources.requests")
	if e != nil {
		return nil, e
	}
	lim, e := resourceList(spec.Limits, "pod.resources.limits")
	if e != nil {
		return nil, e
	}
	for _, part := range []struct {
		field string
		rl    v1.ResourceList
	}{{"requests", req}, {"limits", lim}} {
		names := make([]string, 0, len(part.rl))
		for name := range part.rl {
			names = append(names, string(name))
		}
		sort.Strings(names)
		for _, name := range names {
			rn := v1.ResourceName(name)
			if rn != v1.ResourceCPU && rn != v1.ResourceMemory && !v1helper.IsHugePageResourceName(rn) {
				return nil, common.ErrNS("invalid-field", "invalid", "pod", "pod.resources.%s[%q]: pod-level resources take only cpu, memory and hugepages-* names", part.field, name)
			}
		}
		if e := checkQuantities(part.rl, "pod-level resources "+part.field); e != nil {
			return nil, e
		}
	}
	return &v1.ResourceRequirements{Requests: req, Limits: lim}, nil
}

// buildPod makes the v1.Pod the API server would store (k.DefaultPod):
// defaulted (a limit without a request requests the limit), with its
// pod-level resources where the release has them, and with status.qosClass
// set.
func buildPod(k Kubelet, spec *common.PodSpec) (*v1.Pod, *common.NodeError) {
	if spec.UID == "" {
		return nil, common.Errf("invalid", "pod", "pod.uid is required")
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(spec.UID), Name: spec.Name, Namespace: spec.Namespace,
		Labels: spec.Labels, Annotations: spec.Annotations}}
	seen := map[string]bool{}
	conv := func(cs []common.ContainerSpec, kind string) ([]v1.Container, *common.NodeError) {
		var out []v1.Container
		for i, c := range cs {
			if c.Name == "" || seen[c.Name] {
				return nil, common.Errf("invalid", "pod", "pod.%s[%d]: container name %q is empty or repeated", kind, i, c.Name)
			}
			seen[c.Name] = true
			req, e := resourceList(c.Resources.Requests, fmt.Sprintf("%s[%d].resources.requests", kind, i))
			if e != nil {
				return nil, e
			}
			lim, e := resourceList(c.Resources.Limits, fmt.Sprintf("%s[%d].resources.limits", kind, i))
			if e != nil {
				return nil, e
			}
			vc := v1.Container{Name: c.Name, Resources: v1.ResourceRequirements{Requests: req, Limits: lim}}
			if c.RestartPolicy != nil {
				// The API server's validation: only an init container (a
				// sidecar) may set restartPolicy, and only to Always.
				if kind != "initContainers" || *c.RestartPolicy != string(v1.ContainerRestartPolicyAlways) {
					return nil, common.ErrNS("invalid-field", "invalid", "pod", "pod.%s[%d].restartPolicy %q: only an init container may have one, and only \"Always\"", kind, i, *c.RestartPolicy)
				}
				rp := v1.ContainerRestartPolicy(*c.RestartPolicy)
				vc.RestartPolicy = &rp
			}
			out = append(out, vc)
		}
		return out, nil
	}
	var e *common.NodeError
	if pod.Spec.InitContainers, e = conv(spec.InitContainers, "initContainers"); e != nil {
		return nil, e
	}
	if pod.Spec.Containers, e = conv(spec.Containers, "containers"); e != nil {
		return nil, e
	}
	if len(pod.Spec.Containers) == 0 {
		return nil, common.Errf("invalid", "pod", "pod.containers: a pod needs at least one container")
	}
	podLevel, e := podResources(spec.Resources)
	if e != nil {
		return nil, e
	}
	// Defaulting (and, from 1.32, pod-level resources) as the release's API
	// server does it.
	if err := k.DefaultPod(pod, podLevel); err != nil {
		return nil, common.Errf("probe", "pod", "pod-level resources: %v", err)
	}
	// A pod the API server refuses never reaches kubelet. GLUE: of its
	// validation only the non-negativity of quantities is redone here
	// (ValidateNonnegativeQuantity); values beyond int64 are skipped.
	for _, c := range allContainers(pod) {
		for _, rl := range []v1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
			if e := checkQuantities(rl, fmt.Sprintf("container %q", c.Name)); e != nil {
				return nil, e
			}
		}
	}
	pod.Status.QOSClass = v1qos.ComputePodQOS(pod)
	return pod, nil
}

func allContainers(pod *v1.Pod) []v1.Container {
	return append(append([]v1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
}

func containerID(pod *v1.Pod, c *v1.Container) string {
	return fmt.Sprintf("probe://%s/%s", pod.UID, c.Name)
}

// cleanup makes each manager run removeStaleState now, as the next
// admission would: GetTopologyHints of a BestEffort pod has no other effect.
func (p *probe) cleanup() {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: "numaspec-node-probe-cleanup", Name: "cleanup", Namespace: "numaspec"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "cleanup"}}},
		Status:     v1.PodStatus{QOSClass: v1.PodQOSBestEffort},
	}
	if p.devs != nil {
		p.k.TopologyHints(p.devs.dm, pod, &pod.Spec.Containers[0])
	}
	p.k.TopologyHints(p.cpu, pod, &pod.Spec.Containers[0])
	if p.mem != nil {
		p.k.TopologyHints(p.mem, pod, &pod.Spec.Containers[0])
	}
}

func (p *probe) Admit(spec *common.PodSpec) common.NodeResponse {
	if p.tm == nil {
		return noNode()
	}
	pod, e := buildPod(p.k, spec)
	if e != nil {
		return common.ErrResponse(e)
	}
	if _, dup := p.pods[spec.UID]; dup {
		return common.ErrResponse(common.ErrNS("pod-already-admitted", "invalid", "pod", "pod uid %q is already admitted", spec.UID))
	}

	p.setPending(pod)
	res := p.k.Admit(p.tm, pod, p.activePodsExcept(pod))
	if res.Admit {
		// The next admit handler kubelet registers: resource fit.
		res = p.k.FitAdmit(p.fitNode(), p.pluginResources, pod, p.activePodsExcept(pod))
	}
	d := &common.Decision{Admitted: res.Admit, Reason: res.Reason, Message: res.Message, Containers: []common.ContainerResult{}}
	if !res.Admit {
		p.setPending(nil) // rejected: kubelet marks it Failed, so it is no longer active
		p.cleanup()
		return common.NodeResponse{Decision: d}
	}
	cs := allContainers(pod)
	for i := range cs {
		d.Containers = append(d.Containers, p.containerResult(pod, &cs[i]))
	}
	p.mu.Lock()
	p.live = append(p.live, pod)
	p.pending = nil
	p.mu.Unlock()
	p.pods[spec.UID] = pod
	// kubelet's internal container lifecycle PreStartContainer, init
	// containers first, in order.
	for i := range cs {
		id := containerID(pod, &cs[i])
		p.k.PreStartContainer(p.cpu, p.mem, p.tm, pod, &cs[i], id)
	}
	return common.NodeResponse{Decision: d}
}

func (p *probe) activePodsExcept(pod *v1.Pod) []*v1.Pod {
	var out []*v1.Pod
	for _, q := range p.activePods() {
		if q != pod {
			out = append(out, q)
		}
	}
	return out
}

func (p *probe) containerResult(pod *v1.Pod, c *v1.Container) common.ContainerResult {
	uid := string(pod.UID)
	hint := p.k.GetAffinity(p.tm, uid, c.Name)
	r := common.ContainerResult{Name: c.Name, CPUs: []int{}, Memory: []common.MemBlock{}, Devices: p.containerDevices(uid, c.Name)}
	r.Hint.Preferred = hint.Preferred
	if hint.NUMANodeAffinity != nil {
		r.Hint.NUMA = common.SortedInts(hint.NUMANodeAffinity.GetBits())
	}
	if set, ok := p.cpu.State().GetCPUSet(uid, c.Name); ok {
		r.CPUs = common.SortedInts(set.List())
	}
	if p.mem != nil {
		r.Memory = memBlocks(p.mem.State().GetMemoryBlocks(uid, c.Name))
	}
	return r
}

func (p *probe) Remove(uid string) common.NodeResponse {
	if p.tm == nil {
		return noNode()
	}
	pod, ok := p.pods[uid]
	if !ok {
		return common.ErrResponse(common.Errf("unknown-pod", "remove", "no admitted pod with uid %q", uid))
	}
	delete(p.pods, uid)
	p.mu.Lock()
	for i, q := range p.live {
		if q == pod {
			p.live = append(p.live[:i:i], p.live[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	// The containers are gone: kubelet's PostStopContainer (at container
	// removal) tells the topology manager; CPU and memory are released by
	// removeStaleState once the pod is no longer active.
	cs := allContainers(pod)
	for i := range cs {
		_ = p.k.RemoveContainer(p.tm, containerID(pod, &cs[i]))
	}
	p.cleanup()
	return common.OKResponse()
}

// ---- state ----

func memBlocks(bs []state.Block) []common.MemBlock {
	out := make([]common.MemBlock, 0, len(bs))
	for _, b := range bs {
		out = append(out, common.MemBlock{Type: string(b.Type), Size: b.Size, NUMA: append([]int{}, b.NUMAAffinity...)})
	}
	return common.SortBlocks(out)
}

func (p *probe) State() common.NodeResponse {
	if p.tm == nil {
		return noNode()
	}
	st := &common.NodeState{
		CPU:    common.CPUState{DefaultCPUSet: []int{}, Assignments: map[string]map[string][]int{}},
		Memory: common.MemState{MachineState: map[string]common.NUMAState{}, Assignments: map[string]map[string][]common.MemBlock{}},
	}
	cs := p.cpu.State()
	st.CPU.DefaultCPUSet = common.SortedInts(cs.GetDefaultCPUSet().List())
	for uid, m := range cs.GetCPUAssignments() {
		st.CPU.Assignments[uid] = map[string][]int{}
		for name, set := range m {
			st.CPU.Assignments[uid][name] = common.SortedInts(set.List())
		}
	}
	if p.mem != nil {
		ms := p.mem.State()
		for id, n := range ms.GetMachineState() {
			ns := common.NUMAState{NumberOfAssignments: n.NumberOfAssignments, Cells: common.SortedInts(n.Cells), MemoryMap: map[string]common.MemTable{}}
			for t, mt := range n.MemoryMap {
				ns.MemoryMap[string(t)] = common.MemTable{Total: mt.TotalMemSize, SystemReserved: mt.SystemReserved, Allocatable: mt.Allocatable, Reserved: mt.Reserved, Free: mt.Free}
			}
			st.Memory.MachineState[common.Itoa(id)] = ns
		}
		for uid, m := range ms.GetMemoryAssignments() {
			st.Memory.Assignments[uid] = map[string][]common.MemBlock{}
			for name, bs := range m {
				st.Memory.Assignments[uid][name] = memBlocks(bs)
			}
		}
	}
	uids := make([]string, 0, len(p.pods))
	for uid := range p.pods {
		uids = append(uids, uid)
	}
	sort.Strings(uids)
	var reserved []int
	if p.cpuPolicy == "static" {
		reserved = cpuset.New(p.allCPUs...).Difference(p.cpu.GetAllocatableCPUs()).List()
	}
	ns := common.NumaspecState(st, uids, p.cpuPolicy == "static", reserved, p.mem != nil && p.memPolicy == "Static")
	devState, err := p.deviceState(uids)
	if err != nil {
		return common.ErrResponse(common.Errf("probe", "state", "%v", err))
	}
	st.Devices, ns["devices"] = devState, devState
	return common.NodeResponse{State: st, Numaspec: ns}
}

// Hints asks the CPU and Memory Managers for their hints about a pod on the
// current state (NWIRE-4): GetTopologyHints(pod, container) for a named
// container, GetPodTopologyHints(pod) without one. Nothing is admitted or
// allocated. The pod is checked as for admit, but its uid may be one on the
// node (its containers' hints are then regenerated from what they hold).
// From 1.38 each hint also carries the provider's Score (k.HintScores).
func (p *probe) Hints(spec *common.PodSpec, container *string) common.NodeResponse {
	if p.tm == nil {
		return noNode()
	}
	pod, e := buildPod(p.k, spec)
	if e != nil {
		return common.ErrResponse(e)
	}
	providers := []topologymanager.HintProvider{p.cpu}
	if p.devs != nil {
		providers = []topologymanager.HintProvider{p.devs.dm, p.cpu}
	}
	if p.mem != nil {
		providers = append(providers, p.mem)
	}
	var c *v1.Container
	if container != nil {
		cs := allContainers(pod)
		for i := range cs {
			if cs[i].Name == *container {
				c = &cs[i]
			}
		}
		if c == nil {
			return common.ErrResponse(common.ErrNS("invalid-field", "invalid", "hints", "container: pod %q has no container %q", spec.UID, *container))
		}
	}
	out := common.HintsMap{}
	for _, hp := range providers {
		var got map[string][]topologymanager.TopologyHint
		if c != nil {
			got = p.k.TopologyHints(hp, pod, c)
		} else {
			got = p.k.PodTopologyHints(hp, pod)
		}
		for res, hints := range got {
			if hints == nil {
				out[res] = nil
				continue
			}
			list := make([]common.NodeHint, 0, len(hints))
			for _, h := range hints {
				nh := common.NodeHint{Preferred: h.Preferred}
				if h.NUMANodeAffinity != nil {
					nh.NUMA = common.SortedInts(h.NUMANodeAffinity.GetBits())
				}
				if p.k.HintScores() { // 1.38 on: the provider's utilization score
					score := p.k.Score(h)
					nh.Score = &score
				}
				list = append(list, nh)
			}
			out[res] = list
		}
	}
	return common.NodeResponse{Hints: &out}
}

// Probe is the node probe of one release.
type Probe = probe

// NewProbe returns a probe of k's release with no node (call Setup first).
func NewProbe(k Kubelet) *Probe { return &probe{k: k, pods: map[string]*v1.Pod{}} }

// Close removes the probe's state-file directory.
func (p *probe) Close() { p.reset() }
