module numaspec.invalid/kubelet-oracle/release

go 1.26

require (
	numaspec.invalid/adapter/protocol v0.0.0 // indirect
	numaspec.invalid/kubelet-oracle/common v0.0.0
	numaspec.invalid/kubelet-oracle/machineinfo v0.0.0
	numaspec.invalid/kubelet-oracle/podlevel v0.0.0
	numaspec.invalid/kubelet-oracle/probe v0.0.0
)

replace (
	numaspec.invalid/adapter/protocol => ../../protocol
	numaspec.invalid/kubelet-oracle/common => ../common
	numaspec.invalid/kubelet-oracle/machineinfo => ../machineinfo/infov1
	numaspec.invalid/kubelet-oracle/podlevel => ../podlevel
	numaspec.invalid/kubelet-oracle/probe => ../probe
)
