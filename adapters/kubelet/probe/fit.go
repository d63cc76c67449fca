package probe

// The rest of kubelet's node admission around the Topology Manager: the
// container manager's start-up check of node allocatable, the node object's
// capacity and allocatable, and the predicate (resource-fit) admit handler
// kubelet registers after the Topology Manager's (../README.md, "Whole
// admission"). The handler itself is kubelet's (lifecycle, through the
// release's FitAdmit); the node object and the start-up check are glue,
// described next to each function.

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	v1helper "k8s.io/kubernetes/pkg/apis/core/v1/helper"
)

// nodeName is the modelled node's name (the pods carry no node name, so the
// predicate's node-name check passes either way).
const nodeName = "numaspec-node"

// ephemeralStorage is the node's disk: the machine model has none, and
// numaspec does not check ephemeral-storage requests (ADMIT-8), so the node
// object gets a disk no pod of the model can fill.
var ephemeralStorage = *resource.NewQuantity(1<<62, resource.BinarySI)

// validateNodeAllocatable is the container manager's start-up check (glue
// for containerManagerImpl.validateNodeAllocatable, an unexported method of
// a struct the probe cannot build): every resource of the reservation whose
// capacity is smaller gives one sentence, in the release's words
// (Kubelet.AllocatableError, which formats the quantities as kubelet does).
// Kubelet walks the reservation map in Go's random order; the glue takes
// the names in order, so a text with several resources is reproducible.
func validateNodeAllocatable(k Kubelet, capacity, reservation v1.ResourceList) error {
	names := make([]string, 0, len(reservation))
	for name := range reservation {
		names = append(names, string(name))
	}
	sort.Strings(names)
	var sentences []string
	for _, n := range names {
		name := v1.ResourceName(n)
		left := capacity[name].DeepCopy()
		left.Sub(reservation[name])
		if left.Sign() < 0 {
			sentences = append(sentences, k.AllocatableError(name, reservation[name], capacity[name]))
		}
	}
	if len(sentences) > 0 {
		return fmt.Errorf("invalid Node Allocatable configuration. %s", strings.Join(sentences, " "))
	}
	return nil
}

// nodeObject is the node kubelet's status setters publish and its
// predicate handler reads (glue for nodestatus.MachineInfo, which needs
// cAdvisor's package): capacity is cAdvisor's plus pods = maxPods and the
// disk above; allocatable is capacity minus the reservation, never below
// zero, and memory also minus every hugepage size's capacity.
func nodeObject(capacity, reservation v1.ResourceList, maxPods int) *v1.Node {
	c := v1.ResourceList{}
	for name, q := range capacity {
		c[name] = q.DeepCopy()
	}
	c[v1.ResourcePods] = *resource.NewQuantity(int64(maxPods), resource.DecimalSI)
	c[v1.ResourceEphemeralStorage] = ephemeralStorage.DeepCopy()
	a := v1.ResourceList{}
	for name, q := range c {
		left := q.DeepCopy()
		if r, ok := reservation[name]; ok {
			left.Sub(r)
		}
		if left.Sign() < 0 {
			left.Set(0)
		}
		a[name] = left
	}
	for name, q := range c {
		if v1helper.IsHugePageResourceName(name) {
			memory := a[v1.ResourceMemory]
			memory.Sub(q)
			if memory.Sign() < 0 {
				memory.Set(0)
			}
			a[v1.ResourceMemory] = memory
		}
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: map[string]string{v1.LabelOSStable: "linux", v1.LabelHostname: nodeName}},
		Status:     v1.NodeStatus{Capacity: c, Allocatable: a},
	}
}
