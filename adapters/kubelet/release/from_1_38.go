//go:build kubelet1.38

package release

// 1.38 on: topology hints carry a utilization score (TopologyHint.Score,
// 0..100, 0 "no signal"), which the hint providers set and the policies'
// merge averages over the scored hints of a combination.

import "k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"

// HintScores: TopologyHint has a Score from 1.38.
func (Kubelet) HintScores() bool { return true }

func (Kubelet) WithScore(h topologymanager.TopologyHint, score int64) topologymanager.TopologyHint {
	h.Score = score
	return h
}

func (Kubelet) Score(h topologymanager.TopologyHint) int64 { return h.Score }
