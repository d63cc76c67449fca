// Package ktesting is an empty stand-in for the staging module k8s.io/ktesting
// at v0.38.0-beta.0, which the Go module proxy does not serve (see ../README.md):
// only tests of kubelet's packages and of its staging modules import it, and
// go mod tidy needs the package to exist; nothing built here compiles it.
package ktesting
