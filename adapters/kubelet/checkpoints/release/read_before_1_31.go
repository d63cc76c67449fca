//go:build !kubelet1.31

package release

// Before 1.31 the Device Manager falls back to the v1 device checkpoint
// (DeviceIDs a plain list) when v2 does not read (manager.go — readCheckpoint,
// getCheckpointV1).

import (
	"k8s.io/kubernetes/pkg/kubelet/checkpointmanager"
	devcheckpoint "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/checkpoint"
)

func (*Release) DeviceV1(m checkpointmanager.CheckpointManager) ([]devcheckpoint.PodDevicesEntry, map[string][]string, bool, error) {
	cp := devcheckpoint.NewV1(nil, nil)
	if err := m.GetCheckpoint("kubelet_internal_checkpoint", cp); err != nil {
		return nil, nil, true, err
	}
	entries, registered := cp.GetDataInLatestFormat()
	return entries, registered, true, nil
}

func (*Release) DeviceData(cp devcheckpoint.DeviceManagerCheckpoint) ([]devcheckpoint.PodDevicesEntry, map[string][]string) {
	return cp.GetDataInLatestFormat()
}
