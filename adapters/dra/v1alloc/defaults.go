package v1alloc

import resourceapi "k8s.io/api/resource/v1"

// applyClaimDefaults does to a decoded claim what the API server's defaulting
// of resource.k8s.io/v1 does before the scheduler ever sees it: a request
// (exactly or a firstAvailable entry) without allocationMode gets ExactCount,
// an ExactCount one without count gets 1, and a toleration without operator
// gets Equal. The allocator itself applies none of these (an empty
// allocationMode is its "unsupported count mode" error), so without them a
// case written as a user writes it would not mean what it means in a cluster.
// (The API server also stamps a device taint's timeAdded; the allocator does
// not read it, so that one is left out.)
func applyClaimDefaults(c *resourceapi.ResourceClaim) {
	for i := range c.Spec.Devices.Requests {
		r := &c.Spec.Devices.Requests[i]
		if e := r.Exactly; e != nil {
			e.AllocationMode, e.Count = defaultMode(e.AllocationMode, e.Count)
			defaultTolerations(e.Tolerations)
		}
		for j := range r.FirstAvailable {
			s := &r.FirstAvailable[j]
			s.AllocationMode, s.Count = defaultMode(s.AllocationMode, s.Count)
			defaultTolerations(s.Tolerations)
		}
	}
	if a := c.Status.Allocation; a != nil {
		for i := range a.Devices.Results {
			defaultTolerations(a.Devices.Results[i].Tolerations)
		}
	}
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

func defaultTolerations(ts []resourceapi.DeviceToleration) {
	for i := range ts {
		if ts[i].Operator == "" {
			ts[i].Operator = resourceapi.DeviceTolerationOpEqual
		}
	}
}
