module numaspec.invalid/peers/peer

go 1.26

require numaspec.invalid/kubelet-oracle/common v0.0.0

require (
	github.com/go-logr/logr v1.2.0 // indirect
	k8s.io/klog/v2 v2.30.0 // indirect
)

replace numaspec.invalid/kubelet-oracle/common => ../../kubelet/common
