#!/usr/bin/env bash
# Build, for each pinned kubelet release dir v1_*, its one binary
# bin/kubelet-adapter-<k8s.io/kubernetes version> (from the module root): the
# numaspec adapter protocol, "node" the node probe, "merge" the merge oracle
# (README.md). Binaries of the former layout (kubelet-merge-*, kubelet-node-*)
# are removed.
# Modules come from the Go module proxy (go.mod/go.sum are committed;
# nothing else is fetched).
# Usage: ./build.sh [v1_30 | 1.30 ...]   (module dirs or minors; default: every
# release in releases.json, the table of pinned releases)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
mkdir -p bin
dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
  mapfile -t dirs < <(sed -n 's/.*"dir": *"\(v1_[0-9]*\)".*/\1/p' releases.json)
fi
for d in "${dirs[@]}"; do
  d="${d%/}"
  case "$d" in 1.*) d="v1_${d#1.}" ;; esac
  [ -f "$d/go.mod" ] || { echo "no module $d (adapters/kubelet/releases.json)" >&2; exit 1; }
  ver="$(awk '$1=="k8s.io/kubernetes" {print $2; exit}' "$d/go.mod")"
  [ -n "$ver" ] || { echo "no k8s.io/kubernetes in $d/go.mod" >&2; exit 1; }
  echo "== $d: k8s.io/kubernetes $ver" >&2
  start=$(date +%s)
  (cd "$d" && go build -trimpath -buildvcs=false -ldflags="-s -w" -o "../bin/kubelet-adapter-$ver" .)
  rm -f "bin/kubelet-merge-$ver" "bin/kubelet-node-$ver"
  echo "   built bin/kubelet-adapter-$ver in $(( $(date +%s) - start ))s" >&2
done
