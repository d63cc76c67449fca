module numaspec.invalid/kubelet-oracle/machineinfo

go 1.26

require numaspec.invalid/kubelet-oracle/common v0.0.0

require numaspec.invalid/adapter/protocol v0.0.0 // indirect
replace numaspec.invalid/kubelet-oracle/common => ../../common

replace numaspec.invalid/adapter/protocol => ../../../protocol