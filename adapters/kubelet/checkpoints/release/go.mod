module numaspec.invalid/kubelet-checkpoints/release

go 1.26

require (
	numaspec.invalid/kubelet-checkpoints/scenarios v0.0.0
	numaspec.invalid/kubelet-oracle/machineinfo v0.0.0
)

replace (
	numaspec.invalid/kubelet-checkpoints/scenarios => ../scenarios
	numaspec.invalid/adapter/protocol => ../../../protocol
	numaspec.invalid/kubelet-oracle/common => ../../common
	numaspec.invalid/kubelet-oracle/machineinfo => ../../machineinfo/infov1
)
