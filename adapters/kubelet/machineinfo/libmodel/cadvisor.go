package machineinfo

// cadvisor's machine types as kubelet 1.37 takes them (module
// github.com/google/cadvisor/lib, package model).

import cadvisorapi "github.com/google/cadvisor/lib/model"

type (
	MachineInfo   = cadvisorapi.MachineInfo
	Node          = cadvisorapi.Node
	Core          = cadvisorapi.Core
	Cache         = cadvisorapi.Cache
	HugePagesInfo = cadvisorapi.HugePagesInfo
)
