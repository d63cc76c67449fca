/*
Copyright 2026 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package cpumanager

// Finding DRACPU-1 of numaspec (a checker of NUMA alignment implementations):
// pkg/cpuinfo names a core by the core_id sysfs gives it, and core_id restarts
// from 0 on every socket. The allocator in this package keys cores by that id
// alone (CPUDetails.CPUsInCores, takeFullCores), so two cores of different
// sockets are counted and taken as one: TakeByTopologyNUMAPacked can return
// CPUs of another socket, and CPUs it was not given (reserved ones, or CPUs
// already prepared for another claim).
//
// The machines below are written as a fake sysfs tree and read back with
// pkg/cpuinfo, exactly as the driver reads the host.
//
// numaspec replays the same case against the driver with:
//
//	.venv/bin/numaspec replay adapters/peers/dra-driver-cpu/findings.json \
//	    --id dracpu-shared-core-ids-cpus-of-another-socket \
//	    --impl exec:adapters/peers/bin/dra-driver-cpu-adapter-v0.2.0

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	topology "github.com/kubernetes-sigs/dra-driver-cpu/pkg/cpuinfo"
	"k8s.io/klog/v2"
	"k8s.io/utils/cpuset"
)

// numaspecSysfsMachine lists, per socket, the hardware threads of each core.
// The index of a core in its socket is the core_id sysfs reports for it, so
// core ids restart from 0 on each socket as they do on x86. Every socket is
// one NUMA node and one L3 cache, both numbered like the socket.
type numaspecSysfsMachine [][][]int

func numaspecWriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// numaspecReadTopology writes the machine as a sysfs tree under a temporary
// HOST_ROOT and returns the topology pkg/cpuinfo reads from it.
func numaspecReadTopology(t *testing.T, machine numaspecSysfsMachine) *topology.CPUTopology {
	t.Helper()
	root := t.TempDir()
	t.Setenv("HOST_ROOT", root)
	cpuDir := filepath.Join(root, "sys", "devices", "system", "cpu")
	nodeDir := filepath.Join(root, "sys", "devices", "system", "node")

	var all []int
	for socket, cores := range machine {
		var socketCPUs []int
		for _, threads := range cores {
			socketCPUs = append(socketCPUs, threads...)
		}
		socketSet := cpuset.New(socketCPUs...)
		numaspecWriteFile(t, filepath.Join(nodeDir, fmt.Sprintf("node%d", socket), "cpulist"), socketSet.String())
		for coreID, threads := range cores {
			for _, cpu := range threads {
				dir := filepath.Join(cpuDir, fmt.Sprintf("cpu%d", cpu))
				numaspecWriteFile(t, filepath.Join(dir, "topology", "physical_package_id"), fmt.Sprint(socket))
				numaspecWriteFile(t, filepath.Join(dir, "topology", "core_id"), fmt.Sprint(coreID))
				if err := os.MkdirAll(filepath.Join(dir, fmt.Sprintf("node%d", socket)), 0o755); err != nil {
					t.Fatal(err)
				}
				numaspecWriteFile(t, filepath.Join(dir, "cache", "index3", "level"), "3")
				numaspecWriteFile(t, filepath.Join(dir, "cache", "index3", "id"), fmt.Sprint(socket))
				numaspecWriteFile(t, filepath.Join(dir, "cache", "index3", "shared_cpu_list"), socketSet.String())
			}
		}
		all = append(all, socketCPUs...)
	}
	numaspecWriteFile(t, filepath.Join(cpuDir, "online"), cpuset.New(all...).String())
	numaspecWriteFile(t, filepath.Join(cpuDir, "smt", "control"), "on")

	topo, err := topology.NewSystemCPUInfo().GetCPUTopology(klog.Background())
	if err != nil {
		t.Fatalf("reading the fake sysfs tree: %v", err)
	}
	if topo.NumCPUs != len(all) {
		t.Fatalf("expected %d CPUs read from the fake sysfs tree, got %d", len(all), topo.NumCPUs)
	}
	return topo
}

func TestNumaspecDRACPU1(t *testing.T) {
	logger := klog.Background()

	// 8 CPUs: socket 0 has cores 0 {0,1} and 1 {2,3}, socket 1 has cores 0 {4,5} and 1 {6,7}.
	eightCPUs := numaspecSysfsMachine{
		{{0, 1}, {2, 3}},
		{{4, 5}, {6, 7}},
	}
	// 12 CPUs numbered across sockets: socket 0 has cores 0 {0,6}, 1 {2,8}, 2 {4,10};
	// socket 1 has cores 0 {1,7}, 1 {3,9}, 2 {5,11}.
	twelveCPUs := numaspecSysfsMachine{
		{{0, 6}, {2, 8}, {4, 10}},
		{{1, 7}, {3, 9}, {5, 11}},
	}

	testCases := []struct {
		description   string
		machine       numaspecSysfsMachine
		availableCPUs cpuset.CPUSet
		numCPUs       int
		// oneSocket is set when the request fits in the available CPUs of one socket.
		oneSocket bool
	}{
		{
			"CPU 0 reserved, CPUs 6-7 held by another claim, 2 CPUs asked",
			eightCPUs,
			cpuset.New(1, 2, 3, 4, 5),
			2,
			true,
		},
		{
			"CPU 0 reserved, CPU 5 held by another claim, 4 CPUs asked",
			eightCPUs,
			cpuset.New(1, 2, 3, 4, 6, 7),
			4,
			false,
		},
		{
			"every CPU free, 3 CPUs asked",
			eightCPUs,
			mustParseCPUSet(t, "0-7"),
			3,
			true,
		},
		{
			"grouped device of NUMA node 0 with CPU 0 reserved, 4 CPUs asked",
			twelveCPUs,
			cpuset.New(2, 4, 6, 8, 10),
			4,
			true,
		},
	}

	for _, tc := range testCases {
		t.Run(tc.description, func(t *testing.T) {
			topo := numaspecReadTopology(t, tc.machine)

			result, err := TakeByTopologyNUMAPacked(logger, topo, tc.availableCPUs, tc.numCPUs, CPUSortingStrategyPacked, true)
			if err != nil {
				t.Fatalf("unexpected error [%v]", err)
			}
			if result.Size() != tc.numCPUs {
				t.Errorf("expected %d CPUs, got [%s]", tc.numCPUs, result)
			}
			for _, cpu := range result.List() {
				if !tc.availableCPUs.Contains(cpu) {
					t.Errorf("took CPU %d which was not available: result [%s], available [%s]", cpu, result, tc.availableCPUs)
				}
			}
			if sockets := topo.CPUDetails.KeepOnly(result).Sockets(); tc.oneSocket && sockets.Size() != 1 {
				t.Errorf("expected result [%s] to be on one socket, got CPUs of sockets [%s]", result, sockets)
			}
		})
	}
}
