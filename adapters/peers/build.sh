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
#        ./build.sh --patch FILE PEER
#                    the peer's adapter over its pinned module with FILE applied (a
#                    unified diff against the module's root, such as a finding's fix:
#                    adapters/findings/<ID>/fix.patch): bin/<peer>-adapter-<version>+<NAME>,
#                    NAME the patch's folder and file name (DRACPU-1-fix). The module is
#                    copied to <peer>/build/patched/<NAME>; nothing else changes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
origin="$PWD"
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
# module_of <peer dir>: the Go module the peer's adapter pins.
module_of() {
  case "$1" in
    koordinator) echo github.com/koordinator-sh/koordinator ;;
    katalyst) echo github.com/kubewharf/katalyst-core ;;
    volcano) echo volcano.sh/volcano ;;
    scheduler-plugins/v*) echo sigs.k8s.io/scheduler-plugins ;;
    dra-driver-cpu) echo github.com/kubernetes-sigs/dra-driver-cpu ;;
    *) echo "unknown peer $1 (koordinator, katalyst, volcano, scheduler-plugins/<tag> or dra-driver-cpu)" >&2; exit 2 ;;
  esac
}
# patched <patch> <peer dir>: the adapter over a copy of the pinned module with the patch
# applied, built with a go.mod whose replace points at the copy.
patched() {
  local file="$1" dir="${2%/}" mod ver json src work name prefix err
  case "$file" in /*) ;; *) file="$origin/$file" ;; esac
  [ -f "$file" ] || { echo "--patch $file: no such file" >&2; exit 2; }
  file="$(cd "$(dirname "$file")" && pwd)/$(basename "$file")"
  mod="$(module_of "$dir")"
  [ -f "$dir/go.mod" ] || { echo "no $dir/go.mod" >&2; exit 2; }
  name="$(basename "$(dirname "$file")")-$(basename "$file")"; name="${name%.patch}"; name="${name%.diff}"
  ver="$(awk -v m="$mod" '$1==m && $2 ~ /^v/ {print $2; exit}' "$dir/go.mod")"
  if [ -f "$dir/module.sum" ]; then
    # the adapter builds from numaspec's checked copy (its pinned checksum, export/ added)
    copy_module "$dir" "$mod"
    src="$dir/build/${mod##*/}@$ver"
  else
    json="$(cd "$dir" && GOFLAGS=-mod=mod go mod download -json "$mod@$ver")" || { echo "$json" >&2; exit 1; }
    src="$(sed -n 's/^[[:space:]]*"Dir": "\([^"]*\)".*/\1/p' <<<"$json")"
  fi
  work="$here/$dir/build/patched/$name"
  chmod -R u+w "$work" 2>/dev/null || true; rm -rf "$work"; mkdir -p "$work"
  cp -r "$src" "$work/module"; chmod -R u+w "$work/module"; rm -f "$work/module/.numaspec-copy"
  if ! err="$(cd "$work/module" && GIT_CEILING_DIRECTORIES="$work" git apply -p1 "$file" 2>&1)"; then
    echo "$(basename "$file") does not apply to $mod $ver: $(head -1 <<<"$err")" >&2
    rm -rf "$work"; exit 1
  fi
  # the adapter's go.mod without its own replace of the module, then one to the copy
  grep -v "^[[:space:]]*${mod//./\.} $ver =>" "$dir/go.mod" | grep -v "^replace ${mod//./\.} " >"$work/go.mod"
  printf '\nreplace %s => %s\n' "$mod" "$work/module" >>"$work/go.mod"
  cp "$dir/go.sum" "$work/go.sum"
  prefix="${dir%%/*}-adapter"
  echo "== $dir: $mod $ver+$name" >&2
  (cd "$dir" && go build -modfile="$work/go.mod" -trimpath -buildvcs=false -gcflags=all=-dwarf=false -ldflags="-s -w" \
     -o "$here/bin/$prefix-$ver+$name" .)
  echo "   built bin/$prefix-$ver+$name" >&2
}
if [ "${1:-}" = "--patch" ]; then
  [ $# -eq 3 ] || { echo "usage: $0 --patch FILE PEER" >&2; exit 2; }
  patched "$2" "$3"
  exit 0
fi
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
