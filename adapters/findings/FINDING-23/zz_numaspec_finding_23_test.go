/*
numaspec FINDING-23 (spec/conformance/findings.md, rules OPS-2 and CPU-17).

What kubelet does: with the static policy and strict-cpu-reservation the reserved CPUs are kept
out of the default (shared) cpuset, and nothing stops exclusive containers from taking every
other CPU: allocateCPUs removes them from the default cpuset, which becomes empty and is
checkpointed so. When kubelet restarts on that checkpoint, staticPolicy.Start (validateState)
refuses it with "default cpuset cannot be empty" because CPUs are assigned, and the CPU Manager,
with it the container manager, does not start. The node does not come back until its pods are
drained and the state file is deleted.

What it should do: never write a state it refuses to read back. Either refuse the exclusive
allocation that would leave the shared pool empty, or accept at start an empty default cpuset
whose CPUs are all accounted for by the assignments, as strict-cpu-reservation makes it
reachable.

The test allocates on a checkpointed state, then starts a fresh static policy on the same
checkpoint file, as a kubelet restart does.

Written by numaspec (https://github.com/numaspec/numaspec)
*/

package cpumanager

import (
	"testing"

	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/state"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	"k8s.io/kubernetes/test/utils/ktesting"
	"k8s.io/utils/cpuset"
)

func TestNumaspecFINDING23(t *testing.T) {
	const checkpointName = "cpu_manager_state"

	type exclusiveContainer struct {
		podUID, name string
		cpus         string
		// mayBeRefused: allocating it empties the shared pool; refusing it is an acceptable
		// remedy, so only the restart is judged for it.
		mayBeRefused bool
	}

	testCases := []struct {
		description      string
		cpuPolicyOptions map[string]string
		containers       []exclusiveContainer
	}{
		{
			description:      "strict-cpu-reservation, one container takes every non-reserved CPU",
			cpuPolicyOptions: map[string]string{StrictCPUReservationOption: "true"},
			containers: []exclusiveContainer{
				{podUID: "pod-a", name: "c", cpus: "7", mayBeRefused: true},
			},
		},
		{
			description:      "strict-cpu-reservation, the second container takes the last shared CPUs",
			cpuPolicyOptions: map[string]string{StrictCPUReservationOption: "true"},
			containers: []exclusiveContainer{
				{podUID: "pod-a", name: "c", cpus: "4"},
				{podUID: "pod-b", name: "c", cpus: "3", mayBeRefused: true},
			},
		},
		{
			description: "without the option the reserved CPU stays in the shared pool",
			containers: []exclusiveContainer{
				{podUID: "pod-a", name: "c", cpus: "7"},
			},
		},
	}

	for _, testCase := range testCases {
		t.Run(testCase.description, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			stateDir := t.TempDir()
			reserved := cpuset.New(0)

			newPolicy := func() Policy {
				p, err := NewStaticPolicy(logger, topoSingleSocketHT, reserved.Size(), reserved, topologymanager.NewFakeManager(logger), testCase.cpuPolicyOptions)
				if err != nil {
					t.Fatalf("NewStaticPolicy: unexpected error: %v", err)
				}
				return p
			}

			// The node as it first starts: no state file yet.
			st, err := state.NewCheckpointState(logger, stateDir, checkpointName, "static", containermap.NewContainerMap())
			if err != nil {
				t.Fatalf("NewCheckpointState: unexpected error: %v", err)
			}
			policy := newPolicy()
			if err := policy.Start(logger, st); err != nil {
				t.Fatalf("first Start: unexpected error: %v", err)
			}

			for _, c := range testCase.containers {
				pod := makePod(c.podUID, c.name, c.cpus, c.cpus)
				err := policy.Allocate(logger, st, pod, &pod.Spec.Containers[0], lifecycle.AddOperation)
				if err != nil && !c.mayBeRefused {
					t.Fatalf("Allocate %s/%s (%s CPUs): unexpected error: %v", c.podUID, c.name, c.cpus, err)
				}
			}
			written := st.GetDefaultCPUSet()

			// kubelet restarts: a fresh policy reads the same checkpoint file.
			restored, err := state.NewCheckpointState(logger, stateDir, checkpointName, "static", containermap.NewContainerMap())
			if err != nil {
				t.Fatalf("FINDING-23: the checkpoint written after the allocations cannot be read back: %v", err)
			}
			if err := newPolicy().Start(logger, restored); err != nil {
				t.Errorf("FINDING-23: the static policy refuses at restart the state it wrote itself: %v (default cpuset written: %q, assignments: %v)",
					err, written.String(), restored.GetCPUAssignments())
			}
		})
	}
}
