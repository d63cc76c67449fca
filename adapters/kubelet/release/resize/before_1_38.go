//go:build !kubelet1.38

package resize

// 1.34-1.37: resizes behind the InPlacePodVerticalScaling gate.

import (
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/features"
)

// ResizeEnabled: kubelet's calls into the resize path sit behind the
// InPlacePodVerticalScaling gate (HandlePodUpdates).
func (Kubelet) ResizeEnabled() bool {
	return utilfeature.DefaultFeatureGate.Enabled(features.InPlacePodVerticalScaling)
}
