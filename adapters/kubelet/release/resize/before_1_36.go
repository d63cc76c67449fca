//go:build !kubelet1.36

package resize

import v1 "k8s.io/api/core/v1"

// AdmitResize: before 1.36 the API server has no PodResizeValidator; nothing
// refuses a resize on its way to kubelet for the node's size.
func (Kubelet) AdmitResize(old, desired *v1.Pod, node *v1.Node) (string, error) {
	return "", nil
}
