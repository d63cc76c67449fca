module numaspec.invalid/adapter/protocol

go 1.19
