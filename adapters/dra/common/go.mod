module numaspec.invalid/dra-adapter/common

go 1.24

// The oldest version any pinned release's module graph has (v0.33.5's
// apimachinery): each release's go.mod raises it to its own.
require sigs.k8s.io/json v0.0.0-20241010143419-9aa6b5e7a4b3

// The adapter protocol's plumbing, shared by every adapter family (../../protocol).
require numaspec.invalid/adapter/protocol v0.0.0

replace numaspec.invalid/adapter/protocol => ../../protocol
