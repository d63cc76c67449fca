//go:build kubelet1.35

package release

// 1.35 on: topology.Discover takes a logger; each CPU has its uncore cache.

import (
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/topology"

	"numaspec.invalid/kubelet-oracle/machineinfo"
)

func discover(mi *machineinfo.MachineInfo) (*discoverOut, error) {
	t, err := topology.Discover(Logger, mi)
	if err != nil {
		return nil, err
	}
	out := &discoverOut{NumCPUs: t.NumCPUs, NumCores: t.NumCores, NumSockets: t.NumSockets,
		NumNUMANodes: t.NumNUMANodes, CPUs: map[int]cpuOut{}}
	n := t.NumUncoreCache
	out.NumUncoreCache = &n
	for cpu, info := range t.CPUDetails {
		u := info.UncoreCacheID
		out.CPUs[cpu] = cpuOut{Core: info.CoreID, Socket: info.SocketID, NUMANode: info.NUMANodeID, UncoreCache: &u}
	}
	return out, nil
}
