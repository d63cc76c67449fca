#!/usr/bin/env bash
# Regenerate <dir>/go.mod for one kubelet release: require k8s.io/kubernetes
# and pin every k8s.io/* staging module (listed as ./staging/src/... replaces
# in kubernetes' own go.mod) to the matching v0.X.Y; require the local modules
# the release's main.go builds on, each replaced by its directory: common
# (and ../protocol, the adapter protocol's plumbing every family shares),
# and for the merge-only releases (before 1.29) mergeonly; for 1.29 and later
# release (the shim), probe, podlevel and machineinfo, whose directory is the
# one of the cadvisor module kubernetes requires (machineinfo/libmodel for
# github.com/google/cadvisor/lib, 1.37 on; else machineinfo/infov1). A
# stub-vbom/ directory in <dir> replaces the dead vbom.ml/util (1.18), and
# <dir>/extra.gomod, when present, is appended verbatim (a dependency pinned
# so the binary runs, or a requirement the module proxy does not serve
# replaced; a staging module it replaces is left out of the staging pins).
# The go line is 1.26, or kubernetes' own when that is newer (1.38: 1.27.0).
# A release whose releases.json row names a "toolchain" (a Go newer than the
# machine's, e.g. go1.27.3) runs every go command here with GOTOOLCHAIN set to
# it. Then runs go mod tidy, which reads the shared packages' files whatever
# their build tags (so they import only what every release they serve has:
# README.md, Layout).
# Usage: ./gen-gomod.sh v1.30.14 v1_30
set -euo pipefail
ver="$1"; dir="$2"
here="$(cd "$(dirname "$0")" && pwd)"
staging_ver="v0.${ver#v1.}"
minor="${ver#v1.}"; minor="${minor%%.*}"
row="$(grep "\"dir\": *\"$dir\"" "$here/releases.json" || true)"
toolchain="$(sed -n 's/.*"toolchain": *"\([^"]*\)".*/\1/p' <<<"$row")"
if [ -n "$toolchain" ]; then export GOTOOLCHAIN="$toolchain"; fi
cd "$here/$dir"
gomod_file="$(go mod download -json "k8s.io/kubernetes@$ver" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
# staging modules, less those extra.gomod replaces itself
replaced=""
if [ -f extra.gomod ]; then
  replaced="$(sed -nE 's#^[[:space:]]*(replace[[:space:]]+)?(k8s\.io/[^[:space:]]+)([[:space:]]+v[^[:space:]]+)?[[:space:]]+=>.*#\2#p' extra.gomod)"
fi
mods="$(sed -n 's#^\s*\(k8s.io/[^ ]*\) => ./staging/src/.*#\1#p' "$gomod_file" | sort -u | grep -vxF -f <(echo "$replaced") || true)"
# the go line: 1.26, or kubernetes' own when it needs a newer Go
golang=1.26
kgo="$(sed -n 's/^go \([0-9][0-9.]*\).*/\1/p' "$gomod_file")"
kminor="${kgo#1.}"; kminor="${kminor%%.*}"
if [ -n "$kminor" ] && [ "$kminor" -gt 26 ]; then golang="$kgo"; fi
if [ "$minor" -ge 29 ]; then
  locals=(common machineinfo podlevel probe release)
else
  locals=(common mergeonly)
fi
machineinfo=machineinfo/infov1
if grep -q '^\s*github.com/google/cadvisor/lib ' "$gomod_file"; then machineinfo=machineinfo/libmodel; fi
{
  echo "module numaspec.invalid/kubelet-oracle/$dir"
  echo
  echo "go $golang"
  echo
  echo "require ("
  echo "	k8s.io/kubernetes $ver"
  for m in "${locals[@]}"; do echo "	numaspec.invalid/kubelet-oracle/$m v0.0.0"; done
  echo "	numaspec.invalid/adapter/protocol v0.0.0"
  echo ")"
  echo
  echo "replace ("
  for m in "${locals[@]}"; do
    d="$m"; if [ "$m" = machineinfo ]; then d="$machineinfo"; fi
    echo "	numaspec.invalid/kubelet-oracle/$m => ../$d"
  done
  echo "	numaspec.invalid/adapter/protocol => ../../protocol"
  echo ")"
  echo
  if [ -d stub-vbom ]; then
    echo "// vbom.ml/util is in the module graph (through k8s.io/kubectl) but no"
    echo "// package of it is imported, and its origin no longer serves it: a stub."
    echo "replace vbom.ml/util => ./stub-vbom"
    echo
  fi
  if [ -f extra.gomod ]; then cat extra.gomod; echo; fi
  echo "// k8s.io/kubernetes requires its staging modules at v0.0.0; pin them to $staging_ver."
  echo "replace ("
  for m in $mods; do echo "	$m => $m $staging_ver"; done
  echo ")"
} > go.mod
go mod tidy
