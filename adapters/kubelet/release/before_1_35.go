//go:build !kubelet1.35

package release

// 1.29-1.34: the CPU Manager, the Device Manager, the Topology Manager's hint
// providers and Merge take no logger, and the resource fit reads the node
// through a function without arguments.

import (
	_ "unsafe" // go:linkname

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/topology"
	"k8s.io/kubernetes/pkg/kubelet/cm/devicemanager"
	plugin "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/plugin/v1beta1"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/utils/cpuset"

	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/kubelet-oracle/machineinfo"
	"numaspec.invalid/kubelet-oracle/probe"
)

func (Kubelet) OnlineCPUs(m *common.Machine) (cpuset.CPUSet, error) {
	topo, err := topology.Discover(machineinfo.Info(m))
	if err != nil {
		return cpuset.New(), err
	}
	return topo.CPUDetails.CPUs(), nil
}

func (Kubelet) NewCPUManager(policy string, options map[string]string, m *common.Machine, reserved cpuset.CPUSet,
	reservation v1.ResourceList, stateDir string, tm topologymanager.Manager) (cpumanager.Manager, error) {
	return cpumanager.NewManager(policy, options, probe.ReconcilePeriod, machineinfo.Info(m), reserved, reservation, stateDir, tm)
}

func (Kubelet) AddHintProvider(tm topologymanager.Manager, p topologymanager.HintProvider) {
	tm.AddHintProvider(p)
}

func (Kubelet) StartCPUManager(cpu cpumanager.Manager, active cpumanager.ActivePodsFunc) error {
	return cpu.Start(active, probe.SourcesReady{}, probe.PodStatusProvider{}, probe.RuntimeService{}, containermap.NewContainerMap())
}

func addCPUContainer(cpu cpumanager.Manager, pod *v1.Pod, c *v1.Container, id string) {
	cpu.AddContainer(pod, c, id)
}

func (Kubelet) Merge(tm topologymanager.Manager, providers []map[string][]topologymanager.TopologyHint) (topologymanager.TopologyHint, bool) {
	return tm.GetPolicy().Merge(providers)
}

// NodeGetter is the resource fit's node getter: a function without arguments.
func NodeGetter(node *v1.Node) func() (*v1.Node, error) {
	return func() (*v1.Node, error) { return node, nil }
}

// newManagerImpl is devicemanager's unexported constructor that takes the
// registration socket's path (NewManagerImpl fixes it under /var/lib/kubelet).
//
//go:linkname newManagerImpl k8s.io/kubernetes/pkg/kubelet/cm/devicemanager.newManagerImpl
func newManagerImpl(socketPath string, topology []machineinfo.Node, store topologymanager.Store) (*devicemanager.ManagerImpl, error)

func (Kubelet) NewDeviceManager(m *common.Machine, socketPath string, tm topologymanager.Manager) (*devicemanager.ManagerImpl, error) {
	return newManagerImpl(socketPath, machineinfo.Info(m).Topology, tm)
}

func (Kubelet) StartDeviceManager(dm *devicemanager.ManagerImpl, active devicemanager.ActivePodsFunc) error {
	return dm.Start(active, probe.SourcesReady{}, containermap.NewContainerMap(), sets.New[string]())
}

func (Kubelet) StopDeviceManager(dm *devicemanager.ManagerImpl) error { return dm.Stop() }

func (Kubelet) PluginConnected(dm *devicemanager.ManagerImpl, resource string, p plugin.DevicePlugin) error {
	return dm.PluginConnected(resource, p)
}

func (Kubelet) PluginListAndWatchReceiver(dm *devicemanager.ManagerImpl, resource string, resp *pluginapi.ListAndWatchResponse) {
	dm.PluginListAndWatchReceiver(resource, resp)
}
