//go:build kubelet1.31

package release

// From 1.31 the Device Manager reads only the v2 device checkpoint.

import (
	"k8s.io/kubernetes/pkg/kubelet/checkpointmanager"
	devcheckpoint "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/checkpoint"
)

func (*Release) DeviceV1(checkpointmanager.CheckpointManager) ([]devcheckpoint.PodDevicesEntry, map[string][]string, bool, error) {
	return nil, nil, false, nil
}

func (*Release) DeviceData(cp devcheckpoint.DeviceManagerCheckpoint) ([]devcheckpoint.PodDevicesEntry, map[string][]string) {
	return cp.GetData()
}
