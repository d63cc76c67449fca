//go:build !kubelet1.29

package release

// Compiled only without the release tags: run the release with the tags
// ../../build.sh -tags prints (../README.md, Regenerate).
var _ int = "run this release with -tags \"$(../../build.sh -tags v1_N)\""
