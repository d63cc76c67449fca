#!/usr/bin/env bash
# Build, for each pinned k8s.io/dynamic-resource-allocation release dir v0_*,
# its binary bin/dra-allocator-<module version> (README.md): the numaspec
# adapter protocol serving the "allocate" operation, flags -variant and
# -version. Each release is built with its row of releases.json, the table of
# pinned releases: the version is stamped into the binary (-ldflags -X, what
# -version prints and the start answer's implementation.version says), after
# checking that the release's go.mod requires that same module version.
# Modules come from the Go module proxy (go.mod/go.sum are committed; nothing
# else is fetched). Prints each build's wall time.
# Usage: ./build.sh [v0_35 | 1.35 | 0.35 ...]   (module dirs or minors;
#        default: every release in releases.json)
#        ./build.sh -vet [dirs or minors ...]   (go vet each release module
#        and the shared packages it builds, instead of building)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

# field <row> <name>: a string field of one releases.json row.
field() { sed -n "s/.*\"$2\": *\"\([^\"]*\)\".*/\1/p" <<<"$1"; }

# row <dir or minor>: the release's row of releases.json (one line each).
row() {
  local d="${1%/}" r
  case "$d" in 1.*) d="v0_${d#1.}" ;; 0.*) d="v0_${d#0.}" ;; esac
  r="$(grep "\"dir\": *\"$d\"" releases.json || true)"
  [ -n "$r" ] || { echo "no release $1 in releases.json" >&2; exit 1; }
  echo "$r"
}

vet=0
if [ "${1:-}" = "-vet" ]; then vet=1; shift; fi

mkdir -p bin
dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
  mapfile -t dirs < <(sed -n 's/.*"dir": *"\(v0_[0-9]*\)".*/\1/p' releases.json)
fi
for arg in "${dirs[@]}"; do
  r="$(row "$arg")"
  d="$(field "$r" dir)"; ver="$(field "$r" version)"
  # A release whose row names a "toolchain" (a Go newer than the machine's:
  # go1.27.3 for v0.38) runs its go commands with GOTOOLCHAIN set to it, and
  # only that release's.
  tc="$(field "$r" toolchain)"
  gotc=(env); if [ -n "$tc" ]; then gotc=(env "GOTOOLCHAIN=$tc"); fi
  [ -f "$d/go.mod" ] || { echo "no module $d (releases.json)" >&2; exit 1; }
  pinned="$(awk '$1=="k8s.io/dynamic-resource-allocation" {print $2; exit}' "$d/go.mod")"
  if [ "$pinned" != "$ver" ]; then
    echo "releases.json pins $d to $ver, but $d/go.mod requires k8s.io/dynamic-resource-allocation ${pinned:-(none)}" >&2
    exit 1
  fi
  if [ "$vet" = 1 ]; then
    # The release's own package, and the shared ones its main.go builds on.
    pkgs=(./... numaspec.invalid/dra-adapter/common)
    if grep -q 'numaspec.invalid/dra-adapter/v1alloc ' "$d/go.mod"; then
      pkgs+=(numaspec.invalid/dra-adapter/v1alloc)
    fi
    echo "== vet $d: ${pkgs[*]}" >&2
    (cd "$d" && "${gotc[@]}" go vet "${pkgs[@]}")
    continue
  fi
  echo "== $d: k8s.io/dynamic-resource-allocation $ver${tc:+ (GOTOOLCHAIN=$tc)}" >&2
  start=$(date +%s.%N)
  (cd "$d" && "${gotc[@]}" go build -trimpath -buildvcs=false -gcflags=all=-dwarf=false \
    -ldflags="-s -w -X numaspec.invalid/dra-adapter/common.pinnedVersion=$ver" \
    -o "../bin/dra-allocator-$ver" .)
  printf '   built bin/dra-allocator-%s in %ss\n' "$ver" "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')" >&2
done
