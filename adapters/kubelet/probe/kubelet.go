// Package probe is the release-independent part of the kubelet adapters for
// releases 1.29 and later: the node probe (node.go: kubelet's Topology, CPU
// and Memory Managers driven through pod admissions; devices.go: its Device
// Manager with in-process device plugins), the merge evaluators
// (merge.go), the adapter and the one main of every release's binary
// (main.go). It is compiled once against each release's k8s.io/kubernetes:
// every call in it has the same Go source in all of them. What differs between
// releases (a logger or context argument, a changed constructor, cadvisor's
// types, a validation quirk) goes through Kubelet, which each release module
// implements in v1_XX/release/kubelet.go. See ../README.md.
package probe

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	schedulerframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/cpuset"

	"numaspec.invalid/kubelet-oracle/common"
)

// Kubelet is everything that differs between the kubelet releases this
// package is compiled against. Each method is one kubelet call (or one
// server.go / validation step) whose Go signature or behaviour changed; the
// shim of a release implements it with that release's code and nothing else.
// Keep a method to what differs: logic shared by all releases belongs in this
// package.
type Kubelet interface {
	// DeviceKubelet drives the Device Manager (devices.go; the shims'
	// devices.go).
	DeviceKubelet

	// Version is the pinned k8s.io/kubernetes version, e.g. "v1.37.1"
	// (keep it in sync with the release module's go.mod).
	Version() string

	// ---- start-up: config file, validation, cmd/kubelet/app/server.go ----

	// DecodeConfig is utilcodec.DecodeKubeletConfiguration (strict decoding,
	// v1beta1 defaulting). A panic in defaulting is recovered by the caller.
	DecodeConfig(codecs *serializer.CodecFactory, data []byte) (*kubeletconfig.KubeletConfiguration, error)
	// DefaultEvictionHard is server.go loadConfigFile's evictionHard
	// defaulting (eviction.DefaultEvictionHard when absent; 1.37 also merges
	// the defaults in under mergeDefaultEvictionSettings).
	DefaultEvictionHard(kc *kubeletconfig.KubeletConfiguration)
	// ForModelledHost sets the config fields validation compares with the
	// host it runs on to the modelled node's (1.37: failCgroupV1 false, the
	// node runs cgroup v2). Called before ValidateKubeletConfiguration.
	ForModelledHost(kc *kubeletconfig.KubeletConfiguration)
	// ReservedQuantity adjusts one parsed kubeReserved / systemReserved
	// quantity as server.go's parseResourceList does (1.37 rounds cpu to
	// millicores; 1.30 keeps it).
	ReservedQuantity(name v1.ResourceName, q *resource.Quantity)
	// CPUManagerPolicyOptions is server.go's check of cpuManagerPolicyOptions
	// against the feature gates: the options NewContainerManager gets, or
	// server.go's error.
	CPUManagerPolicyOptions(kc *kubeletconfig.KubeletConfiguration) (map[string]string, error)
	// MemoryManagerEnabled says whether NewContainerManager builds the Memory
	// Manager with the current feature gates (1.30: the MemoryManager gate;
	// 1.37: always).
	MemoryManagerEnabled() bool

	// ---- cadvisor's MachineInfo, the managers' constructors and Start ----

	// OnlineCPUs is topology.Discover(MachineInfo of m).CPUDetails.CPUs().
	OnlineCPUs(m *common.Machine) (cpuset.CPUSet, error)
	// NewTopologyManager is topologymanager.NewManager with m's NUMA nodes
	// (MachineInfo.Topology).
	NewTopologyManager(m *common.Machine, policy, scope string, options map[string]string) (topologymanager.Manager, error)
	// NewCPUManager is cpumanager.NewManager with ReconcilePeriod.
	NewCPUManager(policy string, options map[string]string, m *common.Machine, reserved cpuset.CPUSet,
		reservation v1.ResourceList, stateDir string, tm topologymanager.Manager) (cpumanager.Manager, error)
	// NewMemoryManager is memorymanager.NewManager.
	NewMemoryManager(policy string, m *common.Machine, reservation v1.ResourceList,
		reserved []kubeletconfig.MemoryReservation, stateDir string, tm topologymanager.Manager) (memorymanager.Manager, error)
	// AddHintProvider is tm.AddHintProvider.
	AddHintProvider(tm topologymanager.Manager, p topologymanager.HintProvider)
	// StartCPUManager is cpu.Start with the fakes of this package
	// (SourcesReady, PodStatusProvider, RuntimeService) and an empty
	// container map.
	StartCPUManager(cpu cpumanager.Manager, active cpumanager.ActivePodsFunc) error
	// StartMemoryManager is mem.Start, likewise.
	StartMemoryManager(mem memorymanager.Manager, active memorymanager.ActivePodsFunc) error

	// AllocatableError is one resource's sentence of the container manager's
	// validateNodeAllocatable error, with the quantities formatted as that
	// release formats them (1.29: the reservation and the capacity left;
	// later: the reservation and the capacity).
	AllocatableError(name v1.ResourceName, reservation, capacity resource.Quantity) string

	// ---- the pod as the API server stores it ----

	// DefaultPod makes pod what the API server stores when it is created
	// with the pod-level resources r (spec.resources, KEP-2837; nil when
	// the request has none): the v1 defaulting (SetObjectDefaults_Pod),
	// then what the pod strategy's PrepareForCreate does to pod-level
	// resources. 1.29 and 1.30, whose PodSpec has no such field, ignore r
	// (their API server drops an unknown field). 1.32 on set
	// pod.Spec.Resources before defaulting, then run DropDisabledPodFields
	// (no pod-level resources while PodLevelResources is off) and, 1.37,
	// DefaultPodLevelResources; only spec.resources is taken back from
	// that internal-type pass.
	DefaultPod(pod *v1.Pod, r *v1.ResourceRequirements) error

	// ---- calls on the running managers ----

	// Admit is the Topology Manager's admit handler for a pod being added.
	Admit(tm topologymanager.Manager, pod *v1.Pod, others []*v1.Pod) lifecycle.PodAdmitResult
	// FitAdmit is the predicate admit handler kubelet registers after the
	// Topology Manager's (lifecycle.NewPredicateAdmitHandler with node as
	// the node, the admission-failure stub, and update as the plugin
	// resources' update) for a pod being added next to others.
	FitAdmit(node *v1.Node, update func(*schedulerframework.NodeInfo, *lifecycle.PodAdmitAttributes) error,
		pod *v1.Pod, others []*v1.Pod) lifecycle.PodAdmitResult
	// PreStartContainer is what kubelet's internal container lifecycle does
	// before a container starts: AddContainer on the CPU Manager, the Memory
	// Manager (when there is one: mem may be nil) and the Topology Manager,
	// in that order.
	PreStartContainer(cpu cpumanager.Manager, mem memorymanager.Manager, tm topologymanager.Manager,
		pod *v1.Pod, c *v1.Container, id string)
	// RemoveContainer is tm.RemoveContainer.
	RemoveContainer(tm topologymanager.Manager, id string) error
	// GetAffinity is tm.GetAffinity.
	GetAffinity(tm topologymanager.Manager, uid, name string) topologymanager.TopologyHint
	// TopologyHints is p.GetTopologyHints for a pod being added.
	TopologyHints(p topologymanager.HintProvider, pod *v1.Pod, c *v1.Container) map[string][]topologymanager.TopologyHint
	// PodTopologyHints is p.GetPodTopologyHints for a pod being added.
	PodTopologyHints(p topologymanager.HintProvider, pod *v1.Pod) map[string][]topologymanager.TopologyHint
	// Merge is tm.GetPolicy().Merge.
	Merge(tm topologymanager.Manager, providers []map[string][]topologymanager.TopologyHint) (topologymanager.TopologyHint, bool)

	// ---- hint scores (TopologyHint.Score, 1.38 on; HINT-5) ----

	// HintScores says whether the release's TopologyHint has a Score: a
	// merge request's hint may then carry one, and merge answers and the
	// hints operation report it.
	HintScores() bool
	// WithScore is h with its Score set to score (only called when
	// HintScores).
	WithScore(h topologymanager.TopologyHint, score int64) topologymanager.TopologyHint
	// Score is h's Score (0 before 1.38, whose hints have none).
	Score(h topologymanager.TopologyHint) int64
}
