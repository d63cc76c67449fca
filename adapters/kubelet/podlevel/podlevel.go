// Package podlevel: the pod as the API server stores it, for the releases
// whose PodSpec has pod-level resources (spec.resources, 1.32 on): the same Go
// source in each, compiled inside a release module (../README.md, Layout),
// whose go.mod pins k8s.io/kubernetes and its staging modules; so this go.mod
// requires none of them.
package podlevel

import (
	v1 "k8s.io/api/core/v1"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	corev1defaults "k8s.io/kubernetes/pkg/apis/core/v1"
)

// DefaultPod sets spec.resources to r before the v1 defaulting (which
// defaults pod-level requests when PodLevelResources is on, up to 1.36; on
// 1.37 it leaves them alone while PodLevelResourcesFixDefaulting is on), then
// runs DropDisabledPodFields (none while PodLevelResources is off) and then
// each of after (a release's later steps of PrepareForCreate, e.g. 1.37's
// DefaultPodLevelResources): the steps of pkg/registry/core/pod/strategy.go
// PrepareForCreate that touch pod-level resources, run on an internal-type
// copy of which only spec.resources is taken back.
func DefaultPod(pod *v1.Pod, r *v1.ResourceRequirements, after ...func(*api.Pod)) error {
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
	for _, step := range after {
		step(in)
	}
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
