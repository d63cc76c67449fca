#!/usr/bin/env bash
# Regenerate <dir>/go.mod (and go.sum) for one pinned release: require
# k8s.io/dynamic-resource-allocation at <version> and the Kubernetes modules
# it builds on (k8s.io/api, k8s.io/apimachinery) at that same v0.X.Y, plus
# the local modules the release's main.go builds on, each replaced by its
# directory (common; v1alloc from v0.34 on; ../protocol, the adapter
# protocol's plumbing every adapter family shares). Then go mod tidy, which also
# checks that k8s.io/* stays at v0.X.Y (the run fails otherwise).
# A release whose releases.json row names a "toolchain" (a Go newer than the
# machine's, go1.27.3 for v0.38) runs its go commands with GOTOOLCHAIN set to
# it. A release dir's extra.gomod (optional) is appended to go.mod before the
# tidy: replaces for requirements of the release's module graph that the Go
# module proxy does not serve, each with its reason (v0_38).
# Usage: ./gen-gomod.sh v0.35.0 v0_35
set -euo pipefail
ver="$1"; dir="$2"
here="$(cd "$(dirname "$0")" && pwd)"
row="$(grep "\"dir\": *\"$dir\"" "$here/releases.json" || true)"
toolchain="$(sed -n 's/.*"toolchain": *"\([^"]*\)".*/\1/p' <<<"$row")"
if [ -n "$toolchain" ]; then export GOTOOLCHAIN="$toolchain"; fi
minor="${ver#v0.}"; minor="${minor%%.*}"
cd "$here/$dir"
locals=(common)
if [ "$minor" -ge 34 ]; then locals+=(v1alloc); fi
{
  echo "module numaspec.invalid/dra-adapter/$dir"
  echo
  echo "go 1.26"
  echo
  echo "require ("
  echo "	k8s.io/api $ver"
  echo "	k8s.io/apimachinery $ver"
  echo "	k8s.io/dynamic-resource-allocation $ver"
  for m in "${locals[@]}"; do echo "	numaspec.invalid/dra-adapter/$m v0.0.0"; done
  echo "	numaspec.invalid/adapter/protocol v0.0.0"
  echo ")"
  echo
  echo "replace ("
  for m in "${locals[@]}"; do echo "	numaspec.invalid/dra-adapter/$m => ../$m"; done
  echo "	numaspec.invalid/adapter/protocol => ../../protocol"
  echo ")"
} > go.mod
if [ -f extra.gomod ]; then { echo; cat extra.gomod; } >> go.mod; fi
go mod tidy
bad="$(awk '$1 ~ /^k8s\.io\// && $2 ~ /^v0\.[1-9][0-9]*\.[0-9]+$/ && $2 != "'"$ver"'" {print $1, $2}' go.mod)"
if [ -n "$bad" ]; then
  echo "$dir: k8s.io modules not at $ver after go mod tidy:" >&2
  echo "$bad" >&2
  exit 1
fi
