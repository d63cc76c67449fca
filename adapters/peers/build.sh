#!/usr/bin/env bash
# Build, for each peer implementation's adapter module, its binary
# bin/<peer>-adapter-<pinned peer version>: koordinator, katalyst and volcano
# (merge only), and scheduler-plugins (predict only; one module per pinned tag,
# scheduler-plugins/<tag>/, every one present is built). See README.md. Each
# module pulls its peer as a Go module dependency at the version its go.mod
# pins; go.mod and go.sum are committed, modules come from the Go module
# proxy, checksums verified.
# Usage: ./build.sh [koordinator | katalyst | volcano | scheduler-plugins[/<tag>] ...]
#        (default: all; scheduler-plugins alone builds every tag, scheduler-plugins/v0.33.5 one)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
export GOTOOLCHAIN=local
mkdir -p bin
peers=("$@")
if [ ${#peers[@]} -eq 0 ]; then
  peers=(koordinator katalyst volcano scheduler-plugins)
fi
# build <module dir> <peer module> <binary name prefix>: the binary is
# bin/<prefix>-<the version of <peer module> that the dir's go.mod requires>.
build() {
  local dir="$1" mod="$2" prefix="$3" ver start
  ver="$(awk -v m="$mod" '$1==m {print $2; exit}' "$dir/go.mod")"
  [ -n "$ver" ] || { echo "no $mod in $dir/go.mod" >&2; exit 1; }
  echo "== $dir: $mod $ver" >&2
  start=$(date +%s)
  (cd "$dir" && go build -trimpath -buildvcs=false -ldflags="-s -w" -o "$here/bin/$prefix-$ver" .)
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
    *) echo "unknown peer $p (koordinator, katalyst, volcano or scheduler-plugins)" >&2; exit 1 ;;
  esac
done
