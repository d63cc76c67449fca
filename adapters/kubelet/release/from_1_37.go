//go:build kubelet1.37

package release

// 1.37 on: the Topology Manager's calls, the Device Manager's allocation and
// capacity calls and admission take a logger or context, admission and hints
// name the operation, reserved cpu is rounded to millicores, and
// PrepareForCreate defaults pod-level resources after DropDisabledPodFields.

import (
	"context"

	v1 "k8s.io/api/core/v1"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/kubelet/cm/devicemanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/kubelet-oracle/machineinfo"
	"numaspec.invalid/kubelet-oracle/probe"
)

// podLevelSteps: 1.37's v1 defaulting leaves pod-level resources alone while
// PodLevelResourcesFixDefaulting is on (its default), and PrepareForCreate
// defaults them with DefaultPodLevelResources instead, after
// DropDisabledPodFields.
var podLevelSteps = []func(*api.Pod){podutil.DefaultPodLevelResources}

func (Kubelet) NewTopologyManager(m *common.Machine, policy, scope string, options map[string]string) (topologymanager.Manager, error) {
	return topologymanager.NewManager(Logger, machineinfo.Info(m).Topology, policy, scope, options)
}

func (Kubelet) Admit(tm topologymanager.Manager, pod *v1.Pod, others []*v1.Pod) lifecycle.PodAdmitResult {
	return tm.Admit(Context(), &lifecycle.PodAdmitAttributes{Pod: pod, OtherPods: others, Operation: lifecycle.AddOperation})
}

func admitAdded(h lifecycle.PodAdmitHandler, pod *v1.Pod, others []*v1.Pod) lifecycle.PodAdmitResult {
	return h.Admit(context.Background(), fitAttributes(pod, others))
}

func addTopologyContainer(tm topologymanager.Manager, pod *v1.Pod, c *v1.Container, id string) {
	tm.AddContainer(Logger, pod, c, id)
}

func (Kubelet) RemoveContainer(tm topologymanager.Manager, id string) error {
	return tm.RemoveContainer(Logger, id)
}

func (Kubelet) GetAffinity(tm topologymanager.Manager, uid, name string) topologymanager.TopologyHint {
	return tm.GetAffinity(Logger, uid, name)
}

func (Kubelet) TopologyHints(p topologymanager.HintProvider, pod *v1.Pod, c *v1.Container) map[string][]topologymanager.TopologyHint {
	return p.GetTopologyHints(Logger, pod, c, lifecycle.AddOperation)
}

func (Kubelet) PodTopologyHints(p topologymanager.HintProvider, pod *v1.Pod) map[string][]topologymanager.TopologyHint {
	return p.GetPodTopologyHints(Logger, pod, lifecycle.AddOperation)
}

func (Kubelet) UpdateAllocatedDevices(dm *devicemanager.ManagerImpl) {
	dm.UpdateAllocatedDevices(Logger)
}

func (Kubelet) HealthyDevices(dm *devicemanager.ManagerImpl) map[string][]string {
	return probe.DeviceIDs(dm.GetAllocatableDevices(Logger))
}

// DeviceCapacity is dm.GetCapacity: the plugins' resources as the node's
// status publishes them (capacity and allocatable).
func (Kubelet) DeviceCapacity(dm *devicemanager.ManagerImpl) (v1.ResourceList, v1.ResourceList) {
	capacity, allocatable, _ := dm.GetCapacity(Logger)
	return capacity, allocatable
}
