package machineinfo

// cadvisor's machine types as kubelet 1.29-1.36 take them (module
// github.com/google/cadvisor, package info/v1).

import cadvisorapi "github.com/google/cadvisor/info/v1"

type (
	MachineInfo   = cadvisorapi.MachineInfo
	Node          = cadvisorapi.Node
	Core          = cadvisorapi.Core
	Cache         = cadvisorapi.Cache
	HugePagesInfo = cadvisorapi.HugePagesInfo
)
