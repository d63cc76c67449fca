package main

// The v0.33 shim: k8s.io/dynamic-resource-allocation v0.33.5 allocates
// resource.k8s.io/v1beta1 objects, and its k8s.io/api (v0.33.5) has no
// resource.k8s.io/v1 at all. A case's objects are v1 JSON, so they are read
// into the mirror types below: v1's shape, built from v1beta1's own field
// types wherever v1 kept them, then moved into v1beta1 objects. A v1 field
// v1beta1 cannot carry is an unknown field of the mirror (the case is
// skipped naming it), since the strict decoding knows only the fields here.
//
//	v1 Device{name, attributes, capacity, consumesCounters, nodeName,
//	  nodeSelector, allNodes, taints}     -> Device{name, basic: BasicDevice{...}}
//	v1 DeviceRequest{name, exactly: {deviceClassName, selectors,
//	  allocationMode, count, adminAccess, tolerations}, firstAvailable}
//	                                      -> DeviceRequest{name, deviceClassName, ...,
//	                                         firstAvailable} (flat)
//	DeviceSubRequest, DeviceConstraint, DeviceClaimConfiguration,
//	DeviceClass, ResourceClaimStatus      -> the same JSON shape in both

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	resourceapi "k8s.io/api/resource/v1beta1"
)

// v1Slice is a resource.k8s.io/v1 ResourceSlice.
type v1Slice struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              v1SliceSpec `json:"spec"`
}

// v1SliceSpec: v1beta1's spec fields (driver, pool, nodeName, nodeSelector,
// allNodes, perDeviceNodeSelection, sharedCounters) but v1's devices; the
// outer Devices hides the embedded one.
type v1SliceSpec struct {
	resourceapi.ResourceSliceSpec
	Devices []v1Device `json:"devices"`
}

// v1Device: v1 flattened v1beta1's basic device into the device.
type v1Device struct {
	Name string `json:"name"`
	resourceapi.BasicDevice
}

// v1Claim is a resource.k8s.io/v1 ResourceClaim.
type v1Claim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              v1ClaimSpec                     `json:"spec"`
	Status            resourceapi.ResourceClaimStatus `json:"status,omitempty"`
}

type v1ClaimSpec struct {
	Devices v1DeviceClaim `json:"devices"`
}

// v1DeviceClaim: v1beta1's constraints and config, v1's requests.
type v1DeviceClaim struct {
	resourceapi.DeviceClaim
	Requests []v1Request `json:"requests"`
}

// v1Request: v1 moved the single-kind request fields under "exactly".
type v1Request struct {
	Name           string                         `json:"name"`
	Exactly        *v1ExactRequest                `json:"exactly,omitempty"`
	FirstAvailable []resourceapi.DeviceSubRequest `json:"firstAvailable,omitempty"`
}

type v1ExactRequest struct {
	DeviceClassName string                           `json:"deviceClassName"`
	Selectors       []resourceapi.DeviceSelector     `json:"selectors,omitempty"`
	AllocationMode  resourceapi.DeviceAllocationMode `json:"allocationMode,omitempty"`
	Count           int64                            `json:"count,omitempty"`
	AdminAccess     *bool                            `json:"adminAccess,omitempty"`
	Tolerations     []resourceapi.DeviceToleration   `json:"tolerations,omitempty"`
}

func (s *v1Slice) toV1beta1() *resourceapi.ResourceSlice {
	out := &resourceapi.ResourceSlice{ObjectMeta: s.ObjectMeta, Spec: s.Spec.ResourceSliceSpec}
	out.Spec.Devices = make([]resourceapi.Device, len(s.Spec.Devices))
	for i := range s.Spec.Devices {
		d := &s.Spec.Devices[i]
		basic := d.BasicDevice
		out.Spec.Devices[i] = resourceapi.Device{Name: d.Name, Basic: &basic}
	}
	return out
}

// toV1beta1 converts the claim, with the API server's defaulting applied
// (as v1's: allocationMode ExactCount, count 1, toleration operator Equal;
// v1beta1's defaulting of 1.33 is the same for a request with a class).
func (c *v1Claim) toV1beta1() *resourceapi.ResourceClaim {
	out := &resourceapi.ResourceClaim{ObjectMeta: c.ObjectMeta, Status: c.Status}
	out.Spec.Devices = c.Spec.Devices.DeviceClaim
	out.Spec.Devices.Requests = make([]resourceapi.DeviceRequest, len(c.Spec.Devices.Requests))
	for i, r := range c.Spec.Devices.Requests {
		req := resourceapi.DeviceRequest{Name: r.Name}
		if e := r.Exactly; e != nil {
			req.DeviceClassName = e.DeviceClassName
			req.Selectors = e.Selectors
			req.AllocationMode, req.Count = defaultMode(e.AllocationMode, e.Count)
			req.AdminAccess = e.AdminAccess
			req.Tolerations = defaultTolerations(e.Tolerations)
		}
		for _, s := range r.FirstAvailable {
			s.AllocationMode, s.Count = defaultMode(s.AllocationMode, s.Count)
			s.Tolerations = defaultTolerations(s.Tolerations)
			req.FirstAvailable = append(req.FirstAvailable, s)
		}
		out.Spec.Devices.Requests[i] = req
	}
	if a := out.Status.Allocation; a != nil {
		for i := range a.Devices.Results {
			a.Devices.Results[i].Tolerations = defaultTolerations(a.Devices.Results[i].Tolerations)
		}
	}
	return out
}

func defaultMode(mode resourceapi.DeviceAllocationMode, count int64) (resourceapi.DeviceAllocationMode, int64) {
	if mode == "" {
		mode = resourceapi.DeviceAllocationModeExactCount
	}
	if mode == resourceapi.DeviceAllocationModeExactCount && count == 0 {
		count = 1
	}
	return mode, count
}

func defaultTolerations(ts []resourceapi.DeviceToleration) []resourceapi.DeviceToleration {
	for i := range ts {
		if ts[i].Operator == "" {
			ts[i].Operator = resourceapi.DeviceTolerationOpEqual
		}
	}
	return ts
}
