#!/usr/bin/env bash
# Regenerate <dir>/go.mod for one kubelet release: require k8s.io/kubernetes
# and pin every k8s.io/* staging module (listed as ./staging/src/... replaces
# in kubernetes' own go.mod) to the matching v0.X.Y; require common and, for
# 1.29 and later, probe (the shared node probe, merge and adapter) and, for
# 1.32 and later, podlevel (the pod-level resources defaulting), each replaced
# by the local directory; a stub-vbom/ directory in <dir> replaces
# the dead vbom.ml/util (1.18), and <dir>/extra.gomod, when present, is
# appended verbatim (a dependency pinned so the binary runs). Then runs go mod
# tidy.
# Usage: ./gen-gomod.sh v1.30.14 v1_30
set -euo pipefail
ver="$1"; dir="$2"
here="$(cd "$(dirname "$0")" && pwd)"
staging_ver="v0.${ver#v1.}"
minor="${ver#v1.}"; minor="${minor%%.*}"
cd "$here/$dir"
gomod_file="$(go mod download -json "k8s.io/kubernetes@$ver" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
mods="$(sed -n 's#^\s*\(k8s.io/[^ ]*\) => ./staging/src/.*#\1#p' "$gomod_file" | sort -u)"
{
  echo "module numaspec.invalid/kubelet-oracle/$dir"
  echo
  echo "go 1.26"
  echo
  echo "require ("
  echo "	k8s.io/kubernetes $ver"
  echo "	numaspec.invalid/kubelet-oracle/common v0.0.0"
  if [ "$minor" -ge 32 ]; then echo "	numaspec.invalid/kubelet-oracle/podlevel v0.0.0"; fi
  if [ "$minor" -ge 29 ]; then echo "	numaspec.invalid/kubelet-oracle/probe v0.0.0"; fi
  echo ")"
  echo
  echo "replace numaspec.invalid/kubelet-oracle/common => ../common"
  if [ "$minor" -ge 32 ]; then echo "replace numaspec.invalid/kubelet-oracle/podlevel => ../podlevel"; fi
  if [ "$minor" -ge 29 ]; then echo "replace numaspec.invalid/kubelet-oracle/probe => ../probe"; fi
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
