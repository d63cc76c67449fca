// Package release implements scenarios.Release (../scenarios) with the kubelet
// code of the release module it is compiled in (../v1_30, ../v1_36, ../v1_37,
// ../v1_38): one Go source for all of them, as the adapters' ../../release.
// What is the same in every release is in this file; what kubelet changed at
// release 1.N is in from_1_N.go (//go:build kubelet1.N), the form before it
// in before_1_N.go, a form of one stretch in from_1_N_before_1_M.go; the
// release's build tags (kubelet1.1 ... kubelet1.N) come from
// ../../build.sh -tags (../README.md, Regenerate). A file may import only
// packages every one of these releases has (go mod tidy reads every file,
// whatever its tags); cadvisor's types come from ../../machineinfo, which
// each release's go.mod replaces with the directory of its own cadvisor.
package release

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/dump"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask"

	"numaspec.invalid/kubelet-checkpoints/scenarios"
	"numaspec.invalid/kubelet-oracle/machineinfo"
)

// Release implements scenarios.Release; podLevel is whether the
// PodLevelResourceManagers gate has been turned on (on 1.36 it decides which
// checkpoint version is written).
type Release struct{ podLevel bool }

var _ scenarios.Release = (*Release)(nil)

var must = scenarios.Must

// ForHash is the go-spew rendering kubelet's checksums hash
// (pkg/util/hash.DeepHashObject): apimachinery's dump.ForHash, which from
// 1.36 is a wrapper of k8s.io/utils/dump.ForHash, the one kubelet calls there
// (k8s.io/utils has no dump package at 1.30's version).
func (*Release) ForHash(v any) string { return dump.ForHash(v) }

// store answers each container's Topology Manager affinity from a table,
// preferred (GetAffinity, with the release's signature, calls affinity).
type store map[string][]int

func (s store) affinity(podUID string, containerName string) topologymanager.TopologyHint {
	ids, ok := s[podUID+"/"+containerName]
	if !ok {
		return topologymanager.TopologyHint{Preferred: true}
	}
	mask, err := bitmask.NewBitMask(ids...)
	must(err)
	return topologymanager.TopologyHint{NUMANodeAffinity: mask, Preferred: true}
}

func (store) GetPolicy() topologymanager.Policy { return nil }

// Name: the Store's name (part of the interface from 1.36).
func (store) Name() string { return "scenario-affinity" }

type memManager struct{ m memorymanager.Manager }

// NewMemManager is memorymanager.NewManager (its release's form:
// newMemoryManager) with the Static policy on a machine of one core per NUMA
// node.
func (*Release) NewMemManager(dir string, nodes []uint64, hugepages [][]scenarios.HugePages,
	nodeAllocatable v1.ResourceList, reserved []kubeletconfig.MemoryReservation,
	affinity map[string][]int) (scenarios.MemManager, error) {
	mi := &machineinfo.MachineInfo{NumCores: len(nodes)}
	for id, size := range nodes {
		mi.MemoryCapacity += size
		node := machineinfo.Node{Id: id, Memory: size,
			Cores: []machineinfo.Core{{Id: id, Threads: []int{id}, SocketID: 0}}}
		if id < len(hugepages) {
			for _, h := range hugepages[id] {
				node.HugePages = append(node.HugePages,
					machineinfo.HugePagesInfo{PageSize: h.PageSizeKiB, NumPages: h.Pages})
			}
		}
		mi.Topology = append(mi.Topology, node)
	}
	m, err := newMemoryManager(mi, nodeAllocatable, reserved, dir, store(affinity))
	if err != nil {
		return nil, err
	}
	return &memManager{m}, nil
}
