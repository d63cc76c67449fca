// Package format is an empty stand-in for k8s.io/ktesting/format (see ../../README.md):
// only tests of kubelet's packages and of its staging modules import it, and
// go mod tidy needs the package to exist; nothing built here compiles it.
package format
