module numaspec.invalid/kubelet-checkpoints/scenarios

go 1.26
