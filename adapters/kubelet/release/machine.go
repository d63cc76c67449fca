package release

// The "machine" mode of a node release's binary: the machine kubelet gets
// from cadvisor, read by cadvisor's own code (machineinfo.ReadNodes:
// sysinfo.GetNodesInfo over its real sysfs reader), and the CPU topology
// kubelet's CPU Manager builds from it (topology.Discover), as one JSON
// object on stdout. cadvisor's reader is hard-wired to /sys: the caller runs
// this mode in a mount namespace with the tree to read bound over /sys
// (tests/upstream/kubelet/test_kubelet_machine.py: unshare -m, or unshare -rm unprivileged).
//
// What is not cadvisor's reading here: MachineInfo.NumSockets, which cadvisor
// counts in /proc/cpuinfo (not part of a sysfs copy), is the number of
// distinct socket ids of the topology; NumCores is the online CPU count
// GetNodesInfo returns, which is what machine.Info puts there.

import (
	"encoding/json"
	"fmt"
	"os"

	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/kubelet-oracle/machineinfo"
	"numaspec.invalid/kubelet-oracle/probe"
)

func init() {
	common.RegisterMode("machine", machineMain)
	common.RegisterMode("kconf", kconfMain)
}

type cacheOut struct {
	ID    int    `json:"id"`
	Level int    `json:"level"`
	Type  string `json:"type"`
	Size  uint64 `json:"size"`
}

type coreOut struct {
	ID           int        `json:"id"`
	Socket       int        `json:"socket"`
	Threads      []int      `json:"threads"`
	UncoreCaches []cacheOut `json:"uncoreCaches"`
}

type nodeOut struct {
	ID        int            `json:"id"`
	Memory    uint64         `json:"memory"`
	HugePages map[string]int `json:"hugepages"` // page size in kB -> pages
	Distances []uint64       `json:"distances"`
	Cores     []coreOut      `json:"cores"`
	Caches    []cacheOut     `json:"caches"`
}

// cpuOut is one CPU of topology.Discover's CPUDetails; UncoreCache is nil in
// releases before 1.32, which do not have the field.
type cpuOut struct {
	Core        int  `json:"core"`
	Socket      int  `json:"socket"`
	NUMANode    int  `json:"numaNode"`
	UncoreCache *int `json:"uncoreCache,omitempty"`
}

type discoverOut struct {
	NumCPUs        int            `json:"numCPUs"`
	NumCores       int            `json:"numCores"`
	NumSockets     int            `json:"numSockets"`
	NumNUMANodes   int            `json:"numNUMANodes"`
	NumUncoreCache *int           `json:"numUncoreCache,omitempty"`
	CPUs           map[int]cpuOut `json:"cpus"`
}

type machineOut struct {
	Version  string       `json:"version"`
	Error    string       `json:"error,omitempty"`
	NumCores int          `json:"numCores"`
	Nodes    []nodeOut    `json:"nodes"`
	Discover *discoverOut `json:"discover,omitempty"`
	// DiscoverError: topology.Discover refused the machine (kubelet's CPU
	// Manager does not start).
	DiscoverError string `json:"discoverError,omitempty"`
}

func caches(cs []machineinfo.Cache) []cacheOut {
	out := []cacheOut{}
	for _, c := range cs {
		out = append(out, cacheOut{ID: c.Id, Level: c.Level, Type: c.Type, Size: c.Size})
	}
	return out
}

func machineMain(args []string) {
	if len(args) != 0 {
		fmt.Fprintln(os.Stderr, "usage: machine (reads /sys; run it with the tree bound over /sys)")
		os.Exit(2)
	}
	probe.Setup()
	out := machineOut{Version: common.PinnedVersion(), Nodes: []nodeOut{}}
	nodes, numCores, err := machineinfo.ReadNodes()
	if err != nil {
		out.Error = err.Error()
	} else {
		out.NumCores = numCores
		sockets := map[int]bool{}
		for _, n := range nodes {
			no := nodeOut{ID: n.Id, Memory: n.Memory, HugePages: map[string]int{}, Distances: n.Distances,
				Cores: []coreOut{}, Caches: caches(n.Caches)}
			for _, h := range n.HugePages {
				no.HugePages[fmt.Sprint(h.PageSize)] = int(h.NumPages)
			}
			for _, c := range n.Cores {
				sockets[c.SocketID] = true
				no.Cores = append(no.Cores, coreOut{ID: c.Id, Socket: c.SocketID, Threads: c.Threads,
					UncoreCaches: caches(c.UncoreCaches)})
			}
			out.Nodes = append(out.Nodes, no)
		}
		mi := &machineinfo.MachineInfo{NumCores: numCores, NumSockets: len(sockets), Topology: nodes}
		d, err := discover(mi)
		if err != nil {
			out.DiscoverError = err.Error()
		} else {
			out.Discover = d
		}
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
