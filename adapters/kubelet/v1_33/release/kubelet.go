// Package release is the kubelet 1.33 shim of the probe package
// (../../probe): as 1.32, no CPUManagerPolicyOptions gate check, mergeDefaultEvictionSettings. Derived from the 1.30 shim; see ../../README.md.
package release

import (
	cadvisorapi "github.com/google/cadvisor/info/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/serializer"
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

// Kubelet implements probe.Kubelet with k8s.io/kubernetes v1.33.
type Kubelet struct{}

var _ probe.Kubelet = Kubelet{}

func (Kubelet) Version() string { return "v1.33.13" } // keep in sync with ../go.mod

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
	return utilcodec.DecodeKubeletConfiguration(codecs, data)
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
// (validation_linux.go, from 1.31) looks at this machine's cgroup version;
// the modelled node is taken to run cgroup v2.
func (Kubelet) ForModelledHost(kc *kubeletconfig.KubeletConfiguration) { kc.FailCgroupV1 = false }

// ReservedQuantity: 1.30's parseResourceList keeps the quantity as parsed.
func (Kubelet) ReservedQuantity(v1.ResourceName, *resource.Quantity) {}

// CPUManagerPolicyOptions: from 1.33 server.go no longer checks them against a gate.
func (Kubelet) CPUManagerPolicyOptions(kc *kubeletconfig.KubeletConfiguration) (map[string]string, error) {
	return kc.CPUManagerPolicyOptions, nil
}

// MemoryManagerEnabled: from 1.32 NewContainerManager always builds the
// Memory Manager (the MemoryManager gate check is gone).
func (Kubelet) MemoryManagerEnabled() bool { return true }

// ---- constructors and Start ----

func (Kubelet) OnlineCPUs(m *common.Machine) (cpuset.CPUSet, error) {
	topo, err := topology.Discover(machineInfo(m))
	if err != nil {
		return cpuset.New(), err
	}
	return topo.CPUDetails.CPUs(), nil
}

func (Kubelet) NewTopologyManager(m *common.Machine, policy, scope string, options map[string]string) (topologymanager.Manager, error) {
	return topologymanager.NewManager(machineInfo(m).Topology, policy, scope, options)
}

func (Kubelet) NewCPUManager(policy string, options map[string]string, m *common.Machine, reserved cpuset.CPUSet,
	reservation v1.ResourceList, stateDir string, tm topologymanager.Manager) (cpumanager.Manager, error) {
	return cpumanager.NewManager(policy, options, probe.ReconcilePeriod, machineInfo(m), reserved, reservation, stateDir, tm)
}

func (Kubelet) NewMemoryManager(policy string, m *common.Machine, reservation v1.ResourceList,
	reserved []kubeletconfig.MemoryReservation, stateDir string, tm topologymanager.Manager) (memorymanager.Manager, error) {
	return memorymanager.NewManager(policy, machineInfo(m), reservation, reserved, stateDir, tm)
}

func (Kubelet) AddHintProvider(tm topologymanager.Manager, p topologymanager.HintProvider) {
	tm.AddHintProvider(p)
}

func (Kubelet) StartCPUManager(cpu cpumanager.Manager, active cpumanager.ActivePodsFunc) error {
	return cpu.Start(active, probe.SourcesReady{}, probe.PodStatusProvider{}, probe.RuntimeService{}, containermap.NewContainerMap())
}

func (Kubelet) StartMemoryManager(mem memorymanager.Manager, active memorymanager.ActivePodsFunc) error {
	return mem.Start(active, probe.SourcesReady{}, probe.PodStatusProvider{}, probe.RuntimeService{}, containermap.NewContainerMap())
}

// ---- running managers ----

func (Kubelet) Admit(tm topologymanager.Manager, pod *v1.Pod, others []*v1.Pod) lifecycle.PodAdmitResult {
	return tm.Admit(&lifecycle.PodAdmitAttributes{Pod: pod, OtherPods: others})
}

func (Kubelet) PreStartContainer(cpu cpumanager.Manager, mem memorymanager.Manager, tm topologymanager.Manager,
	pod *v1.Pod, c *v1.Container, id string) {
	cpu.AddContainer(pod, c, id)
	if mem != nil {
		mem.AddContainer(pod, c, id)
	}
	tm.AddContainer(pod, c, id)
}

func (Kubelet) RemoveContainer(tm topologymanager.Manager, id string) error {
	return tm.RemoveContainer(id)
}

func (Kubelet) GetAffinity(tm topologymanager.Manager, uid, name string) topologymanager.TopologyHint {
	return tm.GetAffinity(uid, name)
}

func (Kubelet) TopologyHints(p topologymanager.HintProvider, pod *v1.Pod, c *v1.Container) map[string][]topologymanager.TopologyHint {
	return p.GetTopologyHints(pod, c)
}

func (Kubelet) PodTopologyHints(p topologymanager.HintProvider, pod *v1.Pod) map[string][]topologymanager.TopologyHint {
	return p.GetPodTopologyHints(pod)
}

func (Kubelet) Merge(tm topologymanager.Manager, providers []map[string][]topologymanager.TopologyHint) (topologymanager.TopologyHint, bool) {
	return tm.GetPolicy().Merge(providers)
}
