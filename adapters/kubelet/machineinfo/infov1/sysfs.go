package machineinfo

// cadvisor's own reading of the machine's NUMA nodes from sysfs, as kubelet's
// cadvisor does it (machine.GetTopology is this call): its real sysfs reader,
// whose paths are /sys, so the caller runs it where /sys is the tree to read
// (a mount namespace with a copy bound over /sys: ../../release/machine.go).

import (
	"github.com/google/cadvisor/utils/sysfs"
	"github.com/google/cadvisor/utils/sysinfo"
)

// ReadNodes is cadvisor's sysinfo.GetNodesInfo over sysfs.NewRealSysFs: the
// NUMA nodes (cores, caches, memory, hugepages, distances) and the number of
// online CPUs it counted.
func ReadNodes() ([]Node, int, error) { return sysinfo.GetNodesInfo(sysfs.NewRealSysFs()) }
