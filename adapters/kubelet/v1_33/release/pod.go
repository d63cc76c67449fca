package release

// The pod as kubelet 1.33's API server stores it (../../probe, buildPod).

import (
	v1 "k8s.io/api/core/v1"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	corev1defaults "k8s.io/kubernetes/pkg/apis/core/v1"
)

// DefaultPod: spec.resources is set before the v1 defaulting (which defaults
// pod-level requests when PodLevelResources is on), then
// DropDisabledPodFields (none while PodLevelResources is off): the one step
// of pkg/registry/core/pod/strategy.go PrepareForCreate that touches
// pod-level resources, run on an internal-type copy of which only
// spec.resources is taken back.
func (Kubelet) DefaultPod(pod *v1.Pod, r *v1.ResourceRequirements) error {
	pod.Spec.Resources = r
	corev1defaults.SetObjectDefaults_Pod(pod)
	if pod.Spec.Resources == nil {
		return nil
	}
	in, err := toInternal(pod)
	if err != nil {
		return err
	}
	podutil.DropDisabledPodFields(in, nil)
	if in.Spec.Resources == nil {
		pod.Spec.Resources = nil
		return nil
	}
	var out v1.ResourceRequirements
	if err := corev1defaults.Convert_core_ResourceRequirements_To_v1_ResourceRequirements(in.Spec.Resources, &out, nil); err != nil {
		return err
	}
	pod.Spec.Resources = &out
	return nil
}

// toInternal converts a deep copy of pod (the generated conversions share
// maps and slices) to the API server's internal type.
func toInternal(pod *v1.Pod) (*api.Pod, error) {
	in := &api.Pod{}
	if err := corev1defaults.Convert_v1_Pod_To_core_Pod(pod.DeepCopy(), in, nil); err != nil {
		return nil, err
	}
	return in, nil
}
