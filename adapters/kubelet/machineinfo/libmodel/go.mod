module numaspec.invalid/kubelet-oracle/machineinfo

go 1.26

require numaspec.invalid/kubelet-oracle/common v0.0.0

replace numaspec.invalid/kubelet-oracle/common => ../../common
