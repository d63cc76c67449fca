//go:build !kubelet1.38

package release

// 1.29-1.37: topology hints have no score.

import "k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"

// HintScores: TopologyHint has no Score before 1.38.
func (Kubelet) HintScores() bool { return false }

// WithScore: never called before 1.38 (HintScores is false), h unchanged.
func (Kubelet) WithScore(h topologymanager.TopologyHint, _ int64) topologymanager.TopologyHint {
	return h
}

// Score: a hint before 1.38 has none.
func (Kubelet) Score(topologymanager.TopologyHint) int64 { return 0 }
