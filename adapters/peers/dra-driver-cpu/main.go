// dra-driver-cpu-adapter-<version>: the numaspec adapter protocol ("cpus",
// CPU-21) over kubernetes-sigs/dra-driver-cpu's own CPU allocator
// (pkg/cpumanager.TakeByTopologyNUMAPacked, the function its grouped mode
// calls at prepare time), and two commands over its publishing and prepare
// code (pkg/driver):
//
//	dra-driver-cpu-adapter [--core-ids sysfs|unique]    the protocol on stdin/stdout
//	dra-driver-cpu-adapter publish --sysfs DIR [flags]  the devices it publishes, as JSON
//	dra-driver-cpu-adapter prepare --sysfs DIR [flags]  the CPUs it prepares for claims
//	dra-driver-cpu-adapter --version
//
// The driver is a Go module dependency pinned in go.mod; build.sh copies it
// from the module cache into build/ with one file of numaspec's added to
// pkg/driver (export/zz_numaspec_export.go). See ../README.md.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"

	"github.com/go-logr/logr"
	"github.com/kubernetes-sigs/dra-driver-cpu/pkg/cpuinfo"
	"github.com/kubernetes-sigs/dra-driver-cpu/pkg/cpumanager"
	"github.com/kubernetes-sigs/dra-driver-cpu/pkg/driver"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/cpuset"

	"numaspec.invalid/kubelet-oracle/common"
)

// version is the pinned github.com/kubernetes-sigs/dra-driver-cpu (keep in
// sync with go.mod and build.sh): the newest tag the Go module proxy serves.
const version = "0.2.0"

const tree = "https://github.com/kubernetes-sigs/dra-driver-cpu/blob/v" + version + "/"

// citedRelease is the kubelet release whose CPU Manager the driver's parity
// table (docs/user/feature-support.md) compares itself with.
const citedRelease = "1.35"

// builtIn is the static policy option the driver always applies
// (TakeByTopologyNUMAPacked(..., preferAlignByUncoreCache=true)).
const builtIn = "prefer-align-cpus-by-uncorecache"

const driverName = "dra.cpu"

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "publish" || os.Args[1] == "prepare") {
		os.Exit(command(os.Args[1], os.Args[2:]))
	}
	fs := flag.NewFlagSet("dra-driver-cpu-adapter", flag.ExitOnError)
	coreIDs := fs.String("core-ids", "sysfs",
		"how a machine's cores are numbered for the driver's topology: \"sysfs\" (a core's id as the case gives it, as the driver reads core_id; the lowest thread where none is given) or \"unique\" (its lowest thread, as kubelet numbers them)")
	showVersion := fs.Bool("version", false, "print the pinned dra-driver-cpu version and exit")
	_ = fs.Parse(os.Args[1:])
	if *showVersion {
		fmt.Println(version)
		return
	}
	if *coreIDs != "sysfs" && *coreIDs != "unique" {
		fmt.Fprintln(os.Stderr, "dra-driver-cpu-adapter: --core-ids must be sysfs or unique")
		os.Exit(2)
	}
	common.AdapterMain(&adapter{uniqueCores: *coreIDs == "unique"})
}

type adapter struct{ uniqueCores bool }

func (a *adapter) Implementation() common.Implementation {
	numbering := "sysfs"
	if a.uniqueCores {
		numbering = "unique"
	}
	return common.Implementation{
		Name:                "dra-driver-cpu",
		Version:             version,
		Language:            "go",
		Homepage:            "https://github.com/kubernetes-sigs/dra-driver-cpu",
		Issues:              "https://github.com/kubernetes-sigs/dra-driver-cpu/issues",
		Source:              "github.com/kubernetes-sigs/dra-driver-cpu@v" + version + " (pkg/cpumanager: TakeByTopologyNUMAPacked)",
		KubeletVersions:     []string{},
		NodeKubeletVersions: []string{citedRelease},
		Operations:          []string{"cpus"},
		Claims: map[string]any{
			"format": false,
			"node":   map[string]any{"cpu_policy_options": []string{builtIn}, "feature_gates": false},
			"cpus":   map[string]any{"options": map[string]string{builtIn: "true"}},
		},
		Metadata: map[string]any{
			"module":   "github.com/kubernetes-sigs/dra-driver-cpu@v" + version,
			"package":  tree + "pkg/cpumanager/cpu_assignment.go",
			"core_ids": numbering,
			"glue":     "the case's machine becomes the driver's cpuinfo.CPUTopology (each CPU's core, socket, NUMA node and uncore cache; a core without one takes its socket's id, as kubelet does); the CPUs are taken with CPUSortingStrategyPacked and preferAlignByUncoreCache true, as prepareGroupedResourceClaim calls it",
		},
	}
}

// The machine of a case, as the node protocol writes it (spec/schemas).
type machine struct {
	NUMANodes []struct {
		ID    *int `json:"id"`
		Cores []struct {
			ID          *int  `json:"id"`
			Socket      int   `json:"socket"`
			Threads     []int `json:"threads"`
			UncoreCache *int  `json:"uncoreCache"`
		} `json:"cores"`
	} `json:"numaNodes"`
}

type cpusCase struct {
	KubeletVersion string            `json:"kubelet_version"`
	Machine        machine           `json:"machine"`
	Available      []int             `json:"available"`
	Count          int               `json:"count"`
	Options        map[string]string `json:"options"`
	FeatureGates   map[string]bool   `json:"feature_gates"`
}

func (a *adapter) Run(op string, raw json.RawMessage) (any, *common.Skip) {
	var c cpusCase
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, common.Skipf("not a cpus case this adapter reads: %v", err)
	}
	if common.MinorOf(c.KubeletVersion) != citedRelease {
		return nil, common.Skipf("kubelet %s: the driver compares itself with kubelet %s's CPU Manager only", c.KubeletVersion, citedRelease)
	}
	if len(c.FeatureGates) > 0 {
		return nil, common.Skipf("the driver reads no kubelet feature gates")
	}
	if len(c.Options) != 1 || c.Options[builtIn] != "true" {
		return nil, common.Skipf("the driver always applies %s and no other option (options: %v)", builtIn, c.Options)
	}
	topo, err := a.topology(c.Machine)
	if err != nil {
		return nil, common.Skipf("machine: %v", err)
	}
	for _, cpu := range c.Available {
		if _, ok := topo.CPUDetails[cpu]; !ok {
			return nil, common.Skipf("available CPU %d is not a CPU of the machine", cpu)
		}
	}
	taken, err := cpumanager.TakeByTopologyNUMAPacked(logr.Discard(), topo, cpuset.New(c.Available...), c.Count,
		cpumanager.CPUSortingStrategyPacked, true)
	if err != nil {
		return map[string]any{"unsatisfiable": err.Error()}, nil
	}
	return map[string]any{"cpus": taken.List()}, nil
}

// topology builds the driver's topology as its cpuinfo package would read
// it from the machine's sysfs (GetCPUTopology).
func (a *adapter) topology(m machine) (*cpuinfo.CPUTopology, error) {
	details := cpuinfo.CPUDetails{}
	sockets, numas, uncores := map[int]bool{}, map[int]bool{}, map[int]bool{}
	type coreKey struct{ socket, core int }
	cores := map[coreKey]bool{}
	for i, node := range m.NUMANodes {
		numa := i
		if node.ID != nil {
			numa = *node.ID
		}
		numas[numa] = true
		for _, core := range node.Cores {
			if len(core.Threads) == 0 {
				return nil, fmt.Errorf("a core of NUMA node %d has no threads", numa)
			}
			lowest := core.Threads[0]
			for _, t := range core.Threads {
				if t < lowest {
					lowest = t
				}
			}
			id := lowest
			if core.ID != nil && !a.uniqueCores {
				id = *core.ID
			}
			uncore := core.Socket
			if core.UncoreCache != nil {
				uncore = *core.UncoreCache
			}
			sibling := -1
			for _, t := range core.Threads {
				if _, dup := details[t]; dup {
					return nil, fmt.Errorf("CPU %d is listed twice", t)
				}
				if len(core.Threads) == 2 {
					sibling = core.Threads[0] + core.Threads[1] - t
				}
				details[t] = cpuinfo.CPUInfo{CpuID: t, CoreID: id, SocketID: core.Socket, ClusterID: -1,
					NUMANodeID: numa, UncoreCacheID: uncore, SiblingCPUID: sibling, CoreType: cpuinfo.CoreTypeStandard}
			}
			sockets[core.Socket] = true
			uncores[uncore] = true
			cores[coreKey{core.Socket, id}] = true
		}
	}
	return &cpuinfo.CPUTopology{NumCPUs: len(details), NumCores: len(cores), NumUncoreCache: len(uncores),
		NumSockets: len(sockets), NumNUMANodes: len(numas), SMTEnabled: len(details) > len(cores),
		CPUDetails: details}, nil
}

// ---- publish and prepare: the driver's own pkg/driver code on a sysfs tree ----

func command(name string, args []string) int {
	fs := flag.NewFlagSet("dra-driver-cpu-adapter "+name, flag.ContinueOnError)
	sysfs := fs.String("sysfs", "", "a copy of /sys (the directory holding devices/system/cpu): required")
	mode := fs.String("mode", driver.CPU_DEVICE_MODE_INDIVIDUAL, "--cpu-device-mode: individual or grouped")
	groupBy := fs.String("group-by", driver.GROUP_BY_NUMA_NODE, "--cpu-device-group-by (grouped mode): numanode, socket or machine")
	reserved := fs.String("reserved", "", "--reserved-cpus, a cpuset (\"0,1\")")
	pcie := fs.Bool("pcie-roots", false, "--expose-pcie-roots: publish resource.kubernetes.io/pcieRoot")
	claims := fs.String("claims", "", "prepare: a JSON array of allocated claims, prepared in order: [{\"devices\": [\"cpudev000\", ...]}] (individual) or [{\"devices\": [\"cpudevnuma000\"], \"cpus\": 4}] (grouped: one count per device)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "dra-driver-cpu-adapter %s: "+format+"\n", append([]any{name}, a...)...)
		return 2
	}
	if *sysfs == "" {
		return fail("--sysfs is required")
	}
	if st, err := os.Stat(*sysfs); err != nil || !st.IsDir() {
		return fail("--sysfs %s: not a directory", *sysfs)
	}
	if *mode != driver.CPU_DEVICE_MODE_INDIVIDUAL && *mode != driver.CPU_DEVICE_MODE_GROUPED {
		return fail("--mode must be individual or grouped, not %q", *mode)
	}
	if *groupBy != driver.GROUP_BY_NUMA_NODE && *groupBy != driver.GROUP_BY_SOCKET && *groupBy != driver.GROUP_BY_MACHINE {
		return fail("--group-by must be numanode, socket or machine, not %q", *groupBy)
	}
	reservedSet, err := cpuset.Parse(*reserved)
	if err != nil {
		return fail("--reserved %q: %v", *reserved, err)
	}
	d, err := driver.NumaspecStart(logr.Discard(), driver.NumaspecConfig{Sysfs: *sysfs, DriverName: driverName,
		NodeName: "node", ReservedCPUs: reservedSet, CPUDeviceMode: *mode, CPUDeviceGroupBy: *groupBy,
		ExposePCIeRoots: *pcie})
	if err != nil {
		return fail("%v", err)
	}
	out := map[string]any{"topology": describe(d.Topology())}
	if name == "publish" {
		published, err := d.Publish(context.Background())
		if err != nil {
			return fail("%v", err)
		}
		var devices []resourceapi.Device
		for _, pool := range published.Pools {
			for _, slice := range pool.Slices {
				devices = append(devices, slice.Devices...)
			}
		}
		out["devices"] = devices
	} else {
		if *claims == "" {
			return fail("--claims is required")
		}
		var asked []struct {
			Devices []string `json:"devices"`
			CPUs    int64    `json:"cpus"`
		}
		if err := json.Unmarshal([]byte(*claims), &asked); err != nil {
			return fail("--claims: %v", err)
		}
		var prepared []any
		for i, c := range asked {
			claim := &resourceapi.ResourceClaim{}
			claim.Namespace, claim.Name, claim.UID = "default", fmt.Sprintf("claim-%d", i), types.UID(fmt.Sprintf("uid-%d", i))
			var results []resourceapi.DeviceRequestAllocationResult
			for _, dev := range c.Devices {
				r := resourceapi.DeviceRequestAllocationResult{Request: "cpus", Driver: driverName, Pool: "node", Device: dev}
				if *mode == driver.CPU_DEVICE_MODE_GROUPED {
					r.ConsumedCapacity = map[resourceapi.QualifiedName]resource.Quantity{
						"dra.cpu/cpu": *resource.NewQuantity(c.CPUs, resource.DecimalSI)}
				}
				results = append(results, r)
			}
			claim.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: results}}
			cpus, err := d.Prepare(context.Background(), claim)
			if err != nil {
				prepared = append(prepared, map[string]any{"error": err.Error()})
				continue
			}
			prepared = append(prepared, map[string]any{"cpus": cpus.List()})
		}
		out["prepared"] = prepared
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		return fail("%v", err)
	}
	return 0
}

// describe is the topology the driver read, CPU by CPU, ascending.
func describe(t *cpuinfo.CPUTopology) map[string]any {
	ids := make([]int, 0, len(t.CPUDetails))
	for id := range t.CPUDetails {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	cpus := make([]map[string]any, 0, len(ids))
	for _, id := range ids {
		c := t.CPUDetails[id]
		cpus = append(cpus, map[string]any{"cpu": id, "core": c.CoreID, "socket": c.SocketID, "numa": c.NUMANodeID,
			"uncore": c.UncoreCacheID, "sibling": c.SiblingCPUID})
	}
	return map[string]any{"smt": t.SMTEnabled, "cores": t.NumCores, "sockets": t.NumSockets,
		"numa_nodes": t.NumNUMANodes, "uncore_caches": t.NumUncoreCache, "cpus": cpus}
}
