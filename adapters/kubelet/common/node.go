package common

// The version-independent half of the kubelet "node probe" (../probe): the
// JSON line protocol, strict request decoding, the machine description turned
// into cadvisor-shaped plain data, output types and panic recovery. Nothing
// here depends on Kubernetes types; package probe (with each release's shim)
// converts to kubelet types and drives the real kubelet managers.

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
)

// ---- requests ----

// NodeRequest is one input line of the node probe.
type NodeRequest struct {
	Op   string          `json:"op"`
	Node json.RawMessage `json:"node,omitempty"`
	Pod  json.RawMessage `json:"pod,omitempty"`
	UID  *string         `json:"uid,omitempty"`
	// Container names the container of a hints request (NWIRE-4); nil asks
	// for the pod-scope hints.
	Container *string `json:"container,omitempty"`
	// Unregistered names, in a restart request (NWIRE-7), the resources whose
	// device plugins have not registered again yet; Resource names the
	// resource of a register request.
	Unregistered []string `json:"unregistered,omitempty"`
	Resource     *string  `json:"resource,omitempty"`
	// Containers is a resize request's containers (NWIRE-6), each with its
	// whole new resources.
	Containers []ContainerResize `json:"containers,omitempty"`
	// Resources is a resize request's new pod-level resources (NWIRE-6,
	// RESIZE-8: spec.resources), nil when the resize leaves them.
	Resources *ResourcesSpec `json:"resources,omitempty"`
}

// ContainerResize is one container of a resize request (NWIRE-6).
type ContainerResize struct {
	Name      string        `json:"name"`
	Resources ResourcesSpec `json:"resources"`
}

// ResizeAnswer is the answer to a resize request (RESIZE-1): the status
// (InProgress, Deferred, Infeasible, Unchanged), the refusing admit handler's
// own reason (Deferred only) and the condition's message.
type ResizeAnswer struct {
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Resizer is a probe that resizes a live pod in place through kubelet's own
// resize path (NWIRE-6, RESIZE-*).
type Resizer interface {
	Resize(uid string, containers []ContainerResize, podLevel *ResourcesSpec) NodeResponse
}

// NodeSpec is the "node" object of a create request.
type NodeSpec struct {
	KubeletVersion string      `json:"kubeletVersion"`
	Machine        MachineSpec `json:"machine"`
	Config         ConfigSpec  `json:"config"`
}

// MachineSpec describes the hardware as cadvisor would see it.
type MachineSpec struct {
	NUMANodes []NUMANodeSpec             `json:"numaNodes"`
	Devices   map[string]json.RawMessage `json:"devices"`
	// DevicePlugins: per resource, a plugin that offers GetPreferredAllocation
	// (DEV-10); decoded by the probe.
	DevicePlugins map[string]json.RawMessage `json:"devicePlugins"`
}

// NUMANodeSpec is one NUMA node. Memory is the node's total memory (MemTotal
// of the node, hugepages included) as a Kubernetes quantity; Hugepages maps
// "hugepages-<size>" to a page count.
type NUMANodeSpec struct {
	ID        *int              `json:"id"`
	Memory    string            `json:"memory"`
	Hugepages map[string]uint64 `json:"hugepages"`
	Distances []uint64          `json:"distances"`
	Cores     []CoreSpec        `json:"cores"`
}

// CoreSpec is one physical core; Threads are the logical CPU ids.
type CoreSpec struct {
	ID      int   `json:"id"`
	Socket  int   `json:"socket"`
	Threads []int `json:"threads"`
	// UncoreCache is the id of the core's uncore (L3) cache, cadvisor's
	// Core.UncoreCaches[0].Id; absent when cadvisor reports none (kubelet then
	// groups the core by its socket, CPU-19).
	UncoreCache *int `json:"uncoreCache,omitempty"`
}

// ConfigSpec is the subset of KubeletConfiguration (kubelet.config.k8s.io/v1beta1)
// the probe accepts. Field names are the kubelet config file's. A field that is
// absent (or null) is left out of the configuration handed to kubelet's
// config decoder, so kubelet's own defaulting applies.
type ConfigSpec struct {
	CPUManagerPolicy             *string               `json:"cpuManagerPolicy,omitempty"`
	CPUManagerPolicyOptions      map[string]string     `json:"cpuManagerPolicyOptions,omitempty"`
	ReservedSystemCPUs           *string               `json:"reservedSystemCPUs,omitempty"`
	KubeReserved                 map[string]string     `json:"kubeReserved,omitempty"`
	SystemReserved               map[string]string     `json:"systemReserved,omitempty"`
	EvictionHard                 map[string]string     `json:"evictionHard,omitempty"`
	MemoryManagerPolicy          *string               `json:"memoryManagerPolicy,omitempty"`
	ReservedMemory               []MemoryReservationIn `json:"reservedMemory,omitempty"`
	TopologyManagerPolicy        *string               `json:"topologyManagerPolicy,omitempty"`
	TopologyManagerScope         *string               `json:"topologyManagerScope,omitempty"`
	TopologyManagerPolicyOptions map[string]string     `json:"topologyManagerPolicyOptions,omitempty"`
	FeatureGates                 map[string]bool       `json:"featureGates,omitempty"`
	MaxPods                      *int32                `json:"maxPods,omitempty"`
}

// MemoryReservationIn is one reservedMemory entry.
type MemoryReservationIn struct {
	NumaNode int32             `json:"numaNode"`
	Limits   map[string]string `json:"limits"`
}

// KubeletConfigJSON renders the config as a kubelet config file
// (apiVersion kubelet.config.k8s.io/v1beta1, kind KubeletConfiguration).
// Absent fields are omitted; an explicitly empty map is kept (kubelet tells
// an empty evictionHard apart from an absent one).
func (c ConfigSpec) KubeletConfigJSON() ([]byte, error) {
	doc := map[string]interface{}{
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind":       "KubeletConfiguration",
	}
	put := func(k string, present bool, v interface{}) {
		if present {
			doc[k] = v
		}
	}
	put("cpuManagerPolicy", c.CPUManagerPolicy != nil, c.CPUManagerPolicy)
	put("cpuManagerPolicyOptions", c.CPUManagerPolicyOptions != nil, c.CPUManagerPolicyOptions)
	put("reservedSystemCPUs", c.ReservedSystemCPUs != nil, c.ReservedSystemCPUs)
	put("kubeReserved", c.KubeReserved != nil, c.KubeReserved)
	put("systemReserved", c.SystemReserved != nil, c.SystemReserved)
	put("evictionHard", c.EvictionHard != nil, c.EvictionHard)
	put("memoryManagerPolicy", c.MemoryManagerPolicy != nil, c.MemoryManagerPolicy)
	put("reservedMemory", c.ReservedMemory != nil, c.ReservedMemory)
	put("topologyManagerPolicy", c.TopologyManagerPolicy != nil, c.TopologyManagerPolicy)
	put("topologyManagerScope", c.TopologyManagerScope != nil, c.TopologyManagerScope)
	put("topologyManagerPolicyOptions", c.TopologyManagerPolicyOptions != nil, c.TopologyManagerPolicyOptions)
	put("featureGates", c.FeatureGates != nil, c.FeatureGates)
	put("maxPods", c.MaxPods != nil, c.MaxPods)
	return json.Marshal(doc)
}

// PodSpec is the "pod" object of an admit request.
type PodSpec struct {
	UID            string          `json:"uid"`
	Name           string          `json:"name"`
	Namespace      string          `json:"namespace"`
	InitContainers []ContainerSpec `json:"initContainers"`
	Containers     []ContainerSpec `json:"containers"`
	// Resources is the pod-level resources (spec.resources, KEP-2837;
	// NWIRE-2), nil when absent. Only cpu, memory and hugepages-* names.
	// Releases whose PodSpec has no such field (1.29, 1.30) drop it.
	Resources *ResourcesSpec `json:"resources,omitempty"`
	// Labels and Annotations go onto the pod's metadata; kubelet's managers
	// never read them (numaspec spec/node/affinity.md, AWIRE-1).
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// ContainerSpec is one container of a PodSpec.
type ContainerSpec struct {
	Name          string        `json:"name"`
	RestartPolicy *string       `json:"restartPolicy,omitempty"`
	Resources     ResourcesSpec `json:"resources"`
}

// ResourcesSpec holds quantity strings by resource name.
type ResourcesSpec struct {
	Requests map[string]string `json:"requests,omitempty"`
	Limits   map[string]string `json:"limits,omitempty"`
}

// DecodeStrict decodes one JSON value, refusing unknown fields and trailing data.
func DecodeStrict(data []byte, v interface{}) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after JSON value")
	}
	return nil
}

// CheckKubeletVersion returns nil when want ("1.30", "v1.30.14", "1.30.4-rc.0",
// ...) has the same minor release as the build's version (e.g. "v1.30.14").
func CheckKubeletVersion(want, build string) *NodeError {
	if want == "" {
		return Errf("invalid", "create", "node.kubeletVersion is required (this probe serves kubelet %s)", build)
	}
	w := MinorOf(want)
	if w == "" {
		return ErrNS("unsupported-version", "invalid", "create", "node.kubeletVersion %q is not a version like \"1.30\"", want)
	}
	if w != MinorOf(build) {
		return Errf("unsupported", "create", "this probe runs kubelet %s; node.kubeletVersion %q is another minor release", build, want)
	}
	return nil
}

// ---- machine ----

// HugePages is cadvisor's HugePagesInfo: PageSize in KiB.
type HugePages struct {
	PageSize uint64
	NumPages uint64
}

// MachineCore mirrors cadvisor's Core (the fields kubelet reads).
type MachineCore struct {
	ID       int
	Threads  []int
	SocketID int
	// UncoreCache: nil when the core has no uncore cache (cadvisor's empty UncoreCaches).
	UncoreCache *int
}

// MachineNode mirrors cadvisor's Node.
type MachineNode struct {
	ID        int
	Memory    uint64
	HugePages []HugePages
	Cores     []MachineCore
	Distances []uint64
}

// Machine mirrors the cadvisor MachineInfo fields kubelet's managers read.
type Machine struct {
	NumCores         int
	NumPhysicalCores int
	NumSockets       int
	MemoryCapacity   uint64
	HugePages        []HugePages
	Topology         []MachineNode
}

// BuildMachine turns the request's machine into cadvisor-shaped data (its
// devices are the probe's: package probe registers them with kubelet's
// Device Manager).
// memBytes parses a memory quantity; pageKiB turns "hugepages-2Mi" into a
// page size in KiB. NUMA nodes and cores keep the request's order.
// NumCores counts distinct logical CPUs, NumSockets distinct socket ids,
// NumPhysicalCores cores; MemoryCapacity and the machine-wide hugepages are
// the sums over the nodes (what /proc/meminfo and /sys/kernel/mm/hugepages
// report on a real machine).
func BuildMachine(m MachineSpec, memBytes func(string) (uint64, error), pageKiB func(string) (uint64, error)) (*Machine, *NodeError) {
	if len(m.NUMANodes) == 0 {
		return nil, Errf("invalid", "create", "machine.numaNodes is empty")
	}
	out := &Machine{}
	seenNode := map[int]bool{}
	cpus := map[int]bool{}
	sockets := map[int]bool{}
	totalHP := map[uint64]uint64{}
	for i, n := range m.NUMANodes {
		if n.ID == nil {
			return nil, Errf("invalid", "create", "machine.numaNodes[%d].id is missing", i)
		}
		if *n.ID < 0 || seenNode[*n.ID] {
			return nil, ErrNS("invalid-numa-id", "invalid", "create", "machine.numaNodes[%d].id %d is negative or repeated", i, *n.ID)
		}
		seenNode[*n.ID] = true
		mem, err := memBytes(n.Memory)
		if err != nil {
			kind := "invalid-field"
			if strings.Contains(err.Error(), "quantities must match") {
				kind = "invalid-quantity"
			}
			return nil, ErrNS(kind, "invalid", "create", "machine.numaNodes[%d].memory %q: %v", i, n.Memory, err)
		}
		node := MachineNode{ID: *n.ID, Memory: mem, Distances: n.Distances}
		// cadvisor lists /sys/devices/system/node/node<N>/hugepages/hugepages-<kib>kB
		// in directory (name) order.
		type hp struct{ kib, count uint64 }
		byDir := map[string]hp{}
		dirs := make([]string, 0, len(n.Hugepages))
		for name, count := range n.Hugepages {
			kib, err := pageKiB(name)
			if err != nil {
				return nil, Errf("invalid", "create", "machine.numaNodes[%d].hugepages %q: %v", i, name, err)
			}
			dir := fmt.Sprintf("hugepages-%dkB", kib)
			if _, dup := byDir[dir]; dup {
				return nil, Errf("invalid", "create", "machine.numaNodes[%d].hugepages: page size %d KiB given twice", i, kib)
			}
			byDir[dir] = hp{kib, count}
			dirs = append(dirs, dir)
		}
		sort.Strings(dirs)
		for _, d := range dirs {
			h := byDir[d]
			node.HugePages = append(node.HugePages, HugePages{PageSize: h.kib, NumPages: h.count})
			totalHP[h.kib] += h.count
		}
		for _, c := range n.Cores {
			node.Cores = append(node.Cores, MachineCore{ID: c.ID, Threads: append([]int(nil), c.Threads...), SocketID: c.Socket, UncoreCache: c.UncoreCache})
			sockets[c.Socket] = true
			for _, t := range c.Threads {
				cpus[t] = true
			}
			out.NumPhysicalCores++
		}
		out.MemoryCapacity += mem
		out.Topology = append(out.Topology, node)
	}
	out.NumCores = len(cpus)
	out.NumSockets = len(sockets)
	dirs := make([]string, 0, len(totalHP))
	byDir := map[string]uint64{}
	for kib := range totalHP {
		d := fmt.Sprintf("hugepages-%dkB", kib)
		dirs = append(dirs, d)
		byDir[d] = kib
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		out.HugePages = append(out.HugePages, HugePages{PageSize: byDir[d], NumPages: totalHP[byDir[d]]})
	}
	return out, nil
}

// ---- answers ----

// NodeError is the error object of an answer.
type NodeError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Stage names the step that failed (informational), e.g.
	// "cpumanager.NewManager", "validate-config", "decode".
	Stage string `json:"stage,omitempty"`
	// Numaspec is numaspec's error kind where the probe knows it (the adapter
	// reports it; the node probe's own line protocol does not).
	Numaspec string `json:"-"`
	// Trace is the stack of a panic (kind "panic"), for the adapter.
	Trace string `json:"-"`
}

// ErrNS builds a NodeError that also carries numaspec's kind.
func ErrNS(numaspec, kind, stage, format string, args ...interface{}) *NodeError {
	e := Errf(kind, stage, format, args...)
	e.Numaspec = numaspec
	return e
}

// Errf builds a NodeError.
func Errf(kind, stage, format string, args ...interface{}) *NodeError {
	return &NodeError{Kind: kind, Stage: stage, Message: fmt.Sprintf(format, args...)}
}

// NodeHint is a topology hint; NUMA nil means no affinity (null). Score is
// the provider hint's Score in a hints answer of a release whose hints carry
// one (1.38 on; 0 included), absent otherwise (and from admission decisions).
type NodeHint struct {
	NUMA      []int  `json:"numa"`
	Preferred bool   `json:"preferred"`
	Score     *int64 `json:"score,omitempty"`
}

// MemBlock is one memory manager block.
type MemBlock struct {
	Type string `json:"type"`
	Size uint64 `json:"size"`
	NUMA []int  `json:"numa"`
}

// SortBlocks sorts blocks by type (stable) and each block's NUMA ids.
func SortBlocks(bs []MemBlock) []MemBlock {
	if bs == nil {
		bs = []MemBlock{}
	}
	for i := range bs {
		if bs[i].NUMA == nil {
			bs[i].NUMA = []int{}
		}
		sort.Ints(bs[i].NUMA)
	}
	sort.SliceStable(bs, func(i, j int) bool { return bs[i].Type < bs[j].Type })
	return bs
}

// ContainerResult is one container of an admission decision.
type ContainerResult struct {
	Name    string                 `json:"name"`
	Hint    NodeHint               `json:"hint"`
	CPUs    []int                  `json:"cpus"`
	Memory  []MemBlock             `json:"memory"`
	Devices map[string]interface{} `json:"devices"`
}

// Decision is the answer to an admit request.
type Decision struct {
	Admitted   bool              `json:"admitted"`
	Reason     string            `json:"reason"`
	Message    string            `json:"message"`
	Containers []ContainerResult `json:"containers"`
}

// MemTable is one memory manager MemoryTable.
type MemTable struct {
	Total          uint64 `json:"total"`
	SystemReserved uint64 `json:"systemReserved"`
	Allocatable    uint64 `json:"allocatable"`
	Reserved       uint64 `json:"reserved"`
	Free           uint64 `json:"free"`
}

// NUMAState is one memory manager NUMANodeState.
type NUMAState struct {
	NumberOfAssignments int                 `json:"numberOfAssignments"`
	Cells               []int               `json:"cells"`
	MemoryMap           map[string]MemTable `json:"memoryMap"`
}

// CPUState is the CPU manager state.
type CPUState struct {
	DefaultCPUSet []int                       `json:"defaultCpuSet"`
	Assignments   map[string]map[string][]int `json:"assignments"`
}

// MemState is the memory manager state.
type MemState struct {
	MachineState map[string]NUMAState             `json:"machineState"`
	Assignments  map[string]map[string][]MemBlock `json:"assignments"`
}

// NodeState is the answer to a state request.
type NodeState struct {
	CPU    CPUState `json:"cpu"`
	Memory MemState `json:"memory"`
	// Devices is the Device Manager's state in numaspec's NODE-8 shape
	// ({allocated, healthy, assignments}).
	Devices map[string]any `json:"devices"`
}

// NodeResponse is one output line.
type NodeResponse struct {
	OK       *bool      `json:"ok,omitempty"`
	Decision *Decision  `json:"decision,omitempty"`
	State    *NodeState `json:"state,omitempty"`
	Hints    *HintsMap  `json:"hints,omitempty"`
	Error    *NodeError `json:"error,omitempty"`
	// Resize is the answer to a resize request (NWIRE-6).
	Resize *ResizeAnswer `json:"resize,omitempty"`
	// Numaspec is the state in numaspec's NODE-8 shape (set with State).
	Numaspec map[string]any `json:"-"`
}

// HintsMap is the answer to a hints request: resource -> hints (nil: no
// preference). A resource no provider speaks about is absent.
type HintsMap map[string][]NodeHint

// OKResponse is {"ok":true}.
func OKResponse() NodeResponse { t := true; return NodeResponse{OK: &t} }

// ErrResponse wraps a NodeError.
func ErrResponse(e *NodeError) NodeResponse { return NodeResponse{Error: e} }

// SortedInts returns a sorted copy, never nil.
func SortedInts(xs []int) []int {
	out := append([]int{}, xs...)
	sort.Ints(out)
	return out
}

// Itoa is strconv.Itoa (for map keys).
func Itoa(i int) string { return strconv.Itoa(i) }

// ---- serving ----

// NodeProbe is one release's implementation.
type NodeProbe interface {
	Version() string
	Create(spec *NodeSpec) NodeResponse
	Admit(pod *PodSpec) NodeResponse
	Remove(uid string) NodeResponse
	State() NodeResponse
	// Hints asks the hint providers about a pod on the current state
	// (container nil: pod scope), changing nothing.
	Hints(pod *PodSpec, container *string) NodeResponse
	// Recover is called after a request panicked, to drop any half-done
	// request state (e.g. the pod being admitted).
	Recover()
	// Close drops the node and removes what it keeps on disk.
	Close()
}

// DeviceRestarter is a probe that restarts kubelet's Device Manager (NWIRE-7,
// DEV-11): Restart builds a new manager over the same checkpoint, with every
// plugin but those of unregistered registering again; Register lets one of
// them register.
type DeviceRestarter interface {
	Restart(unregistered []string) NodeResponse
	Register(resource string) NodeResponse
}

// HandleNode answers one node-protocol request line (used by the adapter).
func HandleNode(p NodeProbe, line []byte) NodeResponse { return handleNode(p, line) }

func handleNode(p NodeProbe, line []byte) (resp NodeResponse) {
	defer func() {
		if r := recover(); r != nil {
			msg := fmt.Sprint(r)
			if os.Getenv("ORACLE_PANIC_STACK") != "" {
				msg += "\n" + string(debug.Stack())
			}
			resp = ErrResponse(&NodeError{Kind: "panic", Stage: "evaluate", Message: msg, Trace: string(debug.Stack())})
			func() {
				defer func() { _ = recover() }()
				p.Recover()
			}()
		}
	}()
	var req NodeRequest
	if err := DecodeStrict(line, &req); err != nil {
		return ErrResponse(Errf("invalid", "decode", "%v", err))
	}
	switch req.Op {
	case "create":
		if len(req.Node) == 0 || string(bytes.TrimSpace(req.Node)) == "null" {
			return ErrResponse(Errf("invalid", "decode", "create needs a \"node\" object"))
		}
		var spec NodeSpec
		if err := DecodeStrict(req.Node, &spec); err != nil {
			return ErrResponse(Errf("invalid", "decode", "node: %v", err))
		}
		return p.Create(&spec)
	case "admit":
		if len(req.Pod) == 0 || string(bytes.TrimSpace(req.Pod)) == "null" {
			return ErrResponse(Errf("invalid", "decode", "admit needs a \"pod\" object"))
		}
		var pod PodSpec
		if err := DecodeStrict(req.Pod, &pod); err != nil {
			return ErrResponse(Errf("invalid", "decode", "pod: %v", err))
		}
		return p.Admit(&pod)
	case "hints":
		if len(req.Pod) == 0 || string(bytes.TrimSpace(req.Pod)) == "null" {
			return ErrResponse(Errf("invalid", "decode", "hints needs a \"pod\" object"))
		}
		var pod PodSpec
		if err := DecodeStrict(req.Pod, &pod); err != nil {
			return ErrResponse(Errf("invalid", "decode", "pod: %v", err))
		}
		return p.Hints(&pod, req.Container)
	case "remove":
		if req.UID == nil {
			return ErrResponse(Errf("invalid", "decode", "remove needs a \"uid\""))
		}
		return p.Remove(*req.UID)
	case "state":
		return p.State()
	case "restart", "register":
		// NWIRE-7: kubelet restarts; a device plugin registers again.
		r, ok := p.(DeviceRestarter)
		if !ok {
			return ErrResponse(Errf("invalid", "decode", "this probe does not serve %q", req.Op))
		}
		if req.Op == "restart" {
			return r.Restart(req.Unregistered)
		}
		if req.Resource == nil {
			return ErrResponse(Errf("invalid", "decode", "register needs a \"resource\""))
		}
		return r.Register(*req.Resource)
	case "resize":
		// NWIRE-6: a live pod's containers ask for new cpu and memory.
		r, ok := p.(Resizer)
		if !ok || req.UID == nil {
			return ErrResponse(Errf("invalid", "decode", "this probe does not serve resize, or no \"uid\""))
		}
		return r.Resize(*req.UID, req.Containers, req.Resources)
	default:
		return ErrResponse(Errf("invalid", "decode", "unknown op %q (want create, admit, hints, remove or state)", req.Op))
	}
}

// nodeMain runs the node probe line protocol on stdin/stdout (the "node" mode
// of ReleaseMain; args are its flags): one answer line per non-blank request
// line, flushed after each. It never exits on a bad line. At the end of input
// the probe is closed (its node's state directory removed).
func nodeMain(p NodeProbe, args []string) {
	fs := flag.NewFlagSet("node", flag.ExitOnError)
	version := fs.Bool("version", false, "print the pinned k8s.io/kubernetes version and exit")
	_ = fs.Parse(args)
	if *version {
		fmt.Println(p.Version())
		return
	}
	defer p.Close()
	ServeLines(func(line []byte) any { return handleNode(p, line) })
}
