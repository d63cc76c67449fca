module numaspec.invalid/kubelet-oracle/common

go 1.19
