#!/usr/bin/env bash
# Build, for each peer implementation's adapter module, its binary
# bin/<peer>-adapter-<pinned peer version>: koordinator, katalyst and volcano
# (merge only), scheduler-plugins (predict only; one module per pinned tag,
# scheduler-plugins/<tag>/, every one present is built) and dra-driver-cpu
# (cpus, and its publish/prepare commands). See README.md. Each
# module pulls its peer as a Go module dependency at the version its go.mod
# pins; go.mod and go.sum are committed, modules come from the Go module
# proxy, checksums verified.
# dra-driver-cpu builds from a copy of its pinned module: the module is
# downloaded (checksum verified against go.sum's pin, dra-driver-cpu/module.sum)
# and copied into dra-driver-cpu/build/ with one file of numaspec's added to
# pkg/driver (dra-driver-cpu/export/), wired in by go.mod's replace.
# Usage: ./build.sh [koordinator | katalyst | volcano | scheduler-plugins[/<tag>] | dra-driver-cpu ...]
#        (default: all; scheduler-plugins alone builds every tag, scheduler-plugins/v0.33.5 one)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
export GOTOOLCHAIN=local
mkdir -p bin
peers=("$@")
if [ ${#peers[@]} -eq 0 ]; then
  peers=(koordinator katalyst volcano scheduler-plugins dra-driver-cpu)
fi
# copy_module <dir> <module>: the module at the version <dir>/go.mod requires,
# copied to <dir>/build/<name>@<version> (the replace target) with the files of
# <dir>/export/ added to its pkg/driver; its download checksum must be the one
# <dir>/module.sum pins. Redone only when the copy is missing or stale.
copy_module() {
  local dir="$1" mod="$2" ver json sum want src dst
  ver="$(awk -v m="$mod" '$1==m && $2 ~ /^v/ {print $2; exit}' "$dir/go.mod")"
  want="$(cat "$dir/module.sum")"
  dst="$dir/build/${mod##*/}@$ver"
  if [ -f "$dst/.numaspec-copy" ] && [ "$(cat "$dst/.numaspec-copy")" = "$want $(cat "$dir"/export/*.go | sha256sum)" ]; then
    return
  fi
  json="$(cd "$dir" && GOFLAGS=-mod=mod go mod download -json "$mod@$ver")" || { echo "$json" >&2; exit 1; }
  sum="$(sed -n 's/^[[:space:]]*"Sum": "\(h1:[^"]*\)".*/\1/p' <<<"$json")"
  src="$(sed -n 's/^[[:space:]]*"Dir": "\([^"]*\)".*/\1/p' <<<"$json")"
  [ "$sum" = "$want" ] || { echo "$mod@$ver: checksum $sum, but $dir/module.sum pins $want" >&2; exit 1; }
  rm -rf "$dst"; mkdir -p "$dir/build"
  cp -r "$src" "$dst"; chmod -R u+w "$dst"
  cp "$dir"/export/*.go "$dst/pkg/driver/"
  echo "$want $(cat "$dir"/export/*.go | sha256sum)" > "$dst/.numaspec-copy"
}
# build <module dir> <peer module> <binary name prefix>: the binary is
# bin/<prefix>-<the version of <peer module> that the dir's go.mod requires>.
build() {
  local dir="$1" mod="$2" prefix="$3" ver start
  ver="$(awk -v m="$mod" '$1==m {print $2; exit}' "$dir/go.mod")"
  [ -n "$ver" ] || { echo "no $mod in $dir/go.mod" >&2; exit 1; }
  echo "== $dir: $mod $ver" >&2
  start=$(date +%s)
  (cd "$dir" && go build -trimpath -buildvcs=false -gcflags=all=-dwarf=false -ldflags="-s -w" -o "$here/bin/$prefix-$ver" .)
  echo "   built bin/$prefix-$ver in $(( $(date +%s) - start ))s" >&2
}
for p in "${peers[@]}"; do
  p="${p%/}"
  case "$p" in
    koordinator) build "$p" "github.com/koordinator-sh/koordinator" "$p-adapter" ;;
    katalyst) build "$p" "github.com/kubewharf/katalyst-core" "$p-adapter" ;;
    volcano) build "$p" "volcano.sh/volcano" "$p-adapter" ;;
    scheduler-plugins/v*)
      # one pinned tag only (the test run builds the newest; the rest with the matrix)
      [ -f "$p/go.mod" ] || { echo "no $p/go.mod" >&2; exit 1; }
      build "$p" "sigs.k8s.io/scheduler-plugins" "scheduler-plugins-adapter"
      ;;
    scheduler-plugins)
      # one module per pinned tag; each dir's go.mod must pin its own name
      found=0
      for d in "$p"/v*/; do
        d="${d%/}"
        [ -f "$d/go.mod" ] || continue
        found=1
        tag="${d##*/}"
        pin="$(awk '$1=="sigs.k8s.io/scheduler-plugins" {print $2; exit}' "$d/go.mod")"
        [ "$pin" = "$tag" ] || { echo "$d/go.mod pins sigs.k8s.io/scheduler-plugins ${pin:-nothing}, not $tag" >&2; exit 1; }
        build "$d" "sigs.k8s.io/scheduler-plugins" "$p-adapter"
      done
      [ "$found" = 1 ] || { echo "no $p/v*/go.mod" >&2; exit 1; }
      ;;
    dra-driver-cpu)
      copy_module "$p" "github.com/kubernetes-sigs/dra-driver-cpu"
      build "$p" "github.com/kubernetes-sigs/dra-driver-cpu" "$p-adapter"
      ;;
    *) echo "unknown peer $p (koordinator, katalyst, volcano, scheduler-plugins or dra-driver-cpu)" >&2; exit 1 ;;
  esac
done
