// Package release is the kubelet 1.37 shim of the probe package
// (../../probe): the calls whose Go signature in k8s.io/kubernetes v1.37
// differs from other releases (a logger or context argument, the admit
// operation, cadvisor's lib/model types) and the few steps that behave
// differently (failCgroupV1, mergeDefaultEvictionSettings, reserved cpu
// rounded to millicores). See ../../README.md.
package release

import (
	"context"
	"os"

	"github.com/go-logr/logr"
	cadvisorapi "github.com/google/cadvisor/lib/model"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/klog/v2"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/topology"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/eviction"
	utilcodec "k8s.io/kubernetes/pkg/kubelet/kubeletconfig/util/codec"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	"k8s.io/utils/cpuset"

	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/kubelet-oracle/probe"
)

// Kubelet implements probe.Kubelet with k8s.io/kubernetes v1.37.
type Kubelet struct{}

var _ probe.Kubelet = Kubelet{}

func (Kubelet) Version() string { return "v1.37.2" } // keep in sync with ../go.mod

// logger receives kubelet's contextual logging: discarded, or klog's output
// when ORACLE_KLOG is set (common.SilenceKlog leaves klog alone then).
var logger = logr.Discard()

func init() {
	if os.Getenv("ORACLE_KLOG") != "" {
		logger = klog.Background()
	}
}

func ctx() context.Context { return klog.NewContext(context.Background(), logger) }

func machineInfo(m *common.Machine) *cadvisorapi.MachineInfo {
	mi := &cadvisorapi.MachineInfo{NumCores: m.NumCores, NumPhysicalCores: m.NumPhysicalCores, NumSockets: m.NumSockets, MemoryCapacity: m.MemoryCapacity}
	for _, h := range m.HugePages {
		mi.HugePages = append(mi.HugePages, cadvisorapi.HugePagesInfo{PageSize: h.PageSize, NumPages: h.NumPages})
	}
	if m.Topology != nil {
		mi.Topology = make([]cadvisorapi.Node, 0, len(m.Topology))
	}
	for _, n := range m.Topology {
		node := cadvisorapi.Node{Id: n.ID, Memory: n.Memory, Distances: n.Distances}
		for _, h := range n.HugePages {
			node.HugePages = append(node.HugePages, cadvisorapi.HugePagesInfo{PageSize: h.PageSize, NumPages: h.NumPages})
		}
		for _, c := range n.Cores {
			core := cadvisorapi.Core{Id: c.ID, Threads: c.Threads, SocketID: c.SocketID}
			if c.UncoreCache != nil { // topology.Discover reads the first uncore cache's id (CPU-19)
				core.UncoreCaches = []cadvisorapi.Cache{{Id: *c.UncoreCache, Type: "Unified", Level: 3}}
			}
			node.Cores = append(node.Cores, core)
		}
		mi.Topology = append(mi.Topology, node)
	}
	return mi
}

// ---- start-up ----

func (Kubelet) DecodeConfig(codecs *serializer.CodecFactory, data []byte) (*kubeletconfig.KubeletConfiguration, error) {
	return utilcodec.DecodeKubeletConfiguration(ctx(), codecs, data)
}

func (Kubelet) DefaultEvictionHard(kc *kubeletconfig.KubeletConfiguration) {
	if kc.EvictionHard == nil {
		kc.EvictionHard = eviction.DefaultEvictionHard
	} else if kc.MergeDefaultEvictionSettings {
		for k, v := range eviction.DefaultEvictionHard {
			if _, exists := kc.EvictionHard[k]; !exists {
				kc.EvictionHard[k] = v
			}
		}
	}
}

// ForModelledHost: the one host-dependent check in validation
// (validation_linux.go) looks at this machine's cgroup version; the modelled
// node is taken to run cgroup v2.
func (Kubelet) ForModelledHost(kc *kubeletconfig.KubeletConfiguration) { kc.FailCgroupV1 = false }

// ReservedQuantity: server.go's parseResourceList rounds cpu to millicores.
func (Kubelet) ReservedQuantity(name v1.ResourceName, q *resource.Quantity) {
	if name == v1.ResourceCPU {
		q.SetMilli((q.ScaledValue(resource.Micro) + 500) / 1000)
	}
}

// CPUManagerPolicyOptions: 1.37's server.go no longer checks them against a gate.
func (Kubelet) CPUManagerPolicyOptions(kc *kubeletconfig.KubeletConfiguration) (map[string]string, error) {
	return kc.CPUManagerPolicyOptions, nil
}

// MemoryManagerEnabled: NewContainerManager always builds the Memory Manager.
func (Kubelet) MemoryManagerEnabled() bool { return true }

// ---- constructors and Start ----

func (Kubelet) OnlineCPUs(m *common.Machine) (cpuset.CPUSet, error) {
	topo, err := topology.Discover(logger, machineInfo(m))
	if err != nil {
		return cpuset.New(), err
	}
	return topo.CPUDetails.CPUs(), nil
}

func (Kubelet) NewTopologyManager(m *common.Machine, policy, scope string, options map[string]string) (topologymanager.Manager, error) {
	return topologymanager.NewManager(logger, machineInfo(m).Topology, policy, scope, options)
}

func (Kubelet) NewCPUManager(policy string, options map[string]string, m *common.Machine, reserved cpuset.CPUSet,
	reservation v1.ResourceList, stateDir string, tm topologymanager.Manager) (cpumanager.Manager, error) {
	return cpumanager.NewManager(logger, policy, options, probe.ReconcilePeriod, machineInfo(m), reserved, reservation, stateDir, tm)
}

func (Kubelet) NewMemoryManager(policy string, m *common.Machine, reservation v1.ResourceList,
	reserved []kubeletconfig.MemoryReservation, stateDir string, tm topologymanager.Manager) (memorymanager.Manager, error) {
	return memorymanager.NewManager(logger, policy, machineInfo(m), reservation, reserved, stateDir, tm)
}

func (Kubelet) AddHintProvider(tm topologymanager.Manager, p topologymanager.HintProvider) {
	tm.AddHintProvider(logger, p)
}

func (Kubelet) StartCPUManager(cpu cpumanager.Manager, active cpumanager.ActivePodsFunc) error {
	return cpu.Start(ctx(), active, probe.SourcesReady{}, probe.PodStatusProvider{}, probe.RuntimeService{}, containermap.NewContainerMap())
}

func (Kubelet) StartMemoryManager(mem memorymanager.Manager, active memorymanager.ActivePodsFunc) error {
	return mem.Start(ctx(), active, probe.SourcesReady{}, probe.PodStatusProvider{}, probe.RuntimeService{}, containermap.NewContainerMap())
}

// ---- running managers ----

func (Kubelet) Admit(tm topologymanager.Manager, pod *v1.Pod, others []*v1.Pod) lifecycle.PodAdmitResult {
	return tm.Admit(ctx(), &lifecycle.PodAdmitAttributes{Pod: pod, OtherPods: others, Operation: lifecycle.AddOperation})
}

func (Kubelet) PreStartContainer(cpu cpumanager.Manager, mem memorymanager.Manager, tm topologymanager.Manager,
	pod *v1.Pod, c *v1.Container, id string) {
	cpu.AddContainer(logger, pod, c, id)
	if mem != nil {
		mem.AddContainer(logger, pod, c, id)
	}
	tm.AddContainer(logger, pod, c, id)
}

func (Kubelet) RemoveContainer(tm topologymanager.Manager, id string) error {
	return tm.RemoveContainer(logger, id)
}

func (Kubelet) GetAffinity(tm topologymanager.Manager, uid, name string) topologymanager.TopologyHint {
	return tm.GetAffinity(logger, uid, name)
}

func (Kubelet) TopologyHints(p topologymanager.HintProvider, pod *v1.Pod, c *v1.Container) map[string][]topologymanager.TopologyHint {
	return p.GetTopologyHints(logger, pod, c, lifecycle.AddOperation)
}

func (Kubelet) PodTopologyHints(p topologymanager.HintProvider, pod *v1.Pod) map[string][]topologymanager.TopologyHint {
	return p.GetPodTopologyHints(logger, pod, lifecycle.AddOperation)
}

func (Kubelet) Merge(tm topologymanager.Manager, providers []map[string][]topologymanager.TopologyHint) (topologymanager.TopologyHint, bool) {
	return tm.GetPolicy().Merge(logger, providers)
}
