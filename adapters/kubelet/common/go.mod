module numaspec.invalid/kubelet-oracle/common

go 1.19

require k8s.io/klog/v2 v2.30.0

// The adapter protocol's plumbing, shared by every adapter family (../../protocol).
require numaspec.invalid/adapter/protocol v0.0.0

replace numaspec.invalid/adapter/protocol => ../../protocol
