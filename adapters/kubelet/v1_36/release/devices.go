package release

// The Device Manager calls of kubelet 1.36 (probe.DeviceKubelet):
// a logger or context argument on the constructor, Start, Stop and the plugin callbacks.

import (
	_ "unsafe" // go:linkname

	cadvisorapi "github.com/google/cadvisor/info/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	"k8s.io/kubernetes/pkg/kubelet/cm/devicemanager"
	plugin "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/plugin/v1beta1"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"

	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/kubelet-oracle/probe"
)

var _ probe.DeviceKubelet = Kubelet{}

// newManagerImpl is devicemanager's unexported constructor that takes the
// registration socket's path (NewManagerImpl fixes it under /var/lib/kubelet).
//
//go:linkname newManagerImpl k8s.io/kubernetes/pkg/kubelet/cm/devicemanager.newManagerImpl
func newManagerImpl(logger klog.Logger, socketPath string, topology []cadvisorapi.Node, store topologymanager.Store) (*devicemanager.ManagerImpl, error)

func (Kubelet) NewDeviceManager(m *common.Machine, socketPath string, tm topologymanager.Manager) (*devicemanager.ManagerImpl, error) {
	return newManagerImpl(logger, socketPath, machineInfo(m).Topology, tm)
}

func (Kubelet) StartDeviceManager(dm *devicemanager.ManagerImpl, active devicemanager.ActivePodsFunc) error {
	return dm.Start(logger, active, probe.SourcesReady{}, containermap.NewContainerMap(), sets.New[string]())
}

func (Kubelet) StopDeviceManager(dm *devicemanager.ManagerImpl) error { return dm.Stop(logger) }

func (Kubelet) PluginConnected(dm *devicemanager.ManagerImpl, resource string, p plugin.DevicePlugin) error {
	return dm.PluginConnected(ctx(), resource, p)
}

func (Kubelet) PluginListAndWatchReceiver(dm *devicemanager.ManagerImpl, resource string, resp *pluginapi.ListAndWatchResponse) {
	dm.PluginListAndWatchReceiver(logger, resource, resp)
}

func (Kubelet) UpdateAllocatedDevices(dm *devicemanager.ManagerImpl) { dm.UpdateAllocatedDevices() }

func (Kubelet) HealthyDevices(dm *devicemanager.ManagerImpl) map[string][]string {
	return probe.DeviceIDs(dm.GetAllocatableDevices())
}

// DeviceCapacity is dm.GetCapacity: the plugins' resources as the node's
// status publishes them (capacity and allocatable).
func (Kubelet) DeviceCapacity(dm *devicemanager.ManagerImpl) (v1.ResourceList, v1.ResourceList) {
	capacity, allocatable, _ := dm.GetCapacity()
	return capacity, allocatable
}
