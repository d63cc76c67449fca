//go:build !kubelet1.32

package release

// 1.29-1.31: topology.Discover takes no logger and knows no uncore caches.

import (
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/topology"

	"numaspec.invalid/kubelet-oracle/machineinfo"
)

func discover(mi *machineinfo.MachineInfo) (*discoverOut, error) {
	t, err := topology.Discover(mi)
	if err != nil {
		return nil, err
	}
	out := &discoverOut{NumCPUs: t.NumCPUs, NumCores: t.NumCores, NumSockets: t.NumSockets,
		NumNUMANodes: t.NumNUMANodes, CPUs: map[int]cpuOut{}}
	for cpu, info := range t.CPUDetails {
		out.CPUs[cpu] = cpuOut{Core: info.CoreID, Socket: info.SocketID, NUMANode: info.NUMANodeID}
	}
	return out, nil
}
