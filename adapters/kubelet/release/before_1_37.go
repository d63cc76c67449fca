//go:build !kubelet1.37

package release

// 1.29-1.36: the Topology Manager's calls, the Device Manager's allocation
// and capacity calls and admission take no logger or context, reserved cpu is
// not rounded, and pod-level resources have no defaulting after
// DropDisabledPodFields.

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/kubelet/cm/devicemanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/kubelet-oracle/machineinfo"
	"numaspec.invalid/kubelet-oracle/probe"
)

// ReservedQuantity: parseResourceList keeps the quantity as parsed
// (millicore rounding came in 1.37).
func (Kubelet) ReservedQuantity(v1.ResourceName, *resource.Quantity) {}

// podLevelSteps: nothing of PrepareForCreate after DropDisabledPodFields
// touches pod-level resources (1.32-1.36).
var podLevelSteps []func(*api.Pod)

func (Kubelet) NewTopologyManager(m *common.Machine, policy, scope string, options map[string]string) (topologymanager.Manager, error) {
	return topologymanager.NewManager(machineinfo.Info(m).Topology, policy, scope, options)
}

func (Kubelet) Admit(tm topologymanager.Manager, pod *v1.Pod, others []*v1.Pod) lifecycle.PodAdmitResult {
	return tm.Admit(&lifecycle.PodAdmitAttributes{Pod: pod, OtherPods: others})
}

func admitAdded(h lifecycle.PodAdmitHandler, pod *v1.Pod, others []*v1.Pod) lifecycle.PodAdmitResult {
	return h.Admit(fitAttributes(pod, others))
}

func addTopologyContainer(tm topologymanager.Manager, pod *v1.Pod, c *v1.Container, id string) {
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
