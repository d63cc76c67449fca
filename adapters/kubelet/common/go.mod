module numaspec.invalid/kubelet-oracle/common

go 1.19

require k8s.io/klog/v2 v2.30.0
