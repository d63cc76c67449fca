#!/usr/bin/env bash
# Build, for each peer implementation's adapter module (koordinator, katalyst,
# volcano), its one binary bin/<peer>-adapter-<pinned peer version>: the
# numaspec adapter protocol, merge only (README.md). Each module pulls its peer
# as a Go module dependency at the version its go.mod pins; go.mod and go.sum
# are committed, modules come from the Go module proxy, checksums verified.
# Usage: ./build.sh [koordinator | katalyst | volcano ...]   (default: all)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
export GOTOOLCHAIN=local
mkdir -p bin
peers=("$@")
if [ ${#peers[@]} -eq 0 ]; then
  peers=(koordinator katalyst volcano)
fi
for p in "${peers[@]}"; do
  p="${p%/}"
  case "$p" in
    koordinator) mod="github.com/koordinator-sh/koordinator" ;;
    katalyst) mod="github.com/kubewharf/katalyst-core" ;;
    volcano) mod="volcano.sh/volcano" ;;
    *) echo "unknown peer $p (koordinator, katalyst or volcano)" >&2; exit 1 ;;
  esac
  ver="$(awk -v m="$mod" '$1==m {print $2; exit}' "$p/go.mod")"
  [ -n "$ver" ] || { echo "no $mod in $p/go.mod" >&2; exit 1; }
  echo "== $p: $mod $ver" >&2
  start=$(date +%s)
  (cd "$p" && go build -trimpath -buildvcs=false -ldflags="-s -w" -o "../bin/$p-adapter-$ver" .)
  echo "   built bin/$p-adapter-$ver in $(( $(date +%s) - start ))s" >&2
done
