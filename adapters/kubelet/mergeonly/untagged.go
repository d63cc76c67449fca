//go:build !kubelet1.1

package mergeonly

// Compiled only without the release tags: this package is built by
// ../build.sh, which passes release 1.N's tags (kubelet1.1,...,kubelet1.N;
// ../build.sh -tags v1_N prints them, e.g. for go vet).
var _ int = "build this release with ../build.sh: it passes the release's -tags"
