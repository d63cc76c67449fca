module numaspec.invalid/kubelet-oracle/podlevel

go 1.26
