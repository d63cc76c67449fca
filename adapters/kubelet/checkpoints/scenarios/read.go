package scenarios

// The "read" mode: kubelet's own state readers (the CPU and Memory Managers'
// checkpoint states, the Device Manager's checkpoint through the checkpoint
// manager) run on a directory of state files, answering what each restored
// or the error it refused the file with, as one JSON object on stdout. The
// Python tests (tests/upstream/kubelet/test_kubelet_checkpoints_go.py) give it the files
// numaspec writes and files numaspec refuses.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/kubernetes/pkg/kubelet/checkpointmanager"
	cpmerrors "k8s.io/kubernetes/pkg/kubelet/checkpointmanager/errors"
	cpustate "k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/state"
	devcheckpoint "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/checkpoint"
	memstate "k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
)

// Reader is what the read mode needs of a release besides Release: the state
// constructors with their error (restoreState's answer), the pod-level
// assignments where the release keeps them, and the Device Manager's fall back
// to its old checkpoint format where the release has one.
type Reader interface {
	// OpenCPUState is state.NewCheckpointState for dir/cpu_manager_state.
	OpenCPUState(dir, policy string) (cpustate.State, error)
	// OpenMemState is state.NewCheckpointState for dir/memory_manager_state.
	OpenMemState(dir, policy string) (memstate.State, error)
	// PodCPUs gives the pod-level CPU sets (nil where the release has none).
	PodCPUs(s cpustate.State) map[string]string
	// PodMemory gives the pod-level memory blocks (nil where the release has none).
	PodMemory(s memstate.State) map[string][]memstate.Block
	// DeviceData is the checkpoint's entries and registered devices
	// (GetDataInLatestFormat before 1.31, GetData from 1.31).
	DeviceData(cp devcheckpoint.DeviceManagerCheckpoint) ([]devcheckpoint.PodDevicesEntry, map[string][]string)
	// DeviceV1 reads the device checkpoint's v1 format, as readCheckpoint tries
	// after v2 fails (ok false where the release no longer does).
	DeviceV1(m checkpointmanager.CheckpointManager) (entries []devcheckpoint.PodDevicesEntry, registered map[string][]string, ok bool, err error)
}

// policyOf is the policy name a state file records (in data for the newest
// formats), so the state is opened with the policy it was written for; ""
// when the file cannot be decoded (kubelet then refuses it anyway).
func policyOf(path string) string {
	blob, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var top struct {
		PolicyName string `json:"policyName"`
		Data       string `json:"data"`
	}
	if json.Unmarshal(blob, &top) != nil {
		return ""
	}
	if top.Data != "" {
		var inner struct {
			PolicyName string `json:"policyName"`
		}
		if json.Unmarshal([]byte(top.Data), &inner) == nil {
			return inner.PolicyName
		}
	}
	return top.PolicyName
}

func present(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func readCPU(r Reader, dir string) map[string]any {
	s, err := r.OpenCPUState(dir, policyOf(filepath.Join(dir, "cpu_manager_state")))
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	entries := map[string]map[string]string{}
	for pod, containers := range s.GetCPUAssignments() {
		entries[pod] = map[string]string{}
		for name, cpus := range containers {
			entries[pod][name] = cpus.String()
		}
	}
	out := map[string]any{"default": s.GetDefaultCPUSet().String(), "entries": entries}
	if pods := r.PodCPUs(s); pods != nil {
		out["pods"] = pods
	}
	return out
}

func readMem(r Reader, dir string) map[string]any {
	s, err := r.OpenMemState(dir, policyOf(filepath.Join(dir, "memory_manager_state")))
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	out := map[string]any{"machineState": s.GetMachineState(), "entries": s.GetMemoryAssignments()}
	if pods := r.PodMemory(s); pods != nil {
		out["pods"] = pods
	}
	return out
}

func readDev(r Reader, dir string) map[string]any {
	mgr, err := checkpointmanager.NewCheckpointManager(dir)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	cp := devcheckpoint.New(nil, nil)
	err = mgr.GetCheckpoint("kubelet_internal_checkpoint", cp)
	var entries []devcheckpoint.PodDevicesEntry
	var registered map[string][]string
	format := "v2"
	if err == nil {
		entries, registered = r.DeviceData(cp)
	} else if errors.Is(err, cpmerrors.ErrCheckpointNotFound) {
		format = "" // readCheckpoint: no checkpoint, a fresh start
	} else {
		var ok bool
		var errV1 error
		entries, registered, ok, errV1 = r.DeviceV1(mgr)
		if !ok || errV1 != nil {
			return map[string]any{"error": err.Error()} // readCheckpoint answers the v2 error
		}
		format = "v1"
	}
	if entries == nil {
		entries = []devcheckpoint.PodDevicesEntry{}
	}
	if registered == nil {
		registered = map[string][]string{}
	}
	return map[string]any{"format": format, "entries": entries, "registered": registered}
}

// ReadMain answers `read DIR`: for each state file of DIR (cpu_manager_state,
// memory_manager_state, device-plugins/kubelet_internal_checkpoint) what the
// release's reader restored, or {"error": ...}; "fresh" is true where the file
// was not there (the readers start empty, CKPT-5). The states may write the
// files: give it a copy.
func ReadMain(rel Release, dir string) {
	r, ok := rel.(Reader)
	if !ok {
		fmt.Fprintln(os.Stderr, "this release has no read mode")
		os.Exit(2)
	}
	devDir := filepath.Join(dir, "device-plugins")
	fresh := map[string]bool{
		"cpu_manager_state":           !present(filepath.Join(dir, "cpu_manager_state")),
		"memory_manager_state":        !present(filepath.Join(dir, "memory_manager_state")),
		"kubelet_internal_checkpoint": !present(filepath.Join(devDir, "kubelet_internal_checkpoint")),
	}
	out := map[string]map[string]any{
		"cpu_manager_state":           readCPU(r, dir),
		"memory_manager_state":        readMem(r, dir),
		"kubelet_internal_checkpoint": readDev(r, devDir),
	}
	for name, answer := range out {
		answer["fresh"] = fresh[name]
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	Must(enc.Encode(out))
}
