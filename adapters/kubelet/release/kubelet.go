// Package release is the shim of the probe package (../probe) for every node
// release (1.29 on): probe.Kubelet implemented with the release's own kubelet
// code, one Go source for all of them. It is compiled inside each release
// module (../v1_XX), whose go.mod pins k8s.io/kubernetes and its staging
// modules, so this go.mod requires no Kubernetes module (as ../probe's): no
// release can lift another's versions through minimum version selection.
//
// What is the same Go source in every node release is in this file. What
// kubelet changed at release 1.N is in from_1_N.go (//go:build kubelet1.N)
// and the form before it in before_1_N.go (//go:build !kubelet1.N); a form
// that held for one stretch only is in from_1_N_before_1_M.go. ../build.sh
// builds release 1.M with the tags kubelet1.1 ... kubelet1.M, which read as
// Go's own go1.N tags do: "1.N or later". In-place resize (1.34 on) is the
// subpackage resize, which only those releases import.
//
// A file under a tag may import only packages that every node release has:
// go mod tidy reads every file whatever its tags, and would add (or upgrade)
// a module for a package a release lacks. What differs by module (cadvisor's
// types) comes from ../machineinfo, which each release's go.mod replaces with
// the directory of its own cadvisor. See ../README.md.
package release

import (
	"context"
	"os"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	schedulerframework "k8s.io/kubernetes/pkg/scheduler/framework"

	"numaspec.invalid/kubelet-oracle/common"
	"numaspec.invalid/kubelet-oracle/probe"
)

// Kubelet implements probe.Kubelet with the k8s.io/kubernetes of the release
// module it is compiled in.
type Kubelet struct{}

var (
	_ probe.Kubelet       = Kubelet{}
	_ probe.DeviceKubelet = Kubelet{}
)

// Version is the pinned k8s.io/kubernetes version: releases.json's, stamped
// by ../build.sh (common.PinnedVersion).
func (Kubelet) Version() string { return common.PinnedVersion() }

// Logger receives kubelet's contextual logging (the calls that take a logger
// or a context, 1.34 on): discarded, or klog's output when ORACLE_KLOG is set
// (common.SilenceKlog leaves klog alone then).
var Logger = logr.Discard()

func init() {
	if os.Getenv("ORACLE_KLOG") != "" {
		Logger = klog.Background()
	}
}

// Context is a context carrying Logger.
func Context() context.Context { return klog.NewContext(context.Background(), Logger) }

// PreStartContainer: AddContainer on the CPU Manager, the Memory Manager and
// the Topology Manager (each call's form is its release's).
func (Kubelet) PreStartContainer(cpu cpumanager.Manager, mem memorymanager.Manager, tm topologymanager.Manager,
	pod *v1.Pod, c *v1.Container, id string) {
	addCPUContainer(cpu, pod, c, id)
	if mem != nil {
		addMemoryContainer(mem, pod, c, id)
	}
	addTopologyContainer(tm, pod, c, id)
}

// FitAdmit: lifecycle.NewPredicateAdmitHandler over the release's node getter
// (NodeGetter), admitting the pod as that release's kubelet passes it.
func (Kubelet) FitAdmit(node *v1.Node, update func(*schedulerframework.NodeInfo, *lifecycle.PodAdmitAttributes) error,
	pod *v1.Pod, others []*v1.Pod) lifecycle.PodAdmitResult {
	h := lifecycle.NewPredicateAdmitHandler(NodeGetter(node), lifecycle.NewAdmissionFailureHandlerStub(), update)
	return admitAdded(h, pod, others)
}
