// Package machineinfo is cadvisor's MachineInfo of a numaspec machine, for
// the node releases' shim (../release) and its callers. kubelet 1.37 takes
// cadvisor's types from another module (github.com/google/cadvisor/lib,
// package model) than 1.29-1.36 (github.com/google/cadvisor, package info/v1),
// so this module has two directories, one per cadvisor package: each has its
// go.mod (the same module path), its cadvisor.go (the type aliases of that
// package) and a link to this file, the conversion; a release's go.mod
// replaces the module with the directory of its cadvisor (../gen-gomod.sh
// picks it). A build tag could not choose: go mod tidy reads every file,
// whatever its tags, and would add the other cadvisor module to the release.
package machineinfo

import "numaspec.invalid/kubelet-oracle/common"

// Info is the MachineInfo kubelet's cadvisor would report for m: NUMA nodes
// and cores in the request's order, each core's uncore cache as its first
// (level 3, unified) cache, which topology.Discover reads from 1.32 on
// (CPU-19; 1.29 and 1.30 do not read it).
func Info(m *common.Machine) *MachineInfo {
	mi := &MachineInfo{NumCores: m.NumCores, NumPhysicalCores: m.NumPhysicalCores, NumSockets: m.NumSockets, MemoryCapacity: m.MemoryCapacity}
	for _, h := range m.HugePages {
		mi.HugePages = append(mi.HugePages, HugePagesInfo{PageSize: h.PageSize, NumPages: h.NumPages})
	}
	if m.Topology != nil {
		mi.Topology = make([]Node, 0, len(m.Topology))
	}
	for _, n := range m.Topology {
		node := Node{Id: n.ID, Memory: n.Memory, Distances: n.Distances}
		for _, h := range n.HugePages {
			node.HugePages = append(node.HugePages, HugePagesInfo{PageSize: h.PageSize, NumPages: h.NumPages})
		}
		for _, c := range n.Cores {
			core := Core{Id: c.ID, Threads: c.Threads, SocketID: c.SocketID}
			if c.UncoreCache != nil {
				core.UncoreCaches = []Cache{{Id: *c.UncoreCache, Type: "Unified", Level: 3}}
			}
			node.Cores = append(node.Cores, core)
		}
		mi.Topology = append(mi.Topology, node)
	}
	return mi
}
