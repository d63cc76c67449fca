// numaspec FINDING-45 (spec/conformance/findings.md, rule SYSFS-7 in spec/operators/machine-import.md).
//
// What cadvisor does: when sysfs has no NUMA node directories, GetNodesInfo falls back to
// getCPUTopology, which returns the number of cpuN directories as the machine's CPU count,
// offline CPUs included, while the cores it returns hold only the online CPUs (getCoresInfo
// skips offline ones, and an offline CPU has no topology directory). kubelet takes that count
// as MachineInfo.NumCores: its cpu capacity and the CPU Manager's topology.Discover NumCPUs then
// exceed the CPUs any container can be given.
//
// What it should do: count the online CPUs, as the path with NUMA node directories does (there
// the count is the number of threads in the returned cores).
//
// Written by numaspec (https://github.com/numaspec/numaspec)

package sysinfo

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/google/cadvisor/lib/utils/sysfs/fakesysfs"
)

func TestNumaspecFINDING45(t *testing.T) {
	cpus := []string{cpusPath + "/cpu0", cpusPath + "/cpu1", cpusPath + "/cpu2", cpusPath + "/cpu3"}
	online := map[string]interface{}{cpus[0]: nil, cpus[1]: nil, cpus[2]: nil} // cpu3 is offline

	testCases := []struct {
		name string
		// offlineTopology: whether the offline CPU's topology files can still be read (the
		// kernel removes the topology directory of an offline CPU; a copied tree may keep it)
		offlineTopology bool
	}{
		{name: "offline CPU without a topology directory", offlineTopology: false},
		{name: "offline CPU whose topology files remain", offlineTopology: true},
	}

	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			fakeSys := &fakesysfs.FakeSysFs{}
			fakeSys.SetNodesPaths([]string{}, nil) // no devices/system/node
			fakeSys.SetCPUsPaths(map[string][]string{cpusPath: cpus}, nil)
			fakeSys.SetOnlineCPUs(online)

			coreIDs := map[string]string{cpus[0]: "0", cpus[1]: "0", cpus[2]: "1", cpus[3]: "1"}
			packageIDs := map[string]string{cpus[0]: "0", cpus[1]: "0", cpus[2]: "0", cpus[3]: "0"}
			idErrors := map[string]error{}
			if !tc.offlineTopology {
				delete(coreIDs, cpus[3])
				delete(packageIDs, cpus[3])
				idErrors[cpus[3]] = os.ErrNotExist
			}
			fakeSys.SetCoreThreads(coreIDs, idErrors)
			fakeSys.SetPhysicalPackageIDs(packageIDs, idErrors)

			nodes, count, err := GetNodesInfo(fakeSys)
			assert.NoError(t, err)

			threads := 0
			for _, node := range nodes {
				for _, core := range node.Cores {
					threads += len(core.Threads)
				}
			}
			assert.Equal(t, 3, threads, "online CPUs in the returned cores")
			if count != len(online) {
				t.Errorf("FINDING-45: without NUMA node directories GetNodesInfo counts offline CPUs: %d CPUs counted, %d online (%d in the returned cores)",
					count, len(online), threads)
			}
		})
	}
}
