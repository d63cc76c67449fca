// This file is numaspec's, not the driver's. adapters/peers/build.sh copies the
// pinned github.com/kubernetes-sigs/dra-driver-cpu module out of the Go module
// cache into build/ and adds this one file to its pkg/driver, so that the
// adapter can call the driver's own publishing and prepare code (unexported
// methods of CPUDriver) without a kubelet, an API server, CDI or NRI. It
// changes no line of the driver; it only builds a CPUDriver the way Start
// does, from a machine read by the driver's own cpuinfo and store packages.

package driver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	"github.com/kubernetes-sigs/dra-driver-cpu/pkg/cpuinfo"
	"github.com/kubernetes-sigs/dra-driver-cpu/pkg/device"
	"github.com/kubernetes-sigs/dra-driver-cpu/pkg/store"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/utils/cpuset"
)

// NumaspecDriver is a CPUDriver set up as Start sets it up, minus the
// kubelet plugin, CDI and NRI.
type NumaspecDriver struct{ cp *CPUDriver }

// NumaspecConfig is what Start reads from its Config, plus the sysfs tree.
type NumaspecConfig struct {
	// Sysfs is a copy of /sys (the directory holding devices/system/...).
	Sysfs            string
	DriverName       string
	NodeName         string
	ReservedCPUs     cpuset.CPUSet
	CPUDeviceMode    string
	CPUDeviceGroupBy string
	ExposePCIeRoots  bool
}

type numaspecCDI struct{}

func (numaspecCDI) AddDevice(logr.Logger, string, string) error { return nil }
func (numaspecCDI) RemoveDevice(logr.Logger, string) error      { return nil }

type numaspecPlugin struct {
	published *resourceslice.DriverResources
}

func (p *numaspecPlugin) PublishResources(_ context.Context, r resourceslice.DriverResources) error {
	p.published = &r
	return nil
}
func (p *numaspecPlugin) Stop() {}

// NumaspecStart builds the driver as Start does: online CPUs, the topology
// (cpuinfo reads $HOST_ROOT/sys, so HOST_ROOT is pointed at a directory
// whose "sys" is the tree for the call), the PCIe root mapper, the
// allocation store and the device lookup maps.
func NumaspecStart(logger logr.Logger, cfg NumaspecConfig) (*NumaspecDriver, error) {
	root, err := os.MkdirTemp("", "numaspec-dracpu-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	abs, err := filepath.Abs(cfg.Sysfs)
	if err != nil {
		return nil, err
	}
	if err := os.Symlink(abs, filepath.Join(root, "sys")); err != nil {
		return nil, err
	}
	old, had := os.LookupEnv("HOST_ROOT")
	os.Setenv("HOST_ROOT", root)
	defer func() {
		if had {
			os.Setenv("HOST_ROOT", old)
		} else {
			os.Unsetenv("HOST_ROOT")
		}
	}()
	sysfs, ok := os.DirFS(abs).(device.SysFS)
	if !ok {
		return nil, fmt.Errorf("%s: not a directory file system", abs)
	}
	cp := &CPUDriver{
		driverName:              cfg.DriverName,
		nodeName:                cfg.NodeName,
		deviceNameToCPUID:       make(map[string]int),
		deviceNameToSocketID:    make(map[string]int),
		deviceNameToNUMANodeID:  make(map[string]int),
		reservedCPUs:            cfg.ReservedCPUs,
		cpuDeviceMode:           cfg.CPUDeviceMode,
		cpuDeviceGroupBy:        cfg.CPUDeviceGroupBy,
		claimTracker:            store.NewClaimTracker(),
		pcieRootMapper:          store.NewPCIeRootMapper(),
		devicesPerResourceSlice: Config{ExposePCIeRoots: cfg.ExposePCIeRoots}.DevicesPerResourceSlice(),
		cdiMgr:                  numaspecCDI{},
	}
	if cp.onlineCPUs, err = cpuinfo.OnlineCPUs(logger, sysfs); err != nil {
		return nil, fmt.Errorf("failed to get online CPUs: %w", err)
	}
	if cp.cpuTopology, err = cpuinfo.NewSystemCPUInfo().GetCPUTopology(logger); err != nil {
		return nil, fmt.Errorf("failed to get CPU topology: %w", err)
	}
	if cfg.ExposePCIeRoots {
		if err := cp.pcieRootMapper.Probe(logger, sysfs, cp.onlineCPUs); err != nil {
			return nil, fmt.Errorf("failed to list PCIe domains: %w", err)
		}
	}
	cp.cpuAllocationStore = store.NewCPUAllocation(cp.cpuTopology, cfg.ReservedCPUs)
	cp.podConfigStore = store.NewPodConfig()
	cp.initializeDeviceLookupMaps()
	return &NumaspecDriver{cp: cp}, nil
}

// Topology is the topology the driver read.
func (d *NumaspecDriver) Topology() *cpuinfo.CPUTopology { return d.cp.cpuTopology }

// Publish runs PublishResources and returns the pools it publishes.
func (d *NumaspecDriver) Publish(ctx context.Context) (*resourceslice.DriverResources, error) {
	plugin := &numaspecPlugin{}
	d.cp.draPlugin = plugin
	d.cp.PublishResources(ctx)
	if plugin.published == nil {
		return nil, fmt.Errorf("the driver published nothing (no devices)")
	}
	return plugin.published, nil
}

// Prepare runs PrepareResourceClaims on one allocated claim and returns the
// CPUs the driver recorded for it.
func (d *NumaspecDriver) Prepare(ctx context.Context, claim *resourceapi.ResourceClaim) (cpuset.CPUSet, error) {
	results, err := d.cp.PrepareResourceClaims(ctx, []*resourceapi.ResourceClaim{claim})
	if err != nil {
		return cpuset.New(), err
	}
	if r := results[claim.UID]; r.Err != nil {
		return cpuset.New(), r.Err
	}
	cpus, _ := d.cp.cpuAllocationStore.GetResourceClaimAllocation(claim.UID)
	return cpus, nil
}
