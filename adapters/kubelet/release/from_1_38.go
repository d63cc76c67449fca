//go:build kubelet1.38

package release

// 1.38 on: topology hints carry a utilization score (TopologyHint.Score,
// 0..100, 0 "no signal"), which the hint providers set and the policies'
// merge averages over the scored hints of a combination.

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
)

// ReservedQuantity: 1.38's parseResourceList rounds a reserved cpu quantity to
// the nearest millicore while its micro-value fits an int64, and keeps it as
// parsed past that (NODE-3).
func (Kubelet) ReservedQuantity(name v1.ResourceName, q *resource.Quantity) {
	if name != v1.ResourceCPU {
		return
	}
	if micro, ok := q.AsScaledInt64(resource.Micro); ok {
		milli := micro / 1000
		if micro%1000 >= 500 {
			milli++
		}
		q.SetMilli(milli)
	}
}

// HintScores: TopologyHint has a Score from 1.38.
func (Kubelet) HintScores() bool { return true }

func (Kubelet) WithScore(h topologymanager.TopologyHint, score int64) topologymanager.TopologyHint {
	h.Score = score
	return h
}

func (Kubelet) Score(h topologymanager.TopologyHint) int64 { return h.Score }
