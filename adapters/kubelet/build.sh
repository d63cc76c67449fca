#!/usr/bin/env bash
# Build, for each pinned kubelet release dir v1_*: the numaspec adapter
# bin/kubelet-adapter-<k8s.io/kubernetes version> (from adapter/), the merge
# oracle bin/kubelet-merge-<version> (from the module root) and, where the dir
# has a node/ subdir, the node probe bin/kubelet-node-<version>.
# Modules come from the Go module proxy (go.mod/go.sum are committed;
# nothing else is fetched).
# Usage: ./build.sh [v1_23 v1_30 v1_37 ...]   (default: every v1_* dir)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
mkdir -p bin
dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
  dirs=(v1_*/)
fi
for d in "${dirs[@]}"; do
  d="${d%/}"
  ver="$(awk '$1=="k8s.io/kubernetes" {print $2; exit}' "$d/go.mod")"
  [ -n "$ver" ] || { echo "no k8s.io/kubernetes in $d/go.mod" >&2; exit 1; }
  echo "== $d: k8s.io/kubernetes $ver" >&2
  start=$(date +%s)
  (cd "$d" && go build -trimpath -buildvcs=false -ldflags="-s -w" -o "../bin/kubelet-merge-$ver" .)
  echo "   built bin/kubelet-merge-$ver in $(( $(date +%s) - start ))s" >&2
  if [ -d "$d/adapter" ]; then
    start=$(date +%s)
    (cd "$d" && go build -trimpath -buildvcs=false -ldflags="-s -w" -o "../bin/kubelet-adapter-$ver" ./adapter)
    echo "   built bin/kubelet-adapter-$ver in $(( $(date +%s) - start ))s" >&2
  fi
  if [ -d "$d/node" ]; then
    start=$(date +%s)
    (cd "$d" && go build -trimpath -buildvcs=false -ldflags="-s -w" -o "../bin/kubelet-node-$ver" ./node)
    echo "   built bin/kubelet-node-$ver in $(( $(date +%s) - start ))s" >&2
  fi
done
