#!/usr/bin/env bash
# Build, for each pinned kubelet release dir v1_*, its one binary
# bin/kubelet-adapter-<k8s.io/kubernetes version> (from the module root): the
# numaspec adapter protocol, "node" the node probe, "merge" the merge oracle
# (README.md). Binaries of the former layout (kubelet-merge-*, kubelet-node-*)
# are removed.
# Each release is built with its row of releases.json, the table of pinned
# releases: the version is stamped into the binary (-ldflags -X, what
# -version prints), after checking that the release's go.mod pins that same
# k8s.io/kubernetes; and the shared sources (release/, mergeonly/) get the
# release's build tags, kubelet1.1 ... kubelet1.N for release 1.N (as Go's
# go1.N tags: "1.N or later"), which pick each file's form for that release.
# Modules come from the Go module proxy (go.mod/go.sum are committed;
# nothing else is fetched).
# Usage: ./build.sh [v1_30 | 1.30 ...]   (module dirs or minors; default: every
#        release in releases.json)
#        ./build.sh -tags v1_30          (print the release's build tags, e.g.
#        for go vet -tags "$(../build.sh -tags v1_30)" in v1_30/)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

# field <row> <name>: a string field of one releases.json row.
field() { sed -n "s/.*\"$2\": *\"\([^\"]*\)\".*/\1/p" <<<"$1"; }

# row <dir or minor>: the release's row of releases.json (one line each).
row() {
  local d="${1%/}" r
  case "$d" in 1.*) d="v1_${d#1.}" ;; esac
  r="$(grep "\"dir\": *\"$d\"" releases.json || true)"
  [ -n "$r" ] || { echo "no release $d in releases.json" >&2; exit 1; }
  echo "$r"
}

# tags <minor>: kubelet1.1,...,kubelet1.N for minor 1.N.
tags() {
  local n="${1#1.}" i out=""
  for ((i = 1; i <= n; i++)); do out+="${out:+,}kubelet1.$i"; done
  echo "$out"
}

if [ "${1:-}" = "-tags" ]; then
  [ $# -eq 2 ] || { echo "usage: $0 -tags v1_30" >&2; exit 2; }
  r="$(row "$2")"
  tags "$(field "$r" minor)"
  exit 0
fi

mkdir -p bin
dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
  mapfile -t dirs < <(sed -n 's/.*"dir": *"\(v1_[0-9]*\)".*/\1/p' releases.json)
fi
for arg in "${dirs[@]}"; do
  r="$(row "$arg")"
  d="$(field "$r" dir)"; ver="$(field "$r" version)"; minor="$(field "$r" minor)"
  [ -f "$d/go.mod" ] || { echo "no module $d (releases.json)" >&2; exit 1; }
  pinned="$(awk '$1=="k8s.io/kubernetes" {print $2; exit}' "$d/go.mod")"
  if [ "$pinned" != "$ver" ]; then
    echo "releases.json pins $d to $ver, but $d/go.mod requires k8s.io/kubernetes ${pinned:-(none)}" >&2
    exit 1
  fi
  echo "== $d: k8s.io/kubernetes $ver" >&2
  start=$(date +%s)
  (cd "$d" && go build -trimpath -buildvcs=false -tags "$(tags "$minor")" \
    -ldflags="-s -w -X numaspec.invalid/kubelet-oracle/common.pinnedVersion=$ver" \
    -o "../bin/kubelet-adapter-$ver" .)
  rm -f "bin/kubelet-merge-$ver" "bin/kubelet-node-$ver"
  echo "   built bin/kubelet-adapter-$ver in $(( $(date +%s) - start ))s" >&2
done
