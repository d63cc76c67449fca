module numaspec.invalid/peers/peer

go 1.26

require numaspec.invalid/kubelet-oracle/common v0.0.0

require numaspec.invalid/adapter/protocol v0.0.0 // indirect
require (
	github.com/go-logr/logr v1.2.0 // indirect
	k8s.io/klog/v2 v2.30.0 // indirect
)

replace numaspec.invalid/kubelet-oracle/common => ../../kubelet/common

replace numaspec.invalid/adapter/protocol => ../../protocol